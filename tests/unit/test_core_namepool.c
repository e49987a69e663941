/*
 * namepool: names users choose held in bounded room. A name is found
 * again while held; past max_names (or a lower limit) new ones are
 * refused; a name no mark keeps and no event past the watermark uses is
 * recycled at the second sweep that finds it so (never the first), and
 * its id then names another; the strtab's own names are never touched;
 * room freed by long names serves short ones, and short slots do not
 * keep long names out.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/namepool.h"

static uint32_t put(struct namepool *p, const char *s, uint64_t time, uint32_t limit)
{
	return namepool__intern(p, s, strlen(s), time, limit);
}

static void sweep(struct namepool *p, const uint32_t *keep, size_t n, uint64_t watermark)
{
	assert_int_equal(namepool__begin(p), 0);
	for (size_t i = 0; i < n; i++)
		namepool__mark(p, keep[i]);
	namepool__end(p, watermark);
}

static void bounded_and_recycled(void **state)
{
	(void)state;
	struct strtab t;
	strtab__init(&t);
	uint32_t fixed = strtab__intern(&t, "main", 4);	/* a function's: for good */
	struct namepool p;
	namepool__init(&p, &t, 4, 4 * 256, 42);
	uint32_t a = put(&p, "a", 10, 4), b = put(&p, "b", 20, 4);
	assert_int_not_equal(a, HINDEX_NONE);
	assert_int_equal(put(&p, "a", 30, 4), a);	/* found, last use 30 */
	assert_int_not_equal(put(&p, "main", 5, 4), fixed);	/* the pool's own */
	assert_int_not_equal(put(&p, "c", 40, 4), HINDEX_NONE);
	assert_int_equal(put(&p, "d", 50, 4), HINDEX_NONE);	/* 4 held: no room */
	assert_int_equal(p.st.refused, 1);
	assert_int_equal(put(&p, "e", 50, 2), HINDEX_NONE);	/* under a lower limit */

	/* b is kept by a mark, a's last use is past the watermark 25: the
	 * others are unreferenced, but only the second sweep recycles */
	uint32_t keep[] = { b };
	sweep(&p, keep, 1, 25);
	assert_int_equal(p.st.recycled, 0);
	sweep(&p, keep, 1, 25);
	assert_int_equal(p.st.recycled, 1);	/* "main" (5) only: a at 30, c at 40 */
	assert_string_equal(strtab__str(&t, fixed), "main");
	uint32_t d = put(&p, "d", 60, 4);
	assert_int_not_equal(d, HINDEX_NONE);
	assert_string_equal(strtab__str(&t, d), "d");
	assert_string_equal(strtab__str(&t, a), "a");
	assert_string_equal(strtab__str(&t, b), "b");

	/* everything unused behind watermark 100: all but b go */
	sweep(&p, keep, 1, 100);
	sweep(&p, keep, 1, 100);
	assert_int_equal(p.st.names, 1);
	assert_int_equal(put(&p, "b", 110, 4), b);
	/* a name looked up again between two sweeps is spared */
	uint32_t x = put(&p, "x", 120, 4);
	sweep(&p, keep, 1, 200);
	assert_int_equal(put(&p, "x", 130, 4), x);
	sweep(&p, keep, 1, 200);
	assert_int_equal(put(&p, "x", 140, 4), x);
	namepool__release(&p);
	strtab__release(&t);
}

static void long_names_room_serves_short(void **state)
{
	(void)state;
	struct strtab t;
	strtab__init(&t);
	struct namepool p;
	namepool__init(&p, &t, 1000, 4096, 7);	/* 4096 bytes: one long slot */
	char longname[3000];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	uint32_t l = put(&p, longname, 1, 1000);
	assert_int_not_equal(l, HINDEX_NONE);
	assert_int_equal(put(&p, "short", 2, 1000), HINDEX_NONE);	/* no bytes left */
	sweep(&p, NULL, 0, 10);
	sweep(&p, NULL, 0, 10);
	uint32_t s = put(&p, "short", 11, 1000);
	assert_int_equal(s, l);	/* the long slot, given again */
	assert_string_equal(strtab__str(&t, s), "short");
	char huge[5000];
	memset(huge, 'y', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	assert_int_equal(put(&p, huge, 12, 1000), HINDEX_NONE);	/* over 4095 bytes */
	namepool__release(&p);
	strtab__release(&t);
}

static void many_rounds_stay_bounded(void **state)
{
	(void)state;
	struct strtab t;
	strtab__init(&t);
	struct namepool p;
	namepool__init(&p, &t, 256, 256 * 256, 9);
	char name[32];
	uint64_t time = 0;
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < 1000; i++) {
			snprintf(name, sizeof(name), "r%d.%d", round, i);
			put(&p, name, ++time, 256);
		}
		sweep(&p, NULL, 0, time);
	}
	assert_true(p.st.slots <= 256);
	assert_true(t.count <= 256);
	assert_true(t.len <= 256 * 16);
	assert_true(p.st.recycled >= 99 * 256);	/* a full pool empties every second sweep */
	namepool__release(&p);
	strtab__release(&t);
}

/* A rename loop's short names, recycled, leave room for long paths. */
static void short_slots_leave_room_for_long(void **state)
{
	(void)state;
	struct strtab t;
	strtab__init(&t);
	struct namepool p;
	namepool__init(&p, &t, 64, 64 * 256, 3);
	char name[128];
	for (int i = 0; i < 48; i++) {
		snprintf(name, sizeof(name), "r%d", i);
		assert_int_not_equal(put(&p, name, 1, 48), HINDEX_NONE);
	}
	sweep(&p, NULL, 0, 10);
	sweep(&p, NULL, 0, 10);
	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "/system.slice/docker-%064d.scope", i);
		assert_int_not_equal(put(&p, name, 20, 64), HINDEX_NONE);
	}
	namepool__release(&p);
	strtab__release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bounded_and_recycled),
		cmocka_unit_test(long_names_room_serves_short),
		cmocka_unit_test(many_rounds_stay_bounded),
		cmocka_unit_test(short_slots_leave_room_for_long),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
