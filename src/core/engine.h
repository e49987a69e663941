/*
 * engine: CPU time and steal per thread and function, computed as events
 * arrive, in memory that follows the live tasks and open stints, never the
 * length of the recording (design.md, "Running for as long as the machine
 * does").
 *
 * Events come from several per-CPU streams (perf's rings, a recording's
 * items, perf script text). Each stream is in time order, but a runtime
 * event may be raised on another CPU than the one its thread runs on, so
 * the engine keeps events in a reorder queue and processes them in time
 * order up to a watermark its caller gives: the time up to which every
 * stream has been read (engine__advance). An event older than what was
 * already processed is taken at once and counted as late.
 *
 * Steal per on-CPU stint (the model is in docs/record.md): for a stay of
 * a thread on a CPU, from sched_switch in to out,
 *     residual = wall time - sum of its sched_stat_runtime
 * and the gaps in its cpu-clock samples (a late sample stands for the
 * grid points since the one due: the vCPU took no interrupt). Where the
 * kernel's runtime excludes steal (enum steal_accounting), the residual
 * is the stint's steal plus the switch path's bias and noise: its steal
 * is residual - bias when beyond the noise band. Bias (the median of the
 * band around the densest residual near 0) and band (four standard
 * deviations below it, at least 20 us) are calibrated over a rolling
 * window: a closed stint waits in a queue of up to ENGINE_PENDING stints
 * and is judged by the residuals of those behind it and of the
 * ENGINE_PENDING judged before it, so the window is centred on it; a
 * recording of fewer stints than the queue holds is judged over all of
 * them, as a batch would. Where runtime includes steal (or IRQ time too)
 * the gaps are the steal, taken out of runtime. Not told, the engine
 * judges which from the stints with gaps. With scale_to_kernel each
 * CPU's steal is the kernel's, shared in proportion to that evidence
 * (engine__settle). A stint's steal is then placed among its functions
 * at the gaps that showed it, by seed 001's methods.
 *
 * The kernel does not report every switch: on some guests a switch from
 * the idle task raises no sched_switch (perf sees the same), so an event
 * that shows another task on a CPU than the one on record (a switch out
 * of it, a cpu-clock sample of it) stands for the missed switch. The
 * stint on record ends at its last checkpoint; the new one begins where
 * the runtime its thread was raised meanwhile says it did (a runtime
 * event's delta is the time it ran since it was last accounted).
 *
 * A thread's cpu_ns is the sum of its runtime events, split among its
 * functions by their samples. When a thread has exited (and its last
 * switch out was seen, or ENGINE_EXIT_GRACE_NS passed: the exit record
 * comes before the last runtime), is off every CPU and has no stint
 * waiting, its figures are handed to the sink and it is forgotten; a
 * process goes when its last thread has gone.
 *
 * Nothing here does I/O. Strings are ids of a strtab the caller owns.
 */
#ifndef CPULEDGER_CORE_ENGINE_H
#define CPULEDGER_CORE_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "attribute.h"
#include "hindex.h"
#include "units.h"

#define ENGINE_NONE UINT32_MAX

/* What a recording can measure of steal. */
enum steal_mode {
	STEAL_STINTS,	/* sched_switch and sched_stat_runtime: per stint */
	STEAL_GAPS,	/* samples only, system-wide: each CPU's /proc/stat
			 * steal shared over the sample gaps on it */
	STEAL_UNKNOWN,	/* the command's own user-space samples: unknown */
	STEAL_GIVEN,	/* the kernel's own clocks per thread (the BPF
			 * collector): each thread's CPU time and steal come
			 * as EK_CLOCK events, read, not inferred; samples
			 * only split them among its functions */
};

/*
 * What the scheduler's task clock (sched_stat_runtime, sum_exec_runtime)
 * leaves out, by the kernel's configuration (docs/record.md, "What each
 * kernel gives"): with PARAVIRT_TIME_ACCOUNTING it excludes steal, so a
 * stint's residual is its steal; without it (Debian, Ubuntu, SUSE, Azure
 * Linux) runtime includes steal, and steal is found from the sample gaps
 * (scaled per CPU to the kernel's steal when the caller gives it) and
 * taken out of runtime; with IRQ_TIME_ACCOUNTING too (Red Hat) the
 * residual also holds IRQ time, so the gaps (which IRQs do not make)
 * find steal there as well.
 */
enum steal_accounting {
	ACCT_JUDGE,		/* not known: judged from the data */
	ACCT_EXCLUDED,		/* runtime excludes steal (paravirt) */
	ACCT_INCLUDED,		/* runtime includes steal (plain) */
	ACCT_EXCLUDED_IRQ,	/* runtime excludes steal and IRQ time */
};

