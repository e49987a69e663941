/*
 * recorder_bpf: the BPF collector (src/bpf/sched_clock.h) as the
 * recorder's source of each thread's CPU time, steal and run-queue wait
 * (--source bpf): the kernel's own clocks, aggregated in the kernel, read
 * every interval and at the end, so that the cost follows the reads, not
 * the context switches (issue 25). Each thread's figures since the last
 * read become a REC_CLOCK item and an EK_CLOCK event, each CPU's steal
 * while threads held it a REC_CPUCLOCK item and an EK_CPU_CLOCK event (a
 * thread's steal is one sum over its CPUs); perf's rings still
 * give the samples (functions) and the tasks. The waits are kept here as
 * running totals per thread, for the end's REC_WAIT and the live
 * consumers' read_wait hook (instead of /proc/PID/schedstat, which loses
 * what a thread waited between the last read and its exit). An exited
 * thread's is kept until the engine has handed the thread out (the
 * analysis and the ledger's collector ask for it then), or not at all
 * where no engine is attached (a recording's reader has it from the
 * CLOCK items): memory follows the live threads, however long the
 * recording.
 */
#include "recorder_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bpf/sched_clock.h"
#include "../core/grow.h"
#include "../core/units.h"
#include "../core/banned.h"

struct bpf_wait {
	uint32_t pid, tid;
	uint64_t ns;
};

struct recorder_bpf {
	struct sched_clock *sc;
	uint64_t interval_ns;
	uint64_t last_ns;		/* the last read's time */
	char steal_source[192];		/* "bpf (steal: ...; wait: ...)" */
	struct bpf_wait *waits;		/* every thread seen (exited too,
					 * unless forget_exited) */
	uint32_t nwaits, waits_cap;
	struct hindex index;
	bool sink_tried;		/* the engine told of hand-outs (sink) */
	bool sink_added;
	/* per CPU since the start, steal while a thread held it: the
	 * steal clock's growth less the idle task's share, each read (a
	 * thread's steal is read as one sum of its stints on every CPU:
	 * each read's share of this is its CPU's REC_CPUCLOCK item and
	 * EK_CPU_CLOCK event) */
	uint64_t *busy_steal;
	/* and while its idle task held it: nobody's steal (a vCPU woken from
	 * idle waits for the host before it runs), part of the kernel's */
	uint64_t *idle_steal;
	uint32_t ncpus;
};

#define BPF_INTERVAL_NS (250 * NSEC_PER_MSEC)

static uint64_t wait_hash(uint32_t pid, uint32_t tid)
{
	return hash_mix(((uint64_t)pid << 32) | tid);
}

struct wait_key {
	const struct recorder_bpf *b;
	uint32_t pid, tid;
};

static bool wait_eq(const void *ctx, uint32_t id)
{
	const struct wait_key *k = ctx;
	return k->b->waits[id].pid == k->pid && k->b->waits[id].tid == k->tid;
}

static uint32_t wait_find(const struct recorder_bpf *b, uint32_t pid, uint32_t tid)
{
	struct wait_key k = { b, pid, tid };
	return hindex__find(&b->index, wait_hash(pid, tid), wait_eq, &k);
}

/* Takes entry id out, the last one moved into its place (ids are dense). */
static void wait_remove(struct recorder_bpf *b, uint32_t id)
{
	struct bpf_wait *w = b->waits;
	hindex__remove(&b->index, wait_hash(w[id].pid, w[id].tid), id);
	uint32_t last = --b->nwaits;
	if (id == last)
		return;
	hindex__remove(&b->index, wait_hash(w[last].pid, w[last].tid), last);
	w[id] = w[last];
	hindex__insert(&b->index, wait_hash(w[id].pid, w[id].tid), id);	/* room: was there */
}

