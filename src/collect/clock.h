/*
 * clock: the system's clocks read in nanoseconds, the one spelling of
 * what six files each wrote for themselves. Monotonic time for intervals
 * and deadlines, the wall clock (signed: before 1970 is a time too) for
 * what is stored or shown as a date. Not in core/, which reads no clock.
 */
#ifndef CPULEDGER_COLLECT_CLOCK_H
#define CPULEDGER_COLLECT_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "../core/units.h"

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* CLOCK_REALTIME in ns since the epoch. */
static inline int64_t clock_real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

#endif
