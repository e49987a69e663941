/* strtab: see strtab.h. Strings live in one growing buffer addressed by
 * offset, so growth never invalidates an id. */
#include "strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "pinned.h"
#include "banned.h"

/* A pinned table's bytes: all that 32-bit offsets reach. */
#define PINNED_BYTES ((size_t)UINT32_MAX + 1)

#define STRTAB_SEED 0x5bd1e995

/* The index strtab__clear keeps (1 KB); a larger one is let go. */
#define STRTAB_CLEAR_SLOTS 128

void strtab__init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	hindex__init(&t->index);
}

void strtab__release(struct strtab *t)
{
	if (!t)
		return;
	if (t->pinned) {
		pinned__release(t->bytes, PINNED_BYTES);
		pinned__release(t->offset, (size_t)STRTAB_PINNED_IDS * sizeof(*t->offset));
		pinned__release(t->length, (size_t)STRTAB_PINNED_IDS * sizeof(*t->length));
	} else {
		free(t->bytes);
		free(t->offset);
		free(t->length);
	}
	hindex__release(&t->index);
	strtab__init(t);
}

void strtab__clear(struct strtab *t)
{
	hindex__empty(&t->index, STRTAB_CLEAR_SLOTS);
	t->len = 0;
	__atomic_store_n(&t->count, 0, __ATOMIC_RELAXED);
}

struct key {
	const struct strtab *t;
	const char *s;
	size_t len;
};

static bool key_eq(const void *ctx, uint32_t id)
{
	const struct key *k = ctx;
	return k->t->length[id] == k->len &&
	       memcmp(k->t->bytes + k->t->offset[id], k->s, k->len) == 0;
}

static int reserve(struct strtab *t, size_t extra)
{
	if (t->len + extra > UINT32_MAX)
		return -EOVERFLOW;
	if (grow_bytes(&t->bytes, &t->cap, t->len + extra, 4096))
		return -ENOMEM;
	if (t->count == t->slots) {
		if (t->pinned)
			return -ENOMEM;	/* STRTAB_PINNED_IDS */
		uint32_t n = t->slots ? t->slots * 2 : 64;
		uint32_t *o = realloc(t->offset, n * sizeof(*o));
		if (!o)
			return -ENOMEM;
		t->offset = o;
		uint32_t *l = realloc(t->length, n * sizeof(*l));
		if (!l)
			return -ENOMEM;
		t->length = l;
		t->slots = n;
	}
	return 0;
}

uint32_t strtab__find(const struct strtab *t, const char *s, size_t len)
{
	struct key k = { t, s, len };
	return hindex__find(&t->index, hash_bytes(s, len, STRTAB_SEED), key_eq, &k);
}

uint32_t strtab__intern(struct strtab *t, const char *s, size_t len)
{
	struct key k = { t, s, len };
	uint64_t h = hash_bytes(s, len, STRTAB_SEED);
	uint32_t id = hindex__find(&t->index, h, key_eq, &k);
	if (id != HINDEX_NONE)
		return id;

	int err = reserve(t, len + 1);
	if (!err)
		err = hindex__insert(&t->index, h, t->count);
	if (err) {
		errno = -err;
		return HINDEX_NONE;
	}
	id = t->count;
	t->offset[id] = (uint32_t)t->len;
	t->length[id] = (uint32_t)len;
	memcpy(t->bytes + t->len, s, len);
	t->bytes[t->len + len] = '\0';
	t->len += len + 1;
	__atomic_store_n(&t->count, id + 1, __ATOMIC_RELAXED);	/* strtab__count */
	return id;
}

uint32_t strtab__add_slot(struct strtab *t, size_t cap)
{
	int err = cap ? reserve(t, cap) : -EINVAL;
	if (err) {
		errno = -err;
		return HINDEX_NONE;
	}
	uint32_t id = t->count++;
	t->offset[id] = (uint32_t)t->len;
	t->length[id] = 0;
	memset(t->bytes + t->len, 0, cap);
	t->len += cap;
	return id;
}

void strtab__set_slot(struct strtab *t, uint32_t id, const char *s, size_t len)
{
	memcpy(t->bytes + t->offset[id], s, len);
	t->bytes[t->offset[id] + len] = '\0';
	t->length[id] = (uint32_t)len;
}

void strtab__keep(struct strtab *t, const uint8_t *keep, uint32_t *map)
{
	size_t len = 0;
	uint32_t n = 0;
	/* the index had room for every string: it has for those kept */
	hindex__clear(&t->index);
	for (uint32_t id = 0; id < t->count; id++) {
		if (!(keep[id / 8] >> (id % 8) & 1)) {
			map[id] = HINDEX_NONE;
			continue;
		}
		uint32_t l = t->length[id];
		/* strings lie in the order of their ids: each moves down */
		memmove(t->bytes + len, t->bytes + t->offset[id], (size_t)l + 1);
		t->offset[n] = (uint32_t)len;
		t->length[n] = l;
		(void)hindex__insert(&t->index, hash_bytes(t->bytes + len, l, STRTAB_SEED), n);
		map[id] = n++;
		len += (size_t)l + 1;
	}
	t->count = n;
	t->len = len;
}

int strtab__pin(struct strtab *t)
{
	if (t->pinned)
		return 0;
	size_t ids = (size_t)STRTAB_PINNED_IDS * sizeof(uint32_t);
	char *bytes = t->bytes;
	uint32_t *offset = t->offset, *length = t->length;
	void *b = NULL, *o = NULL, *l = NULL;
	if (t->count > STRTAB_PINNED_IDS || !(b = pinned__reserve(PINNED_BYTES)) ||
	    !(o = pinned__reserve(ids)) || !(l = pinned__reserve(ids))) {
		pinned__release(b, PINNED_BYTES);
		pinned__release(o, ids);
		return -ENOMEM;
	}
	if (t->count) {
		memcpy(b, bytes, t->len);
		memcpy(o, offset, (size_t)t->count * sizeof(*offset));
		memcpy(l, length, (size_t)t->count * sizeof(*length));
	}
	free(bytes);
	free(offset);
	free(length);
	t->bytes = b;
	t->offset = o;
	t->length = l;
	t->cap = PINNED_BYTES;
	t->slots = STRTAB_PINNED_IDS;
	t->pinned = true;
	return 0;
}

int strtab__unpin(struct strtab *t)
{
	if (!t->pinned)
		return 0;
	uint32_t n = t->count ? t->count : 1;
	char *bytes = malloc(t->len ? t->len : 1);
	uint32_t *offset = malloc(n * sizeof(*offset)), *length = malloc(n * sizeof(*length));
	if (!bytes || !offset || !length) {
		free(bytes);
		free(offset);
		free(length);
		return -ENOMEM;
	}
	memcpy(bytes, t->bytes, t->len);
	memcpy(offset, t->offset, (size_t)t->count * sizeof(*offset));
	memcpy(length, t->length, (size_t)t->count * sizeof(*length));
	pinned__release(t->bytes, PINNED_BYTES);
	pinned__release(t->offset, (size_t)STRTAB_PINNED_IDS * sizeof(*t->offset));
	pinned__release(t->length, (size_t)STRTAB_PINNED_IDS * sizeof(*t->length));
	t->bytes = bytes;
	t->offset = offset;
	t->length = length;
	t->cap = t->len ? t->len : 1;
	t->slots = n;
	t->pinned = false;
	return 0;
}
