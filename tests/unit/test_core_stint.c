/*
 * The live steal engine (core/stint.c) on synthetic events: exact steal
 * per stint, bias calibration, runtime raised on another CPU, placement
 * among functions by method, a recording that starts mid-stint.
 * Times in µs below; the engine works in ns.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/stint.h"
#include "core/table.h"

#define US 1000ULL
#define MS 1000000ULL

static struct live l;
static uint32_t fn_f, fn_g;

static void start(enum steal_method m, uint32_t ncpus)
{
	assert_int_equal(live__init(&l, m, MS, ncpus, "host"), 0);
	fn_f = live__string(&l, "F", 1);
	fn_g = live__string(&l, "G", 1);
}

static void sw(uint16_t cpu, uint64_t t, uint32_t prev, uint32_t next)
{
	struct live_event e = { .time_ns = t, .a = prev, .b = next, .cpu = cpu,
				.kind = LIVE_SWITCH };
	assert_int_equal(live__add(&l, &e), 0);
}

static void rt(uint16_t cpu, uint64_t t, uint32_t tid, uint64_t ns)
{
	struct live_event e = { .time_ns = t, .value = ns, .a = tid, .cpu = cpu,
				.kind = LIVE_RUNTIME };
	assert_int_equal(live__add(&l, &e), 0);
}

static void smp(uint16_t cpu, uint64_t t, uint32_t pid, uint32_t tid,
		uint64_t period, uint32_t fn)
{
	struct live_event e = { .time_ns = t, .value = period, .a = pid, .b = tid,
				.function = fn, .dso = NO_DSO, .account = NO_DSO, .cpu = cpu,
				.kind = LIVE_SAMPLE };
	assert_int_equal(live__add(&l, &e), 0);
}

static const struct program *prog(uint32_t tid, uint32_t fn)
{
	for (uint32_t i = 0; i < l.nprogs; i++)
		if (l.progs[i].tid == tid && l.progs[i].function == fn)
			return &l.progs[i];
	fail_msg("no program tid %u", tid);
	return NULL;
}

/*
 * CPU 0: thread 10 (pid 10) runs 0-12 ms, with 3 ms stolen between 8 and
 * 11 ms; thread 20 runs 12-14; 10 again 14-16.
 *   stints: 10 [0,12) runtime 9 ms -> residual 3 ms
 *           20 [12,14) runtime 2 ms -> 0;   10 [14,16) runtime 2 ms -> 0
 *   bias: too few stints to calibrate, so 0
 * Samples of 10: F at 1..8 ms, F at 12 ms (a 3 ms gap beyond the interval:
 * preceding puts it on F), G at 15 ms. Residual and gaps agree: 3 ms.
 * Expected: thread 10 cpu 11 ms, steal 3 ms, all on F; thread 20 cpu 2 ms.
 */
static void exact_stint_steal(void **state)
{
	(void)state;
	start(METHOD_PRECEDING, 1);
	sw(0, 0, 0, 10);
	for (uint64_t t = 1; t <= 8; t++)
		smp(0, t * MS, 10, 10, MS, fn_f);
	rt(0, 4 * MS, 10, 4 * MS);
	rt(0, 8 * MS, 10, 4 * MS);
	smp(0, 12 * MS, 10, 10, 4 * MS, fn_f);
	rt(0, 12 * MS - 1, 10, 1 * MS);
	sw(0, 12 * MS, 10, 20);
	rt(0, 14 * MS - 1, 20, 2 * MS);
	sw(0, 14 * MS, 20, 10);
	smp(0, 15 * MS, 10, 10, MS, fn_g);
	rt(0, 16 * MS - 1, 10, 2 * MS);
	sw(0, 16 * MS, 10, 0);
	assert_int_equal(live__finish(&l), 0);

	assert_int_equal(l.bias_ns, 0);
	assert_int_equal(l.steal_ns, 3 * MS);
	assert_int_equal(l.cpus[0].steal_ns, 3 * MS);
	assert_int_equal(l.run_ns, 13 * MS);
	/* 10 F samples of 11: 11 ms * 9/10 = 9.9 ms, G 1.1 ms */
	assert_int_equal(prog(10, fn_f)->run_ns, 9900 * US);
	assert_int_equal(prog(10, fn_g)->run_ns, 1100 * US);
	assert_int_equal(prog(10, fn_f)->steal_ns, 3 * MS);
	assert_int_equal(prog(10, fn_f)->steal_samples, 1);
	assert_int_equal(prog(10, fn_g)->steal_ns, 0);
	assert_int_equal(prog(20, l.unknown_fn)->run_ns, 2 * MS);

	struct table_input in;
	live__table_input(&l, &in);
	struct table *t = table__build(&in, BY_THREAD);
	assert_int_equal(t->nrows, 2);
	assert_int_equal(t->rows[0].tid, 10);
	assert_int_equal(t->rows[0].cpu_ns, 11 * MS);
	assert_int_equal(t->rows[0].steal_ns, 3 * MS);
	assert_int_equal(t->rows[0].apparent_ns, 14 * MS);
	assert_string_equal(t->rows[0].vm, "host");
	table__free(t);
	live__release(&l);
}