enum eng_kind {
	EK_SAMPLE,	/* pid, tid (0: idle), function, dso, account, flags,
			 * stack (ENGINE_NONE: none) */
	EK_SWITCH,	/* pid: prev tid, tid: next tid (0: idle) */
	EK_RUNTIME,	/* tid ran value ns */
	EK_TASK,	/* tid of process pid is alive, named comm */
	EK_FORK,	/* new thread tid of pid, from ptid of ppid */
	EK_COMM,	/* thread tid of pid is now named comm (exec: flags) */
	EK_EXIT,	/* thread tid of pid exited */
	EK_LOST,	/* records of cpu were dropped between value and time */
	EK_PROC,	/* process pid runs text (command line), exe, as uid */
	EK_CGROUP,	/* thread tid (0: process pid) is in cgroup */
	EK_CLOCK,	/* STEAL_GIVEN: since its last EK_CLOCK, thread tid of
			 * pid ran value ns (steal already out) and lost
			 * steal ns to the hypervisor while it held a CPU;
			 * EF_FINAL: its last figures (it exited). Of no
			 * CPU: time is when the source read them */
	EK_CPU_CLOCK,	/* STEAL_GIVEN with cpu_clocks: since its last
			 * EK_CPU_CLOCK, cpu lost steal ns to the hypervisor
			 * while a thread held it (not idle); time is when
			 * the source read it */
};

#define EF_KERNEL 1		/* sample: taken in kernel mode */
#define EF_EXECUTABLE 2		/* sample: in the process's main executable */
#define EF_EXEC 4		/* comm: the thread exec'd */
#define EF_FINAL 8		/* clock: the thread's last figures */

struct eng_event {
	uint64_t time;
	uint64_t value;
	union {
		uint64_t ip;	/* sample: its address (account ranges) */
		uint64_t steal;	/* clock: steal ns */
	};
	uint32_t pid, tid, ppid, ptid;
	uint32_t function, dso, account;	/* sample: string ids */
	uint32_t stack;		/* sample: the caller's stack id */
	uint32_t comm;		/* task, fork, comm: string id */
	uint32_t cgroup;	/* cgroup: its path, a string id */
	uint32_t cpu;
	uint32_t seq;		/* set by the engine: arrival order */
	uint8_t kind, flags;
	/* proc: owned strings (NULL: unknown), moved into the engine */
	char *text, *exe;
	int64_t uid;
};

/* What the engine is given at the start. */
struct engine_config {
	enum steal_method method;
	enum steal_mode mode;
	uint64_t interval_ns;	/* the sampling period */
	uint32_t ncpus;		/* cpu numbers below this */
	uint32_t vm;		/* the host's name (string id), for rows */
	uint32_t unknown_fn;	/* string id of "[unknown]" */
	bool by_cpu;		/* keep each function's figures per CPU */
	bool scope_all;		/* every process is in scope (-a) */
	bool keep_all;		/* hand nothing out before engine__finish
				 * (a STEAL_GAPS recording needs the end) */
	uint64_t start_ns;	/* when recording began (0: unknown): a CPU
				 * whose first switch is from idle was idle
				 * since then */
	enum steal_accounting accounting;	/* STEAL_STINTS: what runtime
						 * holds */
	/* STEAL_STINTS: the kernel counts steal (a steal clock): each CPU's
	 * steal is its /proc/stat steal (engine__set_kernel_steal), shared
	 * among its stints as their residuals or gaps say (engine__settle) */
	bool scale_to_kernel;
	/* the kernel steal's resolution: /proc/stat counts in USER_HZ ticks,
	 * so its growth is the truth to one tick either way. Residuals are
	 * held within that of it (engine__settle); 0: the kernel's figure
	 * is exact, always the reference */
	uint64_t kernel_tick_ns;
	/* how long after its exit a thread is kept for its last figures
	 * (0: ENGINE_EXIT_GRACE_NS); STEAL_GIVEN: longer than the source
	 * takes between two reads, so that its EK_CLOCK with EF_FINAL
	 * comes first */
	uint64_t exit_grace_ns;
	/* STEAL_GIVEN: each CPU's steal comes as EK_CPU_CLOCK events (the
	 * collector reads each CPU's steal clock). Without them a thread's
	 * steal counts on the CPU it was sampled on last: a thread's clock
	 * is one sum over the CPUs it ran on, and a migrating thread's
	 * steal then lands on the wrong one */
	bool cpu_clocks;
};

