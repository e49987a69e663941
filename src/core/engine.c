/*
 * engine: its lifecycle, the reorder queue that merges the per-CPU
 * streams behind the caller's watermark (reorder.c), and the dispatch of
 * each event in time order (engine.h has the model; engine_tasks.c and
 * engine_stints.c the rest).
 */
#include "engine_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "heap.h"
#include "banned.h"

static void free_event_text(struct eng_event *ev)
{
	free(ev->text);
	free(ev->exe);
	ev->text = ev->exe = NULL;
}

struct engine *engine__new(const struct engine_config *c, const struct engine_sink *sink)
{
	struct engine *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->c = *c;
	if (sink)
		e->sinks[e->nsinks++] = *sink;
	e->st.accounting = c->accounting;
	/* hrtimer latency on a busy guest is tens of microseconds */
	e->gap_min_ns = c->interval_ns / 20 > 50000 ? c->interval_ns / 20 : 50000;
	e->procs.free = e->threads.free = e->progs.free = ENGINE_NONE;
	e->gaps.free = e->stints.free = ENGINE_NONE;
	hindex__init(&e->proc_index);
	hindex__init(&e->thread_index);
	hindex__init(&e->gap_sum_index);
	e->cpus = calloc(c->ncpus ? c->ncpus : 1, sizeof(*e->cpus));
	int q = reorder__init(&e->q, c->ncpus);
	e->history = malloc(ENGINE_PENDING * sizeof(*e->history));
	e->scratch = malloc((2 * ENGINE_PENDING + 2) * sizeof(*e->scratch));
	if (!e->cpus || q || !e->history || !e->scratch) {
		engine__free(e);
		errno = ENOMEM;
		return NULL;
	}
	e->series.bucket_ns = NSEC_PER_SEC;
	e->series.ncpus = c->ncpus;
	for (uint32_t i = 0; i < c->ncpus; i++) {
		struct eng_cpu *cpu = &e->cpus[i];
		cpu->stint = cpu->thread = cpu->newest = ENGINE_NONE;
		cpu->last_prog = cpu->last_any_prog = ENGINE_NONE;
	}
	return e;
}

int engine__add_sink(struct engine *e, const struct engine_sink *sink)
{
	if (e->nsinks == ENGINE_SINKS)
		return -ENOSPC;
	e->sinks[e->nsinks++] = *sink;
	return 0;
}

void engine__free(struct engine *e)
{
	if (!e)
		return;
	reorder__release(&e->q);
	eng_tasks_release(e);
	free(e->gaps.v);
	free(e->stints.v);
	free(e->fifo);
	free(e->history);
	free(e->scratch);
	free(e->gap_sums);
	hindex__release(&e->gap_sum_index);
	free(e->cpus);
	free(e->series.run_ns);
	free(e->series.steal_ns);
	free(e);
}

void engine__set_start(struct engine *e, uint64_t start_ns)
{
	e->c.start_ns = start_ns;
}

void engine__set_kernel_steal(struct engine *e, uint32_t cpu, uint64_t ns)
{
	if (cpu < e->c.ncpus) {
		e->cpus[cpu].st.kernel_steal_ns = ns;
		e->cpus[cpu].kernel_known = true;
	}
}

static int dispatch(struct engine *e, struct eng_event *ev)
{
	/* figures read, not inferred: switches and runtime would count
	 * them twice */
	if (e->c.mode == STEAL_GIVEN && (ev->kind == EK_SWITCH || ev->kind == EK_RUNTIME))
		return 0;
	switch (ev->kind) {
	case EK_SAMPLE:
		return eng_on_sample(e, ev);
	case EK_SWITCH:
		return eng_on_switch(e, ev);
	case EK_RUNTIME:
		return eng_on_runtime(e, ev);
	case EK_TASK:
		return eng_on_task(e, ev);
	case EK_FORK:
		return eng_on_fork(e, ev);
	case EK_COMM:
		return eng_on_comm(e, ev);
	case EK_EXIT:
		return eng_on_exit(e, ev);
	case EK_LOST:
		eng_on_lost(e, ev);
		return 0;
	case EK_PROC:
		return eng_on_proc(e, ev);
	case EK_CGROUP:
		return eng_on_cgroup(e, ev);
	case EK_CLOCK:
		return eng_on_clock(e, ev);
	case EK_CPU_CLOCK:
		return eng_on_cpu_clock(e, ev);
	}
	return 0;
}

/* Processes one event now. */
static int process(struct engine *e, struct eng_event *ev)
{
	if (ev->time > e->processed)
		e->processed = ev->time;
	int err = dispatch(e, ev);
	free_event_text(ev);
	return err ? err : eng_exits_due(e);
}

/* Processes the oldest queued event (there is one), where it waits. */
static int process_oldest(struct engine *e)
{
	struct eng_event copy;
	uint32_t slot;
	int err = process(e, reorder__take(&e->q, &copy, &slot));
	reorder__done(&e->q, slot);
	return err;
}

/* ev, older than what was processed already: at once, out of order. */
static int process_late(struct engine *e, struct eng_event *ev)
{
	e->st.late_events++;
	int err = dispatch(e, ev);
	free_event_text(ev);
	return err;
}

int engine__push(struct engine *e, struct eng_event *ev)
{
	int r = reorder__push(&e->q, ev);
	if (r == 1)
		return process_late(e, ev);
	if (r) {
		free_event_text(ev);
		return r;
	}
	e->st.queued_events = e->q.queued;
	return 0;
}

int engine__process(struct engine *e, struct eng_event *ev, bool late)
{
	return late ? process_late(e, ev) : process(e, ev);
}

int engine__advance(struct engine *e, uint64_t watermark)
{
	while (reorder__due(&e->q, watermark)) {
		int err = process_oldest(e);
		if (err)
			return err;
	}
	e->st.queued_events = e->q.queued;
	return 0;
}

int engine__shed(struct engine *e, uint32_t max_queued)
{
	while (e->q.queued > max_queued) {
		int err = process_oldest(e);
		if (err)
			return err;
	}
	e->st.queued_events = e->q.queued;
	return 0;
}

int engine__push_bounded(struct engine *e, struct eng_event *ev, uint64_t then,
			 uint32_t max_queued, uint64_t (*streams_read)(const void *ctx),
			 const void *ctx)
{
	int err = engine__push(e, ev);
	if (!err && then != UINT64_MAX)
		err = engine__advance(e, then);
	if (!err && e->q.queued > max_queued) {
		uint64_t w = streams_read(ctx);
		err = w != UINT64_MAX ? engine__advance(e, w) : 0;
		err = err ? err : engine__shed(e, max_queued / 2);
	}
	return err == -EINVAL ? 0 : err;
}

int engine__settle(struct engine *e)
{
	return eng_settle(e);
}

int engine__finish(struct engine *e, uint64_t end_ns)
{
	int err = engine__advance(e, UINT64_MAX);
	if (!err && !e->q.queued)
		reorder__trim(&e->q);	/* not needed while the rows are made */
	if (!err)
		err = eng_close_all(e, end_ns ? end_ns : e->processed);
	if (!err)
		err = eng_judge_waiting(e, true);
	if (!err)
		err = eng_settle(e);
	e->finished = true;
	if (!err)
		err = eng_hand_out_all(e);
	return err;
}

const struct engine_stats *engine__stats(const struct engine *e)
{
	return &e->st;
}

const struct eng_cpu_stats *engine__cpu(const struct engine *e, uint32_t cpu)
{
	return cpu < e->c.ncpus ? &e->cpus[cpu].st : NULL;
}

const struct engine_config *engine__config(const struct engine *e)
{
	return &e->c;
}