/* Adds a thread's wait since the last read to its running total. */
static int wait_add(struct recorder *r, const struct sched_clock_delta *d)
{
	struct recorder_bpf *b = r->bpf;
	uint32_t id = wait_find(b, d->pid, d->tid);
	if (id == HINDEX_NONE) {
		if (grow_array((void **)&b->waits, &b->waits_cap, b->nwaits, sizeof(*b->waits),
			       256) ||
		    hindex__insert(&b->index, wait_hash(d->pid, d->tid), b->nwaits))
			return -ENOMEM;
		id = b->nwaits++;
		b->waits[id] = (struct bpf_wait){ d->pid, d->tid, 0 };
	}
	b->waits[id].ns += d->wait_ns;
	/* top and the agent ask only of live threads: memory follows them */
	if (r->o.forget_exited) {
		if (d->flags & SCHED_CLOCK_EXITED)
			wait_remove(b, id);
		return 0;
	}
	/* record and run: the end's figure so far, for a thread handed out
	 * before the end (its last wait is in it) */
	int err = cgstats__wait_grow(&r->cg, d->pid, d->tid, d->wait_ns);
	if (err || !(d->flags & SCHED_CLOCK_EXITED))
		return err;
	if (!b->sink_added && !r->engine) {	/* no one will ask */
		cgstats__wait_forget(&r->cg, d->pid, d->tid);
		wait_remove(b, id);
		return 0;
	}
	/* forgotten once the engine has handed it out (on_handed) */
	return cgstats__wait_final(&r->cg, d->pid, d->tid);
}

/* The engine has handed a thread out to its sinks (this one among them). */
static int on_handed(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	struct recorder *r = ctx;
	const struct eng_proc *p = engine__proc(e, t->proc);
	return p ? cgstats__wait_handed(&r->cg, p->pid, t->tid) : 0;
}

static void forget_wait(void *ctx, uint32_t pid, uint32_t tid)
{
	struct recorder_bpf *b = ctx;
	uint32_t id = wait_find(b, pid, tid);
	if (id != HINDEX_NONE)
		wait_remove(b, id);
}

/* Before a read: the exited threads handed out since the last one are
 * forgotten (every sink has asked: the engine hands out to all at once).
 * An engine that can take no more sinks leaves every wait to the end. */
static void forget_handed(struct recorder *r)
{
	struct recorder_bpf *b = r->bpf;
	if (r->o.forget_exited)
		return;
	if (r->engine && !b->sink_tried) {
		b->sink_tried = true;
		struct engine_sink s = { .ctx = r, .thread_gone = on_handed };
		b->sink_added = !engine__add_sink(r->engine, &s);
	}
	cgstats__wait_sweep(&r->cg, forget_wait, b);
}

int recorder_bpf_open(struct recorder *r, char *why, size_t whylen)
{
	struct recorder_bpf *b = calloc(1, sizeof(*b));
	if (!b) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	hindex__init(&b->index);
	/* no stints ring: only the maps' totals are read, at each interval;
	 * CPULEDGER_BPF_MAX_THREADS sizes the threads' map (tests: a full
	 * one) */
	const char *max = getenv("CPULEDGER_BPF_MAX_THREADS");
	struct sched_clock_opts so = { .max_threads = max ? (uint32_t)atoi(max) : 0 };
	b->sc = sched_clock__new(&so, why, whylen);
	if (!b->sc) {
		int err = -errno;
		free(b);
		return err ? err : -EINVAL;
	}
	b->interval_ns = r->o.bpf_interval_ns ? r->o.bpf_interval_ns : BPF_INTERVAL_NS;
	/* sched_clock__describe's steal and wait, not its resolutions and
	 * IRQ time: a recording's steal_source holds 191 bytes */
	const struct sched_clock_status *st = sched_clock__status(b->sc);
	snprintf(b->steal_source, sizeof(b->steal_source), "bpf (steal: %s; wait: %s)",
		 st->steal_source, st->wait_source);
	r->bpf = b;
	return 0;
}

const char *recorder_bpf_steal_source(const struct recorder *r)
{
	return r->bpf->steal_source;
}

