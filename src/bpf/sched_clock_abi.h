/*
 * sched_clock_abi: what the BPF programs (sched_clock.bpf.c) and their
 * loader (sched_clock.c) share: the maps' key and value layouts, the
 * ring buffer's record, and the counters of what went wrong. Both sides
 * are compiled from this one file, so they cannot disagree; only
 * fixed-width types, and no pointers.
 *
 * src/bpf/ is the BPF collector's folder (issue 25): the kernel's own
 * clocks read at every switch, aggregated in the kernel, read by user
 * space when asked.
 */
#ifndef CPULEDGER_BPF_SCHED_CLOCK_ABI_H
#define CPULEDGER_BPF_SCHED_CLOCK_ABI_H

#include <linux/types.h>

#define SC_COMM_LEN 16

/* thread flags */
#define SC_EXITED 1u		/* it has exited: its figures are final */
#define SC_PARTIAL 2u		/* born before the programs were attached
				 * and first seen switching out, or running
				 * by a read, with its switch in not seen:
				 * its figures start there, not at a switch
				 * in */

/* The threads map: key the thread id (the kernel's pid), value this. */
struct sc_thread {
	__u32 pid;		/* its process (the kernel's tgid) */
	__u32 flags;
	__u64 on_ns;		/* wall time on a CPU, switch in to out */
	__u64 steal_ns;		/* steal clock growth in its stints */
	__u64 stints;
	__u64 rt_base, rt_last;	/* se.sum_exec_runtime, first seen, last out */
	__u64 delay_base, delay_last;	/* sched_info.run_delay, the same */
	__u64 wait_ns;		/* waits timed by events (wakeup or
				 * preemption to switch in) */
	__u64 wait_start;	/* when its current wait began, 0: none */
	__u64 irq_ns;		/* the CPU's IRQ time growth in its stints */
	__u64 born_ns;		/* when the entry was made: a new thread
				 * that took a dead one's id has another */
	__u64 rt_seen;		/* sum_exec_runtime growth in the stints
				 * whose switch in was seen: what on_ns
				 * is the wall time of */
	char comm[SC_COMM_LEN];
	__u32 exec_from;	/* made under the leader's id at a switch out
				 * of a thread whose exec gave it that id:
				 * its old id (0: not so) */
	__u32 pad;
};

/* The cpus map: key the CPU's number, value this; written by that CPU's
 * switches only, and by the sampler. */
struct sc_cpu {
	__u32 tid_in;		/* who switched in last (0: idle) */
	__u32 seen_in;		/* which of t_in... are set (SEEN_*) */
	__u64 t_in;		/* CLOCK_MONOTONIC ns at that switch */
	__u64 steal_in;		/* the steal clock then */
	__u64 idle_ns;		/* time the idle task held it */
	__u64 idle_steal_ns;	/* steal while idle held it */
	__u64 steal_now;	/* the steal clock when last sampled */
	__u32 version_now;	/* its version then (0: never written) */
	__u32 curr_now;		/* the task running on it then (0: idle),
				 * where the sampler ran on the CPU */
	__u32 curr_pid_now;	/* its process */
	__u64 switches_now;	/* switches then: a read finding more has
				 * curr_now out of date */
	__u64 rt_in, delay_in;	/* sum_exec_runtime and run_delay of the
				 * thread switched in, then */
	__u64 switches;		/* every switch seen on it */
	__u64 base;		/* its per-CPU base, found at a switch (1: not
				 * found, 0: not yet) */
	__u64 cpustat_now;	/* kernel_cpustat's steal when last sampled */
	__u64 irq_in;		/* cpu_irqtime's total at the last switch */
	__u64 irq_now;		/* the same when last sampled */
	__u64 curr_start_now;	/* when curr_now was born (task start_time,
				 * CLOCK_MONOTONIC) */
	__u64 task_in;		/* the task switched in last, its address:
				 * one that switches out under another id
				 * had it changed in its stint (an exec) */
};

/* Whether a task born at start_time (task_struct's, CLOCK_MONOTONIC)
 * was born once the programs were attached at attached_ns (0: not yet
 * known): all it ran and waited, its counters from 0 at its fork, was
 * seen. The programs and their loader (sched_flight.c) both ask. */
static inline int sc_born_since(__u64 attached_ns, __u64 start_time)
{
	return attached_ns && start_time >= attached_ns;
}

/* sc_cpu.seen_in */
#define SEEN_TIME 1	/* t_in (and rt_in, delay_in) are set */
#define SEEN_STEAL 2	/* steal_in is set */
#define SEEN_IRQ 4	/* irq_in is set */
#define SEEN_RQ_CLOCK 8	/* t_in is the run queue's clock, not ktime */

/* Where a switch reads steal from (steal_mode, set by the loader). */
#define SC_STEAL_NONE 0		/* nowhere: unknown, or no hypervisor */
#define SC_STEAL_KVM 1		/* the KVM steal clock, to the ns */
#define SC_STEAL_CPUSTAT 2	/* kernel_cpustat's steal, by the tick */

/* One stint, through the ring buffer when asked for. */
struct sc_stint {
	__u32 tid, pid, cpu, flags;	/* flags: SC_EXITED */
	__u64 start_ns, end_ns;	/* CLOCK_MONOTONIC; start 0: not seen */
	__u64 steal_ns;		/* steal clock growth in it (0: not seen) */
	__u64 runtime_ns;	/* se.sum_exec_runtime growth since the
				 * thread's last switch out seen */
};

/* What went wrong, counted in the BPF programs' global data. */
struct sc_counters {
	__u64 map_full;		/* threads not counted: the map was full */
	__u64 ring_lost;	/* stints the ring buffer had no room for */
	__u64 torn_reads;	/* steal clock read while the host wrote it,
				 * four times running: the last value kept */
	__u64 reused;		/* exited threads not read before a new
				 * thread took their id: lost */
	__u64 layout_bad;	/* CPUs whose per-CPU base failed its check */
	__u64 unseen;		/* switches out of a thread whose switch in
				 * was not seen: the first on each CPU, and
				 * any the programs missed */
};

#endif
