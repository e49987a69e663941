/*
 * sched_delta (core/sched_delta.h): per-collection growth of per-thread
 * running totals, as the BPF collector's reader takes it: a new thread
 * gives all it has, an exited one its last growth once, a reused thread
 * id starts again from nothing, a thread gone unread is dropped and
 * counted, a counter that goes back gives 0.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/sched_delta.h"

/* Totals of one thread: field i is base * (i + 1). */
static void totals(uint64_t base, uint64_t cum[SCHED_DELTA_N])
{
	for (int i = 0; i < SCHED_DELTA_N; i++)
		cum[i] = base * (uint64_t)(i + 1);
}

static void step(struct sched_delta *d, uint32_t tid, uint64_t born, uint64_t base, bool final,
		 uint64_t want_base, bool want_first)
{
	uint64_t cum[SCHED_DELTA_N], delta[SCHED_DELTA_N], want[SCHED_DELTA_N];
	bool first = !want_first;
	totals(base, cum);
	totals(want_base, want);
	assert_int_equal(sched_delta__step(d, tid, born, cum, final, delta, &first), 0);
	assert_memory_equal(delta, want, sizeof(want));
	assert_int_equal(first, want_first);
}

/*
 * collection  thread 7 (born 1) totals  delta  first  held after
 * 1           10                        10     yes    1
 * 2           25                        15     no     1
 * 3           40, exited                15     no     0
 * 4           5 (born 2: a new thread)  5      yes    1
 */
static void growth_then_final(void **state)
{
	(void)state;
	struct sched_delta d;
	sched_delta__init(&d);
	sched_delta__begin(&d);
	step(&d, 7, 1, 10, false, 10, true);
	assert_int_equal(sched_delta__end(&d), 0);
	sched_delta__begin(&d);
	step(&d, 7, 1, 25, false, 15, false);
	assert_int_equal(sched_delta__end(&d), 0);
	assert_int_equal(sched_delta__count(&d), 1);
	sched_delta__begin(&d);
	step(&d, 7, 1, 40, true, 15, false);
	assert_int_equal(sched_delta__count(&d), 0);
	assert_int_equal(sched_delta__end(&d), 0);
	sched_delta__begin(&d);
	step(&d, 7, 2, 5, false, 5, true);
	assert_int_equal(sched_delta__count(&d), 1);
	assert_int_equal(d.backwards, 0);
	sched_delta__release(&d);
}

/* A thread id given to a new thread before the old one's exit was read:
 * the new thread's totals are its own (all of them), not a growth over
 * the old thread's, which were larger. */
static void reused_id_starts_again(void **state)
{
	(void)state;
	struct sched_delta d;
	sched_delta__init(&d);
	sched_delta__begin(&d);
	step(&d, 9, 100, 50, false, 50, true);
	sched_delta__end(&d);
	sched_delta__begin(&d);
	step(&d, 9, 200, 3, false, 3, true);
	sched_delta__end(&d);
	sched_delta__begin(&d);
	step(&d, 9, 200, 4, false, 1, false);
	assert_int_equal(d.backwards, 0);
	sched_delta__release(&d);
}

/* A counter lower than before gives 0, is counted, and the next growth
 * counts from the old high; the other counters are unaffected. */
static void backwards_gives_zero(void **state)
{
	(void)state;
	struct sched_delta d;
	uint64_t cum[SCHED_DELTA_N] = { 100, 100 }, delta[SCHED_DELTA_N];
	bool first;
	sched_delta__init(&d);
	sched_delta__begin(&d);
	assert_int_equal(sched_delta__step(&d, 3, 1, cum, false, delta, &first), 0);
	cum[0] = 90;
	cum[1] = 130;
	assert_int_equal(sched_delta__step(&d, 3, 1, cum, false, delta, &first), 0);
	assert_int_equal(delta[0], 0);
	assert_int_equal(delta[1], 30);
	assert_int_equal(d.backwards, 1);
	cum[0] = 120;
	assert_int_equal(sched_delta__step(&d, 3, 1, cum, false, delta, &first), 0);
	assert_int_equal(delta[0], 20);
	sched_delta__release(&d);
}

/*
 * 3000 threads: every third exits in collection 2, every fifth of the
 * others is not seen again (gone from the kernel's map unread). After
 * collection 2: held = 3000 - 1000 exited - 400 gone; in collection 3
 * each survivor gives exactly its growth (the entries moved when others
 * were forgotten kept their own totals).
 */
static void many_threads_forget_and_sweep(void **state)
{
	(void)state;
	struct sched_delta d;
	sched_delta__init(&d);
	sched_delta__begin(&d);
	for (uint32_t t = 1; t <= 3000; t++)
		step(&d, t, t, t, false, t, true);
	assert_int_equal(sched_delta__end(&d), 0);
	sched_delta__begin(&d);
	uint32_t exited = 0, gone = 0;
	for (uint32_t t = 1; t <= 3000; t++) {
		if (t % 3 == 0) {
			step(&d, t, t, 2 * t, true, t, false);
			exited++;
		} else if (t % 5 == 0) {
			gone++;
		} else {
			step(&d, t, t, 2 * t, false, t, false);
		}
	}
	assert_int_equal(exited, 1000);
	assert_int_equal(gone, 400);
	assert_int_equal(sched_delta__end(&d), gone);
	assert_int_equal(sched_delta__count(&d), 3000 - exited - gone);
	sched_delta__begin(&d);
	for (uint32_t t = 1; t <= 3000; t++)
		if (t % 3 && t % 5)
			step(&d, t, t, 2 * t + 7, false, 7, false);
	assert_int_equal(sched_delta__end(&d), 0);
	/* a gone thread seen again is a first sight: all of its totals */
	sched_delta__begin(&d);
	step(&d, 5, 5, 11, false, 11, true);
	assert_int_equal(d.backwards, 0);
	sched_delta__release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(growth_then_final),
		cmocka_unit_test(reused_id_starts_again),
		cmocka_unit_test(backwards_gives_zero),
		cmocka_unit_test(many_threads_forget_and_sweep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
