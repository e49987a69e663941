/* reorder: see reorder.h. */
#include "reorder.h"

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

int reorder__init(struct reorder *q, uint32_t ncpus)
{
	memset(q, 0, sizeof(*q));
	q->ncpus = ncpus;
	q->free_slot = ENGINE_NONE;
	q->rings = calloc(ncpus + 1, sizeof(*q->rings));
	q->heads = malloc((ncpus + 1) * sizeof(*q->heads));
	if (!q->rings || !q->heads) {
		reorder__release(q);
		return -ENOMEM;
	}
	return 0;
}

void reorder__release(struct reorder *q)
{
	for (uint32_t i = 0; i < q->nheap; i++)
		free_event_text(&q->heap[i]);
	free(q->heap);
	for (uint32_t r = 0; q->rings && r <= q->ncpus; r++) {
		struct eng_ring *g = &q->rings[r];
		for (uint32_t i = 0; i < g->len; i++)
			free_event_text(&q->slots[g->v[ring_at(g, i)].slot]);
		free(g->v);
	}
	free(q->rings);
	free(q->heads);
	free(q->slots);
	memset(q, 0, sizeof(*q));
	q->free_slot = ENGINE_NONE;
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

static struct eng_head head_of(const struct reorder *e, uint32_t r)
{
	const struct eng_ring *q = &e->rings[r];
	const struct eng_queued *h = &q->v[q->head];
	return (struct eng_head){ .time = h->time, .seq = h->seq, .ring = r };
}

/* A free slot for a queued event: the one freed last (warm in the cache),
 * else a new one. The slots are shared by the rings, so the memory they
 * take follows the most events that waited at once, not each ring's. */
static int slot_new(struct reorder *e, uint32_t *id)
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
static void slot_free(struct reorder *e, uint32_t id)
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
 * up to, ahead of CPU 0's stream): a ring of their own. So are the
 * collector's clocks, a CPU's too: of when they were read, ahead of the
 * CPU's stream. */
static uint32_t ring_of(const struct reorder *e, const struct eng_event *ev)
{
	bool cpuless = ev->kind == EK_TASK || ev->kind == EK_PROC || ev->kind == EK_CGROUP ||
		       ev->kind == EK_CLOCK || ev->kind == EK_CPU_CLOCK;
	return cpuless ? e->ncpus : ev->cpu;
}

/* Queues ev: at the end of its ring when it is not older than the ring's
 * newest (its stream in order), else in the heap. */
static int enqueue(struct reorder *e, const struct eng_event *ev)
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
static bool heap_first(const struct reorder *e)
{
	if (!e->nheap)
		return false;
	if (!e->nheads)
		return true;
	struct eng_head h = { .time = e->heap[0].time, .seq = e->heap[0].seq };
	return head_before(&h, &e->heads[0]);
}

bool reorder__due(const struct reorder *q, uint64_t t)
{
	return q->queued && (heap_first(q) ? q->heap[0].time : q->heads[0].time) <= t;
}

/* A ring's events are read a round after they were queued, when their
 * slots have left the cache: the slot of the event this many places
 * behind the head is fetched ahead. */
#define PREFETCH_AHEAD 4

/* Takes the oldest queued event out (there is one): the slot it is in,
 * to be freed (slot_free) once it is processed, or ENGINE_NONE with it
 * copied to *ev (from the heap). */
static uint32_t dequeue(struct reorder *e, struct eng_event *ev)
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

int reorder__push(struct reorder *q, struct eng_event *ev)
{
	if (ev->cpu >= q->ncpus)
		return -EINVAL;
	ev->seq = q->seq++;
	/* older than what was taken out already: at once, out of order */
	if (q->taken && ev->time < q->taken)
		return 1;
	if (enqueue(q, ev))
		return -ENOMEM;
	ev->text = ev->exe = NULL;	/* the queue's now */
	q->queued++;
	return 0;
}

struct eng_event *reorder__take(struct reorder *q, struct eng_event *copy, uint32_t *slot)
{
	*slot = dequeue(q, copy);
	struct eng_event *ev = *slot == ENGINE_NONE ? copy : &q->slots[*slot];
	if (ev->time > q->taken)
		q->taken = ev->time;
	return ev;
}

void reorder__done(struct reorder *q, uint32_t slot)
{
	if (slot != ENGINE_NONE)
		slot_free(q, slot);
}

void reorder__trim(struct reorder *q)
{
	for (uint32_t r = 0; r <= q->ncpus; r++) {
		free(q->rings[r].v);
		q->rings[r] = (struct eng_ring){ 0 };
	}
	free(q->slots);
	q->slots = NULL;
	q->nslots = q->slots_cap = 0;
	q->free_slot = ENGINE_NONE;
	free(q->heap);
	q->heap = NULL;
	q->nheap = q->heap_cap = 0;
	q->nheads = 0;
}
