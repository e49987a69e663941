/* The 95 % Wilson interval against values computed by hand from the
 * formula (centre (p + z^2/2n) / (1 + z^2/n), half-width
 * z sqrt(p(1-p)/n + z^2/4n^2) / (1 + z^2/n), z = 1.959964). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/stats.h"

static void near(double got, double want)
{
	if (got < want - 5e-5 || got > want + 5e-5)
		fail_msg("got %.6f, want %.6f", got, want);
}

static void wilson(void **state)
{
	(void)state;
	double lo, hi;
	wilson95(50, 100, &lo, &hi);	/* symmetric around 0.5 */
	near(lo, 0.403832);
	near(hi, 0.596168);
	wilson95(0, 10, &lo, &hi);	/* none seen: not a zero-width interval */
	near(lo, 0.0);
	near(hi, 0.277533);
	wilson95(10, 10, &lo, &hi);
	near(lo, 0.722467);
	near(hi, 1.0);
	wilson95(1, 1000, &lo, &hi);
	near(lo, 0.000177);
	near(hi, 0.005643);
	wilson95(900000, 1000000, &lo, &hi);	/* narrow with many samples */
	assert_true(hi - lo < 0.0013 && lo < 0.9 && hi > 0.9);
	wilson95(0, 0, &lo, &hi);
	near(lo, 0);
	near(hi, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(wilson) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
