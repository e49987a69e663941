/*
 * recorder_events: each record drained from a ring, decoded once and
 * resolved once, written as a version 2 item and fed to the engine when
 * one is attached. Names (functions, files, comms) go out as NAME items
 * before the first item that refers to them.
 */
#include "recorder_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "../core/grow.h"
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
		seed = recorder_mono_ns() ^ ((uint64_t)getpid() << 32);
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
static void pool_sweep(struct recorder *r, uint64_t watermark)
{
	uint64_t now = recorder_mono_ns();
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

struct strtab *recorder__tap(struct recorder *r, struct engine *e, bool commands)
{
	for (uint32_t i = 0; i < RECORDER_TAPS; i++) {
		struct recorder_tap *t = &r->taps[i];
		if (t->e)
			continue;	/* slots stay put: their stacks are pointed at */
		*t = (struct recorder_tap){ .e = e, .commands = commands };
		strtab__init(&t->stacks);
		r->ntaps++;
		return &t->stacks;
	}
	errno = EBUSY;
	return NULL;
}

void recorder__untap(struct recorder *r, struct engine *e, struct strtab *stacks)
{
	for (uint32_t i = 0; i < RECORDER_TAPS; i++) {
		if (!e || r->taps[i].e != e)
			continue;
		*stacks = r->taps[i].stacks;	/* the strtab moves whole */
		r->taps[i] = (struct recorder_tap){ 0 };
		r->ntaps--;
		return;
	}
	strtab__init(stacks);
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

/* A sample's call stack: (function, dso, account) of each frame, leaf
 * first, as an id of each tap's stacks. */
static void stack_ids(struct recorder *r, const struct resolved *res)
{
	static __thread uint32_t key[3 * RES_MAX_FRAMES];
	for (uint32_t i = 0; i < res->nframes; i++) {
		const struct res_frame *f = &res->frames[i];
		key[3 * i] = f->function;
		key[3 * i + 1] = f->dso;
		key[3 * i + 2] = resolver__account(r->res, f->dso, f->function, f->ip, f->flags);
		if (key[3 * i + 2] == UINT32_MAX)
			return;
	}
	for (uint32_t i = 0; i < RECORDER_TAPS; i++) {
		if (!r->taps[i].e)
			continue;
		uint32_t id = strtab__intern(&r->taps[i].stacks, (const char *)key,
					     3 * res->nframes * sizeof(*key));
		r->taps[i].stack = id == HINDEX_NONE ? ENGINE_NONE : id;
	}
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

static int add(struct recorder *r, uint32_t type, const void *a, size_t alen,
	       const void *b, size_t blen)
{
	return r->w ? rec_writer__add(r->w, type, a, alen, b, blen) : 0;
}

/* The account of a frame, for the engine (the file keeps no accounts:
 * a report applies its own rules). */
static uint32_t account(struct recorder *r, const struct res_frame *f)
{
	return r->engine ? resolver__account(r->res, f->dso, f->function, f->ip, f->flags) :
			   NO_DSO;
}

/* Under sudo: no kernel addresses; other users' addresses neither. */
static void hide(struct recorder *r, uint32_t pid, struct rec_frame *f, uint32_t n)
{
	static __thread uint32_t last_pid = UINT32_MAX;
	static __thread bool last_own;
	if (!r->o.hide_addresses)
		return;
	if (pid != last_pid) {
		last_pid = pid;
		last_own = recorder_own(r, pid);
	}
	for (uint32_t i = 0; i < n; i++)
		if ((f[i].flags & REC_FRAME_KERNEL) || !last_own)
			f[i].ip = 0;
}

static int on_sample(struct recorder *r, uint32_t cpu, const struct perf_ev *p)
{
	static __thread struct resolved res;
	static __thread struct rec_frame frames[RES_MAX_FRAMES];
	r->st.samples++;
	res.nframes = 0;
	if (p->tid) {
		bool name = rscope_has(&r->scope, p->pid);
		int err = resolver__sample(r->res, p, name, &res);
		if (err)
			return err;
	}
	uint32_t top = 0;
	for (uint32_t i = 0; i < res.nframes; i++) {
		const struct res_frame *f = &res.frames[i];
		frames[i] = (struct rec_frame){ .ip = f->ip, .function = f->function,
						.dso = f->dso, .flags = f->flags };
		top = f->function > top ? f->function : top;
		top = f->dso > top ? f->dso : top;
	}
	hide(r, p->pid, frames, res.nframes);
	struct rec_sample_head h = { .pid = p->pid, .tid = p->tid, .cpu = cpu,
				     .nframes = res.nframes, .time_ns = p->time,
				     .period = p->period };
	int err = res.nframes ? recorder_names_out(r, top) : 0;
	if (!err)
		err = add(r, REC_SAMPLE, &h, sizeof(h), frames, res.nframes * sizeof(*frames));
	if (err || !r->engine)
		return err;
	struct eng_event ev = { .kind = EK_SAMPLE, .time = p->time, .cpu = cpu,
				.pid = p->pid, .tid = p->tid, .stack = ENGINE_NONE };
	for (uint32_t i = 0; i < RECORDER_TAPS; i++)
		r->taps[i].stack = ENGINE_NONE;
	if (res.nframes && r->ntaps)
		stack_ids(r, &res);
	if (res.nframes) {
		const struct res_frame *f = &res.frames[0];
		ev.function = f->function;
		ev.dso = f->dso;
		ev.flags = f->flags;
		ev.ip = f->ip;
		if ((ev.account = account(r, f)) == UINT32_MAX)
			return -ENOMEM;
	}
	return recorder_push(r, &ev);
}

static int on_sched(struct recorder *r, uint32_t cpu, const struct perf_ev *p)
{
	bool sw = p->kind == PD_SWITCH;
	struct rec_sched s = { .kind = sw ? REC_SCHED_SWITCH : REC_SCHED_RUNTIME, .cpu = cpu,
			       .time_ns = p->time, .a = p->a, .b = sw ? p->b : 0,
			       .value = sw ? 0 : p->value };
	int err = add(r, REC_SCHED, &s, sizeof(s), NULL, 0);
	struct eng_event ev = { .kind = sw ? EK_SWITCH : EK_RUNTIME, .time = p->time,
				.cpu = cpu, .pid = sw ? p->a : 0, .tid = sw ? p->b : p->a,
				.value = sw ? 0 : p->value };
	return err ? err : recorder_push(r, &ev);
}

static int forget_later(struct recorder *r, uint32_t pid, uint64_t time)
{
	if (grow_array((void **)&r->forget, &r->forget_cap, r->nforget, sizeof(*r->forget), 64))
		return -ENOMEM;
	r->forget[r->nforget].pid = pid;
	r->forget[r->nforget++].time = time;
	return 0;
}

/* Who is in scope: a child of a process in scope is; an exec read before
 * the fork that puts it in scope is told by /proc. */
static int scope_of(struct recorder *r, const struct perf_ev *p)
{
	if (r->scope.all)
		return 0;
	if (p->kind == PD_FORK && rscope_has(&r->scope, p->ppid))
		return rscope_add(&r->scope, p->pid);
	if (p->kind == PD_COMM && p->exec && !rscope_has(&r->scope, p->pid) &&
	    recorder_parent_in_scope(r, p->pid))
		return rscope_add(&r->scope, p->pid);
	return 0;
}

static int on_task(struct recorder *r, uint32_t cpu, const struct perf_ev *p,
		   const struct perf_event_header *h)
{
	struct rec_taskev t = { .cpu = cpu, .time_ns = p->time, .pid = p->pid, .tid = p->tid,
				.ppid = p->ppid, .ptid = p->ptid, .comm = REC_NO_NAME };
	int err = p->kind == PD_EXIT ? 0 : resolver__record(r->res, h, h->size);
	if (err == -EINVAL)
		err = 0;	/* a record we cannot read changes no region */
	if (!err)
		err = scope_of(r, p);
	if (!err && p->kind == PD_COMM) {
		t.comm = recorder_user_name(r, p->name, p->name_len, p->time,
					    p->exec ? UN_EXEC : UN_RENAME);
		t.flags = p->exec ? REC_TASK_EXEC : 0;
		if (t.comm == HINDEX_NONE && errno == ENOSPC && !p->exec)
			return 0;	/* no room: the thread keeps its name (counted) */
		if (t.comm == HINDEX_NONE && errno == ENOSPC)
			t.comm = REC_NO_NAME;	/* an exec still tells the engine */
		else
			err = t.comm == HINDEX_NONE ? -ENOMEM : recorder_names_out(r, t.comm);
	}
	t.kind = p->kind == PD_FORK ? REC_TASK_FORK : p->kind == PD_COMM ? REC_TASK_COMM :
		 REC_TASK_EXIT;
	if (!err)
		err = add(r, REC_TASKEV, &t, sizeof(t), NULL, 0);
	struct eng_event ev = {
		.kind = p->kind == PD_FORK ? EK_FORK : p->kind == PD_COMM ? EK_COMM : EK_EXIT,
		.time = p->time, .cpu = cpu, .pid = p->pid, .tid = p->tid, .ppid = p->ppid,
		.ptid = p->ptid, .comm = t.comm == REC_NO_NAME ? ENGINE_NONE : t.comm,
		.flags = p->exec ? EF_EXEC : 0 };
	if (!err)
		err = recorder_push(r, &ev);
	/* an exec: its command line now, while the process lives */
	if (!err && p->kind == PD_COMM && p->exec && rscope_has(&r->scope, p->pid))
		err = recorder_proc_item(r, p->pid, p->time);
	if (!err && p->kind == PD_EXIT && p->pid == p->tid)
		err = forget_later(r, p->pid, p->time);
	return err;
}

static int on_lost(struct recorder *r, uint32_t cpu, const struct perf_ev *p)
{
	struct rec_lostwin w = { .cpu = cpu, .from_ns = r->last_time[cpu], .to_ns = p->time,
				 .count = p->value };
	int err = add(r, REC_LOSTWIN, &w, sizeof(w), NULL, 0);
	struct eng_event ev = { .kind = EK_LOST, .time = p->time, .cpu = cpu,
				.value = r->last_time[cpu] };
	if (p->time > r->last_time[cpu] && r->last_time[cpu])
		r->lost_window_ns += p->time - r->last_time[cpu];
	return err || !p->time ? err : recorder_push(r, &ev);
}

int recorder_on_record(void *ctx, int cpu, const struct perf_event_header *h)
{
	struct recorder *r = ctx;
	struct perf_ev p;
	r->st.records++;
	if ((uint32_t)cpu >= r->ncpus || perf_decode(&r->layout, h, h->size, &p))
		return 0;	/* not ours to read: skipped */
	if (p.time > r->round_max)
		r->round_max = p.time;
	int err = 0;
	switch (p.kind) {
	case PD_SAMPLE:
		err = recorder_cgroup_sample(r, &p);
		if (!err)
			err = on_sample(r, (uint32_t)cpu, &p);
		break;
	case PD_CGROUP:
		err = recorder_cgroup_new(r, &p);
		break;
	case PD_SWITCH:
	case PD_RUNTIME:
		err = on_sched(r, (uint32_t)cpu, &p);
		break;
	case PD_COMM:
	case PD_FORK:
	case PD_EXIT:
		err = on_task(r, (uint32_t)cpu, &p, h);
		break;
	case PD_MMAP:
		err = resolver__record(r->res, h, h->size);
		err = err == -EINVAL ? 0 : err;
		break;
	case PD_LOST:
		return on_lost(r, (uint32_t)cpu, &p);
	default:
		break;
	}
	if (p.time)
		r->last_time[cpu] = p.time;
	return err;
}

/* The end of a round of draining: everything up to the latest time of
 * the round before has been read (perf's own rule). */
int recorder_round(struct recorder *r)
{
	uint64_t watermark = r->prev_round_max;
	r->prev_round_max = r->round_max > r->prev_round_max ? r->round_max : r->prev_round_max;
	if (!watermark)
		return 0;
	int err = add(r, REC_ROUND, &watermark, sizeof(watermark), NULL, 0);
	if (!err && r->engine)
		err = engine__advance(r->engine, watermark);
	for (uint32_t i = 0; i < RECORDER_TAPS && !err; i++)
		if (r->taps[i].e)
			err = engine__advance(r->taps[i].e, watermark);
	uint32_t kept = 0;
	for (uint32_t i = 0; i < r->nforget; i++) {
		if (r->forget[i].time <= watermark) {
			resolver__forget(r->res, r->forget[i].pid);
			symbolizer__forget(r->sy, r->forget[i].pid);
		}
		else
			r->forget[kept++] = r->forget[i];
	}
	r->nforget = kept;
	if (!err)
		pool_sweep(r, watermark);
	return err;
}
