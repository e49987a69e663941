/*
 * The engine fed by the kernel's own clocks (STEAL_GIVEN, core/engine.h):
 * a thread's CPU time and steal come read in EK_CLOCK windows and samples
 * only split them. Checked here: the split of a window's steal among the
 * functions sampled in it (not in earlier windows), its rounding's
 * leftover (to the last of the busiest as the thread first ran them), a
 * window without
 * samples (the function sampled last; "[unknown]" under the bracketed
 * method and for a thread never sampled), a thread's final figures
 * handing it out at once while an exit record alone waits for them, and
 * switches and runtime events beside the clocks not counted twice, and
 * each CPU's steal from its own clock where the source reads one.
 * Times in ms below; the engine works in ns.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/engine.h"

#define MS 1000000ULL

enum { FN_UNKNOWN = 100, FN_F, FN_G };

struct got {
	uint32_t tid, function;
	uint64_t samples, run_ns, steal_ns;
	bool final;
};

static struct got got[64];
static uint32_t ngot, ngone;

static int on_program(void *ctx, const struct engine *e, const struct eng_thread *t,
		      const struct eng_figures *f, bool final)
{
	(void)ctx;
	(void)e;
	assert_true(ngot < 64);
	got[ngot++] = (struct got){ t->tid, f->function, f->samples, f->run_ns, f->steal_ns,
				    final };
	return 0;
}

static int on_gone(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	(void)ctx;
	(void)e;
	(void)t;
	ngone++;
	return 0;
}

static const struct engine_sink sink = { NULL, on_program, NULL, on_gone };

static struct engine *start_with(enum steal_method m, bool cpu_clocks)
{
	struct engine_config c = { .method = m, .mode = STEAL_GIVEN, .interval_ns = 10 * MS,
				   .ncpus = 2, .unknown_fn = FN_UNKNOWN, .scope_all = true,
				   .exit_grace_ns = 3000 * MS, .cpu_clocks = cpu_clocks };
	ngot = ngone = 0;
	struct engine *e = engine__new(&c, &sink);
	assert_non_null(e);
	return e;
}

static struct engine *start(enum steal_method m)
{
	return start_with(m, false);
}

static void push(struct engine *e, struct eng_event ev)
{
	assert_int_equal(engine__push(e, &ev), 0);
}

static void smp(struct engine *e, uint32_t cpu, uint64_t t, uint32_t tid, uint32_t fn)
{
	push(e, (struct eng_event){ .kind = EK_SAMPLE, .time = t * MS, .cpu = cpu, .pid = tid,
				    .tid = tid, .function = fn, .dso = NO_DSO,
				    .account = NO_DSO, .stack = ENGINE_NONE });
}

static void clk(struct engine *e, uint64_t t, uint32_t tid, uint64_t cpu_ms,
		uint64_t steal_ms, bool final)
{
	push(e, (struct eng_event){ .kind = EK_CLOCK, .time = t * MS, .pid = tid, .tid = tid,
				    .value = cpu_ms * MS, .steal = steal_ms * MS,
				    .flags = final ? EF_FINAL : 0 });
}

static const struct got *prog(uint32_t tid, uint32_t fn)
{
	for (uint32_t i = 0; i < ngot; i++)
		if (got[i].tid == tid && got[i].function == fn)
			return &got[i];
	fail_msg("no program of tid %u function %u", tid, fn);
	return NULL;
}

/*
 * Thread 10: window 1 (to 1000 ms) samples F F F G, ran 800 ms, stolen
 * 200 ms; window 2 (to 2000 ms) samples G G, ran 400 ms, stolen 100 ms.
 *   F: samples 3, run 1200 * 3/6 = 600, steal 200 * 3/4 = 150
 *   G: samples 3, run 600, steal 200 * 1/4 + 100 = 150
 * (window 2's steal is G's alone: F was not sampled in it)
 */
static void steal_split_by_window(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING);
	smp(e, 0, 100, 10, FN_F);
	smp(e, 0, 200, 10, FN_F);
	smp(e, 1, 300, 10, FN_F);
	smp(e, 1, 400, 10, FN_G);
	clk(e, 1000, 10, 800, 200, false);
	smp(e, 0, 1100, 10, FN_G);
	smp(e, 0, 1200, 10, FN_G);
	clk(e, 2000, 10, 400, 100, false);
	assert_int_equal(engine__finish(e, 2000 * MS), 0);
	assert_int_equal(prog(10, FN_F)->run_ns, 600 * MS);
	assert_int_equal(prog(10, FN_F)->steal_ns, 150 * MS);
	assert_int_equal(prog(10, FN_G)->run_ns, 600 * MS);
	assert_int_equal(prog(10, FN_G)->steal_ns, 150 * MS);
	const struct engine_stats *st = engine__stats(e);
	assert_int_equal(st->run_ns, 1200 * MS);
	assert_int_equal(st->steal_ns, 300 * MS);
	/* per CPU: on the CPU each window's thread was sampled on last */
	assert_int_equal(engine__cpu(e, 1)->steal_ns, 200 * MS);
	assert_int_equal(engine__cpu(e, 0)->steal_ns, 100 * MS);
	engine__free(e);
}