bool recorder_bpf_steal_known(const struct recorder *r)
{
	return !r->bpf || sched_clock__status(r->bpf->sc)->steal_known;
}

bool recorder_bpf_cpu_clocks(const struct recorder *r)
{
	return r->bpf && recorder_bpf_steal_known(r);
}

uint64_t recorder_bpf_interval(const struct recorder *r)
{
	return r->bpf ? r->bpf->interval_ns : 0;
}

/* One thread's figures since the last read: a REC_CLOCK item and an
 * EK_CLOCK event, both of time now (when they were read). */
static int clock_out(struct recorder *r, const struct sched_clock_delta *d, uint64_t now,
		     bool steal_known)
{
	int err = wait_add(r, d);
	/* every thread, as perf's switches are: the engine knows the scope
	 * (top -p adds the descendants alive at its start) */
	if (err || !d->tid)
		return err;	/* the idle tasks */
	uint32_t final = d->flags & SCHED_CLOCK_EXITED;
	struct rec_clock c = { .time_ns = now, .pid = d->pid, .tid = d->tid,
			       .cpu_ns = d->cpu_ns, .steal_ns = steal_known ? d->steal_ns : 0,
			       .wait_ns = d->wait_ns, .flags = final ? REC_CLOCK_FINAL : 0 };
	if (r->w)
		err = rec_writer__add(r->w, REC_CLOCK, &c, sizeof(c), NULL, 0);
	struct eng_event ev = { .kind = EK_CLOCK, .time = now, .pid = d->pid, .tid = d->tid,
				.value = c.cpu_ns, .flags = final ? EF_FINAL : 0,
				.comm = ENGINE_NONE, .function = ENGINE_NONE, .dso = ENGINE_NONE,
				.account = ENGINE_NONE, .stack = ENGINE_NONE };
	ev.steal = c.steal_ns;
	return err ? err : recorder_push(r, &ev);
}

/* One CPU's steal since the last read: a REC_CPUCLOCK item and an
 * EK_CPU_CLOCK event of time now. Its steal while threads held it is
 * each CPU's steal in the reports (a thread's clock is one sum over the
 * CPUs it ran on). */
static int cpu_clock_out(struct recorder *r, uint32_t cpu, const struct sched_clock_cpu_delta *d,
			 uint64_t now)
{
	uint64_t busy = d->steal_ns > d->idle_steal_ns ? d->steal_ns - d->idle_steal_ns : 0;
	r->bpf->busy_steal[cpu] += busy;
	r->bpf->idle_steal[cpu] += d->idle_steal_ns;
	struct rec_cpuclock c = { .time_ns = now, .cpu = cpu, .busy_steal_ns = busy,
				  .idle_steal_ns = d->idle_steal_ns, .idle_ns = d->idle_ns };
	int err = r->w ? rec_writer__add(r->w, REC_CPUCLOCK, &c, sizeof(c), NULL, 0) : 0;
	struct eng_event ev = { .kind = EK_CPU_CLOCK, .time = now, .cpu = cpu,
				.comm = ENGINE_NONE, .function = ENGINE_NONE, .dso = ENGINE_NONE,
				.account = ENGINE_NONE, .stack = ENGINE_NONE };
	ev.steal = busy;
	return err ? err : recorder_push(r, &ev);
}

/* Reads what every thread did since the last read and hands it on. The
 * time given is when the read ended: the rings were drained before it,
 * so it is ahead of everything the engine has processed, and it becomes
 * the round's latest time (perf's rule: by the end of the next drain,
 * every record of an earlier time is in). */