/* A process, as the sink sees it. */
struct eng_proc {
	uint32_t pid;
	uint64_t start_ns;	/* its fork, or 0: alive at the start */
	char *command;		/* command line, or NULL (the caller shows
				 * [comm]); owned by the engine */
	bool command_inherited;	/* its parent's, until it execs */
	char *executable;	/* NULL unknown */
	int64_t uid;		/* -1 unknown */
	uint32_t comm;		/* its main thread's name, or ENGINE_NONE */
	uint32_t cgroup;	/* its cgroup's path, or ENGINE_NONE */
	bool in_scope;		/* -p PID or -- CMD and their descendants */
	bool exited;
	uint32_t nthreads;
	bool used, attached;	/* engine's: a slot in use; found by pid */
	uint32_t hnext;		/* engine's free list */
};

/* A thread, as the sink sees it. */
struct eng_thread {
	uint32_t tid;
	uint32_t proc;		/* index of its eng_proc */
	uint32_t comm;		/* its name (string id), or ENGINE_NONE */
	uint32_t cgroup;	/* its own cgroup (from its samples), or
				 * ENGINE_NONE: its process's */
	uint64_t cpu_ns;	/* sum of its runtime (or samples x interval),
				 * less steal_taken */
	/* STEAL_STINTS: its runtime events' sum, and the steal taken out of
	 * it (runtime that includes steal): cpu_ns is the one less the other,
	 * never below 0, however the steal came in */
	uint64_t runtime_ns, steal_taken;
	uint64_t samples;
	uint64_t first_ns, last_ns;	/* its first and last event (0: none) */
	/* its fork, or 0: alive at the start (or its fork not seen); with
	 * its tid, which thread it is (tids are given again) */
	uint64_t start_ns;
	/* STEAL_GIVEN: its samples at its last EK_CLOCK, and the CPU it was
	 * sampled on last (ENGINE_NONE: none) */
	uint64_t clock_mark;
	uint32_t last_cpu;
	/* engine's own */
	uint32_t oncpu;		/* CPU it runs on, or ENGINE_NONE */
	uint32_t refs;		/* stints of it waiting in the queue */
	bool exited;
	bool done;		/* exited and off its CPU for good (its last
				 * switch out seen, or ENGINE_EXIT_GRACE_NS
				 * passed, or its tid given again) */
	uint64_t exit_ns;
	/* runtime raised while it was on no stint the engine knew of: if
	 * the switch to it was missed, where its stint began */
	uint64_t pend_start, pend_last, pend_ns;
	uint32_t progs;		/* its programs, a list */
	/* its stacks, in the order first sampled: an array of its own, let
	 * go whole with it (from a pool of all threads', each stack taken
	 * missed the cache on the free list, and a hand-out walked a list) */
	struct eng_stack *stack_v;
	uint32_t nstacks, stacks_cap;
	uint32_t unknown_prog;	/* its program of no known function */
	uint32_t last_prog;	/* its program sampled last, or ENGINE_NONE */
	uint32_t progs_tail;
	uint32_t nprogs;	/* programs it has had */
	/* STEAL_GIVEN: its programs sampled since its last EK_CLOCK (a list
	 * through window_next): a clock walks them, not all it ever ran (a
	 * make's or a shell's hundreds, at each of its clocks) */
	uint32_t window;
	/* its programs and stacks by key: an index of each thread's own,
	 * small and warm while it runs, let go whole when it is (one index
	 * of them all missed the cache on each look-up and each of the
	 * half-million removals of 8 minutes of a compile loop) */
	struct hindex prog_index, stack_index;
	bool used, attached;	/* a slot in use; found by tid */
	uint32_t hnext;
};

/* One function of a thread: what the sink is handed. */
struct eng_figures {
	uint32_t function, dso, account;	/* string ids (NO_DSO) */
	uint32_t cpu;		/* with by_cpu; else ENGINE_NONE */
	uint64_t samples, steal_samples;
	uint64_t run_ns, steal_ns;	/* corrected cpu time, and steal */
	uint64_t inclusive_ns;	/* with stacks: time with it on the stack */
};

/* Time and steal of one call stack of a thread. stack is ENGINE_NONE for
 * a function's time and steal that no sample placed (a thread that ran
 * unsampled, steal no gap placed): a stack of that one function. */
struct eng_stack_figures {
	uint32_t stack, account;
	uint32_t function, dso;	/* with stack ENGINE_NONE */
	uint64_t samples, cpu_ns, steal_ns;
};

struct engine;

/* Where figures go. final says the thread is gone (its last figures);
 * otherwise they are its cumulative figures so far (engine__walk). */
