/*
 * analysis: a recording (or a live recorder's engine) made into a table
 * and the figures a report shows beside it: one layer that `report`,
 * `run` and the HTML report share, instead of each opening, loading and
 * printing on its own.
 *
 * It is the engine's sink: each thread's figures, as the engine hands
 * them out, are summed into rows by the report's key (rows.h), filtered
 * and limited to the recording's scope; with call stacks, time per stack
 * too (pprof, folded) and inclusive time per function. Memory follows the
 * rows and stacks, never the samples.
 */
#ifndef CPULEDGER_ANALYSIS_ANALYSIS_H
#define CPULEDGER_ANALYSIS_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/accounts.h"
#include "../core/cgstats.h"
#include "../core/hindex.h"
#include "../core/pending_stacks.h"
#include "../core/engine.h"
#include "../core/rows.h"
#include "../core/source.h"
#include "../core/table.h"
#include "../replay/rec_source.h"
#include "../report/report.h"

struct analysis_opts {
	enum steal_method method;
	/* --kernel-accounting: what runtime holds, over what the recording
	 * says (accounting_set false: as recorded) */
	enum steal_accounting accounting;
	bool accounting_set;
	struct row_keys keys;		/* --by */
	const struct account_rules *rules;	/* NULL: stored, or defaults */
	const char *const *control;	/* control-program accounts */
	size_t ncontrol;
	bool stacks;			/* time per call stack (pprof, folded) */
	/* --format folded: the stacks are all it shows, each as its program
	 * and frames, so no rows are kept and each thread's stacks are summed
	 * by those as it goes (memory follows the programs and stacks seen,
	 * not the threads) */
	bool fold_stacks;
	/* the output reads the stacks alone (pprof, folded): no rows (a
	 * thread's functions as rows were most of the time and memory) */
	bool no_rows;
	/* stacks handed on as each thread goes (report_writer's
	 * stream_stack and its state), not kept: NULL keeps them */
	int (*stack_out)(void *ctx, const struct report_stack *rs, const struct rows *st,
			 const struct row *w);
	void *stack_ctx;
	bool salvage;
	bool raw_names;			/* functions as the file has them */
	/* filters, as perf report's --comms, --pids, --tids, --dsos:
	 * none given, none applied */
	const char *const *comms, *const *dsos;
	size_t ncomms, ndsos;
	const uint32_t *pids, *tids;
	size_t npids, ntids;
	double percent_limit;		/* rows under this share of cpu go */
	struct sort_spec sort;
	/* where rows of gone threads go, when rows are of whole threads
	 * (rows__store): the caller's scratch, which must outlive the
	 * table. NULL keeps them in memory */
	const struct row_store *row_store;
};

/* Figures summed by a name (a cgroup, an account), whatever --by is. */
struct analysis_sum {
	uint32_t name;
	uint64_t cpu_ns, steal_ns, wait_ns;
	uint32_t wait_threads;
};

struct analysis_sums {
	struct analysis_sum *v;
	uint32_t n, cap;
	struct hindex index;
	uint32_t last;	/* the entry found last, as id + 1 (0: none): a
			 * thread's programs mostly name one account, and
			 * all of them its cgroup */
};

/* The thread being handed out, worked out once for all its figures (its
 * programs, stacks and end) instead of once for each. */
struct analysis_thread {
	const struct eng_proc *proc;	/* NULL: none */
	const char *command, *comm;	/* its command (or [comm]) and comm */
	uint32_t cgroup;	/* a string id, or ENGINE_NONE */
	char bracketed[40];
	bool wanted;		/* in scope, and by every filter but --dso */
	struct row_key key;	/* its row's key, no function yet */
	/* its part of the keys of rows and stacks, once needed */
	struct row_base rows, stacks;
	bool rows_based, stacks_based;
	char prog[256];		/* fold_stacks: its program, as folded
				 * lines name it */
};

struct analysis {
	struct analysis_opts o;
	struct table *table;
	struct report_extras x;
	/* owned by the analysis */
	struct report_cpu *cpus;
	struct report_event *events;
	struct rows rows, stacks;
	uint64_t stack_batches;	/* stacks_out's so far */
	/* stack_out: the gone thread's stack rows as the engine handed them
	 * out, made rows of a->stacks only as they are handed on (stacks_out) */
	struct pending_stacks pending;
	struct rows staged;	/* fold_stacks: the names of the thread
				 * handed out, for its program's */
	struct report_folds folds;	/* fold_stacks: the gone threads'
					 * stacks by folded line */
	struct attrib_totals totals;
	const struct strtab *names;	/* the source's */
	struct stacktab *stack_frames;	/* the source's; stacks of one
					 * unsampled function are added */
	uint32_t unknown, vm;
	uint64_t programs;
	struct analysis_thread cur;
	/* the account last asked whether it is a control program's */
	uint32_t control_id;
	bool control_known, control_is;
	bool have_stacks;
	bool no_steal;		/* pipeline_opts' */
	/* one thread's functions, for their inclusive time (see on_stack) */
	struct incl_entry *incl;
	uint32_t nincl, incl_cap;
	struct hindex incl_index;
	/* per cgroup and per account, in scope (see report_cgroup and
	 * report_account) */
	struct analysis_sums cgsum, accsum;
	const struct cgstats *cg;	/* the source's counters and waits, or
					 * NULL; set before the engine runs */
	struct report_cgroup *cgroups;
	struct report_account *accounts;
	struct report_series series;	/* its arrays owned */
	struct rec_source *src;		/* when read from a file */
	struct engine *engine;
	char steal_source[192];
	char accounting_source[128];
};

/* Sets up a for figures named in names (and stacks in stack_frames);
 * then engine__new(..., analysis__sink(a)). 0 or -ENOMEM. */
int analysis__init(struct analysis *a, const struct analysis_opts *o,
		   const struct strtab *names, struct stacktab *stack_frames,
		   uint32_t unknown, uint32_t vm);
struct engine_sink analysis__sink(struct analysis *a);

/* After engine__finish(e): the table and extras (a->table, a->x).
 * 0 or -ENOMEM. */
int analysis__build(struct analysis *a, const struct engine *e,
		    const struct source_desc *s);

void analysis__release(struct analysis *a);

#endif
