/*
 * sched_clock: the BPF collector (issue 25) as a component with a
 * lifecycle, as libbpf's own objects: sched_clock__new loads and
 * attaches the programs of sched_clock.bpf.c (embedded in the binary),
 * sched_clock__read copies what the kernel has aggregated so far,
 * sched_clock__collect gives what each thread and CPU did since the
 * last collection (the reader an event source wants),
 * sched_clock__poll_stints hands over per-stint records when they were
 * asked for, sched_clock__free detaches and frees. It prints nothing and
 * never exits.
 *
 * What it reads at every context switch, in the kernel: the CPU's steal
 * (the KVM steal clock, exact per stint; or, where there is none, the
 * steal the kernel accounts by the tick for /proc/stat, placed by the
 * stints: status says which), its IRQ time where the kernel accounts
 * it, the thread's run time
 * (se.sum_exec_runtime) and run-queue wait (sched_info.run_delay), the
 * very counters /proc/PID/schedstat prints; its cost per switch is a few
 * loads and adds whatever the rate of reads. docs/bpf.md says which
 * kernels have what, and the fallbacks.
 *
 * Times are in ns; stint times are CLOCK_MONOTONIC. Figures of a thread
 * are cumulative from its first sight (a switch in, or out: then
 * SCHED_CLOCK_PARTIAL, its first stint counted from the load where it
 * ran then), and a read counts the stints in progress up to now (run
 * time and steal: docs/bpf.md, "Stints in progress").
 */
#ifndef CPULEDGER_BPF_SCHED_CLOCK_H
#define CPULEDGER_BPF_SCHED_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where steal is read from (sched_clock_opts.steal_from). */
enum sched_clock_steal_from {
	SCHED_CLOCK_STEAL_AUTO,		/* the KVM steal clock where the host
					 * writes it, else kernel_cpustat's
					 * steal where the kernel has
					 * accounted some, else none */
	SCHED_CLOCK_STEAL_KVM,		/* the KVM steal clock or unknown */
	SCHED_CLOCK_STEAL_CPUSTAT,	/* kernel_cpustat's steal (tick) */
};

struct sched_clock_opts {
	uint32_t max_threads;	/* the threads map's size; 0: 16384 */
	bool stints;		/* per-stint records through a ring buffer */
	uint32_t ring_bytes;	/* its size, a power of 2; 0: 4 MiB */
	bool wait_from_events;	/* time waits from wakeups and preemptions
				 * even where the kernel keeps run_delay */
	enum sched_clock_steal_from steal_from;
};

#define SCHED_CLOCK_EXITED 1u	/* the thread has exited: final figures */
#define SCHED_CLOCK_PARTIAL 2u	/* first seen switching out */
#define SCHED_CLOCK_NEW 4u	/* (collections) first in a collection */

struct sched_clock_thread {
	uint32_t tid, pid, flags;
	char comm[16];
	uint64_t cpu_ns;	/* ran, steal excluded (see runtime_ns) */
	uint64_t steal_ns;	/* steal clock growth in its stints (0 when
				 * status.steal_known is false) */
	uint64_t wait_ns;	/* waited on a run queue */
	uint64_t irq_ns;	/* the CPU's IRQ time in its stints (0 when
				 * status.irq_known is false) */
	uint64_t on_ns;		/* wall time on a CPU, switch to switch */
	uint64_t runtime_ns;	/* the kernel's sum_exec_runtime growth */
	uint64_t seen_runtime_ns;	/* of it, in the stints whose switch
					 * in was seen: on_ns's run time */
	uint64_t stints;
	uint64_t born_ns;	/* when the collector first saw it */
};

struct sched_clock_cpu {
	uint64_t steal_clock_ns;	/* the CPU's steal now, by the source
					 * status.steal_source names */
	uint64_t idle_ns;		/* the idle task's time on it */
	uint64_t idle_steal_ns;		/* steal while idle */
	uint64_t irq_ns;		/* its IRQ time now (cpu_irqtime) */
};

struct sched_clock_stint {
	uint32_t tid, pid, cpu;
	bool exited;			/* the thread's last stint (start 0:
					 * its final run time, at its free) */
	uint64_t start_ns, end_ns;	/* CLOCK_MONOTONIC; start 0: its switch
					 * in was not seen (status.unseen) */
	uint64_t steal_ns;		/* steal clock growth in it */
	uint64_t runtime_ns;		/* sum_exec_runtime growth since the
					 * thread's last switch out: the records
					 * of a thread add up to its runtime_ns */
};

