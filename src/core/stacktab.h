/*
 * stacktab: call stacks as dense ids. A stack is a run of frames, leaf
 * first; a frame is a (function, dso, account) triple of name ids. Each
 * distinct frame is kept once and a stack holds its frames' ids, 2 or 4
 * bytes a frame where the triples took 12: a long recording's stacks grow
 * with it (30 000 of them, 260 000 frames, in 8 minutes of a compile
 * loop), the frames they are made of much less.
 */
#ifndef CPULEDGER_CORE_STACKTAB_H
#define CPULEDGER_CORE_STACKTAB_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "hindex.h"

struct stack_frame {
	uint32_t function, dso, account;
};

/*
 * A stack's bytes: its width (2 or 4), then its frame ids of that many
 * bytes each, leaf first. 2 where every id is below 65536: a long
 * recording's 34 000 stacks of 9 frames were made of 8 700 distinct
 * frames, and their ids were the largest part of a folded report's
 * memory. The stacks lie back to back, so a stack's length is where the
 * next begins: no length or end mark of its own.
 */
struct stacktab {
	struct stack_frame *frames;	/* by frame id */
	uint32_t nframes, frames_cap;
	struct hindex frame_index;
	uint8_t *bytes;			/* every stack's, back to back */
	size_t len, cap;
	uint32_t *at;			/* at[id]: stack id's bytes; at[nstacks]: len */
	uint32_t nstacks, at_cap;
	struct hindex stack_index;
	bool pinned;			/* stacktab__pin: arrays never move */
	void *lock;			/* stacktab__share: interns take it */
};

#define STACKTAB_NARROW 2
#define STACKTAB_WIDE 4

void stacktab__init(struct stacktab *t);
void stacktab__release(struct stacktab *t);

/*
 * Its frames, stacks and offsets moved to room that never moves
 * (pinned.h: 11 GiB of address space, no memory until used): a stack's
 * or frame's entry, once made, is read in place while more are added.
 * It then holds STACKTAB_PINNED_FRAMES frames and STACKTAB_PINNED_STACKS
 * stacks at most (4 GiB of stacks holds no more). 0, or -ENOMEM with the
 * table as it was.
 */
#define STACKTAB_PINNED_FRAMES (1u << 28)
#define STACKTAB_PINNED_STACKS (1u << 30)
int stacktab__pin(struct stacktab *t);
/*
 * A pinned table two threads intern into: each intern takes lock, a
 * pthread_mutex_t (NULL: none again; not named here, for pthread.h
 * would come with this header). Reading the stacks and frames of ids a
 * thread was given takes none. Which id a stack gets then depends on
 * which thread comes first: nothing may be ordered by the ids.
 */
void stacktab__share(struct stacktab *t, void *lock);

/* The id of the stack of f[0..n), n >= 1, adding it if new; HINDEX_NONE
 * with errno set when out of memory. */
uint32_t stacktab__intern(struct stacktab *t, const struct stack_frame *f, uint32_t n);

/* The id of frame f, adding it if new (a stack's frames are added with
 * it); HINDEX_NONE with errno set when out of memory. */
uint32_t stacktab__intern_frame(struct stacktab *t, const struct stack_frame *f);

/* How many frames stack id has. */
static inline uint32_t stacktab__depth(const struct stacktab *t, uint32_t id)
{
	/* a width of 2 or 4 bytes as a shift of 1 or 2: a division by a
	 * width read from memory is a divide instruction each time */
	_Static_assert(STACKTAB_NARROW == 2 && STACKTAB_WIDE == 4, "widths are 2 and 4");
	return (t->at[id + 1] - t->at[id] - 1) >> (t->bytes[t->at[id]] >> 1);
}

/* The id of frame k of stack id (0: its leaf): frame ids are dense, from
 * 0, so a reader can keep what it made of a frame in an array. */
static inline uint32_t stacktab__frame_id(const struct stacktab *t, uint32_t id, uint32_t k)
{
	const uint8_t *s = t->bytes + t->at[id];
	/* the ids are not aligned */
	if (s[0] == STACKTAB_NARROW) {
		uint16_t fid;
		memcpy(&fid, s + 1 + k * sizeof(fid), sizeof(fid));
		return fid;
	}
	uint32_t fid;
	memcpy(&fid, s + 1 + k * sizeof(fid), sizeof(fid));
	return fid;
}

/* How many distinct frames there are: frame ids are below it. */
static inline uint32_t stacktab__nframes(const struct stacktab *t)
{
	return t->nframes;
}

/* The frame of a frame id. */
static inline struct stack_frame stacktab__frame_of(const struct stacktab *t, uint32_t fid)
{
	return t->frames[fid];
}

/* Frame k of stack id (0: its leaf). */
static inline struct stack_frame stacktab__frame(const struct stacktab *t, uint32_t id,
						 uint32_t k)
{
	return stacktab__frame_of(t, stacktab__frame_id(t, id, k));
}

/* Up to max of stack id's frames into f, leaf first; how many. */
uint32_t stacktab__frames(const struct stacktab *t, uint32_t id, struct stack_frame *f,
			  uint32_t max);

#endif
