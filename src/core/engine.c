/*
 * engine: its lifecycle, the reorder queue that merges the per-CPU
 * streams behind the caller's watermark, and the dispatch of each event
 * in time order (engine.h has the model; engine_tasks.c and
 * engine_stints.c the rest).
 */
#include "engine_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

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
	e->sink = *sink;
	e->st.accounting = c->accounting;
	/* hrtimer latency on a busy guest is tens of microseconds */
	e->gap_min_ns = c->interval_ns / 20 > 50000 ? c->interval_ns / 20 : 50000;
	e->procs.free = e->threads.free = e->progs.free = ENGINE_NONE;
	e->stacks.free = e->gaps.free = e->stints.free = ENGINE_NONE;
	hindex__init(&e->proc_index);
	hindex__init(&e->thread_index);
	hindex__init(&e->prog_index);
	hindex__init(&e->stack_index);
	hindex__init(&e->gap_sum_index);
	e->cpus = calloc(c->ncpus ? c->ncpus : 1, sizeof(*e->cpus));
	e->history = malloc(ENGINE_PENDING * sizeof(*e->history));
	e->scratch = malloc((2 * ENGINE_PENDING + 2) * sizeof(*e->scratch));
	if (!e->cpus || !e->history || !e->scratch) {
		engine__free(e);
		errno = ENOMEM;
		return NULL;
	}
	e->series.bucket_ns = 1000000000ULL;
	e->series.ncpus = c->ncpus;
	for (uint32_t i = 0; i < c->ncpus; i++) {
		struct eng_cpu *cpu = &e->cpus[i];
		cpu->stint = cpu->thread = cpu->newest = ENGINE_NONE;
		cpu->last_prog = cpu->last_any_prog = ENGINE_NONE;
	}
	return e;
}

void engine__free(struct engine *e)
{
	if (!e)
		return;
	for (uint32_t i = 0; i < e->nheap; i++)
		free_event_text(&e->heap[i]);
	free(e->heap);
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

void engine__set_kernel_steal(struct engine *e, uint32_t cpu, uint64_t ns)
{
	if (cpu < e->c.ncpus) {
		e->cpus[cpu].st.kernel_steal_ns = ns;
		e->cpus[cpu].kernel_known = true;
	}
}

static bool before(const struct eng_event *a, const struct eng_event *b)
{
	return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

static void sift_up(struct eng_event *h, uint32_t i)
{
	while (i && before(&h[i], &h[(i - 1) / 2])) {
		struct eng_event x = h[i];
		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
}

static void sift_down(struct eng_event *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		if (l < n && before(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && before(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct eng_event x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

static int dispatch(struct engine *e, struct eng_event *ev)
{
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

int engine__push(struct engine *e, struct eng_event *ev)
{
	if (ev->cpu >= e->c.ncpus) {
		free_event_text(ev);
		return -EINVAL;
	}
	ev->seq = e->seq++;
	/* older than what was processed already: at once, out of order */
	if (e->processed && ev->time < e->processed) {
		e->st.late_events++;
		int err = dispatch(e, ev);
		free_event_text(ev);
		return err;
	}
	if (grow_array((void **)&e->heap, &e->heap_cap, e->nheap, sizeof(*e->heap), 1024)) {
		free_event_text(ev);
		return -ENOMEM;
	}
	e->heap[e->nheap] = *ev;
	ev->text = ev->exe = NULL;	/* the queue's now */
	sift_up(e->heap, e->nheap++);
	e->st.queued_events = e->nheap;
	return 0;
}

int engine__advance(struct engine *e, uint64_t watermark)
{
	while (e->nheap && e->heap[0].time <= watermark) {
		struct eng_event ev = e->heap[0];
		e->heap[0] = e->heap[--e->nheap];
		sift_down(e->heap, e->nheap, 0);
		int err = process(e, &ev);
		if (err)
			return err;
	}
	e->st.queued_events = e->nheap;
	return 0;
}

int engine__shed(struct engine *e, uint32_t max_queued)
{
	while (e->nheap > max_queued) {
		struct eng_event ev = e->heap[0];
		e->heap[0] = e->heap[--e->nheap];
		sift_down(e->heap, e->nheap, 0);
		int err = process(e, &ev);
		if (err)
			return err;
	}
	e->st.queued_events = e->nheap;
	return 0;
}

int engine__settle(struct engine *e)
{
	return eng_settle(e);
}

int engine__finish(struct engine *e, uint64_t end_ns)
{
	int err = engine__advance(e, UINT64_MAX);
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
