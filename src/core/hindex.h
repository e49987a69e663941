/*
 * hindex: an open-addressing index from a 64-bit hash to a dense id.
 *
 * The tables that intern strings, programs and streams all need the same
 * thing: find the id of a key, or learn it is new. The index stores only the
 * hash and the id; the caller keeps the keys in its own arrays and answers
 * "is id N equal to my key" through a callback, so one index serves them all.
 */
#ifndef CPULEDGER_CORE_HINDEX_H
#define CPULEDGER_CORE_HINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HINDEX_NONE UINT32_MAX

struct hindex {
	uint64_t *slots;	/* (hash >> 32) << 32 | (id + 1); 0 is empty */
	size_t mask;
	size_t count;
};

/* Returns true when the key the caller holds in ctx equals entry id. */
typedef bool (*hindex_eq_fn)(const void *ctx, uint32_t id);

void hindex__init(struct hindex *h);

/* An empty index whose slots, when it takes its first entry, are first
 * (a power of 2) instead of 64: a small index of many (a thread's). */
void hindex__init_small(struct hindex *h, size_t first);
void hindex__release(struct hindex *h);

/* Returns the id whose hash matches and eq() confirms, or HINDEX_NONE. */
uint32_t hindex__find(const struct hindex *h, uint64_t hash, hindex_eq_fn eq,
		      const void *ctx);

/* Adds id under hash; the caller has checked it is absent. 0 or -ENOMEM. */
int hindex__insert(struct hindex *h, uint64_t hash, uint32_t id);

/* Empties the index, keeping its slots: as many entries as it held
 * before go in again without it growing. */
void hindex__clear(struct hindex *h);

/* Empties the index, keeping its slots when there are at most most of
 * them, letting them go when more: an index emptied for each of many
 * small uses (a thread's rows) is not wiped whole each time for the one
 * large use among them. */
void hindex__empty(struct hindex *h, size_t most);

/* Removes entry id, stored under hash: the index then no longer finds it,
 * and the id may be given again. Returns whether it was there. */
bool hindex__remove(struct hindex *h, uint64_t hash, uint32_t id);

/* A fast, well-mixed hash of a byte string (not for adversarial keys). */
uint64_t hash_bytes(const void *data, size_t len, uint64_t seed);

static inline uint64_t hash_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
