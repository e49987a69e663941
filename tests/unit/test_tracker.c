/*
 * The change tracker (analysis/tracker.h): each key's change since its
 * last look, signed (TRACK_EXACT) or as a counter that never goes down
 * and does not count a fall twice (TRACK_COUNTER); keys apart; a key
 * forgotten starts again from nothing; many keys, freed and reused.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/tracker.h"

static struct track_figs look(struct tracker *tr, uint64_t a, uint64_t b, int64_t cpu,
			      int64_t steal, int64_t samples, enum track_mode mode)
{
	struct track_key k = { a, b, 0 };
	struct track_figs now = { cpu, steal, samples }, d;
	assert_int_equal(tracker__look(tr, &k, &now, mode, &d), 0);
	return d;
}

/* key (1,1): 10, 25, 20 (a share fell), 30 -> +10, +15, -5, +10 */
static void test_exact(void **state)
{
	(void)state;
	struct tracker tr;
	tracker__init(&tr);
	struct track_figs d = look(&tr, 1, 1, 10, 1, 2, TRACK_EXACT);
	assert_int_equal(d.cpu_ns, 10);
	assert_int_equal(d.steal_ns, 1);
	assert_int_equal(d.samples, 2);
	assert_int_equal(look(&tr, 1, 1, 25, 1, 3, TRACK_EXACT).cpu_ns, 15);
	d = look(&tr, 1, 1, 20, 0, 3, TRACK_EXACT);
	assert_int_equal(d.cpu_ns, -5);
	assert_int_equal(d.steal_ns, -1);
	assert_int_equal(d.samples, 0);
	assert_int_equal(look(&tr, 1, 1, 30, 0, 3, TRACK_EXACT).cpu_ns, 10);
	struct track_key k = { 1, 1, 0 };
	assert_int_equal(tracker__last(&tr, &k).cpu_ns, 30);
	tracker__release(&tr);
}

/* counter: 10, 25, 20 (a fall: 0, the last look keeps 25), 30 -> +5 */
static void test_counter(void **state)
{
	(void)state;
	struct tracker tr;
	tracker__init(&tr);
	assert_int_equal(look(&tr, 7, 0, 10, 0, 0, TRACK_COUNTER).cpu_ns, 10);
	assert_int_equal(look(&tr, 7, 0, 25, 0, 0, TRACK_COUNTER).cpu_ns, 15);
	assert_int_equal(look(&tr, 7, 0, 20, 0, 0, TRACK_COUNTER).cpu_ns, 0);
	assert_int_equal(look(&tr, 7, 0, 30, 0, 0, TRACK_COUNTER).cpu_ns, 5);
	tracker__release(&tr);
}

/* keys apart; a key forgotten starts from nothing; slots reused */
static void test_keys_and_forget(void **state)
{
	(void)state;
	struct tracker tr;
	tracker__init(&tr);
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(look(&tr, i, i * 3, (int64_t)i, 0, 0, TRACK_EXACT).cpu_ns, (int64_t)i);
	for (uint64_t i = 0; i < 1000; i += 2) {
		struct track_key k = { i, i * 3, 0 };
		tracker__forget(&tr, &k);
		assert_int_equal(tracker__last(&tr, &k).cpu_ns, 0);
	}
	uint32_t n = tr.n;
	for (uint64_t i = 0; i < 1000; i++) {
		int64_t want = i % 2 ? 1 : (int64_t)i + 1;	/* forgotten: from nothing */
		assert_int_equal(look(&tr, i, i * 3, (int64_t)i + 1, 0, 0, TRACK_EXACT).cpu_ns, want);
	}
	assert_int_equal(tr.n, n);	/* the forgotten keys' slots were reused */
	assert_int_equal(look(&tr, 5, 0, 3, 0, 0, TRACK_EXACT).cpu_ns, 3);	/* b differs */
	tracker__release(&tr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_counter),
		cmocka_unit_test(test_keys_and_forget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
