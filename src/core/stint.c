/* stint: see stint.h for the model. */
#include "stint.h"
#include "grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"

#define NO_CPU UINT32_MAX

static int grow(void **arr, uint32_t *cap, uint32_t used, size_t elem)
{
	return grow_array(arr, cap, used, elem, 256);
}

int live__init(struct live *l, enum steal_method method, uint64_t interval_ns,
	       uint32_t ncpus, const char *host)
{
	memset(l, 0, sizeof(*l));
	l->method = method;
	l->interval_ns = interval_ns;
	/* hrtimer latency on a busy guest is tens of microseconds */
	l->gap_min_ns = interval_ns / 20 > 50000 ? interval_ns / 20 : 50000;
	strtab__init(&l->strings);
	hindex__init(&l->prog_index);
	hindex__init(&l->thread_index);
	l->ncpus = ncpus;
	l->cpus = calloc(ncpus ? ncpus : 1, sizeof(*l->cpus));
	l->vm = live__string(l, host, strlen(host));
	l->unknown_fn = live__string(l, "[unknown]", 9);
	if (!l->cpus || l->vm == HINDEX_NONE || l->unknown_fn == HINDEX_NONE) {
		live__release(l);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < ncpus; i++) {
		l->cpus[i].stint = UINT32_MAX;	/* no stint open */
		l->cpus[i].last_prog = PROG_NONE;
		l->cpus[i].last_any_prog = PROG_NONE;
		l->cpus[i].last_stint = UINT32_MAX;
	}
	return 0;
}

void live__release(struct live *l)
{
	if (!l)
		return;
	strtab__release(&l->strings);
	free(l->events);
	free(l->progs);
	free(l->threads);
	free(l->stints);
	free(l->gaps);
	free(l->cpus);
	hindex__release(&l->prog_index);
	hindex__release(&l->thread_index);
	memset(l, 0, sizeof(*l));
}

static uint32_t program_in(struct live *l, uint32_t pid, uint32_t tid,
			   uint32_t function, uint32_t dso, uint32_t account);

void live__set_mode(struct live *l, enum live_mode mode)
{
	l->mode = mode;
}

void live__set_kernel_steal(struct live *l, uint32_t cpu, uint64_t ns)
{
	if (cpu < l->ncpus)
		l->cpus[cpu].kernel_steal_ns = ns;
}

int live__add_inclusive(struct live *l, uint32_t pid, uint32_t tid,
			uint32_t function, uint32_t dso, uint32_t account)
{
	uint32_t p = program_in(l, pid, tid, function, dso, account);
	if (p == PROG_NONE)
		return -ENOMEM;
	l->progs[p].inclusive_samples++;
	l->inclusive = true;
	return 0;
}

int live__add(struct live *l, const struct live_event *e)
{
	if (e->cpu >= l->ncpus)
		return -EINVAL;
	if (grow((void **)&l->events, &l->events_cap, l->nevents, sizeof(*e)))
		return -ENOMEM;
	l->events[l->nevents] = *e;
	l->events[l->nevents].seq = l->nevents;
	l->nevents++;
	return 0;
}

struct thread_key {
	const struct live *l;
	uint32_t tid;
};

static bool thread_eq(const void *ctx, uint32_t id)
{
	const struct thread_key *k = ctx;
	return k->l->threads[id].tid == k->tid;
}

/* The thread tid, created on first sight; NULL when memory runs out. */
static struct live_thread *thread(struct live *l, uint32_t tid)
{
	struct thread_key k = { l, tid };
	uint64_t h = hash_mix(tid ^ 0x9e3779b97f4a7c15ULL);
	uint32_t id = hindex__find(&l->thread_index, h, thread_eq, &k);
	if (id != HINDEX_NONE)
		return &l->threads[id];
	if (grow((void **)&l->threads, &l->threads_cap, l->nthreads,
		 sizeof(*l->threads)) ||
	    hindex__insert(&l->thread_index, h, l->nthreads))
		return NULL;
	struct live_thread *t = &l->threads[l->nthreads++];
	*t = (struct live_thread){ .tid = tid, .pid = tid,
				   .unknown_prog = PROG_NONE, .oncpu = NO_CPU };
	return t;
}

