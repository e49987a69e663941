/*
 * engine_stints: stints of threads on CPUs, their residuals and sample
 * gaps, the rolling calibration of bias and noise, and the steal each
 * judged stint places among its thread's functions (engine.h has the
 * model). Idle time is the time a CPU ran the idle task, between switches.
 */
#include "engine_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "banned.h"

#define CALIBRATION_MIN 16	/* fewer measured stints: nothing to go by */
#define NOISE_MIN_NS 20000
/* The switch path's bias is a few microseconds; residuals farther from 0
 * than this are steal (or IRQ time), never the bias. */
#define BIAS_MAX_NS 100000
/* Half the width of the band of stints without steal (measured: +-12 us) */
#define BAND_NS 30000
/* Stints whose sample gaps add up to an interval or more (a missed tick,
 * not a late one: timer latency on some hypervisors reaches hundreds of
 * microseconds) judge the accounting, once there are this many. */
#define JUDGE_MIN 16
/* Steal the kernel counted that judges the accounting: two USER_HZ ticks,
 * more than /proc/stat's rounding at each end. */
#define KERNEL_JUDGE_MIN_NS 20000000
/* Stints judged between two calibrations: at least 64, and a sixteenth
 * of the window, so that calibrating (linear in the window) costs a few
 * operations a stint however wide the window; the window moves by 6 % at
 * most between two. */
#define RECALIBRATE_EVERY 64

static const char *const accounting_names[] = {
	[ACCT_JUDGE] = "auto", [ACCT_EXCLUDED] = "paravirt", [ACCT_INCLUDED] = "plain",
	[ACCT_EXCLUDED_IRQ] = "paravirt+irq",
};

const char *steal_accounting__name(enum steal_accounting a)
{
	return accounting_names[a];
}

int steal_accounting__parse(const char *s, enum steal_accounting *out)
{
	for (size_t i = 0; i < sizeof(accounting_names) / sizeof(*accounting_names); i++)
		if (!strcmp(s, accounting_names[i])) {
			*out = (enum steal_accounting)i;
			return 0;
		}
	return -EINVAL;
}

const char *steal_accounting__describe(enum steal_accounting a)
{
	static const char *const text[] = {
		[ACCT_JUDGE] = "not known",
		[ACCT_EXCLUDED] = "runtime excludes steal",
		[ACCT_INCLUDED] = "runtime includes steal",
		[ACCT_EXCLUDED_IRQ] = "runtime excludes steal and IRQ time",
	};
	return text[a];
}

const char *steal_accounting__describe_name(const char *name)
{
	enum steal_accounting a;
	return steal_accounting__parse(name, &a) ? "" : steal_accounting__describe(a);
}

/* The longest a switch takes from the scheduler's reading of the clock
 * (where runtime stops and starts) to its report: longer, and the runtime
 * read before is not the switch's (seen: 99 % under 2 us, none past
 * 100 us, over 27 000 switches to idle). */
#define SWITCH_PATH_NS 100000

/* Starts a stint of tid on CPU c at time t (tid 0: idle, not measured). */
static int open_stint(struct engine *e, uint32_t cpu, uint32_t tid, uint64_t t)
{
	struct eng_cpu *c = &e->cpus[cpu];
	c->tid = tid;
	c->known = true;
	c->since = t;
	c->runtime = c->ck_runtime = 0;
	c->ck_time = t;
	c->measured = c->inferred = false;
	c->last_sample = t;
	c->last_prog = ENGINE_NONE;
	c->stint = c->thread = ENGINE_NONE;
	/* idle may stop the sample timer: idle for an interval or more with
	 * no idle sample leaves no grid to judge the next sample by */
	if (tid && c->idle_quiet && t >= c->idle_from + e->c.interval_ns)
		c->grid_next = 0;
	c->idle_quiet = !tid;	/* idle: until an idle sample shows the timer on */
	c->idle_from = t;
	if (!tid)
		return 0;	/* idle: the kernel keeps no runtime for it */
	uint32_t th = eng_thread(e, tid, ENGINE_NONE);
	uint32_t s = th == ENGINE_NONE ? ENGINE_NONE : ALLOC(e->stints, next_free);
	if (s == ENGINE_NONE)
		return -ENOMEM;
	e->threads.v[th].oncpu = cpu;
	e->threads.v[th].pend_ns = 0;
	c->thread = th;
	c->stint = s;
	e->stints.v[s] = (struct eng_stint){ .thread = th, .cpu = cpu, .start = t,
					     .gaps = ENGINE_NONE, .older = ENGINE_NONE,
					     .newer = ENGINE_NONE };
	return 0;
}

bool eng_steal_from_gaps(const struct engine *e)
{
	return e->c.mode == STEAL_STINTS && (e->st.accounting == ACCT_INCLUDED ||
					     e->st.accounting == ACCT_EXCLUDED_IRQ);
}

/* STEAL_STINTS: whether sample gaps are summed per program for steal:
 * where they are its source, or may turn out to be. */
static bool gaps_summed(const struct engine *e)
{
	return e->c.mode == STEAL_STINTS &&
	       (e->st.accounting == ACCT_JUDGE || eng_steal_from_gaps(e));
}

static int gap_sum_add(struct engine *e, uint32_t cpu, uint32_t owner, uint64_t excess,
		       uint64_t t);

/*
 * The steal a late sample stands for: the grid points its gap covered
 * times the interval. A gap of excess x over the interval covered
 * x / interval + 1 points, all stolen (the vCPU took no interrupt), and
 * points fall on steal in proportion to it whatever the episodes' length,
 * so this counts steal without bias where the excess alone misses the
 * part of each episode before its first point (up to one interval).
 * Episodes that cover no point leave no gap: they count through the ones
 * that do.
 */
static uint64_t grid_points(const struct engine *e, struct eng_cpu *c, uint64_t excess)
{
	uint64_t ns = (excess / e->c.interval_ns + 1) * e->c.interval_ns;
	c->gap_ns += ns;
	return ns;
}


/* Evidence of steal between `from` and a sample (or the stint's end) at
 * `to`: the excess over one interval, beyond the timer's own latency.
 * owner is the program a method places it on (ENGINE_NONE: nobody). */
static int gap(struct engine *e, struct eng_cpu *c, uint64_t from, uint64_t to,
	       uint32_t owner)
{
	if (c->stint == ENGINE_NONE || to < from + e->c.interval_ns + e->gap_min_ns)
		return 0;
	uint64_t excess = to - from - e->c.interval_ns;
	struct eng_stint *s = &e->stints.v[c->stint];
	s->evidence += excess;
	if (gaps_summed(e) && !e->c.scope_all && !s->lossy) {
		/* sampled per task: its clock stops off the CPU, so only gaps
		 * inside a stint show steal */
		uint32_t to_prog = owner != ENGINE_NONE ? owner : eng_unknown_prog(e, s->thread);
		int err = to_prog == ENGINE_NONE ? -ENOMEM :
			  gap_sum_add(e, s->cpu, to_prog, grid_points(e, c, excess), to);
		if (err)
			return err;
		s = &e->stints.v[c->stint];
	}
	if (owner == ENGINE_NONE)
		return 0;
	uint32_t g = ALLOC(e->gaps, next);
	if (g == ENGINE_NONE)
		return -ENOMEM;
	s = &e->stints.v[c->stint];
	e->gaps.v[g] = (struct eng_gap){ owner, excess, s->gaps };
	s->gaps = g;
	return 0;
}

