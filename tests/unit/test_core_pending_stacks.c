/*
 * core/pending_stacks: a thread's stack rows merged where their stack and
 * account are alike, into the first of each, the order kept. Checked
 * against a plain pairwise merge on random rows with few distinct keys
 * (many alike) and with many, small and large lists, one after another
 * in one table of keys (reused without clearing, grown, its generation
 * wrapped), and that clearing keeps only a small array.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/pending_stacks.h"

/* n random rows merged in p (emptied after), as a plain pairwise merge
 * of them would: p's table of keys is the one its merges before left,
 * whose slots they took free again without being cleared. */
static void merges_as_pairwise(struct pending_stacks *pp, uint32_t n, uint32_t keys,
			       unsigned *seed)
{
	struct pending_stacks p = *pp;
	struct pending_stack *want = calloc(n ? n : 1, sizeof(*want));
	assert_non_null(want);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t stack = (uint32_t)rand_r(seed) % keys;
		/* accounts of the top bit too: the key is both halves */
		uint32_t account = (uint32_t)rand_r(seed) % 3 ? 7 : UINT32_MAX;
		uint64_t s = (uint64_t)rand_r(seed) % 100, c = (uint64_t)rand_r(seed),
			 st = (uint64_t)rand_r(seed) % 1000;
		assert_int_equal(pending_stacks__add(&p, stack, account, s, c, st), 0);
		want[i] = (struct pending_stack){ stack, account, s, c, st, 0 };
	}
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < i; j++)
			if (!want[j].same && want[j].stack == want[i].stack &&
			    want[j].account == want[i].account) {
				want[j].samples += want[i].samples;
				want[j].cpu_ns += want[i].cpu_ns;
				want[j].steal_ns += want[i].steal_ns;
				want[i].same = j + 1;
				break;
			}
	assert_int_equal(pending_stacks__merge(&p), 0);
	assert_int_equal(p.n, n);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(p.v[i].stack, want[i].stack);
		assert_int_equal(p.v[i].account, want[i].account);
		assert_int_equal(p.v[i].same, want[i].same);
		if (!want[i].same) {
			assert_int_equal(p.v[i].samples, want[i].samples);
			assert_int_equal(p.v[i].cpu_ns, want[i].cpu_ns);
			assert_int_equal(p.v[i].steal_ns, want[i].steal_ns);
		}
	}
	pending_stacks__clear(&p);
	*pp = p;
	free(want);
}

static void random_rows(void **state)
{
	(void)state;
	unsigned seed = 42;
	static const uint32_t sizes[] = { 0, 1, 2, 3, 17, 31, 32, 33, 64, 500, 5000 };
	struct pending_stacks p = { 0 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (int round = 0; round < 20; round++) {
			/* a merge's generation about to wrap: its table cleared */
			if (round == 10)
				p.gen = UINT32_MAX - 1;
			merges_as_pairwise(&p, sizes[i], 1 + (uint32_t)round * 3, &seed);
			merges_as_pairwise(&p, sizes[i], sizes[i] * 2 + 1, &seed);	/* few alike */
			/* a large list between small ones: the table grown */
			merges_as_pairwise(&p, sizes[(i + 7) % 11], 40, &seed);
		}
	pending_stacks__release(&p);
}

static void none_alike_none_merged(void **state)
{
	(void)state;
	struct pending_stacks p = { 0 };
	for (uint32_t i = 0; i < 40; i++)
		assert_int_equal(pending_stacks__add(&p, 40 - i, i % 2, 1, 2, 3), 0);
	assert_int_equal(pending_stacks__merge(&p), 0);
	for (uint32_t i = 0; i < 40; i++) {
		assert_int_equal(p.v[i].same, 0);
		assert_int_equal(p.v[i].samples, 1);
	}
	pending_stacks__release(&p);
}

static void cleared_small_kept(void **state)
{
	(void)state;
	struct pending_stacks p = { 0 };
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(pending_stacks__add(&p, i, 0, 1, 1, 1), 0);
	const struct pending_stack *v = p.v;
	pending_stacks__clear(&p);
	assert_int_equal(p.n, 0);
	assert_ptr_equal(p.v, v);
	for (uint32_t i = 0; i < 5000; i++)
		assert_int_equal(pending_stacks__add(&p, i, 0, 1, 1, 1), 0);
	pending_stacks__clear(&p);
	assert_int_equal(p.n, 0);
	assert_null(p.v);	/* 5 000 rows' room let go */
	assert_int_equal(pending_stacks__add(&p, 9, 1, 2, 3, 4), 0);
	assert_int_equal(p.v[0].stack, 9);
	pending_stacks__release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_rows),
		cmocka_unit_test(none_alike_none_merged),
		cmocka_unit_test(cleared_small_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