struct prog_key {
	const struct live *l;
	uint32_t pid, tid, function, dso, account;
};

static uint64_t prog_hash(const struct prog_key *k)
{
	return hash_mix(((uint64_t)k->pid << 32 | k->tid) ^
			hash_mix((uint64_t)k->function << 32 | k->dso) ^ k->account);
}

static bool prog_eq(const void *ctx, uint32_t id)
{
	const struct prog_key *k = ctx;
	const struct program *p = &k->l->progs[id];
	return p->pid == k->pid && p->tid == k->tid && p->function == k->function &&
	       p->dso == k->dso && p->account == k->account;
}

static uint32_t program_in(struct live *l, uint32_t pid, uint32_t tid,
			   uint32_t function, uint32_t dso, uint32_t account)
{
	struct prog_key k = { l, pid, tid, function, dso, account };
	uint64_t h = prog_hash(&k);
	uint32_t id = hindex__find(&l->prog_index, h, prog_eq, &k);
	if (id != HINDEX_NONE)
		return id;
	if (grow((void **)&l->progs, &l->progs_cap, l->nprogs, sizeof(*l->progs)) ||
	    hindex__insert(&l->prog_index, h, l->nprogs))
		return PROG_NONE;
	l->progs[l->nprogs] = (struct program){ .vm = l->vm, .pid = pid,
						.tid = tid, .function = function,
						.dso = dso, .account = account };
	return l->nprogs++;
}

/* A program whose code region is not known. */
static uint32_t program(struct live *l, uint32_t pid, uint32_t tid,
			uint32_t function)
{
	return program_in(l, pid, tid, function, NO_DSO, NO_DSO);
}

const struct program *live__program_of(const struct live *l,
				       const struct live_event *e)
{
	struct prog_key k = { l, e->a, e->b, e->function, e->dso, e->account };
	uint32_t id = e->b ? hindex__find(&l->prog_index, prog_hash(&k), prog_eq, &k) :
			     HINDEX_NONE;
	return id == HINDEX_NONE ? NULL : &l->progs[id];
}

