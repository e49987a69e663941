/*
 * recorder_out: where what the recorder reads goes, below the files that
 * read it (recorder_events.c, recorder_proc.c, recorder_cgroup.c all call
 * here, and this file calls none of them): the names (pooled or interned,
 * swept, written as NAME items) and the events (the engine and the taps,
 * each tap its own copy).
 */
#include "recorder_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "../core/banned.h"

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Average room per pooled name: thread names take 16 bytes, cgroup paths
 * of containers about 128. */
#define POOL_BYTES_PER_NAME 256
/* A sweep of the pool this often, or when it is full but not more often
 * than POOL_SWEEP_FULL_NS: a name unreferenced in two sweeps in a row is
 * recycled, so an event queued with a name has a sweep's time to reach its
 * engine (a round of draining: under 100 ms). */
#define POOL_SWEEP_NS 2000000000ull
#define POOL_SWEEP_FULL_NS 250000000ull

/* The bounds of recorder_opts, on the pool and the symbolizer. */
void recorder_bounds_init(struct recorder *r)
{
	symbolizer__set_bounds(r->sy, r->o.max_symbol_files, r->o.max_symbol_bytes,
			       r->o.max_jit_bytes);
	uint64_t seed;	/* users choose the names: an unguessable hash */
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = clock_mono_ns() ^ ((uint64_t)getpid() << 32);
	namepool__init(&r->pool, &r->names, r->o.max_names,
		       (uint64_t)r->o.max_names * POOL_BYTES_PER_NAME, seed);
	r->pooled = r->o.max_names > 0;
}

/* The string id of a name users choose (a thread's, a cgroup's path),
 * named by an event at time: pooled (recycled once unused) when the
 * recorder is bounded and writes no file (whose NAME items are given once
 * for good); else interned for good. HINDEX_NONE with errno ENOSPC (no
 * room: the caller drops the name) or ENOMEM. */
uint32_t recorder_user_name(struct recorder *r, const char *s, size_t len, uint64_t time,
			    enum user_name kind)
{
	/* a thread renaming itself in a loop takes at most three quarters
	 * of the room: execs and cgroups keep the rest */
	uint32_t limit = kind == UN_RENAME ? r->o.max_names / 4 * 3 : r->o.max_names;
	if (r->pooled && !r->w)
		return namepool__intern(&r->pool, s, len, time, limit);
	return strtab__intern(&r->names, s, len);
}

static void mark_name(void *ctx, uint32_t id)
{
	namepool__mark(ctx, id);
}

/* Names no engine, cgroup id or queued event refers to go back to the
 * pool: the engines have passed watermark. */
void recorder_pool_sweep(struct recorder *r, uint64_t watermark)
{
	uint64_t now = clock_mono_ns();
	bool full = !namepool__room(&r->pool, r->o.max_names / 4 * 3);
	if (!r->pooled || r->w || now < r->last_sweep + (full ? POOL_SWEEP_FULL_NS : POOL_SWEEP_NS))
		return;
	r->last_sweep = now;
	if (namepool__begin(&r->pool))
		return;	/* out of memory: next time */
	if (r->engine)
		engine__each_name(r->engine, mark_name, &r->pool);
	for (uint32_t i = 0; i < RECORDER_TAPS; i++)
		if (r->taps[i].e)
			engine__each_name(r->taps[i].e, mark_name, &r->pool);
	for (uint32_t i = 0; i < r->ncgids; i++)
		namepool__mark(&r->pool, r->cgids[i].name);
	namepool__end(&r->pool, watermark);
}

void recorder__bounds(const struct recorder *r, struct recorder_bounds *b)
{
	const struct namepool_stats *ps = &r->pool.st;
	struct symbolizer_bounds sb;
	symbolizer__bounds(r->sy, &sb);
	*b = (struct recorder_bounds){
		.names = ps->names, .name_slots = ps->slots, .name_bytes = ps->bytes,
		.names_recycled = ps->recycled, .names_refused = ps->refused,
		.cgroups = r->ncgids, .cgroups_evicted = r->cgids_evicted,
		.symbol_files = sb.files, .symbol_files_evicted = sb.files_evicted,
		.jit_entries = sb.jit_entries, .jit_entries_evicted = sb.jit_evicted,
		.lost_window_ns = r->lost_window_ns,
		.cgroup_bytes = (uint64_t)r->cgids_cap * sizeof(*r->cgids) +
				(r->cgid_index.mask + 1) * sizeof(uint64_t),
		.symbol_bytes = sb.table_bytes, .jit_bytes = sb.jit_bytes,
	};
}

struct stacktab *recorder__tap(struct recorder *r, struct engine *e, bool commands)
{
	for (uint32_t i = 0; i < RECORDER_TAPS; i++) {
		struct recorder_tap *t = &r->taps[i];
		if (t->e)
			continue;	/* slots stay put: their stacks are pointed at */
		*t = (struct recorder_tap){ .e = e, .commands = commands };
		stacktab__init(&t->stacks);
		r->ntaps++;
		return &t->stacks;
	}
	errno = EBUSY;
	return NULL;
}

void recorder__untap(struct recorder *r, struct engine *e, struct stacktab *stacks)
{
	for (uint32_t i = 0; i < RECORDER_TAPS; i++) {
		if (!e || r->taps[i].e != e)
			continue;
		*stacks = r->taps[i].stacks;	/* the table moves whole */
		r->taps[i] = (struct recorder_tap){ 0 };
		r->ntaps--;
		return;
	}
	stacktab__init(stacks);
}

int recorder_push(struct recorder *r, struct eng_event *ev)
{
	for (uint32_t i = 0; i < RECORDER_TAPS && r->ntaps; i++) {	/* each its own copy */
		struct recorder_tap *t = &r->taps[i];
		if (!t->e)
			continue;
		struct eng_event copy = *ev;
		bool text = ev->text && (t->commands || ev->kind != EK_PROC);
		copy.text = text ? strdup(ev->text) : NULL;
		copy.exe = dup_or_null(ev->exe);
		if ((text && !copy.text) || (ev->exe && !copy.exe)) {
			free(copy.text);
			free(copy.exe);
			return -ENOMEM;
		}
		if (copy.kind == EK_SAMPLE)
			copy.stack = t->stack;	/* stacks are the tap's alone */
		int err = engine__push(t->e, &copy);
		if (err && err != -EINVAL)
			return err;
	}
	if (!r->engine) {
		free(ev->text);
		free(ev->exe);
		return 0;
	}
	int err = engine__push(r->engine, ev);
	return err == -EINVAL ? 0 : err;	/* a CPU out of range: skipped */
}

/* NAME items for every name up to id upto. */
int recorder_names_out(struct recorder *r, uint32_t upto)
{
	int err = 0;
	for (; r->w && r->names_written <= upto && r->names_written < r->names.count && !err;
	     r->names_written++) {
		uint32_t pre[2] = { r->names_written, 0 };
		err = rec_writer__add(r->w, REC_NAME, pre, sizeof(pre),
				      strtab__str(&r->names, r->names_written),
				      strtab__len(&r->names, r->names_written));
	}
	return err;
}
