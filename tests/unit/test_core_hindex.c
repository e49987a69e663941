/*
 * hindex: ids found by their keys after any mix of inserts and removals
 * (removal shifts later entries of a probe run back; it must never lose
 * one), with keys chosen so that many share a start slot.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "core/grow.h"
#include "core/hindex.h"

enum { N = 5000 };
static uint64_t keys[N];
static bool present[N];

static bool eq(const void *ctx, uint32_t id)
{
	return keys[id] == *(const uint64_t *)ctx;
}

/* Few distinct start slots: long runs to shift through. */
static uint64_t hash_of(uint64_t key)
{
	return hash_mix(key % 97) << 32 | hash_mix(key);
}

static void check_all(const struct hindex *h)
{
	for (uint32_t i = 0; i < N; i++) {
		uint32_t got = hindex__find(h, hash_of(keys[i]), eq, &keys[i]);
		assert_int_equal(got, present[i] ? i : HINDEX_NONE);
	}
}

static void insert_remove_find(void **state)
{
	(void)state;
	struct hindex h;
	hindex__init(&h);
	srand(7);
	for (uint32_t i = 0; i < N; i++)
		keys[i] = (uint64_t)i * 7919 + 13;
	for (int round = 0; round < 6; round++) {
		for (uint32_t i = 0; i < N; i++) {
			bool want = rand() % 3 != 0;
			if (want && !present[i])
				assert_int_equal(hindex__insert(&h, hash_of(keys[i]), i), 0);
			else if (!want && present[i])
				assert_true(hindex__remove(&h, hash_of(keys[i]), i));
			present[i] = want;
		}
		check_all(&h);
	}
	assert_false(hindex__remove(&h, hash_of(12345678), 4999 + 1));
	hindex__release(&h);
}

/* A small index starts with the slots asked for, grows from there, and
 * once let go starts again from every index's first (64). */
static void small_first(void **state)
{
	(void)state;
	struct hindex h;
	hindex__init_small(&h, 8);
	for (uint32_t i = 0; i < N; i++)
		keys[i] = (uint64_t)i * 7919 + 13;
	assert_int_equal(hindex__insert(&h, hash_of(keys[0]), 0), 0);
	assert_int_equal(h.mask + 1, 8);
	for (uint32_t i = 1; i < 100; i++)
		assert_int_equal(hindex__insert(&h, hash_of(keys[i]), i), 0);
	assert_int_equal(h.mask + 1, 256);	/* kept at most 3/4 full */
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(hindex__find(&h, hash_of(keys[i]), eq, &keys[i]),
				 i < 100 ? i : HINDEX_NONE);
	hindex__release(&h);
	assert_int_equal(hindex__insert(&h, hash_of(keys[0]), 0), 0);
	assert_int_equal(h.mask + 1, 64);
	hindex__release(&h);
}

/* Emptied, a small index keeps its slots and a large one lets them go;
 * either finds nothing after, and takes entries again. */
static void empty_small_and_large(void **state)
{
	(void)state;
	struct hindex h;
	hindex__init(&h);
	for (uint32_t i = 0; i < N; i++)
		keys[i] = (uint64_t)i * 104729 + 5;
	for (uint32_t i = 0; i < 20; i++)
		assert_int_equal(hindex__insert(&h, hash_of(keys[i]), i), 0);
	const uint64_t *slots = h.slots;
	hindex__empty(&h, 128);
	assert_ptr_equal(h.slots, slots);	/* 64 slots: kept */
	assert_int_equal(h.count, 0);
	for (uint32_t i = 0; i < 20; i++)
		assert_int_equal(hindex__find(&h, hash_of(keys[i]), eq, &keys[i]), HINDEX_NONE);
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(hindex__insert(&h, hash_of(keys[i]), i), 0);
	hindex__empty(&h, 128);
	assert_null(h.slots);			/* 2048 slots: let go */
	assert_int_equal(h.count, 0);
	assert_int_equal(hindex__find(&h, hash_of(keys[3]), eq, &keys[3]), HINDEX_NONE);
	assert_int_equal(hindex__insert(&h, hash_of(keys[3]), 3), 0);
	assert_int_equal(h.mask + 1, 64);
	assert_int_equal(hindex__find(&h, hash_of(keys[3]), eq, &keys[3]), 3);
	hindex__release(&h);
}

/*
 * A table indexed by ids (grow_array_to): each index met holds, every
 * element not yet set reads zero, whatever order the ids come in; past
 * its first elements it grows by an eighth (not twice), or to the index
 * met and an eighth more.
 */
static void grow_to_zeroed(void **state)
{
	(void)state;
	uint32_t *v = NULL, cap = 0;
	assert_int_equal(grow_array_to((void **)&v, &cap, 5, sizeof(*v), 64), 0);
	assert_int_equal(cap, 64);
	for (uint32_t i = 0; i < cap; i++)
		assert_int_equal(v[i], 0);
	v[5] = 55;
	for (uint32_t id = 0; id < 5000; id++) {	/* one after another */
		uint32_t was = cap;
		assert_int_equal(grow_array_to((void **)&v, &cap, id, sizeof(*v), 64), 0);
		assert_true(cap > id);
		assert_true(cap == was || cap == was + was / 8);
		assert_int_equal(v[id], id == 5 ? 55 : 0);
		v[id] = id == 5 ? 55 : id + 1;
	}
	uint32_t was = cap;
	assert_int_equal(grow_array_to((void **)&v, &cap, 100000, sizeof(*v), 64), 0);
	assert_int_equal(cap, 100000 + 1 + 100000 / 8);	/* far past it */
	for (uint32_t i = 0; i < cap; i++)
		assert_int_equal(v[i], i == 5 ? 55 : i < was && i < 5000 ? i + 1 : 0);
	assert_int_equal(grow_array_to((void **)&v, &cap, UINT32_MAX - 1, sizeof(*v), 64),
			 -ENOMEM);
	assert_int_equal(cap, 100000 + 1 + 100000 / 8);	/* as it was */
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(insert_remove_find),
		cmocka_unit_test(small_first),
		cmocka_unit_test(empty_small_and_large),
		cmocka_unit_test(grow_to_zeroed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
