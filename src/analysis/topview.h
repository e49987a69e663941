/*
 * topview: what `cpuledger top` shows at each refresh, from the engine's
 * figures: per process, thread or program, the share of a CPU it ran and
 * had stolen since the refresh before (CPU %, STEAL %), its apparent and
 * corrected time since top started, and the account most of its time
 * went to. No I/O: the command draws it (src/cli/cmd-top.c).
 *
 * The engine hands out a thread's last figures when it is gone, and its
 * figures so far when walked (engine__walk at each refresh); topview keeps
 * each thread's cumulative figures and those at the refresh before, so a
 * refresh shows what each gained. A thread gone is shown in the refresh
 * after it went (its last gain), then forgotten when its process is; a
 * program keeps what its gone processes ran. Memory follows the live
 * threads and the distinct programs.
 */
#ifndef CPULEDGER_ANALYSIS_TOPVIEW_H
#define CPULEDGER_ANALYSIS_TOPVIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/engine.h"
#include "../core/hindex.h"
#include "../core/strtab.h"
#include "tracker.h"

enum top_mode { TOP_PROCESSES, TOP_THREADS, TOP_PROGRAMS };

enum top_sort { TOP_SORT_CPU, TOP_SORT_STEAL, TOP_SORT_APPARENT, TOP_SORT_TIME,
		TOP_SORT_PID, TOP_SORT_NAME, TOP_SORT_MEM, TOP_SORT_COUNT };

struct top_row {
	uint32_t pid, tid;		/* 0 where not of the mode */
	int64_t uid;			/* -1 unknown */
	uint32_t threads;		/* threads (or processes) summed */
	double cpu_pct, steal_pct;	/* of one CPU, over the last refresh */
	/* of one CPU: its threads' run-queue wait over the last refresh
	 * (schedstat run_delay, through read_wait); false when no thread of
	 * it could be read at both refreshes */
	double wait_pct;
	bool wait_known;
	uint64_t cpu_ns, steal_ns;	/* since top started */
	const char *name;		/* command line, comm or program */
	const char *account;		/* where most of its time went, or NULL */
	/* the kernel's, as top shows them: filled by the command from /proc
	 * (topview does no I/O); 0 and '?' when not known */
	uint64_t rss_kb;		/* resident memory (the process's) */
	uint64_t time_ticks;		/* utime + stime since it started (TIME+) */
	int nice;			/* NI */
	char state;			/* S: R, S, D, Z, T, I... */
	uint32_t ppid;			/* its parent (processes), 0 unknown */
	uint32_t depth;			/* topview__tree's: 0 a root, 1 a child... */
	uint32_t key;			/* topview's: pid, tid or program id */
	uint64_t best_ns;		/* topview's: its account's member's time */
};

struct top_thread;
struct top_program;

struct topview {
	const struct strtab *names;	/* the engine's */
	struct top_thread *t;
	uint32_t n, cap;
	struct hindex index;		/* (tid, first_ns) */
	struct top_program *progs;	/* what gone processes ran, by program */
	uint32_t nprogs, progs_cap;
	struct strtab prog_names;
	struct tracker shown;		/* each thread's figures at the last refresh */
	struct top_row *rows;		/* valid until the next refresh */
	uint32_t nrows, rows_cap;
	uint32_t cur;			/* the thread being handed, or UINT32_MAX */
	/* a live thread's schedstat run_delay now (0 or -errno), read once
	 * per thread per refresh; NULL: no WAIT% */
	int (*read_wait)(void *ctx, uint32_t pid, uint32_t tid, uint64_t *ns);
	void *wait_ctx;
};

int topview__init(struct topview *v, const struct strtab *names);
void topview__release(struct topview *v);

/* As the engine's sink (final: the thread is gone), and after its last
 * figures. */
int topview__program(struct topview *v, const struct engine *e, const struct eng_thread *t,
		     const struct eng_figures *f, bool final);
int topview__thread_gone(struct topview *v, const struct engine *e, const struct eng_thread *t);
/* The two above as a sink, for engine__add_sink. */
struct engine_sink topview__sink(struct topview *v);

/*
 * A refresh: walks the engine (the live threads' figures so far), makes
 * v->rows for mode, interval_ns after the refresh before, filtered to
 * names holding filter (NULL: all) and sorted; gone threads are shown
 * this once. 0 or -ENOMEM.
 */
int topview__refresh(struct topview *v, struct engine *e, enum top_mode mode,
		     uint64_t interval_ns, const char *filter, enum top_sort sort);

/* The rows sorted again (after the command filled what /proc says). */
void topview__sort(struct topview *v, enum top_sort sort);

/*
 * The rows as a tree, as top's forest view and htop's tree show them:
 * each process under its parent (by ppid, which the command fills), the
 * children of one parent in the order of the sort before, depth set; a
 * process whose parent is not among the rows is a root. A loop of
 * parents (pids reused) breaks where it is found. 0 or -ENOMEM (the rows
 * left as they were).
 */
int topview__tree(struct topview *v);

#endif