/* A waiting stint's residual in the fifo: none when it measures nothing
 * (unmeasured, or lossy when closed). */
#define FIFO_UNMEASURED INT64_MIN

static int fifo_push(struct engine *e, uint32_t s)
{
	if (e->fifo_len == e->fifo_cap) {
		uint32_t cap = e->fifo_cap ? e->fifo_cap * 2 : 1024;
		struct eng_waiting *v = malloc((size_t)cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (uint32_t i = 0; i < e->fifo_len; i++)
			v[i] = e->fifo[(e->fifo_head + i) % e->fifo_cap];
		free(e->fifo);
		e->fifo = v;
		e->fifo_cap = cap;
		e->fifo_head = 0;
	}
	const struct eng_stint *st = &e->stints.v[s];
	e->fifo[(e->fifo_head + e->fifo_len++) % e->fifo_cap] = (struct eng_waiting){
		s, st->measured && !st->lossy ? st->residual : FIFO_UNMEASURED };
	return 0;
}

/* Ends CPU c's stint at its last checkpoint (a switch, or a runtime event
 * of its thread, where its runtime is known exactly); it waits to be
 * judged. */
static int close_stint(struct engine *e, uint32_t cpu)
{
	struct eng_cpu *c = &e->cpus[cpu];
	if (c->stint == ENGINE_NONE)
		return 0;
	uint32_t i = c->stint;
	struct eng_stint *s = &e->stints.v[i];
	/* Only CFS tasks raise sched_stat_runtime, and a CFS task always does
	 * when it leaves the CPU: a stint without one is of another class
	 * (RT, deadline) and cannot be measured this way. */
	s->measured = c->measured;
	s->residual = c->measured ?
		(int64_t)(c->ck_time - c->since) - (int64_t)c->ck_runtime : 0;
	if (!c->measured)
		e->st.unmeasured_stints++;
	else
		c->busy_ns += c->ck_time - c->since;
	s->end = c->ck_time;
	s->last_prog = c->last_prog != ENGINE_NONE ? c->last_prog :
		       e->threads.v[s->thread].last_prog;
	s->older = c->newest;
	if (c->newest != ENGINE_NONE)
		e->stints.v[c->newest].newer = i;
	c->newest = i;
	c->st.stints++;
	c->stint = ENGINE_NONE;
	struct eng_thread *th = &e->threads.v[s->thread];
	if (th->oncpu == cpu)
		th->oncpu = ENGINE_NONE;
	th->refs++;
	e->st.pending_stints++;
	int err = fifo_push(e, i);
	return err ? err : eng_judge_waiting(e, false);
}

/* The CPU ran the idle task from its stint's start to t. */
static void idle_until(struct engine *e, struct eng_cpu *c, uint64_t t)
{
	/* from the recording's start at the earliest: a CPU's events may run
	 * a little before it (they are enabled one CPU after another) */
	if (!c->known || c->tid || t <= c->since)
		return;
	uint64_t from = c->since > e->c.start_ns ? c->since : e->c.start_ns;
	if (t > from) {
		c->st.idle_ns += t - from;
		e->st.idle_ns += t - from;
	}
	c->since = t;
}

/*
 * An event at t shows tid on CPU cpu, not the task on record: the switch
 * to it was not reported. The stint on record ends at its last checkpoint
 * (where its runtime is known exactly); tid's began where the runtime it
 * was raised since then says, or else at t.
 */
static int missed_switch(struct engine *e, uint32_t cpu, uint32_t tid, uint64_t t)
{
	struct eng_cpu *c = &e->cpus[cpu];
	e->st.missed_switches++;
	uint64_t low = c->tid ? c->ck_time : c->since;
	int err = c->tid ? close_stint(e, cpu) : 0;
	if (err)
		return err;
	uint32_t th = tid ? eng_thread_find(e, tid) : ENGINE_NONE;
	const struct eng_thread *p = th != ENGINE_NONE ? &e->threads.v[th] : NULL;
	bool pend = p && p->pend_ns && p->pend_start >= low && p->pend_last <= t;
	uint64_t start = !tid ? low : pend ? p->pend_start : t;
	uint64_t ran = pend ? p->pend_ns : 0, last = pend ? p->pend_last : start;
	if (!c->tid) {
		idle_until(e, c, start);
	} else if (start > low && start > e->c.start_ns) {
		/* the task on record left no trace after its last checkpoint: a
		 * fair task that ran on would have raised its runtime when it
		 * left, so the CPU was idle (its switch to idle missed too),
		 * from the recording's start at the earliest */
		uint64_t from = low > e->c.start_ns ? low : e->c.start_ns;
		c->st.idle_ns += start - from;
		e->st.idle_ns += start - from;
	}
	err = open_stint(e, cpu, tid, start);
	if (err || !tid)
		return err;
	if (!pend) {	/* its first runtime event will say where it began */
		c->inferred = c->inferred_idle = true;
		c->inferred_low = low;
		return 0;
	}
	/* that runtime was this stint's after all */
	c->measured = true;
	c->runtime = c->ck_runtime = ran;
	c->ck_time = last;
	e->st.unmatched_runtime_ns -= ran;
	return 0;
}

/*
 * CPU ev->cpu's task leaves it for ev->tid. A fair task raises its
 * runtime as it leaves, where the scheduler reads the clock (its last
 * checkpoint, just before the switch is reported): its stint ends there,
 * and the next begins there (idle's, or a task's whose runtime runs from
 * that reading). The switch path after it is the next stint's: ended at
 * the switch's report, a stint's residual would hold this switch's path
 * less the one before, +-20 us by the kind of switch (a spinner's
 * preempted stints +18 us, the waking thread's between them -18 us, over
 * 2 000 switches), a bias no single calibration takes out.
 *
 * A measured stint whose runtime was not raised as it left also ends at
 * its last checkpoint: the time since ran with its runtime event lost,
 * not stolen (perf drops the tracepoints its own wakeup raises: the task
 * that wakeup preempts has its runtime read then, and at the switch there
 * is none left to raise; 17.7 ms in 8 of 1 100 stints in 8 s of perf's
 * recording here).
 */
static int leave(struct engine *e, const struct eng_event *ev)
{
	struct eng_cpu *c = &e->cpus[ev->cpu];
	int err;
	bool measured = c->measured;
	bool near = measured && c->ck_time <= ev->time && ev->time - c->ck_time <= SWITCH_PATH_NS;
	/* (a reading before the recording's start began nothing in it) */
	bool raised = near && c->ck_time >= e->c.start_ns;
	uint64_t low = measured ? c->ck_time : ev->time;
	e->st.unraised_stints += measured && !near;
	if (!measured)
		c->ck_time = ev->time;	/* the switch closes it */
	c->ck_runtime = c->runtime;
	/* after the last sample, to where the stint ends (an unraised one's
	 * tail is in no figure, its gaps neither): nobody samples after it,
	 * so only preceding-like methods place it */
	err = gap(e, c, c->last_sample, measured && !near ? c->ck_time : ev->time,
		  e->c.method == METHOD_BRACKETED ? ENGINE_NONE : c->last_prog);
	if (!err)
		err = close_stint(e, ev->cpu);
	if (!err)
		err = open_stint(e, ev->cpu, ev->tid, raised ? low : ev->time);
	if (!err && ev->tid && !raised) {
		/* its start not read: its first runtime says it,
		 * after the stint before ended */
		c->inferred = true;
		c->inferred_idle = false;
		c->inferred_low = low;
	}
	return err;
}

int eng_on_switch(struct engine *e, const struct eng_event *ev)
{
	struct eng_cpu *c = &e->cpus[ev->cpu];
	int err = 0;
	c->st.seen = true;
	if (!c->known && !ev->pid) {
		/* the first switch, from idle: idle since the recording began */
		c->known = true;
		c->tid = 0;
		c->since = e->c.start_ns && e->c.start_ns < ev->time ? e->c.start_ns : ev->time;
	}
	if (c->known && c->tid != ev->pid)
		err = missed_switch(e, ev->cpu, ev->pid, ev->time);
	uint32_t prev = ev->pid ? eng_thread_find(e, ev->pid) : ENGINE_NONE;
	if (prev != ENGINE_NONE) {
		/* its runtime before now is accounted; once exited, it is
		 * off the CPUs for good */
		e->threads.v[prev].pend_ns = 0;
		if (e->threads.v[prev].exited)
			e->threads.v[prev].done = true;
	}
	if (err)
		return err;
	if (c->known && c->tid)
		return leave(e, ev);
	bool from_idle = c->known;
	uint64_t idle_low = c->since;
	idle_until(e, c, ev->time);
	err = open_stint(e, ev->cpu, ev->tid, ev->time);
	if (!err && from_idle && ev->tid) {
		/* its runtime began where the scheduler read its clock, before
		 * the switch was reported (by the switch path, 2-10 us here);
		 * that time is not idle too: its first runtime says (over
		 * 27 000 wakes of two short sleepers in 3 s, run + idle came
		 * 130 ms over the CPUs' 6 s) */
		c->inferred = c->inferred_idle = true;
		c->inferred_low = idle_low;
	}
	return err;
}

/* The first runtime of a stint begun at a missed switch, or after idle,
 * says when it began (its delta runs from the scheduler's reading of its
 * clock at the switch): the time before, counted idle, was the stint's. */
static void place_inferred(struct engine *e, struct eng_cpu *c, uint64_t began)
{
	c->inferred = false;
	if (began < c->inferred_low)
		began = c->inferred_low;
	if (began < e->c.start_ns)
		began = e->c.start_ns;	/* idle was counted from there only */
	if (began >= c->since)
		return;
	if (c->inferred_idle) {	/* counted idle: it was the stint's */
		c->st.idle_ns -= c->since - began;
		e->st.idle_ns -= c->since - began;
	}
	e->stints.v[c->stint].start = began;
	c->since = began;
}

/* A thread's cpu_ns: its runtime less the steal taken out of it; the
 * change counted in the totals and on CPU on's series at t. */
static int set_cpu(struct engine *e, struct eng_thread *th, uint32_t on, uint64_t t)
{
	uint64_t cpu = th->runtime_ns > th->steal_taken ? th->runtime_ns - th->steal_taken : 0;
	uint64_t was = th->cpu_ns;
	e->st.run_ns += cpu - was;	/* modulo 2^64: a fall is taken off */
	th->cpu_ns = cpu;
	if (cpu < was)
		eng_series_take(e, on, was - cpu);
	return cpu > was ? eng_series_add(e, on, t, cpu - was, 0) : 0;
}

static void seen(struct eng_thread *th, uint64_t t)
{
	if (!th->first_ns || t < th->first_ns)
		th->first_ns = t;
	if (t > th->last_ns)
		th->last_ns = t;
}

int eng_on_runtime(struct engine *e, const struct eng_event *ev)
{
	struct eng_cpu *c = &e->cpus[ev->cpu];
	uint32_t t = eng_thread(e, ev->tid, ENGINE_NONE);
	if (t == ENGINE_NONE)
		return -ENOMEM;
	struct eng_thread *th = &e->threads.v[t];
	c->st.seen = true;
	seen(th, ev->time);
	th->runtime_ns += ev->value;
	/* on the CPU it runs on (its event may come from another's ring) */
	uint32_t on = th->oncpu != ENGINE_NONE ? th->oncpu : ev->cpu;
	if (set_cpu(e, th, on, ev->time))
		return -ENOMEM;
	if (th->oncpu == ENGINE_NONE && !c->known) {
		/* Recording began mid-stint: measure from here on (this
		 * delta belongs to the time before). Where the delta began
		 * after the recording did, the CPU ran no fair task before
		 * it (one would have raised its runtime when it left): idle
		 * from the start, as a first switch from idle says (a vCPU
		 * the host held showed no event for 18-50 ms here). */
		if (e->c.start_ns && ev->time - ev->value > e->c.start_ns) {
			c->known = true;
			c->tid = 0;
			c->since = e->c.start_ns;
			idle_until(e, c, ev->time - ev->value);
		}
		return open_stint(e, ev->cpu, ev->tid, ev->time);
	}
	if (th->oncpu == ENGINE_NONE || e->cpus[th->oncpu].tid != ev->tid) {
		e->st.unmatched_runtime_ns += ev->value;
		/* kept in case the switch to it was missed (missed_switch) */
		if (!th->pend_ns)
			th->pend_start = ev->time > ev->value ? ev->time - ev->value : 0;
		th->pend_ns += ev->value;
		th->pend_last = ev->time;
		return 0;
	}
	struct eng_cpu *rc = &e->cpus[th->oncpu];
	if (rc->inferred && !rc->measured)
		place_inferred(e, rc, ev->time > ev->value ? ev->time - ev->value : 0);
	rc->measured = true;
	rc->runtime += ev->value;
	rc->ck_time = ev->time;
	rc->ck_runtime = rc->runtime;
	return 0;
}

struct sum_key {
	const struct engine *e;
	uint32_t prog, cpu;
};

static bool sum_eq(const void *ctx, uint32_t i)
{
	const struct sum_key *k = ctx;
	return k->e->gap_sums[i].prog == k->prog && k->e->gap_sums[i].cpu == k->cpu;
}

/*
 * Where runtime holds steal: how much more steal th's runtime can hold at
 * t, its runtime so far (to its CPU's last checkpoint, and since, if it
 * holds one) less the steal already taken out. A late sample counts whole
 * intervals, more than a short stint lasted (a kworker's 30 us with the
 * sample 0.1 ms late counts 1 ms): beyond this it is certainly too much,
 * and taking it out of a runtime that never held it would make run +
 * steal pass the CPU's time.
 */
static uint64_t runtime_room(const struct engine *e, const struct eng_thread *th, uint64_t t)
{
	uint64_t held = th->runtime_ns;
	if (th->oncpu != ENGINE_NONE) {
		const struct eng_cpu *c = &e->cpus[th->oncpu];
		if (c->thread != ENGINE_NONE && &e->threads.v[c->thread] == th && t > c->ck_time)
			held += t - c->ck_time;
	}
	return held > th->steal_taken ? held - th->steal_taken : 0;
}

/* Steal found for prog on cpu, counted at t: in its figures, the CPU's,
 * the totals and the series; where runtime holds steal, taken out of its
 * thread's runtime. */
static int place_steal(struct engine *e, uint32_t cpu, uint32_t prog, uint64_t ns,
		       uint32_t count, uint64_t t)
{
	struct eng_prog *pr = &e->progs.v[prog];
	struct eng_thread *th = &e->threads.v[pr->thread];
	int err = 0;
	if (e->c.mode == STEAL_STINTS && e->st.accounting == ACCT_INCLUDED) {
		uint64_t room = runtime_room(e, th, t);
		if (ns > room) {
			e->st.steal_over_runtime_ns += ns - room;
			ns = room;
		}
		th->steal_taken += ns;	/* however late */
		err = set_cpu(e, th, cpu, t);
	}
	if (!err)
		err = eng_series_add(e, cpu, t, 0, ns);
	pr->steal_ns += ns;
	pr->steal_samples += count;
	e->cpus[cpu].st.steal_ns += ns;
	e->st.steal_ns += ns;
	return err;
}

/* Whether a gap's steal counts as found, known when it is found: the
 * accounting says gaps are the source and no kernel figure will scale
 * them (no steal clock). It is then placed at once, at its time (the
 * series shows it where it fell, not all at the settling). */
static bool gaps_placed_now(const struct engine *e)
{
	return eng_steal_from_gaps(e) && !e->c.scale_to_kernel;
}

/* Adds a gap's excess to what owner (a program) has on cpu. A program of
 * STEAL_STINTS holds its thread until the sums are placed. */
static int gap_sum_add(struct engine *e, uint32_t cpu, uint32_t owner, uint64_t excess,
		       uint64_t t)
{
	if (gaps_placed_now(e))
		return place_steal(e, cpu, owner, excess, 1, t);
	struct sum_key k = { e, owner, cpu };
	uint64_t h = hash_mix((uint64_t)owner << 32 | cpu);
	uint32_t i = hindex__find(&e->gap_sum_index, h, sum_eq, &k);
	if (i == ENGINE_NONE) {
		if (grow_array((void **)&e->gap_sums, &e->gap_sums_cap, e->ngap_sums,
			       sizeof(*e->gap_sums), 64) ||
		    hindex__insert(&e->gap_sum_index, h, e->ngap_sums))
			return -ENOMEM;
		i = e->ngap_sums++;
		bool ref = e->c.mode == STEAL_STINTS;
		e->gap_sums[i] = (struct eng_gap_sum){ .prog = owner, .cpu = cpu, .ref = ref };
		if (ref)
			e->threads.v[e->progs.v[owner].thread].refs++;
	}
	e->gap_sums[i].ns += excess;
	e->gap_sums[i].count++;
	return 0;
}

/* The steal a sample at t on a CPU's grid (any task's samples) stands
 * for, as grid_points counts it, or 0: on time. The sample's program p
 * becomes the CPU's last. */
static uint64_t grid_gap(struct engine *e, struct eng_cpu *c, uint64_t t, uint32_t p,
			 uint32_t *before)
{
	if (p == ENGINE_NONE)
		c->idle_quiet = false;	/* the timer runs in idle */
	uint64_t due = c->grid_next;
	*before = c->last_any_prog;
	c->last_any_prog = p;
	/* records lost in the gap: samples, not steal, may be missing */
	bool lost = c->lost_to && c->lost_to + e->c.interval_ns >= due && c->lost_from <= t;
	/* One interval after a late sample, as the timer fires: that one
	 * was on the timer's own phase, its latency grown past gap_min
	 * (seen: 80 us more for seconds on a loaded guest), not delayed by
	 * steal (after steal the timer fires on its old phase again). The
	 * grid takes the new phase: on the old one, every sample after was
	 * late, an interval of steal each. */
	uint64_t after = t - c->grid_late_at;
	bool rephase = c->grid_late_at && after + e->gap_min_ns >= e->c.interval_ns &&
		       after < e->c.interval_ns + e->gap_min_ns;
	c->grid_late_at = 0;
	if (!due || lost || rephase || t < due + e->gap_min_ns) {
		/* on time (or the first): the grid follows it */
		c->grid_next = t + e->c.interval_ns;
		return 0;
	}
	c->grid_late_at = t;
	/* late: the grid points from `due` on were covered; the grid keeps
	 * its phase (the next point is not one interval after this sample) */
	uint64_t points = (t - due) / e->c.interval_ns + 1;
	c->grid_next = due + points * e->c.interval_ns;
	uint64_t ns = points * e->c.interval_ns;
	c->gap_ns += ns;
	return ns;
}

/* STEAL_GAPS: a gap between any two samples of a CPU beyond the interval
 * is a place that CPU's steal may have fallen; whose it is, the method
 * says (the idle task's: nobody's). */
static int cpu_gap(struct engine *e, struct eng_cpu *c, uint32_t cpu, uint64_t t,
		   uint32_t p)
{
	uint32_t owner;
	uint64_t excess = grid_gap(e, c, t, p, &owner);
	if (!excess)
		return 0;
	if (e->c.method == METHOD_BRACKETED && owner != p)
		owner = ENGINE_NONE;
	return owner == ENGINE_NONE ? 0 : gap_sum_add(e, cpu, owner, excess, t);
}

/*
 * Of a late sample's grid points (ns of them from due on), those its
 * thread held the CPU for: from its stint's start on. Points before were
 * missed while the CPU was idle or ran another thread, and the vCPU ran
 * when it switched to this one, so they are not this thread's steal (on a
 * kernel whose runtime holds steal, they would be taken out of a runtime
 * that never held them, and run + steal would pass the CPU's time). They
 * stay in the CPU's gap_ns: nobody's part of its kernel steal.
 */
static uint64_t owned_points(const struct engine *e, const struct eng_cpu *c, uint64_t due,
			     uint64_t ns)
{
	if (c->stint == ENGINE_NONE)
		return ns;
	uint64_t start = e->stints.v[c->stint].start;
	if (start <= due)
		return ns;
	uint64_t skip = (start - due + e->c.interval_ns - 1) / e->c.interval_ns;
	uint64_t points = ns / e->c.interval_ns;
	return points > skip ? (points - skip) * e->c.interval_ns : 0;
}

/*
 * STEAL_STINTS, every CPU sampled: a late sample on the CPU's grid fired
 * when the vCPU ran again, in the thread that held it while it was
 * stolen (the guest switches nothing while it does not run), so the gap
 * is that thread's; the method picks its program (the one sampled before
 * it if that was the same thread's; bracketed: only the same program).
 */
static int stint_grid_gap(struct engine *e, struct eng_cpu *c, uint32_t cpu, uint64_t t,
			  uint32_t thread, uint32_t p)
{
	uint32_t before;
	uint64_t due = c->grid_next;
	uint64_t excess = grid_gap(e, c, t, p, &before);
	if (!excess || thread == ENGINE_NONE)
		return 0;
	excess = owned_points(e, c, due, excess);
	if (!excess)
		return 0;
	uint32_t owner = p;
	if (before != ENGINE_NONE && e->progs.v[before].thread == thread)
		owner = before;
	if (e->c.method == METHOD_BRACKETED && owner != p)
		owner = eng_unknown_prog(e, thread);
	return owner == ENGINE_NONE ? -ENOMEM : gap_sum_add(e, cpu, owner, excess, t);
}

static int idle_sample(struct engine *e, struct eng_cpu *c, uint32_t cpu, uint64_t t)
{
	c->st.idle_samples++;
	e->st.idle_samples++;
	if (e->c.mode == STEAL_STINTS) {
		uint32_t before;
		if (gaps_summed(e) && e->c.scope_all)
			grid_gap(e, c, t, ENGINE_NONE, &before);	/* nobody's */
		return 0;
	}
	c->st.idle_ns += e->c.interval_ns;
	e->st.idle_ns += e->c.interval_ns;
	return e->c.mode == STEAL_GAPS ? cpu_gap(e, c, cpu, t, ENGINE_NONE) : 0;
}

int eng_on_sample(struct engine *e, const struct eng_event *ev)
{
	struct eng_cpu *c = &e->cpus[ev->cpu];
	c->st.seen = true;
	c->st.samples++;
	/* a cpu-clock sample fires on the CPU it reports: the task it
	 * names runs there now */
	if (e->c.mode == STEAL_STINTS && c->known && c->tid != ev->tid) {
		int err = missed_switch(e, ev->cpu, ev->tid, ev->time);
		if (err)
			return err;
	}
	if (!ev->tid)
		return idle_sample(e, c, ev->cpu, ev->time);
	uint32_t t = eng_thread(e, ev->tid, ev->pid);
	/* a sample with a stack finds its program with its stack: one
	 * look-up, not two */
	uint32_t p = t == ENGINE_NONE ? ENGINE_NONE :
		     ev->stack != ENGINE_NONE ?
		     eng_stack_sample(e, t, ev->stack, ev->function, ev->dso, ev->account, ev->cpu) :
		     eng_prog(e, t, ev->function, ev->dso, ev->account, ev->cpu);
	if (p == ENGINE_NONE)
		return -ENOMEM;
	struct eng_thread *th = &e->threads.v[t];
	th->samples++;
	seen(th, ev->time);
	e->progs.v[p].samples++;
	e->st.samples++;
	if (e->c.mode == STEAL_GIVEN) {
		/* its time comes read, with its thread's EK_CLOCK */
		eng_given_sample(e, t, p, ev->cpu);
		return 0;
	}
	if (e->c.mode != STEAL_STINTS) {
		/* without runtime events, a thread's time is its samples
		 * times the interval, as any sampling profiler has it */
		th->cpu_ns += e->c.interval_ns;
		e->st.run_ns += e->c.interval_ns;
		if (eng_series_add(e, ev->cpu, ev->time, e->c.interval_ns, 0))
			return -ENOMEM;
		return e->c.mode == STEAL_GAPS ? cpu_gap(e, c, ev->cpu, ev->time, p) : 0;
	}
	th->last_prog = p;
	if (gaps_summed(e) && e->c.scope_all) {
		int err = stint_grid_gap(e, c, ev->cpu, ev->time, t, p);
		if (err)
			return err;
	}
	if (!c->known || c->tid != ev->tid || c->stint == ENGINE_NONE)
		return 0;
	/* Whose the gap before this sample is, the method says. */
	uint32_t owner = c->last_prog;
	if (e->c.method == METHOD_BRACKETED && owner != p)
		owner = ENGINE_NONE;
	int err = gap(e, c, c->last_sample, ev->time, owner);
	c->last_sample = ev->time;
	c->last_prog = p;
	return err;
}

/* Records of a CPU were dropped between value (its last record before)
 * and the kernel saying so: any switch, runtime or sample of then may be
 * missing, so a stint overlapping it says nothing of steal (a lost switch
 * alone leaves a stint full of another thread's runtime). */
void eng_on_lost(struct engine *e, const struct eng_event *ev)
{
	struct eng_cpu *c = &e->cpus[ev->cpu];
	c->lost_from = ev->value;
	c->lost_to = ev->time;
	if (c->stint != ENGINE_NONE)
		e->stints.v[c->stint].lossy = true;	/* open over it */
	for (uint32_t i = c->newest; i != ENGINE_NONE; i = e->stints.v[i].older) {
		struct eng_stint *s = &e->stints.v[i];
		if (s->end < ev->value)
			break;
		/* its residual in the fifo no longer counts */
		e->lossy_waiting += s->measured && !s->lossy;
		s->lossy = true;
	}
}

/* The k-th smallest of v[0..n) (Wirth's selection; v is reordered). */
static int64_t select_kth(int64_t *v, uint32_t n, uint32_t k)
{
	int64_t lo = 0, hi = (int64_t)n - 1;
	while (lo < hi) {
		int64_t pivot = v[k], i = lo, j = hi;
		do {
			while (v[i] < pivot)
				i++;
			while (pivot < v[j])
				j--;
			if (i <= j) {
				int64_t x = v[i];
				v[i] = v[j];
				v[j] = x;
				i++;
				j--;
			}
		} while (i <= j);
		if (j < (int64_t)k)
			lo = i;
		if ((int64_t)k < i)
			hi = j;
	}
	return v[k];
}

/* The densest point of the values counted in hist (microsecond bins from
 * -BIAS_MAX_NS): the middle of the run of DENSE_BINS bins that holds the
 * most. Linear: a sort here was half of a report's time. */
#define DENSE_BINS 5
#define NBINS (2 * BIAS_MAX_NS / 1000 + 1)
static int64_t densest(const uint32_t *hist)
{
	uint32_t sum = 0, best = 0, end = DENSE_BINS - 1;
	for (uint32_t b = 0; b < NBINS; b++) {
		sum += hist[b] - (b >= DENSE_BINS ? hist[b - DENSE_BINS] : 0);
		if (sum > best) {
			best = sum;
			end = b;
		}
	}
	return ((int64_t)end - DENSE_BINS / 2) * 1000 + 500 - BIAS_MAX_NS;
}

/* The number m of the values of v[0..n) in [lo, lo + 2 * BAND_NS], and
 * their k1-th and k2-th smallest (k1 = m / 2, k2 = m / 4): counted in
 * 256 ns bins first, so that only the values of the two bins that hold
 * them are selected among (v is reordered). Exact: the same values as
 * selecting over the whole band, at a fraction of the moves (selection
 * was a tenth of a report). */
#define FINE_SHIFT 8
#define FINE_BINS ((2 * BAND_NS >> FINE_SHIFT) + 1)
static uint32_t band_kth(int64_t *v, uint32_t n, int64_t lo, int64_t *x1, int64_t *x2)
{
	uint32_t fine[FINE_BINS] = { 0 }, m = 0;
	for (uint32_t i = 0; i < n; i++) {
		/* unsigned: below lo wraps past the band */
		uint64_t off = (uint64_t)(v[i] - lo);
		if (off <= 2 * BAND_NS) {
			fine[off >> FINE_SHIFT]++;
			m++;
		}
	}
	uint32_t k1 = m / 2, k2 = m / 4;
	uint32_t b1 = 0, b2 = 0, below1 = 0, below2 = 0, sum = 0;
	for (uint32_t b = 0; b < FINE_BINS; b++) {
		if (sum <= k2 && k2 < sum + fine[b]) {
			b2 = b;
			below2 = sum;
		}
		if (sum <= k1 && k1 < sum + fine[b]) {
			b1 = b;
			below1 = sum;
		}
		sum += fine[b];
	}
	/* the two bins' values to the front, b2's first */
	uint32_t j = 0, c2 = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (v[i] < lo || v[i] > lo + 2 * BAND_NS)
			continue;
		uint32_t b = (uint32_t)((v[i] - lo) >> FINE_SHIFT);
		if (b != b1 && b != b2)
			continue;
		int64_t x = v[i];
		v[i] = v[j];
		v[j++] = x;
	}
	for (uint32_t i = 0; i < j && b1 != b2; i++)
		if ((uint32_t)((v[i] - lo) >> FINE_SHIFT) == b2) {
			int64_t x = v[i];
			v[i] = v[c2];
			v[c2++] = x;
		}
	if (b1 == b2) {
		*x2 = select_kth(v, j, k2 - below2);
		*x1 = select_kth(v, j, k1 - below1);
	} else {
		*x2 = select_kth(v, c2, k2 - below2);
		*x1 = select_kth(v + c2, j - c2, k1 - below1);
	}
	return m;
}

