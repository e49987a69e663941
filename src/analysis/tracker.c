/* tracker: see tracker.h. */
#include "tracker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/banned.h"

struct track_entry {
	struct track_key k;
	struct track_figs last;
	bool used;
	uint32_t next_free;
};


void tracker__init(struct tracker *tr)
{
	memset(tr, 0, sizeof(*tr));
	tr->free = HINDEX_NONE;
	hindex__init(&tr->index);
}

void tracker__release(struct tracker *tr)
{
	if (!tr)
		return;
	free(tr->v);
	hindex__release(&tr->index);
	memset(tr, 0, sizeof(*tr));
}

static uint64_t key_hash(const struct track_key *k)
{
	return hash_mix(k->a ^ hash_mix(k->b ^ hash_mix(k->c)));
}

struct find_ctx {
	const struct tracker *tr;
	const struct track_key *k;
};

static bool key_eq(const void *ctx, uint32_t id)
{
	const struct find_ctx *f = ctx;
	const struct track_entry *e = &f->tr->v[id];
	return e->used && e->k.a == f->k->a && e->k.b == f->k->b && e->k.c == f->k->c;
}

static uint32_t find(const struct tracker *tr, const struct track_key *k)
{
	struct find_ctx f = { tr, k };
	return hindex__find(&tr->index, key_hash(k), key_eq, &f);
}

/* k's entry, made at its first look (from a freed slot when there is
 * one); HINDEX_NONE when memory runs out. */
static uint32_t entry(struct tracker *tr, const struct track_key *k)
{
	uint32_t id = find(tr, k);
	if (id != HINDEX_NONE)
		return id;
	if (tr->free != HINDEX_NONE)
		id = tr->free;
	else if (!grow_array((void **)&tr->v, &tr->cap, tr->n, sizeof(*tr->v), 256))
		id = tr->n++;
	else
		return HINDEX_NONE;
	if (id == tr->free)
		tr->free = tr->v[id].next_free;
	if (hindex__insert(&tr->index, key_hash(k), id)) {
		tr->v[id] = (struct track_entry){ .next_free = tr->free };
		tr->free = id;
		return HINDEX_NONE;
	}
	tr->v[id] = (struct track_entry){ .k = *k, .used = true };
	return id;
}

static int64_t change(int64_t now, int64_t *last, enum track_mode mode)
{
	int64_t d = now - *last;
	if (mode == TRACK_COUNTER && d < 0)
		return 0;	/* the last look keeps the higher figure */
	*last = now;
	return d;
}

int tracker__look(struct tracker *tr, const struct track_key *k, const struct track_figs *now,
		  enum track_mode mode, struct track_figs *delta)
{
	uint32_t id = entry(tr, k);
	if (id == HINDEX_NONE)
		return -ENOMEM;
	struct track_figs *last = &tr->v[id].last;
	delta->cpu_ns = change(now->cpu_ns, &last->cpu_ns, mode);
	delta->steal_ns = change(now->steal_ns, &last->steal_ns, mode);
	delta->samples = change(now->samples, &last->samples, mode);
	return 0;
}

struct track_figs tracker__last(const struct tracker *tr, const struct track_key *k)
{
	uint32_t id = find(tr, k);
	return id == HINDEX_NONE ? (struct track_figs){ 0 } : tr->v[id].last;
}

void tracker__forget(struct tracker *tr, const struct track_key *k)
{
	uint32_t id = find(tr, k);
	if (id == HINDEX_NONE)
		return;
	hindex__remove(&tr->index, key_hash(k), id);
	tr->v[id] = (struct track_entry){ .next_free = tr->free };
	tr->free = id;
}
