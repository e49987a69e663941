/*
 * engine_clock: STEAL_GIVEN, the engine fed by a source that reads each
 * thread's CPU time and steal from the kernel's own clocks (the BPF
 * collector, src/bpf/sched_clock.h) instead of inferring them from
 * switches and sample gaps: nothing to judge, no stints, no calibration.
 *
 * A thread's EK_CLOCK says what it did since its last one (a window).
 * Its CPU time adds to the thread's, which the hand-out splits among its
 * functions by their samples, as in every mode. Its steal goes to the
 * functions sampled in that window, in proportion to their samples there:
 * the hypervisor took the CPU while the thread ran them, and no finer
 * place is known without per-stint gaps. A window without a sample gives
 * its steal to the function the thread was sampled in last (seed 001's
 * preceding rule; "[unknown]" under the bracketed method, or for a thread
 * never sampled). Per CPU (its figures and the series by second), a
 * window's CPU time counts on the CPU its thread was last sampled on: the
 * source reads a thread's figures, not where it ran them. Its steal does
 * too, unless the source reads each CPU's steal clock (cpu_clocks): then
 * each CPU's steal is that CPU's EK_CPU_CLOCK, the steal while a thread
 * held it, and a thread that ran on both CPUs of a window no longer puts
 * all of it on one.
 */
#include <errno.h>

#include "engine_impl.h"
#include "units.h"

#include "banned.h"

void eng_given_sample(struct engine *e, uint32_t thread, uint32_t prog, uint32_t cpu)
{
	struct eng_thread *th = &e->threads.v[thread];
	th->last_prog = prog;
	th->last_cpu = cpu;
	struct eng_prog *pr = &e->progs.v[prog];
	if (pr->samples - pr->clock_mark == 1) {	/* its first in the window */
		pr->window_next = th->window;
		th->window = prog;
	}
}

/* The window's samples, and the function sampled most in it (of those
 * alike, the last in its thread's list, as the rounding has it). */
static uint64_t window_samples(const struct engine *e, const struct eng_thread *th,
			       uint32_t *busiest)
{
	uint64_t best = 0, n = 0;
	*busiest = ENGINE_NONE;
	for (uint32_t p = th->window; p != ENGINE_NONE; p = e->progs.v[p].window_next) {
		const struct eng_prog *pr = &e->progs.v[p];
		uint64_t k = pr->samples - pr->clock_mark;
		n += k;
		if (k > best || (k == best && pr->nth > e->progs.v[*busiest].nth)) {
			best = k;
			*busiest = p;
		}
	}
	return n;
}

/* Gives a window's steal to its functions; marks the window closed. */
static int place_given(struct engine *e, uint32_t thread, uint64_t steal)
{
	struct eng_thread *th = &e->threads.v[thread];
	uint32_t busiest;
	uint64_t n = window_samples(e, th, &busiest), given = 0;
	for (uint32_t p = th->window; p != ENGINE_NONE;) {
		struct eng_prog *pr = &e->progs.v[p];
		uint64_t k = pr->samples - pr->clock_mark;
		pr->clock_mark = pr->samples;
		p = pr->window_next;
		pr->window_next = ENGINE_NONE;
		if (!steal)
			continue;
		uint64_t part = share_u64(steal, k, n);
		pr->steal_ns += part;
		given += part;
	}
	th->window = ENGINE_NONE;
	th->clock_mark = th->samples;
	if (!steal)
		return 0;
	uint32_t rest = busiest != ENGINE_NONE ? busiest :
			th->last_prog != ENGINE_NONE && e->c.method != METHOD_BRACKETED ?
			th->last_prog : eng_unknown_prog(e, thread);
	if (rest == ENGINE_NONE)
		return -ENOMEM;
	e->progs.v[rest].steal_ns += steal - given;
	return 0;
}

int eng_on_clock(struct engine *e, const struct eng_event *ev)
{
	if (e->c.mode != STEAL_GIVEN)
		return 0;	/* a clock beside inferred figures: not counted
				 * twice */
	uint32_t t = eng_thread(e, ev->tid, ev->pid);
	if (t == ENGINE_NONE)
		return -ENOMEM;
	struct eng_thread *th = &e->threads.v[t];
	if (!th->first_ns)
		th->first_ns = ev->time;
	if (ev->time > th->last_ns)
		th->last_ns = ev->time;
	th->cpu_ns += ev->value;
	th->runtime_ns += ev->value;
	e->st.run_ns += ev->value;
	e->st.steal_ns += ev->steal;
	uint32_t cpu = th->last_cpu != ENGINE_NONE ? th->last_cpu : ev->cpu;
	uint64_t cpu_steal = e->c.cpu_clocks ? 0 : ev->steal;
	e->cpus[cpu].st.steal_ns += cpu_steal;
	e->cpus[cpu].st.seen = true;
	int err = eng_series_add(e, cpu, ev->time, ev->value, cpu_steal);
	if (!err)
		err = place_given(e, t, ev->steal);
	if (err || !(ev->flags & EF_FINAL))
		return err;
	/* its last figures: it is gone, with nothing more to come */
	th = &e->threads.v[t];
	if (!th->exited) {
		th->exited = true;
		th->exit_ns = ev->time;
		if (ev->pid == ev->tid && th->proc != ENGINE_NONE)
			e->procs.v[th->proc].exited = true;
	}
	th->done = true;
	return eng_maybe_gone(e, t);
}

int eng_on_cpu_clock(struct engine *e, const struct eng_event *ev)
{
	/* (a CPU is listed for its events, not for a clock that read no
	 * steal: an offline one's reads are all 0) */
	if (e->c.mode != STEAL_GIVEN || !e->c.cpu_clocks || ev->cpu >= e->c.ncpus || !ev->steal)
		return 0;
	e->cpus[ev->cpu].st.steal_ns += ev->steal;
	e->cpus[ev->cpu].st.seen = true;
	return eng_series_add(e, ev->cpu, ev->time, 0, ev->steal);
}