/*
 * Thread 10 runs F, G, H in window 1, then G and F (in that order) in
 * window 2, stolen 3 ns: 1 ns each, the ns left over to the last of the
 * busiest in the order the thread first ran them (G, not F, sampled last
 * in the window, nor H, not sampled in it).
 */
static void window_leftover_to_last_of_busiest(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING);
	smp(e, 0, 100, 10, FN_F);
	smp(e, 0, 200, 10, FN_G);
	smp(e, 0, 300, 10, FN_UNKNOWN + 10);
	clk(e, 1000, 10, 300, 0, false);
	smp(e, 0, 1100, 10, FN_G);
	smp(e, 0, 1200, 10, FN_F);
	push(e, (struct eng_event){ .kind = EK_CLOCK, .time = 2000 * MS, .pid = 10, .tid = 10,
				    .value = 200 * MS, .steal = 3 });
	assert_int_equal(engine__finish(e, 2000 * MS), 0);
	assert_int_equal(prog(10, FN_F)->steal_ns, 1);
	assert_int_equal(prog(10, FN_G)->steal_ns, 2);
	assert_int_equal(prog(10, FN_UNKNOWN + 10)->steal_ns, 0);
	engine__free(e);
}

/* A window with no sample: its steal to the function sampled last
 * (preceding), or to "[unknown]" (bracketed); a thread never sampled has
 * its time and steal on "[unknown]". */
static void window_without_samples(void **state)
{
	(void)state;
	for (int bracketed = 0; bracketed < 2; bracketed++) {
		struct engine *e = start(bracketed ? METHOD_BRACKETED : METHOD_PRECEDING);
		smp(e, 0, 100, 10, FN_F);
		clk(e, 1000, 10, 500, 0, false);
		clk(e, 2000, 10, 300, 40, false);
		clk(e, 2000, 30, 70, 7, false);
		assert_int_equal(engine__finish(e, 2000 * MS), 0);
		assert_int_equal(prog(10, FN_F)->run_ns, 800 * MS);
		if (bracketed) {
			assert_int_equal(prog(10, FN_F)->steal_ns, 0);
			assert_int_equal(prog(10, FN_UNKNOWN)->steal_ns, 40 * MS);
		} else {
			assert_int_equal(prog(10, FN_F)->steal_ns, 40 * MS);
		}
		assert_int_equal(prog(30, FN_UNKNOWN)->run_ns, 70 * MS);
		assert_int_equal(prog(30, FN_UNKNOWN)->steal_ns, 7 * MS);
		engine__free(e);
	}
}

/* Thread 20 exits at 1500 ms; its final figures come with the read at
 * 2000 ms: it is handed out then, whole, not at its exit record; thread 21
 * is handed out at its final clock with no exit record at all. */
static void final_figures_hand_out(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING);
	smp(e, 0, 100, 20, FN_F);
	clk(e, 1000, 20, 100, 0, false);
	push(e, (struct eng_event){ .kind = EK_EXIT, .time = 1500 * MS, .pid = 20, .tid = 20 });
	smp(e, 1, 1600, 21, FN_G);
	assert_int_equal(engine__advance(e, 1900 * MS), 0);
	assert_int_equal(ngone, 0);
	clk(e, 2000, 20, 50, 5, true);
	clk(e, 2000, 21, 30, 0, true);
	assert_int_equal(engine__advance(e, 2000 * MS), 0);
	assert_int_equal(ngone, 2);
	assert_int_equal(prog(20, FN_F)->run_ns, 150 * MS);
	assert_int_equal(prog(20, FN_F)->steal_ns, 5 * MS);
	assert_true(prog(20, FN_F)->final);
	assert_int_equal(prog(21, FN_G)->run_ns, 30 * MS);
	assert_int_equal(engine__stats(e)->threads_live, 0);
	assert_int_equal(engine__finish(e, 2000 * MS), 0);
	engine__free(e);
}