static int read_now(struct recorder *r, int (*then)(struct recorder *r))
{
	struct recorder_bpf *b = r->bpf;
	struct sched_clock_collection c;
	forget_handed(r);
	int err = sched_clock__collect(b->sc, &c);
	if (!err && then)
		err = then(r);
	if (err)
		return err;
	const struct sched_clock_status *st = sched_clock__status(b->sc);
	bool steal_known = st->steal_known;
	r->st.bpf_map_full = st->map_full;	/* (counted, and said at the end) */
	r->st.bpf_reused = st->reused;
	for (size_t i = 0; i < c.nthreads && !err; i++)
		err = clock_out(r, &c.threads[i], c.end_ns, steal_known);
	if (!err && !b->busy_steal && c.ncpus) {
		b->busy_steal = calloc(c.ncpus, sizeof(*b->busy_steal));
		b->idle_steal = calloc(c.ncpus, sizeof(*b->idle_steal));
		if (!b->busy_steal || !b->idle_steal)
			return -ENOMEM;
		b->ncpus = c.ncpus;
	}
	/* the CPUs recorded (the collector reads every possible one; the
	 * recording's, the engine's, are perf's, to the highest + 1) */
	for (uint32_t i = 0; !err && steal_known && i < c.ncpus && i < b->ncpus && i < r->ncpus;
	     i++)
		err = cpu_clock_out(r, i, &c.cpus[i], c.end_ns);
	b->last_ns = c.end_ns;
	if (c.end_ns > r->round_max)
		r->round_max = c.end_ns;
	return err;
}

int recorder_bpf_begin(struct recorder *r)
{
	if (!r->bpf)
		return 0;
	/* what the threads did between the load and the recording's start
	 * is not the recording's: read and dropped */
	struct sched_clock_collection c;
	int err = sched_clock__collect(r->bpf->sc, &c);
	r->bpf->last_ns = clock_mono_ns();
	/* waits count from here (none at the start), and grow as read */
	if (!r->o.forget_exited) {
		cgstats__waits_taken(&r->cg, REC_PHASE_START);
		cgstats__waits_taken(&r->cg, REC_PHASE_END);
	}
	return err;
}

int recorder_bpf_poll(struct recorder *r, bool now)
{
	if (!r->bpf)
		return 0;
	if (!now && clock_mono_ns() - r->bpf->last_ns < r->bpf->interval_ns)
		return 0;
	return read_now(r, NULL);
}

int recorder_bpf_last(struct recorder *r, int (*then)(struct recorder *r))
{
	return r->bpf ? read_now(r, then) : then(r);
}

bool recorder__cpu_steal(const struct recorder *r, uint32_t cpu, uint64_t *busy_ns,
			 uint64_t *idle_ns)
{
	const struct recorder_bpf *b = r->bpf;
	*busy_ns = *idle_ns = 0;
	if (!b || !b->busy_steal || cpu >= b->ncpus || !sched_clock__status(b->sc)->steal_known)
		return false;
	*busy_ns = b->busy_steal[cpu];
	*idle_ns = b->idle_steal[cpu];
	return true;
}

int recorder_bpf_each_wait(const struct recorder *r,
			   int (*fn)(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns),
			   void *ctx)
{
	const struct recorder_bpf *b = r->bpf;
	int err = 0;
	for (uint32_t i = 0; b && i < b->nwaits && !err; i++)
		if (b->waits[i].tid)
			err = fn(ctx, b->waits[i].pid, b->waits[i].tid, b->waits[i].ns);
	return err;
}

int recorder__read_wait(void *ctx, uint32_t pid, uint32_t tid, uint64_t *ns)
{
	const struct recorder *r = ctx;
	uint32_t id = r->bpf ? wait_find(r->bpf, pid, tid) : HINDEX_NONE;
	if (id == HINDEX_NONE)
		return -ENOENT;		/* not seen switching yet, or gone */
	*ns = r->bpf->waits[id].ns;
	return 0;
}

void recorder_bpf_release(struct recorder *r)
{
	struct recorder_bpf *b = r->bpf;
	if (!b)
		return;
	sched_clock__free(b->sc);
	hindex__release(&b->index);
	free(b->waits);
	free(b->busy_steal);
	free(b->idle_steal);
	free(b);
	r->bpf = NULL;
}