struct engine_sink {
	void *ctx;
	/* may be NULL */
	int (*program)(void *ctx, const struct engine *e, const struct eng_thread *t,
		       const struct eng_figures *f, bool final);
	int (*stack)(void *ctx, const struct engine *e, const struct eng_thread *t,
		     const struct eng_stack_figures *f);	/* may be NULL */
	/* after a thread's last figures; may be NULL */
	int (*thread_gone)(void *ctx, const struct engine *e, const struct eng_thread *t);
	/* before a thread's figures (its programs, then its stacks), which
	 * come together: what is the thread's alone (its process, names,
	 * whether it is wanted) worked out once, not per program; may be
	 * NULL */
	int (*thread_begin)(void *ctx, const struct engine *e, const struct eng_thread *t);
};

/* Figures of the whole recording, and of each CPU. */
struct eng_cpu_stats {
	uint64_t steal_ns;	/* attributed to threads on it */
	uint64_t idle_ns;	/* time it ran the idle task (stints mode) */
	uint64_t samples, idle_samples, stints;
	uint64_t kernel_steal_ns;	/* STEAL_GAPS: /proc/stat's, shared out */
	bool seen;		/* it had events */
};

struct engine_stats {
	uint64_t run_ns, steal_ns, idle_ns;
	uint64_t samples, idle_samples;
	int64_t bias_ns, noise_ns;	/* the last calibration */
	uint64_t bias_stints;	/* stints the bias was found on (0: none
				 * near it: bias taken as 0) */
	/* STEAL_STINTS: the accounting used (ACCT_JUDGE: judged from the
	 * data and still undecided, residuals used), and the stints that
	 * judged it: those with a sample gap, and of them those whose
	 * residual held it (runtime excludes steal) */
	enum steal_accounting accounting;
	bool accounting_judged;
	uint64_t judge_gapped, judge_agreed;
	/* or, where no missed tick told, by the kernel's steal (0: not) set
	 * against what the residuals held */
	uint64_t judge_kernel_ns, judge_residual_ns;
	bool steal_from_gaps;	/* steal was found from sample gaps */
	bool steal_scaled;	/* and shared out as the kernel's steal */
	uint64_t unmatched_runtime_ns;	/* runtime outside any known stint */
	uint64_t steal_over_runtime_ns;	/* found in sample gaps past what a
					 * runtime holding steal held: not
					 * placed */
	uint64_t unmeasured_stints;	/* no runtime event: not a fair task */
	uint64_t missed_switches;	/* a switch the kernel did not report,
					 * inferred from the next event */
	uint64_t unraised_stints;	/* measured stints that left raising no
					 * runtime (its event lost): judged to
					 * their last runtime */
	uint64_t lossy_stints;	/* records of their time lost: not judged */
	uint64_t late_events;	/* older than the watermark already passed */
	uint64_t threads_live, threads_gone, procs_live;
	uint64_t queued_events, pending_stints;
};

/* "auto", "paravirt", "plain", "paravirt+irq": the names of the kernels'
 * accountings (their configuration options), as options and recordings
 * spell them; parse returns 0 or -EINVAL. */
const char *steal_accounting__name(enum steal_accounting a);
int steal_accounting__parse(const char *s, enum steal_accounting *out);
/* What runtime holds, in words; by name ("runtime ...", or "" for a name
 * not known). */
const char *steal_accounting__describe(enum steal_accounting a);
const char *steal_accounting__describe_name(const char *name);

/* NULL with errno ENOMEM. sink is the first of the sinks (NULL: none yet). */
struct engine *engine__new(const struct engine_config *c, const struct engine_sink *sink);

/* Another consumer of the threads' last figures (the run's table, the
 * ledger's collections, the agent's /metrics, top), each its own sink
 * so that no caller chains them: every sink is handed every thread gone,
 * in the order added. Up to ENGINE_SINKS; 0 or -ENOSPC. */
#define ENGINE_SINKS 4
int engine__add_sink(struct engine *e, const struct engine_sink *sink);
void engine__free(struct engine *e);

/* Puts process pid in scope (a -p PID or the recorded command). */
int engine__scope(struct engine *e, uint32_t pid);

/* When recording began (config's start_ns), for an engine made before
 * it did (a live recorder's): before its first event. */
void engine__set_start(struct engine *e, uint64_t start_ns);

/* STEAL_GAPS, and STEAL_STINTS where steal is found from sample gaps: a
 * CPU's steal by /proc/stat over the recording (its gaps are scaled to
 * it; without it they count as they are). */
void engine__set_kernel_steal(struct engine *e, uint32_t cpu, uint64_t ns);

