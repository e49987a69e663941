/*
 * metrics: the engine's figures as Prometheus counters, for the agent's
 * /metrics: CPU time and steal per program (the executable's name) and
 * account since the agent started, summing the threads that have gone
 * (their last figures, as the engine hands them out) and those alive now
 * (engine__walk at each snapshot).
 *
 * What a scrape can rely on:
 * - counters never go down, and sum to the engine's figures exactly: a
 *   thread's time is split among its functions (so accounts) by its
 *   samples, and the split moves as samples come; so each snapshot adds
 *   only what the thread gained since the last one, split by its shares
 *   now (what was counted stays where it was counted);
 * - series by program, account and cgroup (its path, "unknown" where not
 *   known); run-queue wait by program and cgroup, each live thread's
 *   schedstat run_delay read at each snapshot, its change since the last
 *   (the change tracker's, like CPU's): a thread's wait between its last
 *   snapshot and its exit is not counted;
 * - at most max_programs program label values: the first programs seen
 *   keep theirs for the agent's life, the rest are summed as "other", so a
 *   scrape does not grow with the processes a machine runs (and a program
 *   never moves between its own label and "other", which would make both
 *   series jump); cgroup label values are bounded the same way.
 */
#ifndef CPULEDGER_ANALYSIS_METRICS_H
#define CPULEDGER_ANALYSIS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/cgstats.h"
#include "../core/engine.h"
#include "../core/hindex.h"
#include "../core/strtab.h"
#include "tracker.h"

struct metrics_series;

struct metrics_part;

struct metrics {
	const struct strtab *names;	/* the engine's */
	uint32_t max_programs;
	struct strtab labels;		/* programs and accounts, as shown */
	struct strtab labelled;		/* programs with a label of their own */
	struct strtab labelled_cgroups;	/* cgroups likewise */
	struct metrics_series *v;	/* by (program, account) */
	uint32_t n, cap;
	struct hindex index;
	uint32_t other;			/* the label id of "other" */
	/* what each live thread (tid, first_ns) had when last counted */
	struct tracker seen;
	/* the figures of the thread being handed out, by function */
	struct metrics_part *parts;
	uint32_t nparts, parts_cap;
	uint32_t part_tid, part_pid;
	uint64_t part_first_ns;
	/* run-queue wait (cpuledger_wait_seconds_total): read_wait gives a
	 * live thread's schedstat run_delay now (0 or -errno: gone, no
	 * schedstat), called once per thread per snapshot (never per
	 * switch); wait_start holds each thread's figure when the agent
	 * started (a thread not in it was born since). Both NULL: no wait. */
	int (*read_wait)(void *ctx, uint32_t pid, uint32_t tid, uint64_t *ns);
	void *wait_ctx;
	const struct cgstats *wait_start;
	uint32_t wait_account;		/* the label id marking wait series */
	/* waits are read at every wait_every-th snapshot (0 or 1: each): a
	 * read costs ~9 us of CPU here, so 1000 threads read each second
	 * would cost 1 % of a CPU by themselves */
	uint32_t wait_every, takes;
	bool taking;			/* in a metrics__take that reads waits */
};

/* What /metrics shows beside the programs, at a snapshot. */
struct metrics_extra {
	uint32_t ncpus;
	const uint64_t *cpu_steal_ns;	/* attributed by the engine, per CPU */
	/* stolen while the CPU was idle, per CPU (NULL: not known) */
	const uint64_t *idle_steal_ns;
	const uint64_t *kernel_steal_ns;	/* /proc/stat's, since the start */
	const bool *kernel_known;
	uint64_t lost;			/* records the kernel dropped */
	uint64_t lost_window_ns;	/* time of the CPUs' lost records */
	uint64_t lossy_stints;		/* stints of that time: not judged */
	/* bounded tables (the agent's --max-* options): entries now and
	 * evictions, by cache (metrics_cache) */
	uint64_t cache_entries[4], cache_evicted[4], cache_bytes[4];
	uint64_t names_refused;		/* thread names and cgroup paths dropped */
	uint64_t collections, collections_waiting;
	/* the throttled time of each cgroup labelled so far (by id in
	 * m->labelled_cgroups, as its own counters say: cpu.stat), where the
	 * cpu controller counts it */
	uint32_t ncgroups;
	const uint64_t *cgroup_throttled_ns;
	const bool *cgroup_throttled_known;
	double own_cpu_s;		/* the agent's CPU time */
	uint64_t own_rss_bytes;
	const char *version;
	/* where steal comes from (docs/record.md): residual or sample-gaps,
	 * what the kernel's runtime holds and how that was known, whether
	 * each CPU's steal is the kernel's */
	const char *steal_method, *kernel_accounting, *accounting_source;
	bool steal_scaled;
};

enum metrics_cache { MC_NAMES, MC_CGROUPS, MC_SYMBOL_FILES, MC_JIT_ENTRIES };

/* 0 or -ENOMEM. */
int metrics__init(struct metrics *m, const struct strtab *names, uint32_t max_programs);
void metrics__release(struct metrics *m);

/* As the engine's sink: a thread's figures, function by function (the
 * thread's figures are taken when the next thread's come, or at
 * metrics__thread_gone). */
int metrics__program(struct metrics *m, const struct engine *e, const struct eng_thread *t,
		     const struct eng_figures *f, bool final);
/* As the engine's sink: the thread's last figures were handed out. */
int metrics__thread_gone(struct metrics *m, const struct engine *e, const struct eng_thread *t);
/* The two above as a sink, for engine__add_sink. */
struct engine_sink metrics__sink(struct metrics *m);

/* A snapshot now: the gone threads' figures and the live ones'
 * (engine__walk). 0 or -ENOMEM. */
int metrics__take(struct metrics *m, struct engine *e);

/* The last snapshot in the Prometheus text format 0.0.4 (openmetrics
 * false) or OpenMetrics 1.0, in a new buffer (*text, *len; the caller
 * frees it). 0 or -ENOMEM. */
int metrics__write(const struct metrics *m, const struct metrics_extra *x, bool openmetrics,
		   char **text, size_t *len);

/* The program a process is shown as: its executable's name, else its
 * command's first word's, else its comm up to a '/' (kernel threads: one
 * name for a kind), else "[unknown]". */
const char *metrics_program_of(const struct eng_proc *p, const struct strtab *names,
			       char *buf, size_t size);

#endif
