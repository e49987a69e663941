/* stacktab: see stacktab.h. */
#include "stacktab.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "pinned.h"
#include "banned.h"

/* A pinned table's stack bytes: all that 32-bit offsets reach. */
#define PINNED_BYTES ((size_t)UINT32_MAX + 1)
#define PINNED_FRAMES_SIZE ((size_t)STACKTAB_PINNED_FRAMES * sizeof(struct stack_frame))
#define PINNED_AT_SIZE ((size_t)STACKTAB_PINNED_STACKS * sizeof(uint32_t))

void stacktab__init(struct stacktab *t)
{
	t->frames = NULL;
	t->nframes = t->frames_cap = 0;
	hindex__init(&t->frame_index);
	t->bytes = NULL;
	t->len = t->cap = 0;
	t->at = NULL;
	t->nstacks = t->at_cap = 0;
	hindex__init(&t->stack_index);
	t->pinned = false;
	t->lock = NULL;
}

void stacktab__release(struct stacktab *t)
{
	if (!t)
		return;
	if (t->pinned) {
		pinned__release(t->frames, PINNED_FRAMES_SIZE);
		pinned__release(t->bytes, PINNED_BYTES);
		pinned__release(t->at, PINNED_AT_SIZE);
	} else {
		free(t->frames);
		free(t->bytes);
		free(t->at);
	}
	hindex__release(&t->frame_index);
	hindex__release(&t->stack_index);
}

static uint64_t frame_hash(const struct stack_frame *f)
{
	return hash_mix(((uint64_t)f->function << 32 | f->dso) ^ hash_mix(f->account));
}

struct frame_key {
	const struct stacktab *t;
	const struct stack_frame *f;
};

static bool frame_eq(const void *ctx, uint32_t id)
{
	const struct frame_key *k = ctx;
	const struct stack_frame *g = &k->t->frames[id];
	return g->function == k->f->function && g->dso == k->f->dso &&
	       g->account == k->f->account;
}

/* Frames are a fixed 12 bytes: an array and an index of them, not a
 * string table (its offsets, lengths and NULs were as much again). */
static uint32_t intern_frame(struct stacktab *t, const struct stack_frame *f)
{
	struct frame_key k = { t, f };
	uint64_t h = frame_hash(f);
	uint32_t id = hindex__find(&t->frame_index, h, frame_eq, &k);
	if (id != HINDEX_NONE)
		return id;
	if ((t->pinned && t->nframes == t->frames_cap) ||
	    grow_array((void **)&t->frames, &t->frames_cap, t->nframes, sizeof(*t->frames),
		       256) ||
	    hindex__insert(&t->frame_index, h, t->nframes)) {
		errno = ENOMEM;
		return HINDEX_NONE;
	}
	t->frames[t->nframes] = *f;
	return t->nframes++;
}

uint32_t stacktab__intern_frame(struct stacktab *t, const struct stack_frame *f)
{
	if (t->lock)
		pthread_mutex_lock(t->lock);
	uint32_t id = intern_frame(t, f);
	if (t->lock)
		pthread_mutex_unlock(t->lock);
	return id;
}

#define STACK_SEED 0x5bd1e995

struct stack_key {
	const struct stacktab *t;
	const uint8_t *bytes;
	size_t len;
};

static bool stack_eq(const void *ctx, uint32_t id)
{
	const struct stack_key *k = ctx;
	const struct stacktab *t = k->t;
	return t->at[id + 1] - t->at[id] == k->len &&
	       !memcmp(t->bytes + t->at[id], k->bytes, k->len);
}

/* The id of the stack of these bytes, adding it if new. */
static uint32_t intern_bytes(struct stacktab *t, const uint8_t *bytes, size_t len)
{
	struct stack_key k = { t, bytes, len };
	uint64_t h = hash_bytes(bytes, len, STACK_SEED);
	uint32_t id = hindex__find(&t->stack_index, h, stack_eq, &k);
	if (id != HINDEX_NONE)
		return id;
	if (t->len + len > UINT32_MAX) {
		errno = EOVERFLOW;
		return HINDEX_NONE;
	}
	/* at[] holds one more than the stacks: where the next would begin */
	if ((t->pinned && t->nstacks + 1 >= t->at_cap) ||
	    grow_array((void **)&t->at, &t->at_cap, t->nstacks + 1, sizeof(*t->at), 256) ||
	    grow_bytes((char **)&t->bytes, &t->cap, t->len + len, 4096) ||
	    hindex__insert(&t->stack_index, h, t->nstacks)) {
		errno = ENOMEM;
		return HINDEX_NONE;
	}
	memcpy(t->bytes + t->len, bytes, len);
	if (!t->nstacks)
		t->at[0] = 0;	/* after, each stack's start is the one before's
				 * end, written with it (and read by others since) */
	t->len += len;
	t->at[++t->nstacks] = (uint32_t)t->len;
	return t->nstacks - 1;
}

