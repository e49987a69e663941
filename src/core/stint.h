/*
 * stint: exact steal per on-CPU stint, from a live recording's events.
 *
 * Kernel facts (design.md, "Beyond the seeds"): with paravirt steal
 * accounting, sched_stat_runtime's runtime and sum_exec_runtime exclude
 * steal, while event timestamps are wall time. So for one stay of a thread
 * on a CPU, from sched_switch in to sched_switch out,
 *     steal = wall time - sum of its sched_stat_runtime - bias,
 * where bias is what the switch path itself adds to every stint. It is
 * calibrated as the first quartile of the residuals over all stints: most
 * stints see no steal at all, so a low quantile is the bias alone.
 *
 * Inside a stint the steal is placed among functions by seed 001's methods,
 * using the cpu-clock samples: their period runs on a clock that includes
 * steal, so a sample whose period is far above the interval marks where
 * steal fell. preceding puts that gap on the program sampled before it,
 * bracketed only if the sample after it is the same program; ratio places
 * as preceding. The stint's measured steal is then shared out in proportion
 * to the gaps placed; if none was placed, it stays with the thread under
 * the function "[unknown]".
 *
 * A thread's cpu_ns is the sum of its sched_stat_runtime (the growth of its
 * sum_exec_runtime), split among its functions by sample counts.
 *
 * Events are collected with live__add() in any order and processed in time
 * order by live__finish(), because a runtime event can fire on another CPU
 * than the one the thread runs on. Nothing here does I/O.
 */
#ifndef CPULEDGER_CORE_STINT_H
#define CPULEDGER_CORE_STINT_H

#include <stdbool.h>
#include <stdint.h>

#include "attribute.h"
#include "hindex.h"
#include "strtab.h"
#include "table.h"

enum live_kind {
	LIVE_TASK,	/* a = pid, b = tid: tid belongs to process pid */
	LIVE_SWITCH,	/* a = prev tid, b = next tid (0: idle) */
	LIVE_RUNTIME,	/* a = tid, value = runtime ns */
	LIVE_SAMPLE,	/* a = pid, b = tid, value = period ns, function */
};

struct live_event {
	uint64_t time_ns;
	uint64_t value;
	uint32_t a, b;
	uint32_t function;	/* string id, for samples */
	uint16_t cpu;
	uint8_t kind;
	uint32_t seq;		/* order of arrival, to sort stably */
};

struct live_cpu {
	uint64_t steal_ns;	/* attributed to threads on this CPU */
	uint64_t stints;
	uint64_t samples;
	/* during processing */
	uint32_t tid;		/* on the CPU now; 0 idle or unknown */
	bool known;		/* a switch has been seen */
	uint64_t since;		/* stint start */
	uint64_t runtime;	/* sum of the stint's runtime events */
	uint32_t last_prog;	/* program of the stint's last sample */
	uint32_t stint;		/* index of the open stint in stints[] */
	uint64_t ck_time;	/* last checkpoint: a switch or runtime event */
	uint64_t ck_runtime;	/* the stint's runtime up to it */
};

struct live_stint {
	uint32_t tid, cpu;
	int64_t residual;	/* wall - runtime */
	uint32_t last_prog;	/* program of its last sample */
	uint64_t located;	/* sum of its gaps */
	uint64_t given;		/* steal shared out through gaps */
	uint32_t remainder_to;	/* the program its last gap went to */
};

/* Where a sample's long period placed some of a stint's steal. */
struct live_gap {
	uint32_t prog;
	uint64_t ns;
	uint32_t stint;
};

struct live_thread {
	uint32_t tid, pid;
	uint64_t cpu_ns;	/* sum of runtime */
	uint64_t samples;
	uint32_t unknown_prog;	/* its program with no function known */
	uint32_t oncpu;		/* the CPU it runs on now, or UINT32_MAX */
};

struct live {
	enum steal_method method;
	uint64_t interval_ns;
	uint32_t vm;		/* the host's name, a string id */
	uint32_t unknown_fn;	/* string id of "[unknown]" */
	struct strtab strings;
	struct live_event *events;
	uint32_t nevents, events_cap;
	struct program *progs;
	uint32_t nprogs, progs_cap;
	struct hindex prog_index;
	struct live_thread *threads;
	uint32_t nthreads, threads_cap;
	struct hindex thread_index;
	struct live_stint *stints;
	uint32_t nstints, stints_cap;
	struct live_gap *gaps;
	uint32_t ngaps, gaps_cap;
	struct live_cpu *cpus;
	uint32_t ncpus;
	/* results */
	int64_t bias_ns;	/* calibrated per-stint bias */
	uint64_t steal_ns;	/* attributed in all */
	uint64_t run_ns, samples;
	uint64_t unmatched_runtime_ns;	/* runtime outside any known stint */
};

/* host: the name rows carry as "vm". 0 or -ENOMEM. */
int live__init(struct live *l, enum steal_method method, uint64_t interval_ns,
	       uint32_t ncpus, const char *host);
void live__release(struct live *l);

static inline uint32_t live__string(struct live *l, const char *s, size_t len)
{
	return strtab__intern(&l->strings, s, len);
}

/* Adds one event; cpu must be below ncpus. 0, -EINVAL or -ENOMEM. */
int live__add(struct live *l, const struct live_event *e);

/* Processes every event added. 0 or -ENOMEM. Call once. */
int live__finish(struct live *l);

/* The rows' input for table__build(); valid until live__release(). */
void live__table_input(const struct live *l, struct table_input *in);

#endif
