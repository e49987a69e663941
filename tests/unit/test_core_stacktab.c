/*
 * Call stacks as ids (core/stacktab.c): a stack met again has its id;
 * stacks that differ in any frame's function, dso or account, or in
 * length, have their own; frames read back leaf first as given; a frame
 * on many stacks is kept once; a stack deeper than the table's own
 * buffer is kept whole; stacks of frames whose ids no longer fit 2 bytes
 * (over 65 536 distinct frames) read back as given, beside the narrow
 * ones made before, and are found again. Pinned and shared (one thread
 * reads entries in place as another adds): entries never move, ids and
 * frames hold, the lock is taken and let go.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include <pthread.h>

#include "core/stacktab.h"

static void ids_and_frames(void **state)
{
	(void)state;
	struct stacktab t;
	stacktab__init(&t);
	struct stack_frame a[] = { { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } };
	uint32_t abc = stacktab__intern(&t, a, 3);
	uint32_t ab = stacktab__intern(&t, a, 2);
	assert_int_not_equal(abc, HINDEX_NONE);
	assert_int_not_equal(ab, abc);
	assert_int_equal(stacktab__intern(&t, a, 3), abc);
	struct stack_frame b[] = { { 1, 2, 3 }, { 4, 5, 7 }, { 7, 8, 9 } };
	uint32_t other = stacktab__intern(&t, b, 3);	/* one account differs */
	assert_int_not_equal(other, abc);
	assert_int_equal(stacktab__depth(&t, abc), 3);
	assert_int_equal(stacktab__depth(&t, ab), 2);
	for (uint32_t k = 0; k < 3; k++) {
		struct stack_frame f = stacktab__frame(&t, other, k);
		assert_memory_equal(&f, &b[k], sizeof(f));
	}
	/* four distinct frames over the three stacks */
	assert_int_equal(stacktab__nframes(&t), 4);
	struct stack_frame two[2];
	assert_int_equal(stacktab__frames(&t, abc, two, 2), 2);
	assert_memory_equal(two, a, sizeof(two));
	stacktab__release(&t);
}

static void deep(void **state)
{
	(void)state;
	struct stacktab t;
	stacktab__init(&t);
	uint32_t n = 3000;
	struct stack_frame *f = calloc(n, sizeof(*f));
	assert_non_null(f);
	for (uint32_t i = 0; i < n; i++)
		f[i] = (struct stack_frame){ i, i % 7, i % 3 };
	uint32_t id = stacktab__intern(&t, f, n);
	assert_int_not_equal(id, HINDEX_NONE);
	assert_int_equal(stacktab__intern(&t, f, n), id);
	assert_int_equal(stacktab__depth(&t, id), n);
	struct stack_frame last = stacktab__frame(&t, id, n - 1);
	assert_memory_equal(&last, &f[n - 1], sizeof(last));
	free(f);
	stacktab__release(&t);
}

static void wide(void **state)
{
	(void)state;
	struct stacktab t;
	stacktab__init(&t);
	struct stack_frame one[2] = { { 1, 1, 1 }, { 2, 2, 2 } };
	uint32_t narrow = stacktab__intern(&t, one, 2);
	/* 70 000 stacks of three frames, new frames each: ids past 65 535 */
	uint32_t n = 70000, *ids = calloc(n, sizeof(*ids));
	assert_non_null(ids);
	for (uint32_t i = 0; i < n; i++) {
		struct stack_frame f[3] = { { 10 + i, 1, 0 }, { 2, 2, 2 }, { 10 + i, 2, 0 } };
		ids[i] = stacktab__intern(&t, f, 3);
		assert_int_not_equal(ids[i], HINDEX_NONE);
	}
	assert_true(stacktab__nframes(&t) > 65536);
	for (uint32_t i = 0; i < n; i += 997) {
		struct stack_frame f[3] = { { 10 + i, 1, 0 }, { 2, 2, 2 }, { 10 + i, 2, 0 } };
		assert_int_equal(stacktab__intern(&t, f, 3), ids[i]);
		assert_int_equal(stacktab__depth(&t, ids[i]), 3);
		for (uint32_t k = 0; k < 3; k++) {
			struct stack_frame g = stacktab__frame(&t, ids[i], k);
			assert_memory_equal(&g, &f[k], sizeof(g));
		}
	}
	/* the last is wide, the first narrow: each reads back as it was */
	struct stack_frame last = stacktab__frame(&t, ids[n - 1], 2);
	assert_int_equal(last.function, 10 + n - 1);
	assert_true(stacktab__frame_id(&t, ids[n - 1], 2) > UINT16_MAX);
	assert_int_equal(stacktab__intern(&t, one, 2), narrow);
	assert_int_equal(stacktab__depth(&t, narrow), 2);
	struct stack_frame g = stacktab__frame(&t, narrow, 1);
	assert_memory_equal(&g, &one[1], sizeof(g));
	/* a stack of old frames made after the ids grew wide is narrow, and
	 * the same stack as before */
	struct stack_frame again[2] = { { 1, 1, 1 }, { 2, 2, 2 } };
	assert_int_equal(stacktab__intern(&t, again, 2), narrow);
	free(ids);
	stacktab__release(&t);
}

/* Pinned and shared: the stacks made before and after it keep their ids
 * and frames, an entry never moves as more are added (another thread
 * reads it in place), and interns take the lock given. */
static void pinned_shared(void **state)
{
	(void)state;
	struct stacktab t;
	stacktab__init(&t);
	struct stack_frame f[3] = { { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } };
	uint32_t a = stacktab__intern(&t, f, 3);
	if (stacktab__pin(&t)) {	/* no room (an address-space limit) */
		stacktab__release(&t);
		skip();
	}
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	stacktab__share(&t, &lock);
	const struct stack_frame *frames = t.frames;
	const uint8_t *bytes = t.bytes;
	for (uint32_t i = 0; i < 20000; i++) {
		struct stack_frame g[2] = { { i, 1, 1 }, { 7, 8, 9 } };
		assert_int_equal(stacktab__intern(&t, g, 2), a + 1 + i);
	}
	assert_int_equal(stacktab__intern(&t, f, 3), a);
	assert_ptr_equal(t.frames, frames);
	assert_ptr_equal(t.bytes, bytes);
	assert_int_equal(stacktab__depth(&t, a), 3);
	assert_int_equal(stacktab__frame(&t, a, 2).account, 9);
	assert_int_equal(stacktab__frame(&t, a + 20000, 0).function, 19999);
	assert_int_equal(pthread_mutex_trylock(&lock), 0);	/* not left held */
	pthread_mutex_unlock(&lock);
	stacktab__share(&t, NULL);
	stacktab__release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ids_and_frames),
		cmocka_unit_test(deep),
		cmocka_unit_test(wide),
		cmocka_unit_test(pinned_shared),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