struct sched_clock_status {
	bool steal_known;		/* steal is read (or known 0: no
					 * hypervisor) */
	const char *steal_source;	/* "kvm-steal-clock", "kernel-cpustat",
					 * "none (no hypervisor)" or
					 * "unknown (why)" */
	const char *steal_resolution;	/* "1 ns", "one scheduler tick", "-" */
	bool steal_per_stint;		/* read at each switch (a clock), not
					 * by the tick */
	bool runtime_excludes_steal;	/* the kernel takes steal out of run
					 * time (PARAVIRT_TIME_ACCOUNTING on) */
	const char *wait_source;	/* "schedstat-run-delay" or "events" */
	bool irq_known;			/* false: IRQ time not read */
	const char *irq_source;		/* "cpu-irqtime" or "unknown (why)" */
	const char *map_reads;		/* "batched" (BPF_MAP_LOOKUP_BATCH), or
					 * "entry by entry (why)": a kernel
					 * before 5.6 */
	uint64_t map_full;		/* threads not counted: the map was full */
	uint64_t ring_lost;		/* stints dropped: the ring buffer was full */
	uint64_t torn_reads;		/* steal clock reads never consistent */
	uint64_t switches;		/* context switches seen */
	uint64_t reused;		/* exited threads lost before a read: a
					 * new thread took their id */
	uint64_t unseen;		/* switches out whose switch in was not
					 * seen: the first on each CPU, and those
					 * the kernel did not report (their wall
					 * time and steal are not counted; run
					 * time and wait are, from the counters) */
};

struct sched_clock;

/*
 * Loads and attaches the programs. NULL with errno set and why (a
 * message of whylen bytes at most) saying what is missing: no BTF
 * (-ENOENT), not allowed (-EPERM: CAP_BPF and CAP_PERFMON, or root), a
 * kernel without tp_btf (-EINVAL). A kernel without the steal clock is no
 * failure: status says steal unknown, and wait and CPU still count.
 */
struct sched_clock *sched_clock__new(const struct sched_clock_opts *o, char *why,
				     size_t whylen);

uint32_t sched_clock__ncpus(const struct sched_clock *sc);

/*
 * Fills cpus[sched_clock__ncpus] (may be NULL) and *threads (an array of
 * *n, malloc'd: the caller frees it) with the figures so far. Threads
 * that have exited are returned with SCHED_CLOCK_EXITED and, when forget
 * is true, taken out of the map so that it does not fill (the caller
 * keeps their final figures). 0 or -errno.
 */
int sched_clock__read(struct sched_clock *sc, bool forget, struct sched_clock_cpu *cpus,
		      struct sched_clock_thread **threads, size_t *n);

/* Hands each stint record waiting to fn (opts.stints), waiting up to
 * timeout_ms for the first. How many, or -errno (fn's negative return
 * stops the loop and is returned). */
typedef int (*sched_clock_stint_fn)(void *ctx, const struct sched_clock_stint *s);
int sched_clock__poll_stints(struct sched_clock *sc, int timeout_ms, sched_clock_stint_fn fn,
			     void *ctx);

/* One thread's figures since the last collection. */
struct sched_clock_delta {
	uint32_t tid, pid, flags;	/* SCHED_CLOCK_EXITED: its last
					 * figures, it is then forgotten;
					 * SCHED_CLOCK_NEW: its first */
	char comm[16];
	uint64_t cpu_ns, steal_ns, wait_ns, irq_ns, on_ns, runtime_ns, stints;
	uint64_t seen_runtime_ns;
};

/* One CPU's since the last collection. */
struct sched_clock_cpu_delta {
	uint64_t steal_ns, idle_ns, idle_steal_ns, irq_ns;
};

struct sched_clock_collection {
	uint64_t start_ns, end_ns;	/* CLOCK_MONOTONIC: the last collection
					 * (or the load) to this one */
	struct sched_clock_delta *threads;	/* owned by sc: valid until the
						 * next collection or free */
	size_t nthreads;		/* those that did something, and every
					 * exit */
	struct sched_clock_cpu_delta *cpus;	/* the same, ncpus of them */
	uint32_t ncpus;
	uint32_t vanished;		/* threads that left the kernel's map
					 * without their final figures (their
					 * id reused before a read: status'
					 * reused) */
};

/*
 * What every thread and CPU did since the last collection (since the
 * load, the first time): figures the kernel keeps as running totals,
 * taken apart here (core/sched_delta.h). Exited threads are given once
 * with their last figures and forgotten, in the kernel map too. 0 or
 * -errno.
 */
int sched_clock__collect(struct sched_clock *sc, struct sched_clock_collection *out);

/* One line saying where steal, wait and IRQ time come from and to what
 * resolution, for a recording's header or a log: "steal: ...; wait: ...;
 * irq: ...". Cut to len. */
void sched_clock__describe(const struct sched_clock *sc, char *buf, size_t len);

/* Counters as of the last read; the strings live as long as sc. */
const struct sched_clock_status *sched_clock__status(const struct sched_clock *sc);

/* Detaches the programs; accepts NULL and a half-built object. */
void sched_clock__free(struct sched_clock *sc);

#endif
