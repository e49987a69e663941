/*
 * live: what `record` and `run` share: the recording from start to end,
 * around the recorder (src/record/): the command held until recording has
 * begun, privileges given up under sudo before any file is opened, the
 * recording file written beside its path, the engine fed as rings are
 * drained, collections into the ledger at an interval and on request
 * (written by a thread of their own, so a locked ledger never holds up
 * the draining), signals, progress on a terminal.
 */
#ifndef CPULEDGER_CLI_LIVE_H
#define CPULEDGER_CLI_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "options.h"
#include "../analysis/analysis.h"
#include "../core/attribute.h"

struct live_opts {
	bool all;		/* -a */
	pid_t *pids;		/* -p */
	int npids;
	uint32_t hz;		/* -F */
	bool callchain;		/* -g */
	double duration;	/* --duration, seconds; 0: until stopped */
	const char *output;	/* -o; NULL: no recording file */
	char **command;		/* after --, NULL-terminated */
	const char *root;	/* for /proc and tracefs: "/" */
	bool no_tracepoints;
	const char *accounts;	/* --accounts FILE */
	const char *ledger;	/* --ledger */
	double interval;	/* --interval: a collection every so many s */
	uint32_t mmap_pages;	/* --mmap-pages */
	int realtime;		/* -r: SCHED_FIFO priority; 0: none */
	bool quiet;		/* no summary line */
	/* run: a table of the recording when it ends */
	bool analyse;
	struct analysis_opts a;
};

void live_opts__init(struct live_opts *o);
void live_opts__release(struct live_opts *o);

/* The options record and run share, for their tables. */
extern const struct cli_option live_record_options[];
/* Takes one of them; 1 taken, 0 not one of them, -1 bad (said). */
int live_opts__parse(struct live_opts *o, int id, const char *arg);

struct live_result {
	int child_status;	/* the command's wait status, or -1 */
	struct analysis a;	/* with analyse */
	bool analysed;
};

/* Records until the command exits, the duration passes, the pids are gone,
 * or a signal (INT, TERM, HUP, PIPE) comes. Returns an exit status (0, 1,
 * 2; 127 when the command could not be run), having said what went wrong.
 * Release res with live_result__release(). */
int live_run(struct live_opts *o, struct live_result *res);
void live_result__release(struct live_result *res);

/* Signals that stop or collect, blocked from the start of the process
 * until live_run's handlers are in place (so an early one is held, not
 * fatal). */
void live_block_signals(void);

#endif