/* Shares out what was weighed since the last call: each CPU's kernel steal
 * since then (engine__set_kernel_steal gives it, cumulative), or the
 * weights as they are. The end does it by itself; a long recording calls
 * it now and then (each collection), so that threads are not held. 0,
 * or the sink's error. */
int engine__settle(struct engine *e);

/* Queues an event; its text and exe become the engine's (freed by it, even
 * on failure). 0, -EINVAL (cpu out of range) or -ENOMEM. */
int engine__push(struct engine *e, struct eng_event *ev);

/* Processes the queued events up to time `watermark`: every stream has
 * been read up to it. 0, or the sink's error, or -ENOMEM. */
int engine__advance(struct engine *e, uint64_t watermark);

/* Processes ev now, taken in order from a reorder queue (reorder.h) kept
 * by another thread in the engine's place (this one's then stays
 * empty); late: reorder__push said it came late. Its text and exe are
 * the engine's. 0, or the sink's error, or -ENOMEM. */
int engine__process(struct engine *e, struct eng_event *ev, bool late);

/* engine__push, then engine__advance(then) (UINT64_MAX: not); past
 * max_queued waiting, engine__advance(streams_read(ctx)) (the time every
 * stream has been read up to, UINT64_MAX: none), then engine__shed to
 * half: a file without round marks, made to make a reader hold
 * everything. An event of no CPU is refused and advances nothing: 0.
 * 0, or the sink's error, or -ENOMEM. */
int engine__push_bounded(struct engine *e, struct eng_event *ev, uint64_t then,
			 uint32_t max_queued, uint64_t (*streams_read)(const void *ctx),
			 const void *ctx);

/* Processes the oldest queued events until no more than max_queued wait,
 * whatever the watermark: a bound on memory when a source gives none (an
 * event older than those then comes late, and is counted so). */
int engine__shed(struct engine *e, uint32_t max_queued);

/* The recording ended at end_ns (0: at its last event): processes what is
 * queued, closes open stints, judges the waiting ones, and hands out
 * every thread. Call once. 0, the sink's error, or -ENOMEM. */
int engine__finish(struct engine *e, uint64_t end_ns);

/* Hands the sink every live thread's cumulative figures (final false). */
int engine__walk(struct engine *e, const struct engine_sink *sink);

/* Calls fn for each live thread, with its process (or NULL): what another
 * engine needs to start from this one's knowledge. Stops at fn's error. */
int engine__each_thread(const struct engine *e,
			int (*fn)(void *ctx, const struct eng_proc *p, const struct eng_thread *t),
			void *ctx);

/* Calls fn with every comm and cgroup string id that a thread or process
 * the engine holds (exited ones too) refers to: what a pool of names must
 * keep (namepool.h). Events still queued are the caller's to account. */
void engine__each_name(const struct engine *e, void (*fn)(void *ctx, uint32_t id), void *ctx);

const struct engine_stats *engine__stats(const struct engine *e);
const struct eng_cpu_stats *engine__cpu(const struct engine *e, uint32_t cpu);
const struct eng_proc *engine__proc(const struct engine *e, uint32_t index);
/* Thread t's cgroup (a string id), or ENGINE_NONE: not known. */
uint32_t engine__cgroup(const struct engine *e, const struct eng_thread *t);
/* The live process pid, or NULL. */
const struct eng_proc *engine__find_proc(const struct engine *e, uint32_t pid);
const struct engine_config *engine__config(const struct engine *e);

/* CPU time and steal per CPU over the recording's time, in buckets of
 * bucket_ns (1 s, doubled as needed to stay within ENGINE_SERIES_MAX)
 * from origin_ns: run_ns[bucket * ncpus + cpu]. Runtime counts at its
 * event, a stint's steal at its end. */
struct eng_series {
	uint64_t origin_ns, bucket_ns;
	uint32_t nbuckets, cap, ncpus;
	uint64_t *run_ns, *steal_ns;
};
#define ENGINE_SERIES_MAX 2048
const struct eng_series *engine__series(const struct engine *e);

/* How many stints wait to be judged at most, and how many judged stints'
 * residuals the window keeps beside them. */
#define ENGINE_PENDING 8192

/* How long after its exit a thread is kept for its last runtime and
 * switch out (they follow the exit record by microseconds, unless the
 * records were lost). */
#define ENGINE_EXIT_GRACE_NS NSEC_PER_SEC

/* STEAL_GIVEN's exit grace (engine_config.exit_grace_ns): a thread's
 * final EK_CLOCK comes at the source's next read after its exit, and a
 * source reads at least every second. */
#define ENGINE_CLOCK_GRACE_NS (5 * NSEC_PER_SEC)

#endif