/* Bracketed places the gap only when the same function is sampled on
 * both sides; here G follows F, so the 3 ms stays "[unknown]". */
static void bracketed_leaves_switch(void **state)
{
	(void)state;
	start(METHOD_BRACKETED, 1);
	sw(0, 0, 0, 10);
	smp(0, 1 * MS, 10, 10, MS, fn_f);
	smp(0, 5 * MS, 10, 10, 4 * MS, fn_g);
	rt(0, 5 * MS, 10, 2 * MS);
	sw(0, 5 * MS, 10, 0);
	assert_int_equal(live__finish(&l), 0);
	assert_int_equal(l.steal_ns, 3 * MS);
	assert_int_equal(prog(10, fn_f)->steal_ns, 0);
	assert_int_equal(prog(10, fn_g)->steal_ns, 0);
	assert_int_equal(prog(10, l.unknown_fn)->steal_ns, 3 * MS);
	live__release(&l);
}

/*
 * The switch path adds 5 µs to every stint: 20 stints of 1 ms with
 * runtime 995 µs, one of which also lost 2 ms. The first quartile of the
 * residuals is the bias; the steal is exactly 2 ms, no other stint charged.
 */
static void bias_calibrated(void **state)
{
	(void)state;
	start(METHOD_PRECEDING, 1);
	uint64_t t = 0;
	for (uint32_t i = 0; i < 20; i++) {
		uint32_t tid = 100 + i % 2;
		uint64_t len = i == 7 ? 3 * MS : MS;
		sw(0, t, i ? 100 + (i - 1) % 2 : 0, tid);
		rt(0, t + len - 1, tid, 995 * US);
		t += len;
	}
	sw(0, t, 101, 0);
	assert_int_equal(live__finish(&l), 0);
	assert_int_equal(l.bias_ns, 5 * US);
	assert_int_equal(l.steal_ns, 2 * MS);
	const struct live_thread *th = NULL;
	for (uint32_t i = 0; i < l.nthreads; i++)
		if (l.threads[i].tid == 101)
			th = &l.threads[i];
	assert_non_null(th);
	assert_int_equal(th->cpu_ns, 10 * 995 * US);
	assert_int_equal(prog(101, l.unknown_fn)->steal_ns, 2 * MS);
	live__release(&l);
}

/*
 * Runtime the tracepoint did not report (the kernel updated the thread's
 * runtime at a switch without raising it): the residual says 2 ms, but the
 * samples came every millisecond, so there was no steal.
 *   10 runs 0-10 ms, sampled at 1..10; runtime events total 8 ms.
 */
static void lost_runtime_is_not_steal(void **state)
{
	(void)state;
	start(METHOD_PRECEDING, 1);
	sw(0, 0, 0, 10);
	for (uint64_t t = 1; t <= 10; t++)
		smp(0, t * MS, 10, 10, MS, fn_f);
	rt(0, 4 * MS, 10, 4 * MS);
	rt(0, 8 * MS, 10, 4 * MS);
	sw(0, 10 * MS, 10, 0);
	assert_int_equal(live__finish(&l), 0);
	assert_int_equal(l.steal_ns, 0);
	live__release(&l);
}

/*
 * Noise: 40 stints of 1 ms whose residuals scatter +-12 us around 0 (the
 * tracepoint and scheduler clocks read apart), and one stint that lost
 * 500 us, with its sample 500 us late. Only the 500 us is steal.
 */
