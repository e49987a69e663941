/*
 * procstat: the per-CPU steal of a /proc/stat text. The kernel keeps steal
 * per CPU only, in USER_HZ ticks (the eighth number of a "cpuN" line).
 */
#ifndef CPULEDGER_FORMAT_PROCSTAT_H
#define CPULEDGER_FORMAT_PROCSTAT_H

#include <stdint.h>

/*
 * Fills steal[cpu] (ticks) for each "cpuN" line with N < n, and marks it
 * in seen[cpu]. Returns how many lines were read, or -EINVAL when a cpuN
 * line is malformed.
 */
int procstat_steal(const char *text, uint64_t *steal, uint8_t *seen, uint32_t n);

#endif
