/*
 * stint: steal per on-CPU stint, from a live recording's events.
 *
 * Kernel facts (design.md, "Beyond the seeds"): with paravirt steal
 * accounting, sched_stat_runtime's runtime and sum_exec_runtime exclude
 * steal, while event timestamps are wall time. So for one stay of a thread
 * on a CPU, from sched_switch in to sched_switch out, the residual
 *     r = wall time - sum of its sched_stat_runtime
 * is its steal, plus a small bias of the switch path, plus noise. Measured
 * on this project's kernel (6.18), two more facts shape the estimate:
 * - some switches update sum_exec_runtime without raising the tracepoint
 *   (seen between threads of one process), leaving up to a tick of runtime
 *   in r that is not steal;
 * - cpu-clock samples carry the fixed sample period, not the time since the
 *   last one; but their timestamps tell: the timer cannot fire while the
 *   vCPU is stolen, so inside a stint (where the thread holds the CPU,
 *   never idle) a sample later than one interval after the one before it,
 *   or than the stint's start, marks steal of that excess (G).
 * So a stint's steal is min(r - bias, G) when r - bias is beyond the noise:
 * each measure rejects the other's artifacts (lost runtime in r, timer
 * latency in G), and where both see steal they agree. The bias and noise
 * are calibrated from all stints (calibrate()).
 *
 * Inside a stint the steal is placed among functions by seed 001's
 * methods, at the gaps: preceding puts a gap on the program sampled before
 * it, bracketed only if the sample after it is the same program; ratio
 * places as preceding. The stint's steal is shared out in proportion to the
 * gaps placed; what none placed stays with the thread under "[unknown]".
 *
 * Records the kernel dropped (LIVE_LOST: between a CPU's last record and
 * the kernel saying so) look just like steal, missing runtime and missing
 * samples alike: a stint on that CPU overlapping the window is "lossy",
 * its steal not measured and its residual kept out of the calibration.
 *
 * A thread's cpu_ns is the sum of its sched_stat_runtime, split among its
 * functions by sample counts.
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
	LIVE_SAMPLE,	/* a = pid, b = tid, function (tid 0: the idle task) */
	LIVE_LOST,	/* the kernel dropped records of this CPU between
			 * value (its last record before) and time_ns */
};

#define LIVE_KERNEL 1		/* the sample was taken in kernel mode */
#define LIVE_EXECUTABLE 2	/* in the process's main executable */

struct live_event {
	uint64_t time_ns;
	uint64_t value;
	uint32_t a, b;
	uint32_t function;	/* string id, for samples */
	uint32_t dso;		/* string id, for samples, or NO_DSO */
	uint32_t account;	/* string id, for samples, or NO_DSO */
	uint64_t ip;		/* for samples */
	uint8_t flags;		/* for samples: LIVE_KERNEL, LIVE_EXECUTABLE */
	uint16_t cpu;
	uint8_t kind;
	uint32_t seq;		/* order of arrival, to sort stably */
};

struct live_cpu {
	uint64_t steal_ns;	/* attributed to threads on this CPU */
	uint64_t kernel_steal_ns;	/* LIVE_GAPS: /proc/stat's, to share out */
	uint64_t gap_ns;	/* LIVE_GAPS: all sample gaps seen on it */
	uint64_t last_any;	/* LIVE_GAPS: time of its last sample, any task */
	uint32_t last_any_prog;	/* and that sample's program (PROG_NONE: idle) */
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
	bool measured;		/* the stint has had a runtime event */
	uint64_t last_sample;	/* time of the stint's last sample, or its start */
	uint32_t last_stint;	/* the last stint closed on it, or UINT32_MAX */
};

struct live_stint {
	uint32_t tid, cpu;
	bool measured;		/* it had a runtime event (see stint.c) */
	int64_t residual;	/* wall - runtime */
	uint32_t last_prog;	/* program of its last sample */
	uint64_t evidence;	/* G: sample gaps beyond the interval */
	uint64_t given;		/* steal shared out through placed gaps */
	uint64_t start, end;	/* on the CPU from, to (its last checkpoint) */
	uint32_t prev_on_cpu;	/* the stint before it on its CPU */
	bool lossy;		/* records of its time were lost: not measured */
};

/* Where a sample's long period placed some of a stint's steal. */
struct live_gap {
	uint32_t prog;
	uint64_t ns;
	uint32_t stint;		/* LIVE_GAPS: the CPU instead */
};

struct live_thread {
	uint32_t tid, pid;
	uint64_t cpu_ns;	/* sum of runtime */
	uint64_t samples;
	uint32_t unknown_prog;	/* its program with no function known */
	uint32_t oncpu;		/* the CPU it runs on now, or UINT32_MAX */
	uint64_t first_ns, last_ns;	/* its first and last sample or runtime
					 * event (0: none) */
};

/* What the recording can measure. */
enum live_mode {
	LIVE_STINTS,	/* sched_switch and sched_stat_runtime: steal per stint */
	LIVE_GAPS,	/* samples only, system-wide: the kernel's per-CPU steal
			 * shared over the sample gaps on that CPU */
	LIVE_NO_STEAL,	/* the command's own user-space samples: steal unknown */
};

struct live {
	enum live_mode mode;
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
	int64_t bias_ns;	/* calibrated per-stint bias: the median residual */
	int64_t noise_ns;	/* excess under this is noise, not steal */
	uint64_t gap_min_ns;	/* a sample gap counts beyond this excess */
	uint64_t steal_ns;	/* attributed in all */
	uint64_t run_ns, samples;
	uint64_t unmatched_runtime_ns;	/* runtime outside any known stint */
	uint64_t unmeasured_stints;	/* no runtime event: not a fair-class task */
	uint64_t lossy_stints;	/* records of their time lost: steal unknown */
	bool inclusive;		/* call chains were recorded */

};

/* host: the name rows carry as "vm". 0 or -ENOMEM. */
int live__init(struct live *l, enum steal_method method, uint64_t interval_ns,
	       uint32_t ncpus, const char *host);
void live__release(struct live *l);

static inline uint32_t live__string(struct live *l, const char *s, size_t len)
{
	return strtab__intern(&l->strings, s, len);
}

/* Sets what the recording measures (LIVE_STINTS unless told), and for
 * LIVE_GAPS each CPU's steal from /proc/stat. Call before live__finish. */
void live__set_mode(struct live *l, enum live_mode mode);
void live__set_kernel_steal(struct live *l, uint32_t cpu, uint64_t ns);

/* A sample of thread tid had this function on its stack (call chains):
 * counts once a sample towards its inclusive time. 0 or -ENOMEM. */
int live__add_inclusive(struct live *l, uint32_t pid, uint32_t tid,
			uint32_t function, uint32_t dso, uint32_t account);

/* Adds one event; cpu must be below ncpus. 0, -EINVAL or -ENOMEM. */
int live__add(struct live *l, const struct live_event *e);

/* Processes every event added. 0 or -ENOMEM. Call once. */
int live__finish(struct live *l);

/* The thread tid, or NULL. */
const struct live_thread *live__thread(const struct live *l, uint32_t tid);

/* The program a sample event was counted to, after live__finish(); NULL
 * for the idle task's. */
const struct program *live__program_of(const struct live *l,
				       const struct live_event *e);

/* The rows' input for table__build(); valid until live__release(). */
void live__table_input(const struct live *l, struct table_input *in);

#endif