/* The gaps summed while the accounting was not known, when it turns out
 * that residuals measure steal: their threads are held no longer. */
static void drop_gap_sums(struct engine *e)
{
	for (uint32_t i = 0; i < e->ngap_sums; i++)
		if (e->gap_sums[i].ref)
			e->threads.v[e->progs.v[e->gap_sums[i].prog].thread].refs--;
	e->ngap_sums = 0;
	hindex__release(&e->gap_sum_index);
	hindex__init(&e->gap_sum_index);
	for (uint32_t c = 0; c < e->c.ncpus; c++)
		e->cpus[c].gap_ns = 0;
}

/*
 * Not told what runtime holds: the stints in the window whose samples
 * show a gap judge it. Where runtime excludes steal, such a stint's
 * residual holds at least half the gap (steal covers it); where it
 * includes steal, the residual stays at the bias. Judged once enough
 * stints show gaps and at least half, or at most a twentieth, hold them;
 * until then residuals are used (without steal evidence either way gives
 * little steal).
 */
static void judge_accounting(struct engine *e)
{
	uint64_t gapped = 0, agreed = 0;
	if (e->st.accounting_judged)
		return;
	for (uint32_t i = 0; i < e->fifo_len; i++) {
		const struct eng_stint *s =
			&e->stints.v[e->fifo[(e->fifo_head + i) % e->fifo_cap].stint];
		if (!s->measured || s->lossy || s->evidence < e->c.interval_ns)
			continue;
		gapped++;
		agreed += s->residual - e->st.bias_ns >= (int64_t)s->evidence / 2;
	}
	e->st.judge_gapped += gapped;
	e->st.judge_agreed += agreed;
	uint64_t n = e->st.judge_gapped, yes = e->st.judge_agreed;
	/* a hypervisor that delays timer interrupts without taking the CPU
	 * makes gaps no residual holds: "includes" only when (almost) none
	 * does, as where runtime holds steal */
	if (n < JUDGE_MIN || (2 * yes < n && 20 * yes > n))
		return;
	e->st.accounting = 2 * yes >= n ? ACCT_EXCLUDED : ACCT_INCLUDED;
	e->st.accounting_judged = true;
	if (e->st.accounting == ACCT_EXCLUDED)
		drop_gap_sums(e);
}

