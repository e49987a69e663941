/*
 * engine: its lifecycle, the reorder queue that merges the per-CPU
 * streams behind the caller's watermark, and the dispatch of each event
 * in time order (engine.h has the model; engine_tasks.c and
 * engine_stints.c the rest).
 *
 * The queue gives events in (time, seq) order. Each CPU's stream comes
 * in time order nearly always, so its events wait in a ring of their own
 * in arrival order (a ring of ids of slots that all rings share, each
 * with its time), and a heap of the rings' oldest events (one a CPU, and
 * one for events of no CPU) merges them: an event costs a copy in, is
 * processed in its slot, and takes log2(CPUs) steps, however long the
 * queue. An event older than the newest of its ring
 * (a stream out of order) waits in a heap of full events instead, and
 * the oldest of both goes first.
 */
#include "engine_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "heap.h"
#include "banned.h"

static void free_event_text(struct eng_event *ev)
{
	free(ev->text);
	free(ev->exe);
	ev->text = ev->exe = NULL;
}

/* The place of a ring's i-th oldest event (i below its cap). */
static inline uint32_t ring_at(const struct eng_ring *q, uint32_t i)
{
	uint32_t at = q->head + i;
	return at >= q->cap ? at - q->cap : at;
}

struct engine *engine__new(const struct engine_config *c, const struct engine_sink *sink)
{
	struct engine *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->c = *c;
	if (sink)
		e->sinks[e->nsinks++] = *sink;
	e->st.accounting = c->accounting;
	/* hrtimer latency on a busy guest is tens of microseconds */
	e->gap_min_ns = c->interval_ns / 20 > 50000 ? c->interval_ns / 20 : 50000;
	e->procs.free = e->threads.free = e->progs.free = ENGINE_NONE;
	e->gaps.free = e->stints.free = ENGINE_NONE;
	e->free_slot = ENGINE_NONE;
	hindex__init(&e->proc_index);
	hindex__init(&e->thread_index);
	hindex__init(&e->gap_sum_index);
	e->cpus = calloc(c->ncpus ? c->ncpus : 1, sizeof(*e->cpus));
	e->rings = calloc(c->ncpus + 1, sizeof(*e->rings));
	e->heads = malloc((c->ncpus + 1) * sizeof(*e->heads));
	e->history = malloc(ENGINE_PENDING * sizeof(*e->history));
	e->scratch = malloc((2 * ENGINE_PENDING + 2) * sizeof(*e->scratch));
	if (!e->cpus || !e->rings || !e->heads || !e->history || !e->scratch) {
		engine__free(e);
		errno = ENOMEM;
		return NULL;
	}
	e->series.bucket_ns = NSEC_PER_SEC;
	e->series.ncpus = c->ncpus;
	for (uint32_t i = 0; i < c->ncpus; i++) {
		struct eng_cpu *cpu = &e->cpus[i];
		cpu->stint = cpu->thread = cpu->newest = ENGINE_NONE;
		cpu->last_prog = cpu->last_any_prog = ENGINE_NONE;
	}
	return e;
}

int engine__add_sink(struct engine *e, const struct engine_sink *sink)
{
	if (e->nsinks == ENGINE_SINKS)
		return -ENOSPC;
	e->sinks[e->nsinks++] = *sink;
	return 0;
}

void engine__free(struct engine *e)
{
	if (!e)
		return;
	for (uint32_t i = 0; i < e->nheap; i++)
		free_event_text(&e->heap[i]);
	free(e->heap);
	for (uint32_t r = 0; e->rings && r <= e->c.ncpus; r++) {
		struct eng_ring *q = &e->rings[r];
		for (uint32_t i = 0; i < q->len; i++)
			free_event_text(&e->slots[q->v[ring_at(q, i)].slot]);
		free(q->v);
	}
	free(e->rings);
	free(e->heads);
	free(e->slots);
	eng_tasks_release(e);
	free(e->gaps.v);
	free(e->stints.v);
	free(e->fifo);
	free(e->history);
	free(e->scratch);
	free(e->gap_sums);
	hindex__release(&e->gap_sum_index);
	free(e->cpus);
	free(e->series.run_ns);
	free(e->series.steal_ns);
	free(e);
}

void engine__set_kernel_steal(struct engine *e, uint32_t cpu, uint64_t ns)
{
	if (cpu < e->c.ncpus) {
		e->cpus[cpu].st.kernel_steal_ns = ns;
		e->cpus[cpu].kernel_known = true;
	}
}

