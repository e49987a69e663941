/*
 * recorder_events: each record drained from a ring, decoded once and
 * resolved once, written as a version 4 item and fed to the engine when
 * one is attached. Names (functions, files, comms) go out as NAME items
 * before the first item that refers to them.
 */
#include "recorder_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/grow.h"
#include "../core/banned.h"

/* A sample's call stack: (function, dso, account) of each frame, leaf
 * first, as an id of each tap's stacks. */
static void stack_ids(struct recorder *r, const struct resolved *res)
{
	static __thread struct stack_frame key[RES_MAX_FRAMES];
	for (uint32_t i = 0; i < res->nframes; i++) {
		const struct res_frame *f = &res->frames[i];
		key[i] = (struct stack_frame){ f->function, f->dso,
			resolver__account(r->res, f->dso, f->function, f->ip, f->flags) };
		if (key[i].account == UINT32_MAX)
			return;
	}
	for (uint32_t i = 0; i < RECORDER_TAPS; i++) {
		if (!r->taps[i].e)
			continue;
		uint32_t id = stacktab__intern(&r->taps[i].stacks, key, res->nframes);
		r->taps[i].stack = id == HINDEX_NONE ? ENGINE_NONE : id;
	}
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
		err = r->w ? rec_writer__sample(r->w, &h, frames) : 0;
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

uint64_t recorder_record_time(void *ctx, const struct perf_event_header *h)
{
	const struct recorder *r = ctx;
	return perf_record_time(&r->layout, h, h->size);
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
		recorder_pool_sweep(r, watermark);
	return err;
}