/* A residual near 0 into v[n] and its bin of hist: 1, else 0. */
static inline uint32_t keep_residual(int64_t *v, uint32_t n, uint32_t *hist, int64_t r)
{
	/* unsigned: below -BIAS_MAX_NS wraps past the range */
	uint64_t off = (uint64_t)r + BIAS_MAX_NS;
	if (off > 2 * BIAS_MAX_NS)
		return 0;
	v[n] = r;
	hist[off / 1000]++;
	return 1;
}

/*
 * The bias of the switch path and the noise around it, from the residuals
 * of the stints waiting and of those judged last (a window centred on the
 * stint judged next). Residuals of stints that hold no steal sit in a
 * narrow symmetric band around the bias (this project's KVM guests: +-12
 * us around under 1 us); steal only adds to a residual. So the bias is
 * the median of the band around the densest point of the residuals near
 * 0, not their median (under heavy steal most stints hold some, and their
 * median is steal), and the noise is read below it, where no steal reaches: 4 standard deviations
 * of the lower side (at least NOISE_MIN_NS). Where no stint near 0 is
 * left (every stint stolen from), the bias is taken as 0: it is
 * microseconds, and such stints are long.
 */
static int calibrate(struct engine *e)
{
	uint32_t n = 0, hist[NBINS] = { 0 };
	for (uint32_t i = 0; i < e->history_len; i++)
		n += keep_residual(e->scratch, n, hist, e->history[i]);
	for (uint32_t i = 0, at = e->fifo_head; i < e->fifo_len; i++) {
		const struct eng_waiting *w = &e->fifo[at];
		at = at + 1 == e->fifo_cap ? 0 : at + 1;
		if (w->residual != FIFO_UNMEASURED &&
		    (!e->lossy_waiting || !e->stints.v[w->stint].lossy))
			n += keep_residual(e->scratch, n, hist, w->residual);
	}
	e->st.noise_ns = NOISE_MIN_NS;
	e->st.bias_ns = 0;
	e->st.bias_stints = 0;
	if (n >= CALIBRATION_MIN) {
		int64_t *v = e->scratch;
		/* the band around the densest point; its median is the bias
		 * (a band of two modes, as +-12 us, is centred) */
		int64_t mode = densest(hist), bias, quarter;
		uint32_t m = band_kth(v, n, mode - BAND_NS, &bias, &quarter);
		/* the lower side's median distance (the band's m/4-th):
		 * 0.6745 standard deviations */
		int64_t below = m / 2 ? bias - quarter : 0;
		int64_t noise = below * 4 * 10000 / 6745;
		e->st.bias_ns = bias;
		e->st.bias_stints = m;
		if (noise > e->st.noise_ns)
			e->st.noise_ns = noise;
	}
	if (e->c.accounting == ACCT_JUDGE)
		judge_accounting(e);
	e->calibrated = true;
	e->judged_since_calibration = 0;
	return 0;
}

