/*
 * namepool: names that users make at will (thread names, cgroup paths),
 * held in a bounded pool inside a strtab, so a rename loop or a container
 * runtime making cgroups cannot grow the agent without end.
 *
 * A pooled name is a strtab id like any other (sinks read it with
 * strtab__str), but it is kept out of the strtab's index, in a slot of
 * fixed size that can be written again: once no task the engines know
 * refers to it and no queued event can (its last use is behind the
 * watermark), for two sweeps in a row, its id is recycled for another
 * name. The pool never holds more than max_names names, in at most
 * NAMEPOOL_SLOTS_PER_NAME x max_names slots of max_bytes in all (slots
 * of one size are not cut to another: a rename loop's small slots must
 * not leave cgroup paths without room); a name that finds no room is
 * refused (the caller drops it and counts it).
 */
#ifndef CPULEDGER_CORE_NAMEPOOL_H
#define CPULEDGER_CORE_NAMEPOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "hindex.h"
#include "strtab.h"

#define NAMEPOOL_CLASSES 9	/* slots of 16 to 4096 bytes */
#define NAMEPOOL_SLOTS_PER_NAME 4

struct namepool_entry {
	uint32_t id;		/* its strtab id */
	uint32_t cap;		/* slot bytes, the NUL included */
	uint64_t hash;		/* of the name it holds (used entries) */
	uint64_t last_time;	/* the latest event that named it */
	uint32_t next_free;	/* free list, by class */
	bool used;
	uint8_t idle;		/* sweeps in a row that found it unreferenced */
};

struct namepool_stats {
	uint64_t names;		/* used slots now */
	uint64_t slots, bytes;	/* slots made, and their bytes */
	uint64_t recycled;	/* names aged out, their slots given again */
	uint64_t refused;	/* names that found no room */
	uint64_t sweeps;
};

struct namepool {
	struct strtab *t;
	uint64_t seed;		/* of the hash: names are chosen by users */
	uint32_t max_names;
	uint64_t max_bytes;
	struct namepool_entry *v;
	uint32_t n, cap;
	struct hindex index;	/* used entries by their name */
	uint32_t free[NAMEPOOL_CLASSES];
	uint8_t *marks;		/* a bit per strtab id, during a sweep */
	uint32_t nmarks;
	struct namepool_stats st;
};

/* Slots go into t (which must outlive the pool). */
void namepool__init(struct namepool *p, struct strtab *t, uint32_t max_names,
		    uint64_t max_bytes, uint64_t seed);
void namepool__release(struct namepool *p);

/*
 * The id of name s[0..len) (up to 4095 bytes), used by an event at time
 * (its last use moves there): the pool's own if it holds it, else a slot
 * given to it while fewer than limit names are held (at most max_names: a
 * lower limit keeps room for names of another kind). HINDEX_NONE with
 * errno ENOSPC (no room: refused, counted) or ENOMEM.
 */
uint32_t namepool__intern(struct namepool *p, const char *s, size_t len, uint64_t time,
			  uint32_t limit);

/* Whether fewer than limit names are held. */
static inline bool namepool__room(const struct namepool *p, uint32_t limit)
{
	return p->st.names < limit && p->st.names < p->max_names;
}

/* A sweep: namepool__begin, then namepool__mark for every id still
 * referred to, then namepool__end with the watermark every engine has
 * passed. 0 or -ENOMEM (nothing is recycled then). */
int namepool__begin(struct namepool *p);
void namepool__mark(struct namepool *p, uint32_t id);
void namepool__end(struct namepool *p, uint64_t watermark);

#endif
