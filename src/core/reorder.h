/*
 * reorder: the queue that merges the per-CPU streams of events into one
 * in (time, seq) order, behind a watermark the caller gives. The engine
 * keeps one (engine.c); a recording read on a thread of its own keeps
 * it there instead, and the engine is given its events in order
 * (replay/rec_split.c).
 *
 * Each CPU's stream comes in time order nearly always, so its events
 * wait in a ring of their own in arrival order (a ring of ids of slots
 * that all rings share, each with its time), and a heap of the rings'
 * oldest events (one a CPU, and one for events of no CPU) merges them:
 * an event costs a copy in, is read in its slot, and takes log2(CPUs)
 * steps, however long the queue. An event older than the newest of its
 * ring (a stream out of order) waits in a heap of full events instead,
 * and the oldest of both goes first. An event older than one taken out
 * already is late: not queued, the caller's to take at once.
 */
#ifndef CPULEDGER_CORE_REORDER_H
#define CPULEDGER_CORE_REORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"

/* A queued event in its ring: its slot, and its order kept beside it so
 * that the ring's head is known without reading the slot. */
struct eng_queued {
	uint64_t time;
	uint32_t seq, slot;
};

/* One CPU's queued events, oldest first: v[head], v[head + 1], ...,
 * round past v[cap - 1] to v[0]. */
struct eng_ring {
	struct eng_queued *v;
	uint32_t head, len, cap;
	uint64_t newest;	/* time of its newest event */
};

/* A ring's oldest event, as the heap of heads orders it. */
struct eng_head {
	uint64_t time;
	uint32_t seq, ring;
};

struct reorder {
	uint32_t ncpus;			/* rings: one a CPU, then ring ncpus
					 * for events of no CPU */
	struct eng_ring *rings;
	struct eng_event *slots;	/* the rings' events */
	uint32_t nslots, slots_cap;
	uint32_t free_slot;		/* the free slots, a list through
					 * their seq; ENGINE_NONE: none */
	struct eng_head *heads;		/* the non-empty rings' oldest */
	uint32_t nheads;
	struct eng_event *heap;		/* out of order in their stream */
	uint32_t nheap, heap_cap;
	uint32_t seq;			/* the next event's */
	uint32_t queued;
	uint64_t taken;			/* the latest time taken out */
};

int reorder__init(struct reorder *q, uint32_t ncpus);
/* Its memory, and the strings of the events still queued. */
void reorder__release(struct reorder *q);

/* ev numbered (ev->seq) and queued, its strings the queue's now: 0; 1
 * when it is late (older than an event taken out already: numbered, not
 * queued, the caller's to process now); -EINVAL for a CPU it has none
 * of, -ENOMEM (ev's strings the caller's still). */
int reorder__push(struct reorder *q, struct eng_event *ev);

/* Whether an event waits, and the oldest's time is at or before t. */
bool reorder__due(const struct reorder *q, uint64_t t);

/*
 * Takes the oldest queued event out (there is one): where it is, valid
 * until reorder__done(q, *slot), which the caller calls once it is
 * processed; no event may be pushed meanwhile. *slot is ENGINE_NONE when
 * it was copied to *copy.
 */
struct eng_event *reorder__take(struct reorder *q, struct eng_event *copy, uint32_t *slot);
void reorder__done(struct reorder *q, uint32_t slot);

/* The memory of an empty queue let go: what the most events waiting at
 * once took. Events queued later find it empty and grow it. */
void reorder__trim(struct reorder *q);

#endif
