/*
 * live: the options `record` and `run` share, parsed into the session's
 * struct live_opts (src/session/session.h, where the recording itself is).
 */
#ifndef CPULEDGER_CLI_LIVE_H
#define CPULEDGER_CLI_LIVE_H

#include "options.h"
#include "../session/session.h"

#define LIVE_STR_(x) #x
#define LIVE_STR(x) LIVE_STR_(x)
/* The option's entry in a command's table: id its id there, hz its
 * default, why what the help says after the default (or ""). */
#define LIVE_FREQ_OPTION(id, hz, why) \
	{ "freq", 'F', "HZ", id, "cpu-clock samples per second (default " LIVE_STR(hz) why ")" }
/* --source's entry in a command's table (record, run, top, agent). */
#define LIVE_SOURCE_OPTION(id) \
	{ "source", 0, "SOURCE", id, "where each thread's CPU time, steal and run-queue\n" \
	  "wait come from: bpf (the kernel's own clocks, read\n" \
	  "by a BPF collector), perf (sched tracepoints), auto\n" \
	  "(bpf where it loads, else perf; the default, or\n" \
	  "CPULEDGER_SOURCE's)", "auto bpf perf" }
/* --source's value into o->source: 1, or -1 having said why. */
int live_opts__source(struct live_opts *o, const char *arg);
/* CPULEDGER_SOURCE, when set, into o->source (before the options, which
 * override it): 0, or -1 having said why. */
int live_opts__source_env(struct live_opts *o);
/* --freq's value into o->hz: 1, or -1 having said why. */
int live_opts__freq(struct live_opts *o, const char *arg);

/* The options record and run share, for their tables. */
extern const struct cli_option live_record_options[];
/* Takes one of them; 1 taken, 0 not one of them, -1 bad (said). */
int live_opts__parse(struct live_opts *o, int id, const char *arg);
/* --mmap-pages N (a power of 2, 8 to 65536) into o; 1, or -1 having said
 * why. */
int live_opts__mmap_pages(struct live_opts *o, const char *arg);
/* -p PID[,PID]: appends them to o->pids; 1, or -1 having said why. */
int live_opts__add_pids(struct live_opts *o, const char *arg);

#endif
