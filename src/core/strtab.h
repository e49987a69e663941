/*
 * strtab: interns byte strings (VM names, function names) as dense ids, so
 * the engine compares and hashes small integers instead of text.
 */
#ifndef CPULEDGER_CORE_STRTAB_H
#define CPULEDGER_CORE_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindex.h"

struct strtab {
	char *bytes;		/* every string, NUL-terminated, back to back */
	size_t len, cap;
	uint32_t *offset;	/* offset[id] into bytes */
	uint32_t *length;	/* length[id], without the NUL */
	uint32_t count, slots;	/* count: strtab__count where another
				 * thread interns */
	struct hindex index;
	bool pinned;		/* strtab__pin: its arrays never move */
};

void strtab__init(struct strtab *t);
void strtab__release(struct strtab *t);
/* Empties the table, keeping its memory (its index when small): the
 * next strings take the ids from 0 again without allocating. Not for a
 * pinned table. */
void strtab__clear(struct strtab *t);

/*
 * Its strings, offsets and lengths moved to room that never moves
 * (pinned.h: 6 GiB of address space, no memory until used), for a
 * table one thread interns into while another reads
 * the strings of ids it was given (after them, through a lock). It then
 * holds STRTAB_PINNED_IDS strings at most. 0, or -ENOMEM with the table
 * as it was.
 */
#define STRTAB_PINNED_IDS (1u << 28)
int strtab__pin(struct strtab *t);
/* Its arrays in the heap again, sized to what it holds (a pinned
 * table's room let go); 0, or -ENOMEM with it still pinned. */
int strtab__unpin(struct strtab *t);

/*
 * Returns the id of s[0..len), adding it if new, or HINDEX_NONE with errno
 * ENOMEM (out of memory) or EOVERFLOW (over 4 GiB of strings).
 */
uint32_t strtab__intern(struct strtab *t, const char *s, size_t len);
/* The id of s[0..len) if it is in t, else HINDEX_NONE. */
uint32_t strtab__find(const struct strtab *t, const char *s, size_t len);

/*
 * A slot of cap bytes outside the index (a pool's: see namepool.h): a new
 * id holding "", that strtab__intern never returns. HINDEX_NONE with errno
 * ENOMEM or EOVERFLOW.
 */
uint32_t strtab__add_slot(struct strtab *t, size_t cap);
/* Writes s[0..len) into slot id, in place; len < the slot's cap. */
void strtab__set_slot(struct strtab *t, uint32_t id, const char *s, size_t len);

/*
 * Keeps the strings whose ids are set in keep (bit id % 8 of byte id / 8),
 * moved down in place in the order of their ids, and writes each old id's
 * new one into map (HINDEX_NONE: let go). The table keeps its memory, so
 * one that grows again after does not take fresh pages. Not for a table
 * with slots (strtab__add_slot's are outside the index). Cannot fail.
 */
void strtab__keep(struct strtab *t, const uint8_t *keep, uint32_t *map);

/* The NUL-terminated string of id; owned by the table. */
static inline const char *strtab__str(const struct strtab *t, uint32_t id)
{
	return t->bytes + t->offset[id];
}

/* How many strings there are, read where another thread may be adding. */
static inline uint32_t strtab__count(const struct strtab *t)
{
	return __atomic_load_n(&t->count, __ATOMIC_RELAXED);
}

static inline uint32_t strtab__len(const struct strtab *t, uint32_t id)
{
	return t->length[id];
}

#endif
