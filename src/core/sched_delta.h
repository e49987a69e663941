/*
 * sched_delta: what each thread's cumulative counters grew by since the
 * last collection, for a source whose kernel side keeps running totals
 * (the BPF collector, src/bpf/sched_clock.h) and whose readers want
 * per-collection figures.
 *
 * The bookkeeping is the part worth testing apart from the kernel: a
 * thread first seen gives all it has counted; one that has exited gives
 * its last growth once and is then forgotten; a thread id the kernel gave
 * to a new thread (another birth stamp) starts again from nothing, not
 * from the dead thread's totals; a thread that left the kernel's map
 * without its final figures is dropped at the end of the collection and
 * counted. A counter found lower than before (never, from the kernel's
 * counters; a bug or a torn read if it happens) gives 0 and is counted,
 * so that a delta is never negative nor huge.
 */
#ifndef CPULEDGER_CORE_SCHED_DELTA_H
#define CPULEDGER_CORE_SCHED_DELTA_H

#include <stdbool.h>
#include <stdint.h>

#include "hindex.h"

/* How many counters a thread carries: the caller decides what each is. */
#define SCHED_DELTA_N 8

struct sched_delta_entry {
	uint32_t tid;
	uint32_t gen;		/* the collection that last saw it */
	uint64_t born;		/* which thread of that id */
	uint64_t last[SCHED_DELTA_N];
};

struct sched_delta {
	struct hindex index;
	struct sched_delta_entry *v;
	uint32_t n, cap;
	uint32_t gen;
	uint64_t backwards;	/* counters found lower than before */
};

void sched_delta__init(struct sched_delta *d);
void sched_delta__release(struct sched_delta *d);

/* A collection begins: the threads stepped until sched_delta__end are
 * the ones the kernel still holds. */
void sched_delta__begin(struct sched_delta *d);

/*
 * One thread's totals now (cum) into their growth since its last step
 * (delta). *first is set when the thread is new to the bookkeeping (or a
 * new thread of a reused id). final: the thread has exited and these are
 * its last figures: it is forgotten. 0 or -ENOMEM (nothing changed then).
 */
int sched_delta__step(struct sched_delta *d, uint32_t tid, uint64_t born,
		      const uint64_t cum[SCHED_DELTA_N], bool final,
		      uint64_t delta[SCHED_DELTA_N], bool *first);

/* The collection ends: threads not stepped since sched_delta__begin have
 * left without final figures; they are forgotten. How many. */
uint32_t sched_delta__end(struct sched_delta *d);

/* Threads held. */
static inline uint32_t sched_delta__count(const struct sched_delta *d)
{
	return d->n;
}

#endif
