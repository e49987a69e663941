/*
 * units: the numbers every module counts in, named once. Time is kept in
 * nanoseconds everywhere; one second of it is NSEC_PER_SEC, the only
 * place the number is written (scripts/house.py checks). share_u64() splits
 * a total by a count as the engine, the analysis and /metrics all do.
 */
#ifndef CPULEDGER_CORE_UNITS_H
#define CPULEDGER_CORE_UNITS_H

#include <stdint.h>

/* int64_t, signed as Linux's: with a uint64_t the arithmetic is
 * uint64_t as before (PRIu64 still fits), with a signed time (before
 * 1970, a difference) it stays signed. */
#define NSEC_PER_SEC INT64_C(1000000000)
#define NSEC_PER_MSEC INT64_C(1000000)
/* The same number in SQL text (the ledger's queries). */
#define NSEC_PER_SEC_SQL "1000000000"

/* The part of total that n of d stand for, rounded down; 0 when d is 0.
 * The product is taken in 128 bits where it overflows 64 (a few hours of
 * nanoseconds times a large sample count), else in 64: the same number,
 * without the 128-bit division's call (1.9 % of a pprof report's
 * samples, a gone thread's programs each given their share). */
static inline uint64_t share_u64(uint64_t total, uint64_t n, uint64_t d)
{
	uint64_t p;
	if (!d)
		return 0;
	if (!__builtin_mul_overflow(total, n, &p))
		return p / d;
	return (uint64_t)((unsigned __int128)total * n / d);
}

#endif
