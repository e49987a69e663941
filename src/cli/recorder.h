/*
 * recorder: the record loop that `record` and `run` share. It opens the
 * perf session, starts the command if there is one, copies every ring's
 * records into the recording file until it is told to stop, and writes
 * what report needs to work after the recorded processes are gone.
 */
#ifndef CPULEDGER_CLI_RECORDER_H
#define CPULEDGER_CLI_RECORDER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../core/attribute.h"

struct record_opts {
	bool all;		/* -a */
	pid_t *pids;		/* -p, npids of them */
	int npids;
	uint32_t hz;		/* -F */
	bool callchain;		/* -g */
	double duration;	/* --duration, seconds; 0: until stopped */
	const char *output;	/* -o */
	char **command;		/* after --, NULL-terminated */
	const char *root;	/* for /proc and tracefs; "/" */
	bool no_tracepoints;	/* --no-tracepoints: steal from sample gaps */
	const char *accounts;	/* --accounts: rules stored in the recording */
	const char *ledger;	/* --ledger: add a collection when recording ends */
	double interval;	/* --interval: and every so many seconds */
	bool quiet;		/* no summary line */
	uint32_t mmap_pages;	/* --mmap-pages: per CPU; 0: by privilege */
	int realtime;		/* -r: SCHED_FIFO priority; 0: none */
};

/* Options shared by record and run: fills o from one getopt result.
 * Returns 1 if c was one of them, 0 if not, -1 on a bad value. */
int record_opts__parse(struct record_opts *o, int c, const char *arg);
void record_opts__init(struct record_opts *o);
void record_opts__release(struct record_opts *o);

#define RECORD_SHORTOPTS "ap:F:go:A:l:r:"
#define RECORD_LONGOPTS \
	{ "all-cpus", no_argument, NULL, 'a' }, \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "freq", required_argument, NULL, 'F' }, \
	{ "call-graph", no_argument, NULL, 'g' }, \
	{ "output", required_argument, NULL, 'o' }, \
	{ "duration", required_argument, NULL, 'D' }, \
	{ "no-tracepoints", no_argument, NULL, 'T' }, \
	{ "accounts", required_argument, NULL, 'A' }, \
	{ "ledger", required_argument, NULL, 'l' }, \
	{ "interval", required_argument, NULL, 'N' }, \
	{ "mmap-pages", required_argument, NULL, 'M' }, \
	{ "realtime", required_argument, NULL, 'r' }

#define RECORD_USAGE \
	"  -a, --all-cpus         record every CPU and task\n" \
	"  -p, --pid PID[,PID]    record these processes (their threads too)\n" \
	"  -F, --freq HZ          cpu-clock samples per second (default 1000)\n" \
	"  -g, --call-graph       record call chains\n" \
	"  -r, --realtime PRIO    drain the rings at this SCHED_FIFO priority\n" \
	"                         (1-99), as perf record -r, for machines too\n" \
	"                         busy for nice -10 (docs/robustness.md)\n" \
	"      --mmap-pages N     ring buffer pages per CPU, a power of 2 (default\n" \
	"                         1024 as root, 128 otherwise; twice with -g)\n" \
	"      --duration SEC     stop after SEC seconds\n" \
	"      --no-tracepoints   measure steal from sample gaps scaled to\n" \
	"                         /proc/stat, not per stint\n" \
	"  -A, --accounts FILE    charge accounts by these rules (docs/accounts.md)\n" \
	"  -l, --ledger PATH      add what was recorded to this ledger when it ends,\n" \
	"                         and when asked (SIGUSR1, cpuledger collect PID)\n" \
	"      --interval SEC     and every SEC seconds\n"

/*
 * Records until the command exits, the duration passes, the pids are gone,
 * or SIGINT/SIGTERM arrives. *child_status gets the command's wait status
 * (-1 without a command). Returns an exit status (0, 1 or 2), having said
 * what went wrong.
 */
int record_run(const struct record_opts *o, int *child_status);

struct loaded_recording;
/* The finished recording o->output, loaded (for --ledger and run).
 * Returns 0 or an exit status, having said what went wrong. */
int record_load(const struct record_opts *o, enum steal_method method,
		struct loaded_recording *r);

#endif
