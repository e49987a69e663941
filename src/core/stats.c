/* stats: see stats.h. */
#include "stats.h"

#include <math.h>

#include "banned.h"

void wilson95(uint64_t k, uint64_t n, double *lo, double *hi)
{
	if (!n) {
		*lo = *hi = 0;
		return;
	}
	const double z = 1.959963984540054;	/* the 97.5th percentile */
	double p = (double)k / (double)n, nn = (double)n, z2 = z * z;
	double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
	double half = z * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / (1 + z2 / nn);
	*lo = centre - half < 0 ? 0 : centre - half;
	*hi = centre + half > 1 ? 1 : centre + half;
}
