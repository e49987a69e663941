/*
 * stats: sampling error. A share estimated from samples (k of n fell in a
 * row) is a binomial proportion; its 95 % confidence interval is Wilson's
 * score interval, which unlike the textbook p +- 1.96 sqrt(p(1-p)/n)
 * stays inside [0, 1] and is honest for small k.
 */
#ifndef CPULEDGER_CORE_STATS_H
#define CPULEDGER_CORE_STATS_H

#include <stdint.h>

/* The 95 % Wilson interval [*lo, *hi] of k successes in n trials (n > 0;
 * for n = 0 both are 0). */
void wilson95(uint64_t k, uint64_t n, double *lo, double *hi);

#endif