static bool before(const struct eng_event *a, const struct eng_event *b)
{
	return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

HEAP_DEFINE(events, struct eng_event, before)

static bool head_before(const struct eng_head *a, const struct eng_head *b)
{
	return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

HEAP_DEFINE(heads, struct eng_head, head_before)

static struct eng_head head_of(const struct engine *e, uint32_t r)
{
	const struct eng_ring *q = &e->rings[r];
	const struct eng_queued *h = &q->v[q->head];
	return (struct eng_head){ .time = h->time, .seq = h->seq, .ring = r };
}

/* A free slot for a queued event: the one freed last (warm in the cache),
 * else a new one. The slots are shared by the rings, so the memory they
 * take follows the most events that waited at once, not each ring's. */
static int slot_new(struct engine *e, uint32_t *id)
{
	if (e->free_slot != ENGINE_NONE) {
		*id = e->free_slot;
		e->free_slot = e->slots[*id].seq;
		return 0;
	}
	if (grow_array((void **)&e->slots, &e->slots_cap, e->nslots, sizeof(*e->slots), 256))
		return -ENOMEM;
	*id = e->nslots++;
	return 0;
}

/* Frees a slot whose event was taken out: its seq links the free list. */
static void slot_free(struct engine *e, uint32_t id)
{
	e->slots[id].seq = e->free_slot;
	e->free_slot = id;
}

/* Makes a full ring of slot ids half as large again, in place, and moves
 * the part of it that wrapped round behind the rest or, when that is
 * longer, the older part to the new end. */
static int ring_grow(struct eng_ring *q)
{
	uint32_t old = q->cap, cap = old ? old + old / 2 : 256;
	if (cap <= old || cap > UINT32_MAX / 2)
		return -ENOMEM;
	struct eng_queued *v = realloc(q->v, (size_t)cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	uint32_t older = old - q->head;	/* v[head..old) */
	if (q->head && q->head <= cap - old && q->head <= older) {
		memcpy(v + old, v, q->head * sizeof(*v));
	} else if (q->head) {
		memmove(v + cap - older, v + q->head, older * sizeof(*v));
		q->head = cap - older;
	}
	q->v = v;
	q->cap = cap;
	return 0;
}

/* An event's ring: its CPU's; a task's name, a process's command line
 * and a cgroup are of no CPU (a source gives them the time it has read
 * up to, ahead of CPU 0's stream): a ring of their own. */
static uint32_t ring_of(const struct engine *e, const struct eng_event *ev)
{
	bool cpuless = ev->kind == EK_TASK || ev->kind == EK_PROC || ev->kind == EK_CGROUP ||
		       ev->kind == EK_CLOCK;
	return cpuless ? e->c.ncpus : ev->cpu;
}

/* Queues ev: at the end of its ring when it is not older than the ring's
 * newest (its stream in order), else in the heap. */
static int enqueue(struct engine *e, const struct eng_event *ev)
{
	uint32_t r = ring_of(e, ev);
	struct eng_ring *q = &e->rings[r];
	if (q->len && ev->time < q->newest) {
		if (grow_array((void **)&e->heap, &e->heap_cap, e->nheap, sizeof(*e->heap), 64))
			return -ENOMEM;
		e->heap[e->nheap] = *ev;
		events_up(e->heap, e->nheap++);
		return 0;
	}
	uint32_t id;
	if ((q->len == q->cap && ring_grow(q)) || slot_new(e, &id))
		return -ENOMEM;
	e->slots[id] = *ev;
	q->v[ring_at(q, q->len)] = (struct eng_queued){ ev->time, ev->seq, id };
	q->len++;
	q->newest = ev->time;
	if (q->len == 1) {
		e->heads[e->nheads] = head_of(e, r);
		heads_up(e->heads, e->nheads++);
	}
	return 0;
}

/* Whether the heap's oldest goes before the rings' oldest. */
static bool heap_first(const struct engine *e)
{
	if (!e->nheap)
		return false;
	if (!e->nheads)
		return true;
	struct eng_head h = { .time = e->heap[0].time, .seq = e->heap[0].seq };
	return head_before(&h, &e->heads[0]);
}

/* The time of the oldest queued event (there is one). */
static uint64_t oldest_time(const struct engine *e)
{
	return heap_first(e) ? e->heap[0].time : e->heads[0].time;
}

/* A ring's events are read a round after they were queued, when their
 * slots have left the cache: the slot of the event this many places
 * behind the head is fetched ahead. */
#define PREFETCH_AHEAD 4

/* Takes the oldest queued event out (there is one): the slot it is in,
 * to be freed (slot_free) once it is processed, or ENGINE_NONE with it
 * copied to *ev (from the heap). Processing an event queues none, so the
 * slot stays where it is meanwhile. */
static uint32_t dequeue(struct engine *e, struct eng_event *ev)
{
	e->queued--;
	if (heap_first(e)) {
		*ev = e->heap[0];
		e->heap[0] = e->heap[--e->nheap];
		events_down(e->heap, e->nheap, 0);
		return ENGINE_NONE;
	}
	uint32_t r = e->heads[0].ring;
	struct eng_ring *q = &e->rings[r];
	uint32_t id = q->v[q->head].slot;
	if (q->len > PREFETCH_AHEAD)
		__builtin_prefetch(&e->slots[q->v[ring_at(q, PREFETCH_AHEAD)].slot]);
	q->head = ring_at(q, 1);
	if (--q->len) {
		e->heads[0] = head_of(e, r);
	} else {
		q->head = 0;	/* refilled from the front: the memory used
				 * follows what waits, not the ring's size */
		e->heads[0] = e->heads[--e->nheads];
	}
	heads_down(e->heads, e->nheads, 0);
	return id;
}


static int dispatch(struct engine *e, struct eng_event *ev)
{
	/* figures read, not inferred: switches and runtime would count
	 * them twice */
	if (e->c.mode == STEAL_GIVEN && (ev->kind == EK_SWITCH || ev->kind == EK_RUNTIME))
		return 0;
	switch (ev->kind) {
	case EK_SAMPLE:
		return eng_on_sample(e, ev);
	case EK_SWITCH:
		return eng_on_switch(e, ev);
	case EK_RUNTIME:
		return eng_on_runtime(e, ev);
	case EK_TASK:
		return eng_on_task(e, ev);
	case EK_FORK:
		return eng_on_fork(e, ev);
	case EK_COMM:
		return eng_on_comm(e, ev);
	case EK_EXIT:
		return eng_on_exit(e, ev);
	case EK_LOST:
		eng_on_lost(e, ev);
		return 0;
	case EK_PROC:
		return eng_on_proc(e, ev);
	case EK_CGROUP:
		return eng_on_cgroup(e, ev);
	case EK_CLOCK:
		return eng_on_clock(e, ev);
	}
	return 0;
}

/* Processes one event now. */
static int process(struct engine *e, struct eng_event *ev)
{
	if (ev->time > e->processed)
		e->processed = ev->time;
	int err = dispatch(e, ev);
	free_event_text(ev);
	return err ? err : eng_exits_due(e);
}

/* Processes the oldest queued event (there is one), where it waits. */
static int process_oldest(struct engine *e)
{
	struct eng_event copy;
	uint32_t id = dequeue(e, &copy);
	int err = process(e, id == ENGINE_NONE ? &copy : &e->slots[id]);
	if (id != ENGINE_NONE)
		slot_free(e, id);
	return err;
}

int engine__push(struct engine *e, struct eng_event *ev)
{
	if (ev->cpu >= e->c.ncpus) {
		free_event_text(ev);
		return -EINVAL;
	}
	ev->seq = e->seq++;
	/* older than what was processed already: at once, out of order */
	if (e->processed && ev->time < e->processed) {
		e->st.late_events++;
		int err = dispatch(e, ev);
		free_event_text(ev);
		return err;
	}
	if (enqueue(e, ev)) {
		free_event_text(ev);
		return -ENOMEM;
	}
	ev->text = ev->exe = NULL;	/* the queue's now */
	e->st.queued_events = ++e->queued;
	return 0;
}

int engine__advance(struct engine *e, uint64_t watermark)
{
	while (e->queued && oldest_time(e) <= watermark) {
		int err = process_oldest(e);
		if (err)
			return err;
	}
	e->st.queued_events = e->queued;
	return 0;
}

int engine__shed(struct engine *e, uint32_t max_queued)
{
	while (e->queued > max_queued) {
		int err = process_oldest(e);
		if (err)
			return err;
	}
	e->st.queued_events = e->queued;
	return 0;
}

int engine__settle(struct engine *e)
{
	return eng_settle(e);
}

/* Frees the memory of an empty queue (its slots, rings and heap): what
 * the most events waiting at once took is not needed while the rows are
 * made into a table. Events queued later find it empty and grow it. */
static void queue_trim(struct engine *e)
{
	for (uint32_t r = 0; r <= e->c.ncpus; r++) {
		free(e->rings[r].v);
		e->rings[r] = (struct eng_ring){ 0 };
	}
	free(e->slots);
	e->slots = NULL;
	e->nslots = e->slots_cap = 0;
	e->free_slot = ENGINE_NONE;
	free(e->heap);
	e->heap = NULL;
	e->nheap = e->heap_cap = 0;
	e->nheads = 0;
}

int engine__finish(struct engine *e, uint64_t end_ns)
{
	int err = engine__advance(e, UINT64_MAX);
	if (!err && !e->queued)
		queue_trim(e);
	if (!err)
		err = eng_close_all(e, end_ns ? end_ns : e->processed);
	if (!err)
		err = eng_judge_waiting(e, true);
	if (!err)
		err = eng_settle(e);
	e->finished = true;
	if (!err)
		err = eng_hand_out_all(e);
	return err;
}

const struct engine_stats *engine__stats(const struct engine *e)
{
	return &e->st;
}

const struct eng_cpu_stats *engine__cpu(const struct engine *e, uint32_t cpu)
{
	return cpu < e->c.ncpus ? &e->cpus[cpu].st : NULL;
}

const struct engine_config *engine__config(const struct engine *e)
{
	return &e->c;
}
