/*
 * sched_delta: per-collection growth of per-thread running totals
 * (sched_delta.h). Entries are a dense array found through an hindex by
 * thread id; a forgotten entry takes the last one's place, so the array
 * stays dense and a collection's sweep is one pass.
 */
#include "sched_delta.h"

#include <string.h>

#include "grow.h"
#include "banned.h"

void sched_delta__init(struct sched_delta *d)
{
	memset(d, 0, sizeof(*d));
	hindex__init(&d->index);
}

void sched_delta__release(struct sched_delta *d)
{
	if (!d)
		return;
	hindex__release(&d->index);
	free(d->v);
	sched_delta__init(d);
}

static uint64_t tid_hash(uint32_t tid)
{
	return hash_mix((uint64_t)tid + 1);
}

static bool same_tid(const void *ctx, uint32_t id)
{
	const struct sched_delta_entry *const *probe = ctx;
	return probe[0][id].tid == probe[1]->tid;
}

static uint32_t find(const struct sched_delta *d, uint32_t tid)
{
	struct sched_delta_entry key = { .tid = tid };
	const struct sched_delta_entry *ctx[2] = { d->v, &key };
	return hindex__find(&d->index, tid_hash(tid), same_tid, ctx);
}

/* Entry id goes; the last entry takes its place (and its id). */
static void forget(struct sched_delta *d, uint32_t id)
{
	uint32_t last = d->n - 1;
	hindex__remove(&d->index, tid_hash(d->v[id].tid), id);
	if (id != last) {
		hindex__remove(&d->index, tid_hash(d->v[last].tid), last);
		d->v[id] = d->v[last];
		/* cannot fail: the index just gave up a slot */
		hindex__insert(&d->index, tid_hash(d->v[id].tid), id);
	}
	d->n--;
}

void sched_delta__begin(struct sched_delta *d)
{
	d->gen++;
}

/* A new entry for tid, or HINDEX_NONE when out of memory. */
static uint32_t add(struct sched_delta *d, uint32_t tid, uint64_t born)
{
	if (grow_array((void **)&d->v, &d->cap, d->n, sizeof(*d->v), 64))
		return HINDEX_NONE;
	if (hindex__insert(&d->index, tid_hash(tid), d->n))
		return HINDEX_NONE;
	struct sched_delta_entry *e = &d->v[d->n];
	memset(e, 0, sizeof(*e));
	e->tid = tid;
	e->born = born;
	return d->n++;
}

int sched_delta__step(struct sched_delta *d, uint32_t tid, uint64_t born,
		      const uint64_t cum[SCHED_DELTA_N], bool final,
		      uint64_t delta[SCHED_DELTA_N], bool *first)
{
	uint32_t id = find(d, tid);
	*first = id == HINDEX_NONE || d->v[id].born != born;
	if (id == HINDEX_NONE) {
		id = add(d, tid, born);
		if (id == HINDEX_NONE)
			return -ENOMEM;
	} else if (*first) {	/* the id's old thread left unread */
		memset(d->v[id].last, 0, sizeof(d->v[id].last));
		d->v[id].born = born;
	}
	struct sched_delta_entry *e = &d->v[id];
	for (int i = 0; i < SCHED_DELTA_N; i++) {
		if (cum[i] < e->last[i]) {
			d->backwards++;
			delta[i] = 0;
			continue;	/* kept: the next growth counts from the old high */
		}
		delta[i] = cum[i] - e->last[i];
		e->last[i] = cum[i];
	}
	e->gen = d->gen;
	if (final)
		forget(d, id);
	return 0;
}

uint32_t sched_delta__end(struct sched_delta *d)
{
	uint32_t gone = 0;
	for (uint32_t id = 0; id < d->n;) {
		if (d->v[id].gen == d->gen) {
			id++;
			continue;
		}
		forget(d, id);	/* the last entry moved here: look again */
		gone++;
	}
	return gone;
}