static void cpu_clk(struct engine *e, uint64_t t, uint32_t cpu, uint64_t steal_ms)
{
	push(e, (struct eng_event){ .kind = EK_CPU_CLOCK, .time = t * MS, .cpu = cpu,
				    .steal = steal_ms * MS });
}

/*
 * steal_split_by_window's thread, where the source also reads each CPU's
 * steal clock: window 1's 200 ms were 150 on CPU 0 and 50 on CPU 1 (the
 * thread ran on both, sampled on CPU 1 last), window 2's 100 were 60 and
 * 40. The functions' steal is the thread's, as before; each CPU's is its
 * own clock's, in the totals and in the series by second, where without
 * the CPUs' clocks CPU 1 had all of window 1 and CPU 0 all of window 2
 * (and a CPU clock, where the engine is not told of them, counts
 * nowhere).
 */
static void cpu_steal_from_cpu_clocks(void **state)
{
	(void)state;
	for (int with = 0; with < 2; with++) {
		struct engine *e = start_with(METHOD_PRECEDING, with);
		smp(e, 0, 100, 10, FN_F);
		smp(e, 0, 200, 10, FN_F);
		smp(e, 1, 300, 10, FN_F);
		smp(e, 1, 400, 10, FN_G);
		clk(e, 1000, 10, 800, 200, false);
		cpu_clk(e, 1000, 0, 150);
		cpu_clk(e, 1000, 1, 50);
		smp(e, 0, 1100, 10, FN_G);
		smp(e, 0, 1200, 10, FN_G);
		clk(e, 2000, 10, 400, 100, false);
		cpu_clk(e, 2000, 0, 60);
		cpu_clk(e, 2000, 1, 40);
		assert_int_equal(engine__finish(e, 2000 * MS), 0);
		assert_int_equal(prog(10, FN_F)->steal_ns, 150 * MS);
		assert_int_equal(prog(10, FN_G)->steal_ns, 150 * MS);
		assert_int_equal(engine__stats(e)->steal_ns, 300 * MS);
		assert_int_equal(engine__cpu(e, 0)->steal_ns, (with ? 210 : 100) * MS);
		assert_int_equal(engine__cpu(e, 1)->steal_ns, (with ? 90 : 200) * MS);
		/* the series: each read's steal in the bucket of its time (the
		 * first read's at 1000 ms starts them: samples add no time
		 * here), on its CPU */
		const struct eng_series *sr = engine__series(e);
		assert_int_equal(sr->bucket_ns, 1000 * MS);
		uint64_t want[2][2] = { { with ? 150 : 0, with ? 50 : 200 },
					{ with ? 60 : 100, with ? 40 : 0 } };
		for (uint32_t r = 0; r < 2; r++) {
			uint64_t at = (1000 + 1000 * r) * MS;
			assert_true(at >= sr->origin_ns);
			uint32_t b = (uint32_t)((at - sr->origin_ns) / sr->bucket_ns);
			assert_true(b < sr->nbuckets);
			for (uint32_t c = 0; c < 2; c++)
				assert_int_equal(sr->steal_ns[b * sr->ncpus + c], want[r][c] * MS);
		}
		engine__free(e);
	}
}

/* Switches and runtime events beside the clocks (a source that gives
 * both) change nothing: the time is the clocks'. */
static void switches_not_counted_twice(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING);
	push(e, (struct eng_event){ .kind = EK_SWITCH, .time = 10 * MS, .pid = 0, .tid = 10 });
	smp(e, 0, 100, 10, FN_F);
	push(e, (struct eng_event){ .kind = EK_RUNTIME, .time = 500 * MS, .tid = 10,
				    .value = 490 * MS });
	push(e, (struct eng_event){ .kind = EK_SWITCH, .time = 500 * MS, .pid = 10, .tid = 0 });
	clk(e, 1000, 10, 400, 90, false);
	assert_int_equal(engine__finish(e, 1000 * MS), 0);
	assert_int_equal(prog(10, FN_F)->run_ns, 400 * MS);
	assert_int_equal(prog(10, FN_F)->steal_ns, 90 * MS);
	assert_int_equal(engine__stats(e)->run_ns, 400 * MS);
	engine__free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(steal_split_by_window),
		cmocka_unit_test(window_leftover_to_last_of_busiest),
		cmocka_unit_test(window_without_samples),
		cmocka_unit_test(final_figures_hand_out),
		cmocka_unit_test(switches_not_counted_twice),
		cmocka_unit_test(cpu_steal_from_cpu_clocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
