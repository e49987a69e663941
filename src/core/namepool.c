/* namepool: see namepool.h. A slot's class is its size's power of two
 * above 16; a free slot serves its class or, once the pool is at its
 * bounds, any smaller one (so room freed by long names serves short ones
 * after an attack). */
#include "namepool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "banned.h"

#define NONE UINT32_MAX

void namepool__init(struct namepool *p, struct strtab *t, uint32_t max_names,
		    uint64_t max_bytes, uint64_t seed)
{
	memset(p, 0, sizeof(*p));
	p->t = t;
	p->max_names = max_names;
	p->max_bytes = max_bytes;
	p->seed = seed;
	hindex__init(&p->index);
	for (int c = 0; c < NAMEPOOL_CLASSES; c++)
		p->free[c] = NONE;
}

void namepool__release(struct namepool *p)
{
	if (!p)
		return;
	free(p->v);
	free(p->marks);
	hindex__release(&p->index);
	memset(p, 0, sizeof(*p));
}

static int class_of(size_t need)
{
	int c = 0;
	while (c < NAMEPOOL_CLASSES && (16u << c) < need)
		c++;
	return c;
}

struct key {
	const struct namepool *p;
	const char *s;
	size_t len;
};

static bool key_eq(const void *ctx, uint32_t i)
{
	const struct key *k = ctx;
	const struct namepool_entry *e = &k->p->v[i];
	return strtab__len(k->p->t, e->id) == k->len &&
	       memcmp(strtab__str(k->p->t, e->id), k->s, k->len) == 0;
}

static uint32_t pop_free(struct namepool *p, int c)
{
	uint32_t i = p->free[c];
	if (i != NONE)
		p->free[c] = p->v[i].next_free;
	return i;
}

/* A slot for a name needing `need` bytes: a free one of its class, a new
 * one within the bounds, or a free larger one. NONE: no room. */
static uint32_t slot(struct namepool *p, size_t need, int *err)
{
	int c = class_of(need);
	uint32_t i = pop_free(p, c);
	if (i != NONE)
		return i;
	uint32_t cap = 16u << c;
	if (p->n < NAMEPOOL_SLOTS_PER_NAME * (uint64_t)p->max_names &&
	    p->st.bytes + cap <= p->max_bytes) {
		*err = grow_array((void **)&p->v, &p->cap, p->n, sizeof(*p->v), 64);
		if (*err)
			return NONE;
		uint32_t id = strtab__add_slot(p->t, cap);
		if (id == HINDEX_NONE) {
			*err = -errno;
			return NONE;
		}
		p->v[p->n] = (struct namepool_entry){ .id = id, .cap = cap, .next_free = NONE };
		p->st.slots++;
		p->st.bytes += cap;
		return p->n++;
	}
	for (int d = c + 1; d < NAMEPOOL_CLASSES; d++)
		if ((i = pop_free(p, d)) != NONE)
			return i;
	*err = -ENOSPC;
	return NONE;
}

uint32_t namepool__intern(struct namepool *p, const char *s, size_t len, uint64_t time,
			  uint32_t limit)
{
	struct key k = { p, s, len };
	uint64_t h = hash_bytes(s, len, p->seed);
	uint32_t i = hindex__find(&p->index, h, key_eq, &k);
	if (i != HINDEX_NONE) {
		struct namepool_entry *e = &p->v[i];
		e->last_time = time > e->last_time ? time : e->last_time;
		e->idle = 0;
		return e->id;
	}
	int err = len + 1 > (16u << (NAMEPOOL_CLASSES - 1)) || !namepool__room(p, limit) ?
		  -ENOSPC : 0;
	if (!err)
		i = slot(p, len + 1, &err);
	if (!err && (err = hindex__insert(&p->index, h, i))) {
		int c = class_of(p->v[i].cap);
		p->v[i].next_free = p->free[c];	/* back where it came from */
		p->free[c] = i;
	}
	if (err) {
		if (err == -ENOSPC)
			p->st.refused++;
		errno = -err;
		return HINDEX_NONE;
	}
	struct namepool_entry *e = &p->v[i];
	strtab__set_slot(p->t, e->id, s, len);
	e->hash = h;
	e->last_time = time;
	e->used = true;
	e->idle = 0;
	p->st.names++;
	return e->id;
}

int namepool__begin(struct namepool *p)
{
	uint32_t bytes = (p->t->count + 7) / 8;
	if (bytes > p->nmarks) {
		uint8_t *m = realloc(p->marks, bytes);
		if (!m)
			return -ENOMEM;
		p->marks = m;
		p->nmarks = bytes;
	}
	memset(p->marks, 0, p->nmarks);
	return 0;
}

void namepool__mark(struct namepool *p, uint32_t id)
{
	if (id / 8 < p->nmarks)
		p->marks[id / 8] |= (uint8_t)(1u << (id % 8));
}

void namepool__end(struct namepool *p, uint64_t watermark)
{
	p->st.sweeps++;
	for (uint32_t i = 0; i < p->n; i++) {
		struct namepool_entry *e = &p->v[i];
		if (!e->used)
			continue;
		bool marked = e->id / 8 < p->nmarks && (p->marks[e->id / 8] >> (e->id % 8)) & 1;
		if (marked || e->last_time > watermark) {
			e->idle = 0;
			continue;
		}
		if (++e->idle < 2)
			continue;	/* a name given since the walk: next time */
		hindex__remove(&p->index, e->hash, i);
		strtab__set_slot(p->t, e->id, "", 0);
		e->used = false;
		int c = class_of(e->cap);
		e->next_free = p->free[c];
		p->free[c] = i;
		p->st.names--;
		p->st.recycled++;
	}
}
