/*
 * The collector (analysis/collector.h): collections taken from the
 * engine's state as it runs sum, per thread and account, to the figures
 * the thread ends with, even when an account's share of the thread's
 * time falls as samples come (a row then takes some back).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/collector.h"
#include "core/engine.h"
#include "core/strtab.h"

#define MS 1000000ULL

static struct collector coll;

static int on_program(void *ctx, const struct engine *e, const struct eng_thread *t,
		      const struct eng_figures *f, bool final)
{
	(void)ctx;
	return collector__program(&coll, e, t, f, final);
}

static int on_gone(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	(void)ctx;
	return collector__thread_gone(&coll, e, t);
}

static void push(struct engine *e, struct eng_event ev)
{
	assert_int_equal(engine__push(e, &ev), 0);
}

/* Sums of the rows of the batches so far, per account. */
struct sums {
	int64_t unknown, a;
	uint32_t negative;	/* rows that take back */
	int64_t wait;		/* of the rows whose wait is known */
	uint32_t waits;		/* those rows, in the last batch */
};

/* Thread 10's run_delay as the fake schedstat says it now. */
static uint64_t fake_wait;

static int read_wait(void *ctx, uint32_t pid, uint32_t tid, uint64_t *ns)
{
	(void)ctx;
	assert_int_equal(pid, 10);
	assert_int_equal(tid, 10);
	*ns = fake_wait;
	return 0;
}

static void add_batch(struct sums *s, struct batch *b)
{
	assert_non_null(b);
	s->waits = 0;
	for (uint32_t i = 0; i < b->n; i++) {
		const struct usage *u = &b->rows[i].u;
		s->wait += u->wait_known ? u->wait_ns : 0;
		s->waits += u->wait_known;
		assert_int_equal(b->rows[i].t.tid, 10);
		if (!strcmp(u->account, "[unknown]"))
			s->unknown += u->cpu_ns;
		else if (!strcmp(u->account, "A"))
			s->a += u->cpu_ns;
		else
			fail_msg("account %s", u->account);
		s->negative += u->cpu_ns < 0;
	}
	batch__free(b);
}

/*
 * Thread 10 runs 2 ms unsampled (all [unknown]), is collected, then has a
 * sample in account A and runs 2 ms more: all 4 ms are A's now, so the
 * second collection takes the 2 ms back from [unknown]. It exits; the end
 * collection has nothing more. Sums: A 4 ms, [unknown] 0.
 * Its run-queue wait (read_wait: 1, 3 then 3.5 ms at the three
 * collections) rides on one row a collection, the one of two rows in the
 * second too, and sums to the last figure: 1 + 2 + 0.5 ms.
 */
static void shares_that_fall_are_taken_back(void **state)
{
	(void)state;
	struct strtab names;
	strtab__init(&names);
	uint32_t unknown = strtab__intern(&names, "[unknown]", 9);
	uint32_t a = strtab__intern(&names, "A", 1);
	struct engine_config c = { .method = METHOD_PRECEDING, .mode = STEAL_STINTS,
				   .interval_ns = MS, .ncpus = 1, .unknown_fn = unknown,
				   .scope_all = true };
	struct engine_sink sink = { NULL, on_program, NULL, on_gone };
	struct engine *e = engine__new(&c, &sink);
	assert_non_null(e);
	assert_int_equal(collector__init(&coll, &names, "host", "boot", 0, 0, true), 0);
	coll.read_wait = read_wait;	/* no start snapshot: born since */
	struct sums s = { 0 };
	fake_wait = MS;

	push(e, (struct eng_event){ .kind = EK_FORK, .time = 1, .pid = 10, .tid = 10,
				    .ppid = 1, .ptid = 1 });
	push(e, (struct eng_event){ .kind = EK_SWITCH, .time = 1, .pid = 0, .tid = 10 });
	push(e, (struct eng_event){ .kind = EK_RUNTIME, .time = 2 * MS, .tid = 10,
				    .value = 2 * MS });
	assert_int_equal(engine__advance(e, 2 * MS), 0);
	add_batch(&s, collector__collect(&coll, e, "interval", 1));
	assert_int_equal(s.unknown, 2 * MS);
	assert_int_equal(s.wait, MS);
	assert_int_equal(s.waits, 1);
	fake_wait = 3 * MS;

	push(e, (struct eng_event){ .kind = EK_SAMPLE, .time = 3 * MS, .pid = 10, .tid = 10,
				    .function = a, .dso = NO_DSO, .account = a,
				    .stack = ENGINE_NONE });
	push(e, (struct eng_event){ .kind = EK_RUNTIME, .time = 4 * MS, .tid = 10,
				    .value = 2 * MS });
	assert_int_equal(engine__advance(e, 4 * MS), 0);
	add_batch(&s, collector__collect(&coll, e, "interval", 2));
	assert_int_equal(s.a, 4 * MS);
	assert_int_equal(s.unknown, 0);
	assert_int_equal(s.negative, 1);
	assert_int_equal(s.wait, 3 * MS);
	assert_int_equal(s.waits, 1);	/* of two rows */
	fake_wait = 7 * MS / 2;

	push(e, (struct eng_event){ .kind = EK_EXIT, .time = 5 * MS, .pid = 10, .tid = 10 });
	push(e, (struct eng_event){ .kind = EK_RUNTIME, .time = 5 * MS, .tid = 10,
				    .value = MS });
	push(e, (struct eng_event){ .kind = EK_SWITCH, .time = 5 * MS, .pid = 10, .tid = 0 });
	assert_int_equal(engine__finish(e, 6 * MS), 0);
	add_batch(&s, collector__collect(&coll, e, "end", 3));
	assert_int_equal(s.a, 5 * MS);
	assert_int_equal(s.unknown, 0);
	assert_int_equal(coll.n, 0);	/* the gone thread left */
	assert_int_equal(s.wait, 7 * MS / 2);
	assert_int_equal(s.waits, 1);

	collector__release(&coll);
	engine__free(e);
	strtab__release(&names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shares_that_fall_are_taken_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
