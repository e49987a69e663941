/*
 * engine_impl: the engine's state, shared by its three files:
 * engine.c (lifecycle, the reorder queue, dispatch), engine_tasks.c
 * (processes, threads, functions, stacks, and handing them out) and
 * engine_stints.c (stints, calibration, steal placement).
 */
#ifndef CPULEDGER_CORE_ENGINE_IMPL_H
#define CPULEDGER_CORE_ENGINE_IMPL_H

#include <stddef.h>
#include <string.h>

#include "engine.h"
#include "grow.h"
#include "reorder.h"

/* A function (program) of a thread. */
struct eng_prog {
	uint32_t thread;	/* its thread's slot */
	uint32_t function, dso, account, cpu;
	uint64_t samples, steal_samples, steal_ns;
	uint64_t clock_mark;	/* STEAL_GIVEN: samples at its thread's last
				 * EK_CLOCK */
	uint32_t nth;		/* its place in its thread's list */
	uint32_t window_next;	/* STEAL_GIVEN: its thread's programs sampled
				 * since its last EK_CLOCK, a list */
	uint32_t next;		/* the thread's list, in creation order;
				 * the free list when unused */
};

/* Where the entry made last for a stack lies: thread's stack_v[at1 - 1]
 * (at1 0: none). The thread may be gone since and its slot another's:
 * the entry is taken for a thread's only where that thread has one there
 * of that stack (the one made last is named, so it is that one). */
struct eng_stack_owner {
	uint32_t thread, at1;
};

/* A call stack of a thread (in its stack_v). */
struct eng_stack {
	uint32_t stack, leaf;	/* leaf: the program of its samples */
	uint64_t samples;
	/* leaf's key (eng_prog's), compared here: not in the program */
	uint32_t function, dso, account, cpu;
};

/* Where a sample gap placed some of a stint's steal. */
struct eng_gap {
	uint32_t prog;
	uint64_t ns;
	uint32_t next;
};

/* STEAL_GAPS: the gaps after one program's samples on one CPU. */
struct eng_gap_sum {
	uint32_t prog, cpu;
	uint64_t ns, count;
	bool ref;		/* holds its thread (STEAL_STINTS) */
};

struct eng_stint {
	uint32_t thread, cpu;
	uint64_t start, end;
	int64_t residual;	/* wall - runtime, when measured */
	uint64_t evidence;	/* sample gaps beyond the interval */
	uint32_t gaps;		/* list of eng_gap */
	uint32_t last_prog;	/* its (or its thread's) last program sampled */
	uint32_t older, newer;	/* closed stints of its CPU still waiting */
	bool measured, lossy;
	uint32_t next_free;
};

struct eng_cpu {
	struct eng_cpu_stats st;
	bool known;		/* a switch (or a stint from runtime) seen */
	uint32_t tid;		/* on it now: 0 idle */
	uint32_t thread;	/* its slot, or ENGINE_NONE */
	uint32_t stint;		/* the open stint, or ENGINE_NONE */
	uint64_t since;		/* the stint's (or idle's) start */
	uint64_t runtime;	/* the stint's runtime so far */
	uint64_t ck_time, ck_runtime;	/* its last exact checkpoint */
	bool measured;		/* it had a runtime event */
	/* the stint's start not known yet (its first runtime says): after
	 * `low`, at or before `since` ([low, since) was counted idle where
	 * inferred_idle) */
	bool inferred, inferred_idle;
	uint64_t inferred_low;
	uint64_t last_sample;	/* its last sample, or its start */
	uint32_t last_prog;	/* that sample's program */
	uint32_t newest;	/* newest closed stint still waiting */
	/* sample gaps on its grid (any task's samples): the next grid point
	 * due (0: none yet), and the program sampled last */
	uint64_t grid_next;
	uint64_t grid_late_at;	/* the last sample, if it was late (else 0) */
	uint32_t last_any_prog;
	uint64_t gap_ns;	/* STEAL_GAPS: every gap seen on it */
	uint64_t settled_gap_ns;	/* of gap_ns, the gap sums placed so far
					 * by this settling (eng_settle) */
	bool kernel_known;	/* its kernel steal was given */
	uint64_t kernel_placed_ns;	/* steal placed by settling so far */
	uint64_t measured_ns;	/* of gap_ns, the settled so far */
	uint64_t busy_ns;	/* wall time of its measured stints closed */
	uint64_t place_ns;	/* what this settling places (eng_settle) */
	uint64_t lost_from, lost_to;	/* its last loss of records */
	bool idle_quiet;		/* idle since idle_from, unsampled */
	uint64_t idle_from;
};

/* Objects in an array, reused through a free list. */
#define POOL(type) struct { type *v; uint32_t n, cap, free; }

#define ENGINE_THREAD_HINTS 256	/* engine.thread_hint's size, a power of 2 */

/* An object from a pool (ALLOC): a freed one, or a new one at the end;
 * FREE gives it back. link names the member that chains the free ones:
 * every pool of the engine is taken from and given back to alike. */
static inline uint32_t pool_alloc(void **v, uint32_t *n, uint32_t *cap, uint32_t *free_head,
				  size_t elem, size_t link)
{
	if (*free_head != ENGINE_NONE) {
		uint32_t id = *free_head;
		memcpy(free_head, (char *)*v + (size_t)id * elem + link, sizeof(uint32_t));
		return id;
	}
	if (grow_array(v, cap, *n, elem, 64))
		return ENGINE_NONE;
	return (*n)++;
}

static inline void pool_free(void *v, uint32_t *free_head, size_t elem, size_t link,
			     uint32_t id)
{
	memcpy((char *)v + (size_t)id * elem + link, free_head, sizeof(uint32_t));
	*free_head = id;
}