static uint32_t intern(struct stacktab *t, const struct stack_frame *f, uint32_t n)
{
	/* a stack's frames are looked up one by one, then the stack: once a
	 * stack for a recording's reader (its samples name it by the file's
	 * id after), once a sample for a live tap (a few thousand a second) */
	static __thread uint32_t ids[512];	/* resolve.h's RES_MAX_FRAMES */
	static __thread uint8_t bytes[1 + 512 * STACKTAB_WIDE];
	uint32_t *fid = n <= 512 ? ids : malloc(n * sizeof(*fid));
	uint8_t *key = n <= 512 ? bytes : malloc(1 + (size_t)n * STACKTAB_WIDE);
	uint32_t id = HINDEX_NONE;
	if (!fid || !key)
		goto out;
	uint32_t most = 0;
	for (uint32_t i = 0; i < n; i++) {
		if ((fid[i] = intern_frame(t, &f[i])) == HINDEX_NONE)
			goto out;
		most = fid[i] > most ? fid[i] : most;
	}
	/* the same stack is always the same bytes: narrow wherever it can be */
	size_t len = 1;
	key[0] = most <= UINT16_MAX ? STACKTAB_NARROW : STACKTAB_WIDE;
	for (uint32_t i = 0; i < n; i++) {
		if (key[0] == STACKTAB_NARROW) {
			uint16_t v = (uint16_t)fid[i];
			memcpy(key + len, &v, sizeof(v));
		} else {
			memcpy(key + len, &fid[i], sizeof(fid[i]));
		}
		len += (size_t)key[0];
	}
	id = intern_bytes(t, key, len);
out:
	if (fid && fid != ids)
		free(fid);
	if (key && key != bytes)
		free(key);
	if (!fid || !key)
		errno = ENOMEM;
	return id;
}

uint32_t stacktab__intern(struct stacktab *t, const struct stack_frame *f, uint32_t n)
{
	if (t->lock)
		pthread_mutex_lock(t->lock);
	uint32_t id = intern(t, f, n);
	if (t->lock)
		pthread_mutex_unlock(t->lock);
	return id;
}

int stacktab__pin(struct stacktab *t)
{
	if (t->pinned)
		return 0;
	void *f = NULL, *b = NULL, *a = NULL;
	if (t->nframes > STACKTAB_PINNED_FRAMES || t->nstacks + 1 >= STACKTAB_PINNED_STACKS ||
	    !(f = pinned__reserve(PINNED_FRAMES_SIZE)) || !(b = pinned__reserve(PINNED_BYTES)) ||
	    !(a = pinned__reserve(PINNED_AT_SIZE))) {
		pinned__release(f, PINNED_FRAMES_SIZE);
		pinned__release(b, PINNED_BYTES);
		return -ENOMEM;
	}
	if (t->nframes)
		memcpy(f, t->frames, (size_t)t->nframes * sizeof(*t->frames));
	if (t->nstacks) {
		memcpy(b, t->bytes, t->len);
		memcpy(a, t->at, ((size_t)t->nstacks + 1) * sizeof(*t->at));
	}
	free(t->frames);
	free(t->bytes);
	free(t->at);
	t->frames = f;
	t->bytes = b;
	t->at = a;
	t->frames_cap = STACKTAB_PINNED_FRAMES;
	t->cap = PINNED_BYTES;
	t->at_cap = STACKTAB_PINNED_STACKS;
	t->pinned = true;
	return 0;
}

void stacktab__share(struct stacktab *t, void *lock)
{
	t->lock = lock;
}

uint32_t stacktab__frames(const struct stacktab *t, uint32_t id, struct stack_frame *f,
			  uint32_t max)
{
	uint32_t n = stacktab__depth(t, id);
	if (n > max)
		n = max;
	for (uint32_t i = 0; i < n; i++)
		f[i] = stacktab__frame(t, id, i);
	return n;
}