static void noise_is_not_steal(void **state)
{
	(void)state;
	start(METHOD_PRECEDING, 1);
	uint64_t t = 0;
	for (uint32_t i = 0; i < 41; i++) {
		uint32_t tid = 100 + i % 2;
		bool stolen = i == 20;
		uint64_t len = stolen ? 1500 * US : MS;
		uint64_t runtime = stolen ? MS : (i % 2 ? MS + 12 * US : MS - 12 * US);
		sw(0, t, i ? 100 + (i - 1) % 2 : 0, tid);
		smp(0, t + len - 1, tid, tid, MS, fn_f);
		rt(0, t + len - 1, tid, runtime);
		t += len;
	}
	sw(0, t, 100, 0);
	assert_int_equal(live__finish(&l), 0);
	assert_true(l.noise_ns >= (int64_t)(20 * US));
	assert_int_equal(l.steal_ns, 500 * US - (uint64_t)l.bias_ns);
	assert_true(l.bias_ns >= -12 * (int64_t)US && l.bias_ns <= 12 * (int64_t)US);
	live__release(&l);
}

/*
 * A runtime event for thread 10 raised on CPU 1 (someone read its
 * runtime) while 10 runs on CPU 0 still counts in 10's stint: no false
 * steal on CPU 0, none on CPU 1.
 */
static void runtime_from_other_cpu(void **state)
{
	(void)state;
	start(METHOD_PRECEDING, 2);
	sw(0, 0, 0, 10);
	sw(1, 0, 0, 20);
	rt(0, 3 * MS, 10, 3 * MS);
	rt(1, 4 * MS, 10, 1 * MS);	/* raised on CPU 1 */
	rt(1, 5 * MS, 20, 5 * MS);
	rt(0, 6 * MS, 10, 2 * MS);
	sw(0, 6 * MS, 10, 0);
	sw(1, 5 * MS, 20, 0);
	assert_int_equal(live__finish(&l), 0);
	assert_int_equal(l.steal_ns, 0);
	assert_int_equal(l.unmatched_runtime_ns, 0);
	assert_int_equal(l.cpus[0].stints, 1);
	assert_int_equal(l.cpus[1].stints, 1);
	live__release(&l);
}

/* Recording began while 10 was running: its stint is measured from its
 * first runtime event, and closed at its last, where runtime is exact. */
/*
 * CPU 0: thread 10 runs 0-12 ms, nothing stolen; the kernel drops the
 * CPU's records from 4 to 8 ms (a runtime event and four samples) and
 * says so at 8 ms. The 4 ms missing runtime and the 4 ms sample gap look
 * just like steal, unless the loss is known: then the stint is not
 * measured at all.
 */
static void lost_records_are_not_steal(void **state)
{
	(void)state;
	for (int told = 0; told <= 1; told++) {
		start(METHOD_PRECEDING, 1);
		sw(0, 0, 0, 10);
		for (uint64_t t = 1; t <= 12; t++)
			if (t <= 4 || t > 8)
				smp(0, t * MS, 10, 10, MS, fn_f);
		rt(0, 4 * MS, 10, 4 * MS);
		rt(0, 12 * MS, 10, 4 * MS);	/* the one at 8 ms was lost */
		sw(0, 12 * MS, 10, 0);
		if (told) {
			struct live_event e = { .time_ns = 8 * MS + 10, .value = 4 * MS,
						.cpu = 0, .kind = LIVE_LOST };
			assert_int_equal(live__add(&l, &e), 0);
		}
		assert_int_equal(live__finish(&l), 0);
		assert_int_equal(l.steal_ns, told ? 0 : 4 * MS);
		assert_int_equal(l.lossy_stints, told ? 1 : 0);
		live__release(&l);
	}
}

static void starts_and_ends_mid_stint(void **state)
{
	(void)state;
	start(METHOD_PRECEDING, 1);
	rt(0, 2 * MS, 10, 4 * MS);	/* covers time before the recording */
	rt(0, 6 * MS, 10, 4 * MS);
	rt(0, 12 * MS, 10, 4 * MS);	/* 6 to 12: 2 ms stolen */
	assert_int_equal(live__finish(&l), 0);
	assert_int_equal(l.steal_ns, 2 * MS);
	assert_int_equal(l.run_ns, 12 * MS);
	live__release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_stint_steal),
		cmocka_unit_test(bracketed_leaves_switch),
		cmocka_unit_test(bias_calibrated),
		cmocka_unit_test(runtime_from_other_cpu),
		cmocka_unit_test(lost_runtime_is_not_steal),
		cmocka_unit_test(noise_is_not_steal),
		cmocka_unit_test(lost_records_are_not_steal),
		cmocka_unit_test(starts_and_ends_mid_stint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