#define ALLOC(pool, link) pool_alloc((void **)&(pool).v, &(pool).n, &(pool).cap, \
				     &(pool).free, sizeof(*(pool).v), \
				     offsetof(__typeof__(*(pool).v), link))
#define FREE(pool, link, id) pool_free((pool).v, &(pool).free, sizeof(*(pool).v), \
				       offsetof(__typeof__(*(pool).v), link), id)

struct engine {
	struct engine_config c;
	struct engine_sink sinks[ENGINE_SINKS];	/* each handed every thread gone */
	uint32_t nsinks;
	struct engine_stats st;
	uint64_t gap_min_ns;
	struct eng_cpu *cpus;
	struct reorder q;	/* the events behind the watermark */
	uint64_t processed;	/* time of the last event processed */
	POOL(struct eng_proc) procs;
	POOL(struct eng_thread) threads;
	POOL(struct eng_prog) progs;
	POOL(struct eng_gap) gaps;
	POOL(struct eng_stint) stints;
	struct hindex proc_index, thread_index;
	/* the thread found last for each tid modulo ENGINE_THREAD_HINTS, as
	 * an index into threads, checked before the index: a CPU's samples
	 * and clocks mostly name the few threads that run now (0, or a slot
	 * freed or given to another tid since, fails the check) */
	uint32_t thread_hint[ENGINE_THREAD_HINTS];
	/* by stack id, the thread entry made last for that stack
	 * (eng_stack_sample): a thread finds its stacks here, and keeps in
	 * its stack_index only those another entry took the place of */
	struct eng_stack_owner *stack_owner;
	uint32_t stack_owner_cap;
	/* by function id, the program made last of that function, + 1 (0:
	 * none; eng_prog): the same for programs, which the stacks' new
	 * entries mostly make */
	uint32_t *prog_owner;
	uint32_t prog_owner_cap;
	/* closed stints waiting to be judged, oldest first (a ring), each
	 * with its residual as calibration reads it (FIFO_UNMEASURED: none),
	 * so that calibrating reads the ring, not each stint; lossy_waiting
	 * counts those among them marked lossy since (calibration then looks
	 * at the stints themselves) */
	struct eng_waiting { uint32_t stint; int64_t residual; } *fifo;
	uint32_t fifo_head, fifo_len, fifo_cap;
	uint32_t lossy_waiting;
	/* residuals of the stints judged last (a ring of ENGINE_PENDING) */
	int64_t *history;
	uint32_t history_len, history_next;
	int64_t *scratch;	/* calibration's working copy */
	uint32_t judged_since_calibration;
	bool calibrated;
	/* threads exited but not done, in order of exit (a ring) */
	struct eng_exiting { uint32_t thread, tid; uint64_t exit_ns; } *exiting;
	uint32_t exiting_head, exiting_len, exiting_cap;
	struct eng_gap_sum *gap_sums;	/* STEAL_GAPS */
	uint32_t ngap_sums, gap_sums_cap;
	struct hindex gap_sum_index;
	bool finished;
	struct eng_series series;
};

/* engine_series.c */
int eng_series_add(struct engine *e, uint32_t cpu, uint64_t t, uint64_t run, uint64_t steal);
/* Takes run time back from cpu's latest buckets (steal found later in a
 * runtime that held it). */
void eng_series_take(struct engine *e, uint32_t cpu, uint64_t run);

/* engine_tasks.c */
uint32_t eng_thread(struct engine *e, uint32_t tid, uint32_t pid);
uint32_t eng_thread_find(const struct engine *e, uint32_t tid);
uint32_t eng_prog(struct engine *e, uint32_t thread, uint32_t function,
		  uint32_t dso, uint32_t account, uint32_t cpu);
uint32_t eng_unknown_prog(struct engine *e, uint32_t thread);
/* A sample of stack in thread's program (function, dso, account, cpu),
 * counted: the program, or ENGINE_NONE out of memory. */
uint32_t eng_stack_sample(struct engine *e, uint32_t thread, uint32_t stack, uint32_t function,
			  uint32_t dso, uint32_t account, uint32_t cpu);
int eng_on_task(struct engine *e, const struct eng_event *ev);
int eng_on_fork(struct engine *e, const struct eng_event *ev);
int eng_on_comm(struct engine *e, const struct eng_event *ev);
int eng_on_exit(struct engine *e, const struct eng_event *ev);
int eng_on_proc(struct engine *e, struct eng_event *ev);
int eng_on_cgroup(struct engine *e, const struct eng_event *ev);
int eng_maybe_gone(struct engine *e, uint32_t thread);
int eng_exits_due(struct engine *e);
int eng_hand_out(struct engine *e, const struct engine_sink *sink, uint32_t thread,
		 bool final);
int eng_hand_out_all(struct engine *e);
void eng_tasks_release(struct engine *e);

/* engine_clock.c */
int eng_on_clock(struct engine *e, const struct eng_event *ev);
int eng_on_cpu_clock(struct engine *e, const struct eng_event *ev);
void eng_given_sample(struct engine *e, uint32_t thread, uint32_t prog, uint32_t cpu);

/* engine_stints.c */
int eng_on_switch(struct engine *e, const struct eng_event *ev);
int eng_on_runtime(struct engine *e, const struct eng_event *ev);
int eng_on_sample(struct engine *e, const struct eng_event *ev);
void eng_on_lost(struct engine *e, const struct eng_event *ev);
int eng_close_all(struct engine *e, uint64_t end_ns);
int eng_judge_waiting(struct engine *e, bool all);
int eng_settle(struct engine *e);
bool eng_steal_from_gaps(const struct engine *e);

#define POOL_GET(pool, i) (&(pool).v[i])

#endif