/* The steal of stint s, where runtime excludes it: its residual's excess
 * over the bias, if beyond the noise. Where steal is found from the
 * gaps, none here. */
static uint64_t stint_steal(const struct engine *e, const struct eng_stint *s)
{
	int64_t x = s->residual - e->st.bias_ns;
	if (eng_steal_from_gaps(e) || !s->measured || s->lossy || x <= e->st.noise_ns)
		return 0;
	return (uint64_t)x;
}

/* Steal on cpu for program p: its own now, or (scaled to the kernel's
 * steal) a weight in its sums until they are settled. */
static int give(struct engine *e, uint32_t cpu, uint32_t p, uint64_t ns, uint64_t samples)
{
	/* (not while the accounting is being judged: the sums then hold
	 * sample gaps, which may turn out not to count) */
	if (e->c.scale_to_kernel && e->st.accounting != ACCT_JUDGE) {
		e->cpus[cpu].gap_ns += ns;
		return gap_sum_add(e, cpu, p, ns, e->processed);
	}
	e->progs.v[p].steal_ns += ns;
	e->progs.v[p].steal_samples += samples;
	e->cpus[cpu].st.steal_ns += ns;
	e->st.steal_ns += ns;
	return 0;
}

/* Gives a stint's steal to the programs its gaps were placed on, each in
 * proportion to its part of the evidence. A stint whose steal left no gap
 * (its episodes covered no sample's time) gives it to the program it (or
 * its thread) last sampled, as seed 001's preceding method would; what
 * else no gap placed (left by bracketed, or rounding) stays with the
 * thread as "[unknown]". */
