/*
 * procstat: the per-CPU steal of a /proc/stat text. The kernel keeps steal
 * per CPU only, in USER_HZ ticks (the eighth number of a "cpuN" line).
 */
#ifndef CPULEDGER_FORMAT_PROCSTAT_H
#define CPULEDGER_FORMAT_PROCSTAT_H

#include <stdbool.h>
#include <stdint.h>

/* A CPU's time by /proc/stat, in USER_HZ ticks. */
struct procstat_cpu {
	bool seen;
	uint64_t busy;		/* user, nice, system, irq, softirq */
	uint64_t idle;		/* idle and iowait */
	uint64_t steal;
};

/* Fills cpus[N] for each "cpuN" line with N < n. Returns how many lines
 * were read, or -EINVAL when a cpuN line is malformed. */
int procstat_times(const char *text, struct procstat_cpu *cpus, uint32_t n);

/*
 * Fills steal[cpu] (ticks) for each "cpuN" line with N < n, and marks it
 * in seen[cpu]. Returns how many lines were read, -EINVAL when a cpuN
 * line is malformed, or -ENOMEM.
 */
int procstat_steal(const char *text, uint64_t *steal, uint8_t *seen, uint32_t n);

#endif
