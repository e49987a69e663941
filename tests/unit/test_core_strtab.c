/*
 * Strings as ids (core/strtab.c), and letting some go in place
 * (strtab__keep): the strings kept keep their bytes and are found by
 * them, their new ids in the order of the old; those let go are found no
 * more and interned again as new; the table's memory is kept (a string
 * added after fits without the table growing); keeping none, or all.
 * Pinned (its arrays in room that never moves): the strings interned
 * before are where they were found, those after are added in place, and
 * unpinned the table holds the same and grows again.
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

#include "core/strtab.h"

static void intern_and_find(void **state)
{
	(void)state;
	struct strtab t;
	strtab__init(&t);
	uint32_t a = strtab__intern(&t, "alpha", 5);
	uint32_t b = strtab__intern(&t, "be\0ta", 5);	/* bytes, not C strings */
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(strtab__intern(&t, "alpha", 5), a);
	assert_int_equal(strtab__find(&t, "be\0ta", 5), b);
	assert_int_equal(strtab__find(&t, "be", 2), HINDEX_NONE);
	assert_int_equal(strtab__len(&t, b), 5);
	assert_string_equal(strtab__str(&t, a), "alpha");
	strtab__release(&t);
}

/* Cleared, a table finds none of its strings and gives ids from 0 again,
 * small (its index kept) or grown (its index let go). */
static void clear_and_again(void **state)
{
	(void)state;
	struct strtab t;
	strtab__init(&t);
	char buf[32];
	for (int round = 0; round < 3; round++) {
		int n = round == 1 ? 3000 : 10;
		for (int i = 0; i < n; i++) {
			int len = snprintf(buf, sizeof(buf), "s%d.%d", round, i);
			assert_int_equal(strtab__intern(&t, buf, (size_t)len), (uint32_t)i);
		}
		assert_int_equal(strtab__count(&t), (uint32_t)n);
		strtab__clear(&t);
		assert_int_equal(strtab__count(&t), 0);
		int len = snprintf(buf, sizeof(buf), "s%d.%d", round, 0);
		assert_int_equal(strtab__find(&t, buf, (size_t)len), HINDEX_NONE);
	}
	assert_int_equal(strtab__intern(&t, "again", 5), 0);
	assert_string_equal(strtab__str(&t, 0), "again");
	strtab__release(&t);
}

static void keep_some(void **state)
{
	(void)state;
	struct strtab t;
	strtab__init(&t);
	uint32_t n = 5000;
	char s[32];
	for (uint32_t i = 0; i < n; i++) {
		int len = snprintf(s, sizeof(s), "string %u%s", i, i % 7 ? "" : " and more");
		assert_int_equal(strtab__intern(&t, s, (size_t)len), i);
	}
	size_t cap = t.cap, len_before = t.len;
	uint8_t *keep = calloc(n / 8 + 1, 1);
	uint32_t *map = malloc(n * sizeof(*map));
	assert_non_null(keep);
	assert_non_null(map);
	for (uint32_t i = 0; i < n; i += 3)	/* every third */
		keep[i / 8] |= (uint8_t)(1u << (i % 8));
	strtab__keep(&t, keep, map);
	assert_int_equal(t.count, (n + 2) / 3);
	assert_true(t.len < len_before);
	assert_int_equal(t.cap, cap);
	for (uint32_t i = 0; i < n; i++) {
		int len = snprintf(s, sizeof(s), "string %u%s", i, i % 7 ? "" : " and more");
		if (i % 3) {
			assert_int_equal(map[i], HINDEX_NONE);
			assert_int_equal(strtab__find(&t, s, (size_t)len), HINDEX_NONE);
			continue;
		}
		assert_int_equal(map[i], i / 3);
		assert_string_equal(strtab__str(&t, map[i]), s);
		assert_int_equal(strtab__len(&t, map[i]), len);
		assert_int_equal(strtab__find(&t, s, (size_t)len), map[i]);
	}
	/* one let go comes back as new; the memory kept holds it */
	uint32_t before = t.count;
	assert_int_equal(strtab__intern(&t, "string 1", 8), before);
	assert_int_equal(t.cap, cap);
	/* none kept, then strings again */
	memset(keep, 0, n / 8 + 1);
	strtab__keep(&t, keep, map);
	assert_int_equal(t.count, 0);
	assert_int_equal(strtab__find(&t, "string 0", 8), HINDEX_NONE);
	assert_int_equal(strtab__intern(&t, "string 0", 8), 0);
	/* all kept: the same ids */
	memset(keep, 0xff, n / 8 + 1);
	strtab__keep(&t, keep, map);
	assert_int_equal(map[0], 0);
	assert_int_equal(strtab__find(&t, "string 0", 8), 0);
	free(keep);
	free(map);
	strtab__release(&t);
}

static void pin_and_unpin(void **state)
{
	(void)state;
	struct strtab t;
	strtab__init(&t);
	char name[32];
	for (int i = 0; i < 100; i++)
		assert_int_equal(strtab__intern(&t, name, (size_t)snprintf(name, sizeof(name),
									  "name%d", i)), i);
	if (strtab__pin(&t)) {	/* no room (an address-space limit) */
		strtab__release(&t);
		skip();
	}
	const char *first = strtab__str(&t, 0);
	for (int i = 100; i < 5000; i++)
		assert_int_equal(strtab__intern(&t, name, (size_t)snprintf(name, sizeof(name),
									  "name%d", i)), i);
	assert_ptr_equal(strtab__str(&t, 0), first);	/* never moved */
	assert_int_equal(strtab__count(&t), 5000);
	assert_int_equal(strtab__unpin(&t), 0);
	assert_false(t.pinned);
	assert_string_equal(strtab__str(&t, 4999), "name4999");
	assert_int_equal(strtab__find(&t, "name77", 6), 77);
	assert_int_equal(strtab__intern(&t, "more", 4), 5000);
	assert_string_equal(strtab__str(&t, 0), "name0");
	strtab__release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(intern_and_find),
		cmocka_unit_test(clear_and_again),
		cmocka_unit_test(keep_some),
		cmocka_unit_test(pin_and_unpin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