static int place(struct engine *e, struct eng_stint *s, uint64_t steal)
{
	uint64_t given = 0;
	/* steal weighed to be scaled goes on the series when settled */
	int err = e->c.scale_to_kernel && e->st.accounting != ACCT_JUDGE ? 0 :
		  eng_series_add(e, s->cpu, s->end, 0, steal);
	for (uint32_t g = s->gaps; !err && g != ENGINE_NONE; g = e->gaps.v[g].next) {
		const struct eng_gap *gp = &e->gaps.v[g];
		uint64_t part = (uint64_t)((unsigned __int128)steal * gp->ns / s->evidence);
		err = give(e, s->cpu, gp->prog, part, 1);
		given += part;
	}
	if (err || steal <= given)
		return err;
	uint32_t p = s->gaps == ENGINE_NONE && s->last_prog != ENGINE_NONE &&
		     e->c.method != METHOD_BRACKETED ? s->last_prog :
		     eng_unknown_prog(e, s->thread);
	return p == ENGINE_NONE ? -ENOMEM : give(e, s->cpu, p, steal - given, 0);
}

/* Judges the oldest waiting stint, then lets it go. */
static int judge_oldest(struct engine *e)
{
	uint32_t i = e->fifo[e->fifo_head].stint;
	e->lossy_waiting -= e->fifo[e->fifo_head].residual != FIFO_UNMEASURED &&
			    e->stints.v[i].lossy;
	e->fifo_head = (e->fifo_head + 1) % e->fifo_cap;
	e->fifo_len--;
	e->st.pending_stints--;
	struct eng_stint *s = &e->stints.v[i];
	uint64_t steal = stint_steal(e, s);
	int err = steal ? place(e, s, steal) : 0;
	s = &e->stints.v[i];
	if (s->measured && !s->lossy) {
		e->history[e->history_next] = s->residual;
		e->history_next = (e->history_next + 1) % ENGINE_PENDING;
		if (e->history_len < ENGINE_PENDING)
			e->history_len++;
	}
	e->st.lossy_stints += s->lossy;
	for (uint32_t g = s->gaps; g != ENGINE_NONE;) {
		uint32_t next = e->gaps.v[g].next;
		FREE(e->gaps, next, g);
		g = next;
	}
	/* the oldest of its CPU: its newer one becomes the oldest */
	if (s->newer != ENGINE_NONE)
		e->stints.v[s->newer].older = ENGINE_NONE;
	else if (e->cpus[s->cpu].newest == i)
		e->cpus[s->cpu].newest = ENGINE_NONE;
	uint32_t thread = s->thread;
	FREE(e->stints, next_free, i);
	e->threads.v[thread].refs--;
	e->judged_since_calibration++;
	return err ? err : eng_maybe_gone(e, thread);
}