static int cmp_event(const void *pa, const void *pb)
{
	const struct live_event *a = pa, *b = pb;
	if (a->time_ns != b->time_ns)
		return a->time_ns < b->time_ns ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Starts a stint of tid on CPU c at time t (tid 0: idle, not measured). */
static int open_stint(struct live *l, struct live_cpu *c, uint32_t cpu,
		      uint32_t tid, uint64_t t)
{
	c->tid = tid;
	c->known = true;
	c->since = t;
	c->runtime = 0;
	c->ck_time = t;
	c->ck_runtime = 0;
	c->measured = false;
	c->last_sample = t;
	c->last_prog = PROG_NONE;
	c->stint = UINT32_MAX;
	if (!tid)
		return 0;	/* idle: the kernel keeps no runtime for it */
	struct live_thread *th = thread(l, tid);
	if (!th || grow((void **)&l->stints, &l->stints_cap, l->nstints,
			sizeof(*l->stints)))
		return -ENOMEM;
	th->oncpu = cpu;
	c->stint = l->nstints++;
	l->stints[c->stint] = (struct live_stint){ .tid = tid, .cpu = cpu,
						   .last_prog = PROG_NONE, .start = t,
						   .prev_on_cpu = c->last_stint };
	return 0;
}

/* Evidence of steal between `from` and a sample (or the stint's end) at
 * `to`: the excess over one interval, if beyond the timer's own latency.
 * owner is who a method places it on (PROG_NONE: nobody). */
static int gap(struct live *l, struct live_cpu *c, uint64_t from, uint64_t to,
	       uint32_t owner)
{
	if (c->stint == UINT32_MAX || to < from + l->interval_ns + l->gap_min_ns)
		return 0;
	uint64_t excess = to - from - l->interval_ns;
	l->stints[c->stint].evidence += excess;
	if (owner == PROG_NONE)
		return 0;
	if (grow((void **)&l->gaps, &l->gaps_cap, l->ngaps, sizeof(*l->gaps)))
		return -ENOMEM;
	l->gaps[l->ngaps++] = (struct live_gap){ owner, excess, c->stint };
	return 0;
}

/* Ends CPU c's stint at its last checkpoint: a switch, or a runtime event
 * of the thread on it, where the stint's runtime is known exactly. */
static int close_stint(struct live *l, struct live_cpu *c, uint32_t cpu)
{
	if (c->stint == UINT32_MAX)
		return 0;
	struct live_stint *s = &l->stints[c->stint];
	/* Only CFS tasks raise sched_stat_runtime, and a CFS task always does
	 * when it leaves the CPU (put_prev_task updates its runtime): a stint
	 * without one is of another class (RT, deadline) and cannot be
	 * measured this way. */
	s->measured = c->measured;
	s->residual = c->measured ?
		(int64_t)(c->ck_time - c->since) - (int64_t)c->ck_runtime : 0;
	if (!c->measured)
		l->unmeasured_stints++;
	s->last_prog = c->last_prog;
	s->end = c->ck_time;
	c->stints++;
	c->last_stint = c->stint;
	c->stint = UINT32_MAX;
	struct live_thread *th = thread(l, c->tid);
	if (!th)
		return -ENOMEM;
	if (th->oncpu == cpu)
		th->oncpu = NO_CPU;
	return 0;
}

static int on_switch(struct live *l, const struct live_event *e)
{
	struct live_cpu *c = &l->cpus[e->cpu];
	int err = 0;
	if (c->known && c->tid) {
		c->ck_time = e->time_ns;	/* the switch closes it */
		c->ck_runtime = c->runtime;
		/* after the last sample: nobody samples after it, so only
		 * preceding-like methods place it */
		err = gap(l, c, c->last_sample, e->time_ns,
			  l->method == METHOD_BRACKETED ? PROG_NONE : c->last_prog);
		if (!err)
			err = close_stint(l, c, e->cpu);
	}
	return err ? err : open_stint(l, c, e->cpu, e->b, e->time_ns);
}

/* The thread was seen at t. */
static void seen(struct live_thread *th, uint64_t t)
{
	if (!th->first_ns || t < th->first_ns)
		th->first_ns = t;
	if (t > th->last_ns)
		th->last_ns = t;
}

const struct live_thread *live__thread(const struct live *l, uint32_t tid)
{
	struct thread_key k = { l, tid };
	uint32_t id = hindex__find(&l->thread_index, hash_mix(tid ^ 0x9e3779b97f4a7c15ULL),
				   thread_eq, &k);
	return id == HINDEX_NONE ? NULL : &l->threads[id];
}

static int on_runtime(struct live *l, const struct live_event *e)
{
	struct live_cpu *c = &l->cpus[e->cpu];
	struct live_thread *th = thread(l, e->a);
	if (!th)
		return -ENOMEM;
	seen(th, e->time_ns);
	th->cpu_ns += e->value;
	l->run_ns += e->value;
	if (th->oncpu == NO_CPU && !c->known) {
		/* Recording began mid-stint: measure from here on (this
		 * delta belongs to the time before). */
		return open_stint(l, c, e->cpu, e->a, e->time_ns);
	}
	if (th->oncpu == NO_CPU || l->cpus[th->oncpu].tid != e->a) {
		l->unmatched_runtime_ns += e->value;
		return 0;
	}
	struct live_cpu *rc = &l->cpus[th->oncpu];
	rc->measured = true;
	rc->runtime += e->value;
	rc->ck_time = e->time_ns;
	rc->ck_runtime = rc->runtime;
	return 0;
}

/* LIVE_GAPS: a gap between any two samples of a CPU beyond the interval
 * is a place the kernel's steal of that CPU may have fallen; whose it is,
 * the method says (the idle task's: nobody's). */
static int cpu_gap(struct live *l, struct live_cpu *c, uint32_t cpu,
		   uint64_t t, uint32_t p)
{
	uint64_t from = c->last_any;
	uint32_t owner = c->last_any_prog;
	c->last_any = t;
	c->last_any_prog = p;
	if (!from || t < from + l->interval_ns + l->gap_min_ns)
		return 0;
	uint64_t excess = t - from - l->interval_ns;
	c->gap_ns += excess;
	if (l->method == METHOD_BRACKETED && owner != p)
		owner = PROG_NONE;
	if (owner == PROG_NONE)
		return 0;
	if (grow((void **)&l->gaps, &l->gaps_cap, l->ngaps, sizeof(*l->gaps)))
		return -ENOMEM;
	l->gaps[l->ngaps++] = (struct live_gap){ owner, excess, cpu };
	return 0;
}

static int on_sample(struct live *l, const struct live_event *e)
{
	struct live_cpu *c = &l->cpus[e->cpu];
	if (!e->b)
		return l->mode == LIVE_GAPS ?
			cpu_gap(l, c, e->cpu, e->time_ns, PROG_NONE) : 0;
	uint32_t p = program_in(l, e->a, e->b, e->function, e->dso, e->account);
	struct live_thread *th = thread(l, e->b);
	if (p == PROG_NONE || !th)
		return -ENOMEM;
	th->pid = e->a;
	th->samples++;
	seen(th, e->time_ns);
	l->progs[p].samples++;
	l->samples++;
	c->samples++;
	if (l->mode == LIVE_GAPS)
		return cpu_gap(l, c, e->cpu, e->time_ns, p);
	if (!c->known || c->tid != e->b || c->stint == UINT32_MAX)
		return 0;
	/* Whose the gap before this sample is, the method says. */
	uint32_t owner = c->last_prog;
	if (l->method == METHOD_BRACKETED && owner != p)
		owner = PROG_NONE;
	int err = gap(l, c, c->last_sample, e->time_ns, owner);
	c->last_sample = e->time_ns;
	c->last_prog = p;
	return err;
}

/* Records of CPU c were dropped between `from` and the kernel saying so at
 * `to`: any switch, runtime or sample of then may be missing, so the
 * residual and gaps of a stint that overlaps it say nothing of steal (a
 * lost switch alone leaves a stint full of another thread's runtime). */
static void on_lost(struct live *l, const struct live_event *e)
{
	struct live_cpu *c = &l->cpus[e->cpu];
	uint64_t from = e->value;
	if (c->stint != UINT32_MAX)
		l->stints[c->stint].lossy = true;	/* open over it */
	for (uint32_t i = c->last_stint; i != UINT32_MAX; i = l->stints[i].prev_on_cpu) {
		if (l->stints[i].end < from)
			break;
		l->stints[i].lossy = true;
	}
}

static int process(struct live *l)
{
	int err = 0;
	for (uint32_t i = 0; i < l->nevents && !err; i++) {
		const struct live_event *e = &l->events[i];
		switch (e->kind) {
		case LIVE_TASK: {
			struct live_thread *th = thread(l, e->b);
			if (!th)
				return -ENOMEM;
			th->pid = e->a;
			break;
		}
		case LIVE_SWITCH:
			err = on_switch(l, e);
			break;
		case LIVE_RUNTIME:
			err = on_runtime(l, e);
			break;
		case LIVE_SAMPLE:
			err = on_sample(l, e);
			break;
		case LIVE_LOST:
			on_lost(l, e);
			break;
		}
	}
	/* Stints open at the end close at their last checkpoint. */
	for (uint32_t cpu = 0; cpu < l->ncpus && !err; cpu++) {
		struct live_cpu *c = &l->cpus[cpu];
		if (c->ck_time > c->last_sample)
			err = gap(l, c, c->last_sample, c->ck_time,
				  l->method == METHOD_BRACKETED ? PROG_NONE : c->last_prog);
		if (!err)
			err = close_stint(l, c, cpu);
	}
	return err;
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return (a > b) - (a < b);
}

/*
 * The bias of the switch path and the noise around it. Measured on this
 * project's KVM guests: stint residuals sit in a symmetric band of about
 * +-12 us around a median under 1 us (tracepoint timestamps and the
 * scheduler's clock are read a little apart at each end), with a tail of
 * real steal above ~100 us. So the bias is the median, and a stint's excess
 * over it counts as steal only beyond the band: 3 times the interquartile
 * range, at least NOISE_MIN_NS. Steal below that in one stint is missed,
 * which is what the per-CPU comparison with /proc/stat shows. Under
 * CALIBRATION_MIN measured stints there is nothing to estimate from: no
 * bias, and the minimum band.
 */
#define CALIBRATION_MIN 16
#define NOISE_MIN_NS 20000

static int calibrate(struct live *l)
{
	l->noise_ns = NOISE_MIN_NS;
	int64_t *r = malloc((l->nstints ? l->nstints : 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = 0; i < l->nstints; i++)
		if (l->stints[i].measured && !l->stints[i].lossy)
			r[n++] = l->stints[i].residual;
	if (n >= CALIBRATION_MIN) {
		qsort(r, n, sizeof(*r), cmp_i64);
		l->bias_ns = r[n / 2];
		int64_t band = 3 * (r[n * 3 / 4] - r[n / 4]);
		if (band > l->noise_ns)
			l->noise_ns = band;
	}
	free(r);
	return 0;
}

/* The steal of stint s: its residual's excess over the bias, if beyond
 * the noise, and no more than the sample gaps show. */
static uint64_t stint_steal(const struct live *l, const struct live_stint *s)
{
	int64_t x = s->residual - l->bias_ns;
	if (!s->measured || s->lossy || x <= l->noise_ns)
		return 0;
	return (uint64_t)x < s->evidence ? (uint64_t)x : s->evidence;
}

/* The thread's program for what no function can be named for. */
static uint32_t unknown_program(struct live *l, uint32_t tid)
{
	struct live_thread *th = thread(l, tid);
	if (!th)
		return PROG_NONE;
	if (th->unknown_prog == PROG_NONE)
		th->unknown_prog = program(l, th->pid, th->tid, l->unknown_fn);
	return th->unknown_prog;
}

/* Gives each stint's steal to the programs its gaps were placed on, each
 * in proportion to its part of the stint's evidence. What no gap placed
 * (left by bracketed, or rounding) stays with the thread as "[unknown]". */
/* LIVE_GAPS: each CPU's kernel steal shared over its gaps in proportion;
 * the part in gaps nobody owned (idle, or left by bracketed) stays
 * unattributed. */
static void place_scaled(struct live *l)
{
	for (uint32_t g = 0; g < l->ngaps; g++) {
		const struct live_gap *gap = &l->gaps[g];
		struct live_cpu *c = &l->cpus[gap->stint];
		uint64_t share = (uint64_t)((unsigned __int128)c->kernel_steal_ns *
					    gap->ns / c->gap_ns);
		l->progs[gap->prog].steal_ns += share;
		l->progs[gap->prog].steal_samples++;
		c->steal_ns += share;
		l->steal_ns += share;
	}
}

static int place(struct live *l)
{
	if (l->mode == LIVE_GAPS) {
		place_scaled(l);
		return 0;
	}
	for (uint32_t g = 0; g < l->ngaps; g++) {
		const struct live_gap *gap = &l->gaps[g];
		struct live_stint *s = &l->stints[gap->stint];
		uint64_t steal = stint_steal(l, s);
		if (!steal)
			continue;
		uint64_t share = (uint64_t)((unsigned __int128)steal * gap->ns /
					    s->evidence);
		l->progs[gap->prog].steal_ns += share;
		l->progs[gap->prog].steal_samples++;
		s->given += share;
	}
	for (uint32_t i = 0; i < l->nstints; i++) {
		struct live_stint *s = &l->stints[i];
		uint64_t steal = stint_steal(l, s);
		if (!steal)
			continue;
		l->cpus[s->cpu].steal_ns += steal;
		l->steal_ns += steal;
		if (steal > s->given) {
			uint32_t p = unknown_program(l, s->tid);
			if (p == PROG_NONE)
				return -ENOMEM;
			l->progs[p].steal_ns += steal - s->given;
		}
	}
	return 0;
}

/* Splits each thread's measured runtime among its programs by samples. */
static int split_runtime(struct live *l)
{
	uint64_t *given = calloc(l->nthreads ? l->nthreads : 1, sizeof(*given));
	uint32_t *last = malloc((l->nthreads ? l->nthreads : 1) * sizeof(*last));
	if (!given || !last) {
		free(given);
		free(last);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < l->nthreads; i++) {
		last[i] = PROG_NONE;
		/* Without sched_stat_runtime, a thread's time is its samples
		 * times the interval, as any sampling profiler has it. */
		if (l->mode != LIVE_STINTS) {
			l->threads[i].cpu_ns = l->threads[i].samples * l->interval_ns;
			l->run_ns += l->threads[i].cpu_ns;
		}
	}

	/* Threads that ran but were never sampled get a program of their own. */
	for (uint32_t i = 0; i < l->nthreads; i++) {
		struct live_thread *th = &l->threads[i];
		if (th->cpu_ns && !th->samples && th->unknown_prog == PROG_NONE) {
			th->unknown_prog = program(l, th->pid, th->tid, l->unknown_fn);
			if (th->unknown_prog == PROG_NONE)
				goto nomem;
		}
	}
	for (uint32_t p = 0; p < l->nprogs; p++) {
		struct program *pr = &l->progs[p];
		struct thread_key k = { l, pr->tid };
		uint32_t t = hindex__find(&l->thread_index,
					  hash_mix(pr->tid ^ 0x9e3779b97f4a7c15ULL),
					  thread_eq, &k);
		if (t == HINDEX_NONE)
			continue;
		struct live_thread *th = &l->threads[t];
		pr->pid = th->pid;	/* learnt later than some samples */
		pr->run_ns = th->samples ?
			(uint64_t)((unsigned __int128)th->cpu_ns * pr->samples / th->samples) :
			(p == th->unknown_prog ? th->cpu_ns : 0);
		/* inclusive time, as self time: its share of the samples */
		pr->inclusive_ns = th->samples ?
			(uint64_t)((unsigned __int128)th->cpu_ns * pr->inclusive_samples /
				   th->samples) : 0;
		given[t] += pr->run_ns;
		if (last[t] == PROG_NONE || pr->samples >= l->progs[last[t]].samples)
			last[t] = p;
	}
	/* Rounding leftovers go to each thread's busiest program. */
	for (uint32_t t = 0; t < l->nthreads; t++)
		if (last[t] != PROG_NONE)
			l->progs[last[t]].run_ns += l->threads[t].cpu_ns - given[t];
	free(given);
	free(last);
	return 0;
nomem:
	free(given);
	free(last);
	return -ENOMEM;
}

int live__finish(struct live *l)
{
	if (l->nevents)	/* events is NULL when none came */
		qsort(l->events, l->nevents, sizeof(*l->events), cmp_event);
	int err = process(l);
	for (uint32_t i = 0; i < l->nstints; i++)
		l->lossy_stints += l->stints[i].lossy;
	if (!err)
		err = calibrate(l);
	if (!err)
		err = place(l);
	if (!err)
		err = split_runtime(l);
	return err;
}

void live__table_input(const struct live *l, struct table_input *in)
{
	*in = (struct table_input){
		.progs = l->progs,
		.nprogs = l->nprogs,
		.strings = &l->strings,
		.streams = l->ncpus,
		.method = l->method,
		.interval_ns = l->interval_ns,
		.measured_steal = true,
		.inclusive = l->inclusive,
	};
	in->totals.samples = l->samples;
	in->totals.run_ns = l->run_ns;
	in->totals.steal_ns = l->steal_ns;
	in->totals.labelled_steal_ns = l->steal_ns;
}
