/*
 * hindex: linear probing over a power-of-two slot array, kept at most
 * three quarters full: probes stay short (2.5 slots for a key that is
 * there, on average), and a long recording's report holds its 34 000
 * stacks in 64 Ki slots, not 128 Ki (kept half full, its indexes were
 * 1.5 MB of the 13.6 MB a folded report of 8 minutes of a compile loop
 * peaked at, with no difference in time beyond the noise). See hindex.h
 * for why keys live elsewhere.
 */
#include "hindex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "banned.h"

void hindex__init(struct hindex *h)
{
	h->slots = NULL;
	h->mask = 0;
	h->count = 0;
}

/* Without slots, mask holds the first size wanted less 1 (0: 64). */
void hindex__init_small(struct hindex *h, size_t first)
{
	hindex__init(h);
	h->mask = first - 1;
}

void hindex__release(struct hindex *h)
{
	if (!h)
		return;
	free(h->slots);
	hindex__init(h);
}

static inline uint64_t slot_tag(uint64_t hash)
{
	return hash & 0xffffffff00000000ULL;
}

/* Only the tag survives in a slot, so growing can re-place entries without
 * their keys; find() and place() therefore both start from the tag (callers
 * pass well-mixed hashes, so its 32 bits are as good as any). */
static inline size_t slot_start(uint64_t tag, size_t mask)
{
	return (size_t)(tag >> 32) & mask;
}

uint32_t hindex__find(const struct hindex *h, uint64_t hash, hindex_eq_fn eq,
		      const void *ctx)
{
	if (!h->slots)
		return HINDEX_NONE;
	uint64_t tag = slot_tag(hash);
	for (size_t i = slot_start(tag, h->mask);; i = (i + 1) & h->mask) {
		uint64_t s = h->slots[i];
		if (!s)
			return HINDEX_NONE;
		if (slot_tag(s) == tag) {
			uint32_t id = (uint32_t)(s & 0xffffffffULL) - 1;
			if (eq(ctx, id))
				return id;
		}
	}
}

static void place(uint64_t *slots, size_t mask, uint64_t s)
{
	size_t i = slot_start(slot_tag(s), mask);
	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = s;
}

static int grow(struct hindex *h)
{
	size_t cap = h->slots ? (h->mask + 1) * 2 : h->mask ? h->mask + 1 : 64;
	uint64_t *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	if (h->slots)
		for (size_t i = 0; i <= h->mask; i++)
			if (h->slots[i])
				place(slots, cap - 1, h->slots[i]);
	free(h->slots);
	h->slots = slots;
	h->mask = cap - 1;
	return 0;
}

int hindex__insert(struct hindex *h, uint64_t hash, uint32_t id)
{
	if (!h->slots || (h->count + 1) * 4 > (h->mask + 1) * 3) {
		int err = grow(h);
		if (err)
			return err;
	}
	place(h->slots, h->mask, slot_tag(hash) | ((uint64_t)id + 1));
	h->count++;
	return 0;
}

void hindex__clear(struct hindex *h)
{
	if (h->slots)
		memset(h->slots, 0, (h->mask + 1) * sizeof(*h->slots));
	h->count = 0;
}

void hindex__empty(struct hindex *h, size_t most)
{
	if (h->slots && h->mask + 1 > most) {
		hindex__release(h);	/* as hindex__init left it */
		return;
	}
	hindex__clear(h);
}

/* Linear probing without tombstones: the entries after the one removed,
 * up to the next empty slot, move back where a probe for them still
 * reaches them (each slot keeps its tag, which says where it starts). */
bool hindex__remove(struct hindex *h, uint64_t hash, uint32_t id)
{
	if (!h->slots)
		return false;
	uint64_t want = slot_tag(hash) | ((uint64_t)id + 1);
	size_t i = slot_start(slot_tag(hash), h->mask);
	while (h->slots[i] != want) {
		if (!h->slots[i])
			return false;
		i = (i + 1) & h->mask;
	}
	size_t hole = i;
	for (size_t j = (i + 1) & h->mask; h->slots[j]; j = (j + 1) & h->mask) {
		size_t home = slot_start(slot_tag(h->slots[j]), h->mask);
		/* j may move to the hole unless its home lies in (hole, j] */
		bool stays = hole <= j ? home > hole && home <= j : home > hole || home <= j;
		if (stays)
			continue;
		h->slots[hole] = h->slots[j];
		hole = j;
	}
	h->slots[hole] = 0;
	h->count--;
	return true;
}

/* The 128-bit product of a and b, folded to 64 bits: one multiply mixes
 * 16 input bytes, where hash_mix would take two rounds for each 8. */
static uint64_t fold_mul(uint64_t a, uint64_t b)
{
	unsigned __int128 r = (unsigned __int128)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

uint64_t hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ULL);
	size_t n = len;
	while (n >= 16) {
		uint64_t a, b;
		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		h = fold_mul(a ^ 0xa0761d6478bd642fULL, b ^ h ^ 0xe7037ed1a0b428dbULL);
		p += 16;
		n -= 16;
	}
	uint64_t a = 0, b = 0;
	memcpy(&a, p, n < 8 ? n : 8);
	if (n > 8)
		memcpy(&b, p + 8, n - 8);
	h = fold_mul(a ^ 0xa0761d6478bd642fULL, b ^ h ^ 0xe7037ed1a0b428dbULL);
	return hash_mix(h ^ (uint64_t)len);
}