int eng_judge_waiting(struct engine *e, bool all)
{
	if (all && e->fifo_len)
		calibrate(e);
	while (e->fifo_len > (all ? 0 : ENGINE_PENDING)) {
		uint32_t every = (e->history_len + e->fifo_len) / 16;
		if (every < RECALIBRATE_EVERY)
			every = RECALIBRATE_EVERY;
		if (!all && (!e->calibrated || e->judged_since_calibration >= every))
			calibrate(e);
		int err = judge_oldest(e);
		if (err)
			return err;
	}
	return 0;
}

/* At the end: stints still open close at their last checkpoint; idle
 * CPUs were idle to the end. */
int eng_close_all(struct engine *e, uint64_t end_ns)
{
	for (uint32_t cpu = 0; cpu < e->c.ncpus; cpu++) {
		struct eng_cpu *c = &e->cpus[cpu];
		int err = 0;
		if (c->stint != ENGINE_NONE && c->ck_time > c->last_sample)
			err = gap(e, c, c->last_sample, c->ck_time,
				  e->c.method == METHOD_BRACKETED ? ENGINE_NONE : c->last_prog);
		if (!err)
			err = close_stint(e, cpu);
		if (err)
			return err;
		if (c->known && !c->tid && end_ns)
			idle_until(e, c, end_ns);
	}
	return 0;
}

