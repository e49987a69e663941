/*
 * sched_flight: the stint in progress on each CPU at a read of the
 * collector (sched_clock.c), and what of it the threads' entries do not
 * hold yet. A thread's entry grows at its switches out: one running when
 * read would show nothing of its stint so far, and a recording's first
 * and last reads would put a long stint (a spinner alone on its CPU runs
 * for seconds) on the wrong side of its start or end.
 *
 * So each read samples who runs on each CPU and reads that task's run
 * time (schedstat brings a running task's up to date). Its entry holds
 * its run time when the entry was last updated (rt_last: its last switch
 * out, or the switch in, wakeup or read that made the entry): what it
 * ran since is the run time now less that, however its stint began. Its
 * switch in may have been seen (rt_in, with the steal clock then), or it
 * may be the task running at the load (its run time then), or a switch
 * in the kernel did not report (on this project's machines a guest
 * agent's threads hand the CPU back to a spinner unseen). The base is
 * kept for an entry made by the read itself, where the thread has none
 * yet (adopt_running): with its switch in unseen, its figures count from
 * the read (the task running at the load's, from the load); a task born
 * since the programs were attached counts from its birth in any case.
 *
 * No I/O here: the loader samples and reads, so that the logic is tested
 * without a kernel (tests/unit/test_sched_flight.c).
 */
#ifndef CPULEDGER_BPF_SCHED_FLIGHT_H
#define CPULEDGER_BPF_SCHED_FLIGHT_H

#include <stdbool.h>
#include <stdint.h>

#include "sched_clock_abi.h"

struct sched_flight {
	uint32_t tid;		/* 0: nothing counted on this CPU */
	uint32_t pid;		/* its process */
	bool partial;		/* begun before what was seen: the load,
				 * or a switch in not reported */
	uint64_t run_ns;	/* its run time (schedstat) at the read */
	uint64_t steal_ns;	/* the steal clock's growth since its
				 * switch in, where that was seen */
	uint64_t rt_base, delay_base;	/* for an entry the read makes */
};

/* The task running at the load on one CPU, and its run time then. */
struct sched_flight_load {
	uint32_t tid;
	uint64_t rt;
};

/*
 * The stint in progress on a CPU as its entry was read (c: curr_now, who
 * runs there, and when it was born; the switch in last seen), given that
 * task's run time and run-queue delay read after (run, delay; run 0:
 * unknown), the steal clock as sampled (steal_now), the CPU's task at the
 * load and when the programs were attached (attached_ns, the kernel's
 * CLOCK_MONOTONIC; 0: unknown): a task born since has all its run time
 * and wait in the recording (its counters start at 0 at its fork), its
 * switch in seen or not, whether it ran at the load or not. Fills *f;
 * false where nothing is counted: idle, a switch between the sample and
 * the read of the CPUs' entries (curr_now out of date: the task may be
 * running elsewhere by then), run time unknown or behind the base.
 */
bool sched_flight__of(struct sched_flight *f, const struct sc_cpu *c,
		      const struct sched_flight_load *load, uint64_t attached_ns, uint64_t run,
		      uint64_t delay, uint64_t steal_now);

/* Where one thread is in the flights of two CPUs (it moved between their
 * samples, and the switch off the first was not reported), only the one
 * of the larger run time (the later) is kept: its run counted once. */
void sched_flight__one_each(struct sched_flight *flights, uint32_t ncpus);

/*
 * What thread tid (its entry v, read after the flights) has run that v
 * does not hold, added to *rt and *steal: the flights of the ncpus CPUs
 * running it, and for an entry first made at a switch out (SC_PARTIAL)
 * of the task running at a CPU's load, its run from the load to then.
 * An entry read after the flight's switch out holds the stint already:
 * nothing of that flight, its steal included; nor does an entry of
 * another process (the id given again meanwhile).
 */
void sched_flight__credit(const struct sched_flight *flights,
			  const struct sched_flight_load *loads, uint32_t ncpus, uint32_t tid,
			  const struct sc_thread *v, uint64_t *rt, uint64_t *steal);

#endif
