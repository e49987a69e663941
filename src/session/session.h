/*
 * session: the live recording, what `record`, `run`, `agent` and `top`
 * share, from start to end, around the recorder (src/record/): the
 * command held until recording has begun, privileges given up under sudo
 * before any file is opened, the recording file written beside its path,
 * the engine fed as rings are drained, collections into the ledger at an
 * interval and on request (written by a thread of their own, so a locked
 * ledger never holds up the draining), signals, progress on a terminal.
 * The command parses its options into struct live_opts (src/cli/live.h)
 * and gives the session its say-function and its accounts loader.
 */
#ifndef CPULEDGER_SESSION_SESSION_H
#define CPULEDGER_SESSION_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "../analysis/analysis.h"
#include "../core/attribute.h"
#include "../record/recorder.h"

struct engine;
struct eng_thread;
struct eng_figures;
struct eng_stack_figures;
struct recorder;
struct account_rules;

/* The exit statuses live_run gives back besides 0 and 127: the CLI's
 * EXIT_RUNTIME and EXIT_USAGE (src/cli/cli.h), which the command checks
 * are the same, so it passes them on as they are. */
#define LIVE_EXIT_RUNTIME 1
#define LIVE_EXIT_USAGE 2

/* -F/--freq: record and run sample at LIVE_HZ, where samples place the
 * time; the agent and top at LIVE_HZ_LIGHT, where the tracepoints give
 * it and samples only split it among functions. */
#define LIVE_HZ 1000
#define LIVE_HZ_LIGHT 49

/* How the ledger's writer is doing, for the agent's metrics. */
struct live_status {
	uint64_t collections;	/* written */
	uint32_t waiting;	/* in memory, not yet written */
	bool failing;
};

/*
 * What a long-running user of the recording (the agent, top) adds: a
 * start, where it adds its sink to the engine (engine__add_sink, for the
 * figures of threads as they go), a turn every poll of the
 * rings (at most 100 ms apart), and SIGHUP taken as "reload" instead of
 * "stop". All are called on the recording's own thread.
 */
struct live_hooks {
	void *ctx;
	/* after recording has started (the place to add a sink to the
	 * engine); 0, or an exit status to stop with */
	int (*started)(void *ctx, struct recorder *r, struct engine *e);
	int (*tick)(void *ctx, struct recorder *r, struct engine *e, uint64_t now_ns,
		    const struct live_status *st);
	/* SIGHUP; NULL: it stops the recording */
	int (*reload)(void *ctx, struct recorder *r);
};

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
	enum recorder_source source;	/* --source, CPULEDGER_SOURCE */
	double clock_interval;	/* bpf: its maps read every so many s; 0: 0.25 */
	const char *accounts;	/* --accounts FILE */
	const char *ledger;	/* --ledger */
	double interval;	/* --interval: a collection every so many s */
	uint32_t mmap_pages;	/* --mmap-pages */
	int realtime;		/* -r: SCHED_FIFO priority; 0: none */
	bool quiet;		/* no summary line */
	/* run: a table of the recording when it ends */
	bool analyse;
	struct analysis_opts a;
	const struct live_hooks *hooks;	/* the agent's, or NULL */
	uint32_t max_waiting;	/* collections waiting before they merge */
	double retain_days;	/* collections older go, daily; 0 never */
	/* the agent's bounds on memory (recorder.h); 0: none */
	uint32_t max_names, max_cgroups, max_symbol_files;
	uint64_t max_symbol_bytes, max_jit_bytes;
};

void live_opts__init(struct live_opts *o);
void live_opts__release(struct live_opts *o);

void live_opts__init(struct live_opts *o);
void live_opts__release(struct live_opts *o);

/* Where messages go: fn(fmt, ...) says one line (no newline in fmt);
 * NULL, the start, says nothing. */
void live_set_say(void (*fn)(const char *fmt, ...));
/* How --accounts FILE is read: 0, or nonzero having said what is wrong
 * (FILE:LINE); *text is the file, the session frees it. Without one, a
 * recording with --accounts ends with LIVE_EXIT_USAGE. */
void live_set_accounts_loader(int (*load)(const char *path, struct account_rules *rules,
					  char **text));

struct live_result {
	int child_status;	/* the command's wait status, or -1 */
	/* the command's own and its waited-for children's (wait4), as
	 * time(1) shows them; valid when child_status is not -1 */
	struct rusage child_usage;
	struct analysis a;	/* with analyse */
	bool analysed;
};

/* Records until the command exits, the duration passes, the pids are gone,
 * or a signal (INT, TERM, HUP, PIPE) comes. Returns an exit status (0, 1,
 * 2; 127 when the command could not be run), having said what went wrong.
 * Release res with live_result__release(). */
int live_run(struct live_opts *o, struct live_result *res);
void live_result__release(struct live_result *res);
/* The exit status record and run give back: live_run's status, else the
 * command's as a shell gives it (its exit status, or 128 + its signal). */
int live_result__status(const struct live_result *res, int status);

/* Signals that stop or collect, blocked from the start of the process
 * until live_run's handlers are in place (so an early one is held, not
 * fatal). */
void live_block_signals(void);

/* Ends the recording as SIGTERM would (from a hook: `top`'s q key). */
void live_stop(void);

#endif