/*
 * Places what the sums hold. Where the kernel's steal is the reference
 * (STEAL_GAPS; STEAL_STINTS with scale_to_kernel), each CPU's steal since
 * the last settling is shared over its sums in proportion, the part in
 * weights nobody owned (idle, or left by bracketed) staying unattributed;
 * elsewhere the sums count as they are (sample gaps, the seed's method).
 * Where runtime includes steal, what a thread is given is taken out of
 * its runtime.
 */
/*
 * Not told, and the samples' gaps did not tell, what runtime holds: where
 * the kernel counts steal, its count says. Steal it counted that the
 * residuals do not hold (under a quarter) while the sample gaps saw it (a
 * quarter or more) means runtime holds steal; residuals that hold half of
 * it or more, that it leaves steal out. Steal in episodes shorter than the
 * interval leaves no missed tick to judge by, but the kernel counts it.
 * Residuals of stints still waiting are not in the count yet: a
 * collection may leave it to the next.
 */
static void judge_by_kernel(struct engine *e)
{
	uint64_t kernel = 0, residual = 0, gaps = 0;
	for (uint32_t c = 0; c < e->c.ncpus; c++) {
		const struct eng_cpu *cpu = &e->cpus[c];
		if (!cpu->kernel_known)
			continue;
		kernel += cpu->st.kernel_steal_ns;
		residual += cpu->st.steal_ns;
		gaps += cpu->gap_ns;
	}
	if (kernel < KERNEL_JUDGE_MIN_NS)
		return;
	if (4 * residual < kernel && 4 * gaps >= kernel)
		e->st.accounting = ACCT_INCLUDED;
	else if (2 * residual >= kernel)
		e->st.accounting = ACCT_EXCLUDED;
	else
		return;
	e->st.accounting_judged = true;
	e->st.judge_kernel_ns = kernel;
	e->st.judge_residual_ns = residual;
	if (e->st.accounting == ACCT_EXCLUDED)
		drop_gap_sums(e);
}

/*
 * The steal a CPU's sums share this settling. Where they are residuals
 * (runtime leaves steal out) and /proc/stat's count is in USER_HZ ticks,
 * its growth is the truth to one tick either way: the residuals summed
 * over the recording so far stand where they lie within that, and are
 * taken to its nearest end where they do not (0.2 ms of steal is not the
 * 10 ms one tick crossed says; 300 ms where the kernel counted a second,
 * under heavy steal, is 990). The total so placed grows with the
 * residuals and the count alike, so the settlings' shares add up to one
 * settling's at the end: a ledger's collections to the recording's
 * report. Sample gaps count whole intervals (and STEAL_GAPS's are
 * evidence, not a measure): their share is the kernel's count.
 *
 * The kernel's count holds the steal of its idle moments too (a vCPU
 * woken from halt waits for the host: steal no thread held), which no
 * residual can: the floor is the count's share of the CPU's time that
 * threads held it. A halted vCPU is stolen from less than a running
 * one, so that share is at most the threads' steal, never more. (Taken
 * to the whole count less a tick, a mostly idle CPU's 2 ms of residuals
 * became 30 ms, past the CPU's time: live_truth in CI.)
 */
static uint64_t steal_to_place(const struct engine *e, const struct eng_cpu *c)
{
	uint64_t kernel = c->st.kernel_steal_ns, tick = e->c.kernel_tick_ns, total = kernel;
	if (e->c.mode == STEAL_STINTS && !eng_steal_from_gaps(e) && tick) {
		uint64_t measured = c->measured_ns + c->gap_ns;
		uint64_t wall = c->busy_ns + c->st.idle_ns;
		uint64_t held = wall ? (uint64_t)((unsigned __int128)kernel * c->busy_ns / wall)
				     : kernel;
		uint64_t low = held > tick ? held - tick : 0, high = kernel + tick;
		total = measured < low ? low : measured > high ? high : measured;
	}
	return total > c->kernel_placed_ns ? total - c->kernel_placed_ns : 0;
}

int eng_settle(struct engine *e)
{
	bool stints = e->c.mode == STEAL_STINTS;
	int err = 0;
	if (stints && e->st.accounting == ACCT_JUDGE && e->c.scale_to_kernel)
		judge_by_kernel(e);
	e->st.steal_from_gaps = eng_steal_from_gaps(e);
	if (stints && e->st.accounting == ACCT_JUDGE) {
		drop_gap_sums(e);	/* never judged: residuals counted */
		return 0;
	}
	for (uint32_t cpu = 0; cpu < e->c.ncpus; cpu++)
		e->cpus[cpu].place_ns = steal_to_place(e, &e->cpus[cpu]);
	for (uint32_t i = 0; i < e->ngap_sums; i++) {
		const struct eng_gap_sum *g = &e->gap_sums[i];
		struct eng_cpu *c = &e->cpus[g->cpu];
		bool scale = !stints || (e->c.scale_to_kernel && c->kernel_known);
		uint64_t kernel = c->place_ns;
		/* each sum's part of what the CPU places (its kernel steal, or
		 * residuals held to it), rounded as the sums go (the parts so
		 * far, less those before): they add up to it to the
		 * nanosecond, so a ledger's collections sum to the
		 * recording's report */
		uint64_t part = g->ns;
		if (scale) {
			uint64_t before = c->settled_gap_ns;
			c->settled_gap_ns += g->ns;
			part = (uint64_t)((unsigned __int128)kernel * c->settled_gap_ns / c->gap_ns) -
			       (uint64_t)((unsigned __int128)kernel * before / c->gap_ns);
		}
		uint32_t thread = e->progs.v[g->prog].thread;
		int placed = place_steal(e, g->cpu, g->prog, part, g->count, e->processed);
		err = err ? err : placed;
		if (g->ref && !--e->threads.v[thread].refs && !err)
			err = eng_maybe_gone(e, thread);
	}
	for (uint32_t cpu = 0; cpu < e->c.ncpus; cpu++) {
		struct eng_cpu *c = &e->cpus[cpu];
		/* a CPU nothing weighed on keeps its kernel steal for the next
		 * settling: collections then add up to one settling at the end */
		if (c->kernel_known && (stints ? e->c.scale_to_kernel : true) && c->gap_ns) {
			e->st.steal_scaled = true;
			c->kernel_placed_ns += c->place_ns;
			c->measured_ns += c->gap_ns;
		}
		c->gap_ns = c->settled_gap_ns = 0;
	}
	e->ngap_sums = 0;
	hindex__release(&e->gap_sum_index);
	hindex__init(&e->gap_sum_index);
	return err;
}
