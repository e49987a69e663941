/*
 * The streaming engine (core/engine.h) on synthetic events: exact steal
 * per stint, bias calibration, runtime raised on another CPU, placement
 * among functions by method, a recording that starts mid-stint, lost
 * records; and what streaming adds: any interleaving of the per-CPU
 * streams gives the same result (and so does a stream out of order), an exited thread is handed out and
 * forgotten, a tid given again is a new thread, idle time is the idle
 * task's, and the rolling calibration of a long run; and what the kernel
 * leaves out: switches it does not report, a thread's last runtime after
 * its exit record; a thread's stacks and programs found by their ids
 * whoever had them last.
 * Times in ms below; the engine works in ns.
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

#include "core/engine.h"

#define US 1000ULL
#define MS 1000000ULL

enum { FN_UNKNOWN = 100, FN_F, FN_G };

/* What the sink was handed. */
struct got {
	uint32_t pid, tid, function, account;
	uint64_t samples, steal_samples, run_ns, steal_ns;
	bool final;
	uint64_t proc_start, thread_start;	/* the process's and thread's */
};

static struct got got[256];
static uint32_t ngot, ngone;
static struct eng_event evs[32768];
static uint32_t nevs;

static int on_program(void *ctx, const struct engine *e, const struct eng_thread *t,
		      const struct eng_figures *f, bool final)
{
	(void)ctx;
	assert_true(ngot < 256);
	got[ngot++] = (struct got){ engine__proc(e, t->proc)->pid, t->tid, f->function,
				    f->account, f->samples, f->steal_samples, f->run_ns,
				    f->steal_ns, final, engine__proc(e, t->proc)->start_ns,
				    t->start_ns };
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

/* An engine of config c, nothing got from it yet, no events added. */
static struct engine *start_config(const struct engine_config *c)
{
	ngot = ngone = nevs = 0;
	struct engine *e = engine__new(c, &sink);
	assert_non_null(e);
	return e;
}

static struct engine *start(enum steal_method m, uint32_t ncpus)
{
	struct engine_config c = { .method = m, .mode = STEAL_STINTS, .interval_ns = MS,
				   .ncpus = ncpus, .unknown_fn = FN_UNKNOWN,
				   .scope_all = true };
	return start_config(&c);
}

/* An engine told what the kernel's runtime holds, and whether each CPU's
 * steal is the kernel's (scaled). */
static struct engine *start_acct(enum steal_accounting acct, bool scale)
{
	struct engine_config c = { .method = METHOD_PRECEDING, .mode = STEAL_STINTS,
				   .interval_ns = MS, .ncpus = 1, .unknown_fn = FN_UNKNOWN,
				   .scope_all = true, .accounting = acct,
				   .scale_to_kernel = scale };
	return start_config(&c);
}

static void add(struct eng_event ev)
{
	assert_true(nevs < 32768);
	evs[nevs++] = ev;
}

static void sw(uint32_t cpu, uint64_t t, uint32_t prev, uint32_t next)
{
	add((struct eng_event){ .kind = EK_SWITCH, .time = t, .cpu = cpu, .pid = prev,
				.tid = next });
}

static void rt(uint32_t cpu, uint64_t t, uint32_t tid, uint64_t ns)
{
	add((struct eng_event){ .kind = EK_RUNTIME, .time = t, .cpu = cpu, .tid = tid,
				.value = ns });
}

static void smp(uint32_t cpu, uint64_t t, uint32_t pid, uint32_t tid, uint32_t fn)
{
	add((struct eng_event){ .kind = EK_SAMPLE, .time = t, .cpu = cpu, .pid = pid,
				.tid = tid, .function = fn, .dso = NO_DSO,
				.account = NO_DSO, .stack = ENGINE_NONE });
}

static void ex(uint32_t cpu, uint64_t t, uint32_t pid, uint32_t tid)
{
	add((struct eng_event){ .kind = EK_EXIT, .time = t, .cpu = cpu, .pid = pid, .tid = tid });
}

/* Pushes the events in the order added and finishes. */
static void run_all(struct engine *e, uint64_t end)
{
	for (uint32_t i = 0; i < nevs; i++)
		assert_int_equal(engine__push(e, &evs[i]), 0);
	assert_int_equal(engine__finish(e, end), 0);
}

static const struct got *prog(uint32_t tid, uint32_t fn)
{
	for (uint32_t i = 0; i < ngot; i++)
		if (got[i].tid == tid && got[i].function == fn)
			return &got[i];
	fail_msg("no program of tid %u function %u", tid, fn);
	return NULL;
}

/* A thread's cpu (steal false) or steal, summed over its programs. */
static uint64_t thread_sum(uint32_t tid, bool steal)
{
	uint64_t ns = 0;
	for (uint32_t i = 0; i < ngot; i++)
		if (got[i].tid == tid)
			ns += steal ? got[i].steal_ns : got[i].run_ns;
	return ns;
}

static uint64_t thread_cpu(uint32_t tid)
{
	return thread_sum(tid, false);
}

static uint64_t thread_steal(uint32_t tid)
{
	return thread_sum(tid, true);
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
 *
 *   tid function samples   run_ns  steal_ns
 *    10 F             9    9.9 ms      3 ms
 *    10 G             1    1.1 ms      0
 *    20 [unknown]     0      2 ms      0
 */
static void exact_stint_steal(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING, 1);
	sw(0, 0, 0, 10);
	for (uint64_t t = 1; t <= 8; t++)
		smp(0, t * MS, 10, 10, FN_F);
	rt(0, 4 * MS, 10, 4 * MS);
	rt(0, 8 * MS, 10, 4 * MS);
	smp(0, 12 * MS, 10, 10, FN_F);
	rt(0, 12 * MS, 10, 1 * MS);	/* raised as it leaves */
	sw(0, 12 * MS, 10, 20);
	rt(0, 14 * MS, 20, 2 * MS);
	sw(0, 14 * MS, 20, 10);
	smp(0, 15 * MS, 10, 10, FN_G);
	rt(0, 16 * MS, 10, 2 * MS);
	sw(0, 16 * MS, 10, 0);
	run_all(e, 16 * MS);

	const struct engine_stats *st = engine__stats(e);
	assert_int_equal(st->bias_ns, 0);
	assert_int_equal(st->steal_ns, 3 * MS);
	assert_int_equal(engine__cpu(e, 0)->steal_ns, 3 * MS);
	assert_int_equal(st->run_ns, 13 * MS);
	assert_int_equal(prog(10, FN_F)->run_ns, 9900 * US);
	assert_int_equal(prog(10, FN_G)->run_ns, 1100 * US);
	assert_int_equal(prog(10, FN_F)->steal_ns, 3 * MS);
	assert_int_equal(prog(10, FN_F)->steal_samples, 1);
	assert_int_equal(prog(10, FN_G)->steal_ns, 0);
	assert_int_equal(prog(20, FN_UNKNOWN)->run_ns, 2 * MS);
	assert_int_equal(ngot, 3);
	assert_int_equal(ngone, 2);
	engine__free(e);
}

/* Bracketed places the gap only when the same function is sampled on
 * both sides; here G follows F, so the 3 ms stays "[unknown]". */
static void bracketed_leaves_switch(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_BRACKETED, 1);
	sw(0, 0, 0, 10);
	smp(0, 1 * MS, 10, 10, FN_F);
	smp(0, 5 * MS, 10, 10, FN_G);
	rt(0, 5 * MS, 10, 2 * MS);
	sw(0, 5 * MS, 10, 0);
	run_all(e, 5 * MS);
	assert_int_equal(engine__stats(e)->steal_ns, 3 * MS);
	assert_int_equal(prog(10, FN_F)->steal_ns, 0);
	assert_int_equal(prog(10, FN_G)->steal_ns, 0);
	assert_int_equal(prog(10, FN_UNKNOWN)->steal_ns, 3 * MS);
	engine__free(e);
}

/*
 * The switch path adds 5 us to every stint: 20 stints of 1 ms with
 * runtime 995 us, one of which also lost 2 ms. The median of the
 * residuals is the bias; the steal is exactly 2 ms, no other stint charged.
 */
static void bias_calibrated(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING, 1);
	uint64_t t = 0;
	for (uint32_t i = 0; i < 20; i++) {
		uint32_t tid = 100 + i % 2;
		uint64_t len = i == 7 ? 3 * MS : MS;
		sw(0, t, i ? 100 + (i - 1) % 2 : 0, tid);
		rt(0, t + len - 1, tid, 995 * US);
		t += len;
	}
	sw(0, t, 101, 0);
	run_all(e, t);
	assert_int_equal(engine__stats(e)->bias_ns, 5 * US);
	assert_int_equal(engine__stats(e)->steal_ns, 2 * MS);
	assert_int_equal(thread_cpu(101), 10 * 995 * US);
	assert_int_equal(prog(101, FN_UNKNOWN)->steal_ns, 2 * MS);
	engine__free(e);
}

/*
 * Steal in episodes shorter than the sampling interval covers no sample's
 * time: the samples came every millisecond, yet the residual says 2 ms.
 * Where runtime excludes steal that is steal (the kernel lost nothing:
 * a loss is a LOST record, lossy_stint below), placed on the function
 * sampled last, as the preceding method would.
 */
/* Thread 10 on CPU 0 from 0 to 10 ms, sampled in F every millisecond,
 * its first 4 ms of runtime raised at 4 ms. */
static struct engine *sampled_ten_ms(void)
{
	struct engine *e = start(METHOD_PRECEDING, 1);
	sw(0, 0, 0, 10);
	for (uint64_t t = 1; t <= 10; t++)
		smp(0, t * MS, 10, 10, FN_F);
	rt(0, 4 * MS, 10, 4 * MS);
	return e;
}

static void steal_between_samples_counts(void **state)
{
	(void)state;
	struct engine *e = sampled_ten_ms();
	rt(0, 8 * MS, 10, 3 * MS);
	rt(0, 10 * MS, 10, 1 * MS);
	sw(0, 10 * MS, 10, 0);
	run_all(e, 10 * MS);
	assert_int_equal(engine__stats(e)->steal_ns, 2 * MS);
	assert_int_equal(prog(10, FN_F)->steal_ns, 2 * MS);
	engine__free(e);
}

/*
 * Noise: 40 stints of 1 ms whose residuals scatter +-12 us around 0, and
 * one stint that lost 500 us, with its sample 500 us late. Only the
 * 500 us is steal.
 */
static void noise_is_not_steal(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING, 1);
	uint64_t t = 0;
	for (uint32_t i = 0; i < 41; i++) {
		uint32_t tid = 100 + i % 2;
		bool stolen = i == 20;
		uint64_t len = stolen ? 1500 * US : MS;
		uint64_t runtime = stolen ? MS : (i % 2 ? MS + 12 * US : MS - 12 * US);
		sw(0, t, i ? 100 + (i - 1) % 2 : 0, tid);
		smp(0, t + len - 1, tid, tid, FN_F);
		rt(0, t + len - 1, tid, runtime);
		t += len;
	}
	sw(0, t, 100, 0);
	run_all(e, t);
	const struct engine_stats *st = engine__stats(e);
	assert_true(st->noise_ns >= (int64_t)(20 * US));
	assert_int_equal(st->steal_ns, 500 * US - (uint64_t)st->bias_ns);
	assert_true(st->bias_ns >= -12 * (int64_t)US && st->bias_ns <= 12 * (int64_t)US);
	engine__free(e);
}

/*
 * The switch path differs by the kind of switch: a spinner (100)
 * preempted by a waking thread (101) is reported 25 us after the
 * scheduler read the clock, the waking thread's sleep 5 us after. Each
 * leaving task raises its runtime at the reading, and the next task's
 * runtime runs from it. 40 rounds, no steal but 500 us in one spinner
 * stint. Measured between the switches' reports the spinner's residuals
 * would be +20 us and the waker's -20 us, and one of the two kinds taken
 * for steal; between the readings they are 0.
 */
static void switch_paths_of_two_kinds_are_not_steal(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING, 1);
	uint64_t b = 0;	/* the scheduler's reading at the last switch */
	sw(0, 0, 0, 100);
	for (uint32_t i = 0; i < 40; i++) {
		uint64_t stolen = i == 20 ? 500 * US : 0;
		uint64_t b1 = b + 3 * MS;
		for (uint64_t k = 1; k <= 3; k++)	/* its samples, on time */
			smp(0, b + k * MS - 10 * US, 100, 100, FN_F);
		rt(0, b1, 100, 3 * MS - stolen);
		sw(0, b1 + 25 * US, 100, 101);
		uint64_t b2 = b1 + 55 * US;
		rt(0, b2, 101, b2 - b1);
		sw(0, b2 + 5 * US, 101, 100);
		b = b2;
	}
	smp(0, b + MS - 10 * US, 100, 100, FN_F);
	rt(0, b + MS, 100, MS);
	sw(0, b + MS + 5 * US, 100, 0);
	run_all(e, b + MS + 5 * US);
	const struct engine_stats *st = engine__stats(e);
	assert_int_equal(st->bias_ns, 0);
	assert_int_equal(st->steal_ns, 500 * US);
	assert_int_equal(thread_steal(101), 0);
	assert_int_equal(st->unraised_stints, 0);
	engine__free(e);
}

/*
 * A stint that leaves without raising its runtime (perf drops the
 * tracepoints its own wakeup raises, and with them the runtime read
 * then): the 2 ms after its last runtime ran, unseen; no steal. Its
 * samples came every millisecond to the end. The next thread's runtime
 * says where it began (3 us before the switch was reported: that time
 * was not idle, and is not taken from idle's); it raises its runtime as
 * it leaves for idle, idle from there to the end.
 */
static void unraised_runtime_is_not_steal(void **state)
{
	(void)state;
	struct engine *e = sampled_ten_ms();
	rt(0, 8 * MS, 10, 4 * MS);
	sw(0, 10 * MS, 10, 20);
	rt(0, 12 * MS, 20, 2 * MS + 3 * US);
	sw(0, 12 * MS + 2 * US, 20, 0);
	run_all(e, 12 * MS + 2 * US);
	const struct engine_stats *st = engine__stats(e);
	assert_int_equal(st->steal_ns, 0);
	assert_int_equal(st->unraised_stints, 1);
	assert_int_equal(engine__cpu(e, 0)->idle_ns, 2 * US);
	assert_int_equal(engine__cpu(e, 0)->steal_ns, 0);
	engine__free(e);
}

/*
 * Where runtime holds steal (sample gaps find it), an unraised stint's
 * tail is no gap either: thread 10 raised 4 ms at 4 ms, then nothing, no
 * runtime and no sample, until its switch out at 8 ms. A kernel whose
 * runtime holds steal would have raised the stolen time as it left: the
 * tail's records were lost, not its time stolen.
 */
static void unraised_tail_is_no_gap(void **state)
{
	(void)state;
	/* sampled per task (record -p): gaps inside a stint are its steal */
	struct engine *e = start_config(&(struct engine_config){
		.method = METHOD_PRECEDING, .mode = STEAL_STINTS, .interval_ns = MS, .ncpus = 1,
		.unknown_fn = FN_UNKNOWN, .accounting = ACCT_INCLUDED });
	sw(0, 0, 0, 10);
	for (uint64_t t = 1; t <= 4; t++)
		smp(0, t * MS, 10, 10, FN_F);
	rt(0, 4 * MS, 10, 4 * MS);
	sw(0, 8 * MS, 10, 0);
	run_all(e, 8 * MS);
	assert_int_equal(engine__stats(e)->unraised_stints, 1);
	assert_int_equal(engine__stats(e)->steal_ns, 0);
	assert_int_equal(thread_cpu(10), 4 * MS);
	engine__free(e);
}

/* share_u64: the part n of d stand for, in 64 bits where the product
 * fits and in 128 where it does not (10 000 s of nanoseconds times 10^7
 * samples), rounded down either way. */
static void shares_in_64_and_128_bits(void **state)
{
	(void)state;
	assert_int_equal(share_u64(10, 3, 4), 7);
	assert_int_equal(share_u64(5, 1, 0), 0);
	assert_int_equal(share_u64(10000 * (uint64_t)NSEC_PER_SEC, 10000000, 20000000),
			 5000 * (uint64_t)NSEC_PER_SEC);
	assert_int_equal(share_u64(UINT64_MAX, 3, 6), UINT64_MAX / 2);
	assert_int_equal(share_u64(UINT64_MAX, UINT64_MAX, UINT64_MAX), UINT64_MAX);
	assert_int_equal(share_u64(1000000007, 999999937, 3), 333333314666666519);
}

/* A runtime event for thread 10 raised on CPU 1 while 10 runs on CPU 0
 * still counts in 10's stint: no false steal on CPU 0, none on CPU 1. */
static void runtime_from_other_cpu(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING, 2);
	sw(0, 0, 0, 10);
	sw(1, 0, 0, 20);
	rt(0, 3 * MS, 10, 3 * MS);
	rt(1, 4 * MS, 10, 1 * MS);	/* raised on CPU 1 */
	rt(1, 5 * MS, 20, 5 * MS);
	rt(0, 6 * MS, 10, 2 * MS);
	sw(0, 6 * MS, 10, 0);
	sw(1, 5 * MS, 20, 0);
	run_all(e, 6 * MS);
	assert_int_equal(engine__stats(e)->steal_ns, 0);
	assert_int_equal(engine__stats(e)->unmatched_runtime_ns, 0);
	assert_int_equal(engine__cpu(e, 0)->stints, 1);
	assert_int_equal(engine__cpu(e, 1)->stints, 1);
	/* idle: CPU 1 from 5 to 6 ms; both idle before their first switch
	 * from idle at 0 */
	assert_int_equal(engine__cpu(e, 1)->idle_ns, 1 * MS);
	assert_int_equal(engine__cpu(e, 0)->idle_ns, 0);
	engine__free(e);
}

/* The kernel drops the CPU's records from 4 to 8 ms and says so: the 4 ms
 * missing runtime and sample gap are not taken for steal. */
static void lost_records_are_not_steal(void **state)
{
	(void)state;
	for (int told = 0; told <= 1; told++) {
		struct engine *e = start(METHOD_PRECEDING, 1);
		sw(0, 0, 0, 10);
		for (uint64_t t = 1; t <= 12; t++)
			if (t <= 4 || t > 8)
				smp(0, t * MS, 10, 10, FN_F);
		rt(0, 4 * MS, 10, 4 * MS);
		rt(0, 12 * MS, 10, 4 * MS);	/* the one at 8 ms was lost */
		sw(0, 12 * MS, 10, 0);
		if (told)
			add((struct eng_event){ .kind = EK_LOST, .time = 8 * MS + 10,
						.value = 4 * MS, .cpu = 0 });
		run_all(e, 12 * MS);
		assert_int_equal(engine__stats(e)->steal_ns, told ? 0 : 4 * MS);
		assert_int_equal(engine__stats(e)->lossy_stints, told ? 1 : 0);
		engine__free(e);
	}
}

/* Recording began while 10 was running: its stint is measured from its
 * first runtime event, and closed at its last, where runtime is exact. */
static void starts_and_ends_mid_stint(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING, 1);
	rt(0, 2 * MS, 10, 4 * MS);	/* covers time before the recording */
	rt(0, 6 * MS, 10, 4 * MS);
	rt(0, 12 * MS, 10, 4 * MS);	/* 6 to 12: 2 ms stolen */
	run_all(e, 12 * MS);
	assert_int_equal(engine__stats(e)->steal_ns, 2 * MS);
	assert_int_equal(engine__stats(e)->run_ns, 12 * MS);
	engine__free(e);
}

/* A busy two-CPU scenario, for comparing orders of arrival: stints of
 * 1-1.3 ms, every 7th on CPU 1 holding 1.5 ms of steal (runtime 1 ms of
 * 2.5), a sample in the middle of each; some runtime events come from the
 * other CPU's ring. */
static void two_cpu_scenario(void)
{
	uint64_t t = 0;
	for (uint32_t i = 0; i < 60; i++) {
		for (uint32_t cpu = 0; cpu < 2; cpu++) {
			uint32_t tid = 10 + cpu * 10 + i % 3;
			bool stolen = i % 7 == 3 && cpu;
			uint64_t len = stolen ? 2500 * US : MS + 100 * US * (i % 4);
			uint64_t ran = stolen ? MS : len - 3 * US;
			uint64_t base = t + cpu * 7 * US;
			sw(cpu, base, 0, tid);
			smp(cpu, base + len / 2, 1000 + cpu, tid, i % 2 ? FN_F : FN_G);
			rt(i % 5 == 1 ? !cpu : cpu, base + len - 1, tid, ran);
			sw(cpu, base + len, tid, 0);
		}
		t += 3 * MS;
	}
}

static int cmp_got(const void *a, const void *b)
{
	const struct got *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->function > y->function) - (x->function < y->function);
}

/* Finishes e and checks it handed out what the events in time order gave
 * (want[nwant], sorted), no event late; frees e. */
static void finish_as_sorted(struct engine *e, uint64_t steal, const struct got *want,
			     uint32_t nwant)
{
	assert_int_equal(engine__finish(e, 0), 0);
	assert_int_equal(engine__stats(e)->late_events, 0);
	assert_int_equal(engine__stats(e)->steal_ns, steal);
	qsort(got, ngot, sizeof(*got), cmp_got);
	assert_int_equal(ngot, nwant);
	for (uint32_t i = 0; i < ngot; i++) {
		assert_int_equal(got[i].tid, want[i].tid);
		assert_int_equal(got[i].function, want[i].function);
		assert_int_equal(got[i].run_ns, want[i].run_ns);
		assert_int_equal(got[i].steal_ns, want[i].steal_ns);
		assert_int_equal(got[i].samples, want[i].samples);
	}
	engine__free(e);
}


/* The per-CPU streams, each in time order, drained in rounds (CPU 0's
 * events of a round, then CPU 1's, as recordings made before the rings
 * were merged hold them; or the other way round), with the watermark after each round at the latest time of the
 * round before: the same figures as one sorted stream. */
static void any_interleaving_same_result(void **state)
{
	(void)state;
	struct got want[256];
	uint32_t nwant;
	struct engine *e = start(METHOD_PRECEDING, 2);
	two_cpu_scenario();
	run_all(e, 0);
	memcpy(want, got, sizeof(got));
	nwant = ngot;
	uint64_t steal = engine__stats(e)->steal_ns;
	assert_true(steal > 0);
	engine__free(e);
	qsort(want, nwant, sizeof(*want), cmp_got);

	for (uint32_t round_ms = 2; round_ms <= 20; round_ms += 9) {
		for (int first = 0; first < 2; first++) {
			e = start(METHOD_PRECEDING, 2);
			two_cpu_scenario();
			uint64_t prev_max = 0, end = 200 * MS;
			for (uint64_t from = 0; from < end; from += round_ms * MS) {
				uint64_t max = prev_max;
				for (int k = 0; k < 2; k++) {
					uint32_t cpu = (uint32_t)(k ^ first);
					for (uint32_t i = 0; i < nevs; i++) {
						struct eng_event ev = evs[i];
						if (ev.cpu != cpu || ev.time < from ||
						    ev.time >= from + round_ms * MS)
							continue;
						assert_int_equal(engine__push(e, &ev), 0);
						if (ev.time > max)
							max = ev.time;
					}
				}
				assert_int_equal(engine__advance(e, prev_max), 0);
				prev_max = max;
			}
			finish_as_sorted(e, steal, want, nwant);
		}
	}
}

/* The scenario four times over (200 ms apart), its per-CPU streams
 * interleaved in blocks of 1-40 events, and a tenth of each stream's
 * neighbours swapped (a stream out of order): order[] is the push order. */
static uint32_t disorder(uint32_t *order)
{
	uint32_t n = 0, seed = 12345;
	two_cpu_scenario();
	uint32_t base = nevs;
	for (uint32_t k = 1; k < 4; k++)
		for (uint32_t i = 0; i < base; i++) {
			struct eng_event ev = evs[i];
			ev.time += k * 200 * MS;
			add(ev);
		}
	uint32_t next[2] = { 0, 0 };
	while (n < nevs) {
		seed = seed * 1103515245u + 12345u;
		uint32_t cpu = (seed >> 16) & 1, block = 1 + (seed >> 8) % 40;
		for (uint32_t i = next[cpu]; i < nevs && block; i++, next[cpu] = i)
			if (evs[i].cpu == cpu) {
				order[n++] = i;
				block--;
			}
	}
	for (uint32_t i = 1; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		if ((seed >> 16) % 10 == 0 && evs[order[i]].cpu == evs[order[i - 1]].cpu) {
			uint32_t x = order[i];
			order[i] = order[i - 1];
			order[i - 1] = x;
		}
	}
	return n;
}

static uint32_t *by_time_order;

static int cmp_by_time(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t tx = evs[by_time_order[x]].time, ty = evs[by_time_order[y]].time;
	if (tx != ty)
		return tx < ty ? -1 : 1;
	return (x > y) - (x < y);
}

/* The reorder queue gives the events in (time, arrival) order however
 * the watermark moves and however far behind (each CPU's ring drained,
 * wrapped and grown part full, events out of order in their stream in
 * the heap beside): the same figures as the events pushed sorted. */
static void queue_order_whatever_the_disorder(void **state)
{
	(void)state;
	static uint32_t order[32768], sorted[32768];
	struct got want[256];
	struct engine *e = start(METHOD_PRECEDING, 2);
	uint32_t n = disorder(order);
	for (uint32_t i = 0; i < n; i++)
		sorted[i] = i;
	by_time_order = order;
	qsort(sorted, n, sizeof(*sorted), cmp_by_time);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(engine__push(e, &evs[order[sorted[i]]]), 0);
		assert_int_equal(engine__advance(e, evs[order[sorted[i]]].time), 0);
	}
	assert_int_equal(engine__finish(e, 0), 0);
	uint32_t nwant = ngot;
	uint64_t steal = engine__stats(e)->steal_ns;
	assert_true(steal > 0);
	memcpy(want, got, sizeof(got));
	qsort(want, nwant, sizeof(*want), cmp_got);
	engine__free(e);

	for (uint32_t run = 0; run < 10; run++) {
		uint32_t every = run < 5 ? 1 + run * run * 90 : 1 + (run - 5) * 40;
		uint32_t lag = run < 5 ? every : 300 + (run - 5) * 60;
		e = start(METHOD_PRECEDING, 2);
		disorder(order);
		for (uint32_t i = 0; i < n; i++) {
			assert_int_equal(engine__push(e, &evs[order[i]]), 0);
			if (i % every)
				continue;
			/* older than what is still to come, and than the event
			 * pushed `lag` before (a queue of that many) */
			uint64_t low = i >= lag ? evs[order[i - lag]].time : 0;
			for (uint32_t j = i + 1; j < n; j++)
				if (evs[order[j]].time < low)
					low = evs[order[j]].time;
			if (low)
				assert_int_equal(engine__advance(e, low - 1), 0);
		}
		finish_as_sorted(e, steal, want, nwant);
	}
}

/* After tid 10 exited on CPU 0 by 10 ms: stints of another thread
 * enough to push it out of the queue, then a new 10 forked and switched
 * in; the time of its fork. */
static uint64_t push_out_and_fork_again(void)
{
	for (uint32_t i = 0; i <= ENGINE_PENDING; i++) {
		uint64_t t = 10 * MS + i * 2 * MS;
		sw(0, t, 0, 30);
		rt(0, t + MS, 30, MS);
		sw(0, t + MS, 30, 0);
	}
	uint64_t again = 10 * MS + (ENGINE_PENDING + 1) * 2 * MS + 5 * MS;
	add((struct eng_event){ .kind = EK_FORK, .time = again, .pid = 10, .tid = 10,
				.ppid = 1, .ptid = 1 });
	sw(0, again + MS, 0, 10);
	return again;
}

/* What a stack sink was handed: a thread's stack entries. */
static struct { uint32_t tid, stack; uint64_t samples; } stk[64];
static uint32_t nstk;

static int on_stack(void *ctx, const struct engine *e, const struct eng_thread *t,
		    const struct eng_stack_figures *f)
{
	(void)ctx;
	(void)e;
	assert_true(nstk < 64);
	stk[nstk].tid = t->tid;
	stk[nstk].stack = f->stack;
	stk[nstk++].samples = f->samples;
	return 0;
}

static void ssmp(uint32_t cpu, uint64_t t, uint32_t tid, uint32_t stack)
{
	add((struct eng_event){ .kind = EK_SAMPLE, .time = t, .cpu = cpu, .pid = tid,
				.tid = tid, .function = FN_F, .dso = NO_DSO,
				.account = NO_DSO, .stack = stack });
}

/* The entries a thread's stack was handed out in, and their samples in
 * the order handed out (newest first), as "2,1". */
static const char *stack_samples(uint32_t tid, uint32_t stack)
{
	static char buf[64];
	size_t at = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < nstk; i++)
		if (stk[i].tid == tid && stk[i].stack == stack)
			at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%llu", at ? "," : "",
					       (unsigned long long)stk[i].samples);
	return buf;
}

/* An engine of ncpus CPUs, by CPU, whose sink takes stacks too. */
static struct engine *start_stacks(uint32_t ncpus)
{
	static const struct engine_sink stack_sink = { NULL, on_program, on_stack, on_gone };
	struct engine_config c = { .method = METHOD_PRECEDING, .mode = STEAL_STINTS,
				   .interval_ns = MS, .ncpus = ncpus, .unknown_fn = FN_UNKNOWN,
				   .scope_all = true, .by_cpu = true };
	ngot = ngone = nevs = nstk = 0;
	struct engine *e = engine__new(&c, &stack_sink);
	assert_non_null(e);
	return e;
}

/*
 * A thread's stack entry is found by the stack's id where it was made
 * last, else in the thread's own index: whoever took the stack's place
 * since (another thread, the same thread on another CPU), a thread's
 * samples of a stack on a CPU are counted in one entry.
 */
static void stacks_found_whoever_sampled_them_last(void **state)
{
	(void)state;
	struct engine *e = start_stacks(2);
	sw(0, 1 * MS, 0, 10);
	sw(1, 1 * MS, 0, 11);
	ssmp(0, 2 * MS, 10, 0);
	ssmp(1, 2 * MS, 11, 0);		/* takes stack 0's place */
	ssmp(0, 3 * MS, 10, 0);		/* 10's, in its index */
	ssmp(1, 3 * MS, 11, 0);
	ssmp(0, 4 * MS, 10, 1);
	rt(0, 5 * MS, 10, 4 * MS);
	sw(0, 5 * MS, 10, 0);
	rt(1, 5 * MS, 11, 4 * MS);
	sw(1, 5 * MS, 11, 10);		/* 10 on CPU 1: stack 1 again */
	ssmp(1, 6 * MS, 10, 1);
	ssmp(1, 7 * MS, 10, 1);
	rt(1, 8 * MS, 10, 3 * MS);
	sw(1, 8 * MS, 10, 0);
	sw(0, 8 * MS, 0, 10);
	ssmp(0, 9 * MS, 10, 1);		/* CPU 0's entry, in 10's index */
	ssmp(0, 9 * MS + 1, 10, 0);
	ssmp(0, 9 * MS + 2, 10, 2);
	ssmp(0, 9 * MS + 3, 10, 2);
	run_all(e, 10 * MS);
	assert_string_equal(stack_samples(10, 0), "3");
	assert_string_equal(stack_samples(10, 1), "2,2");
	assert_string_equal(stack_samples(10, 2), "2");
	assert_string_equal(stack_samples(11, 0), "2");
	/* and their programs, one a thread and CPU, as the stacks' leaves */
	char progs[64] = "";
	size_t at = 0;
	for (uint32_t i = 0; i < ngot; i++)
		if (got[i].function == FN_F && got[i].samples)
			at += (size_t)snprintf(progs + at, sizeof(progs) - at, " %u:%llu", got[i].tid,
					       (unsigned long long)got[i].samples);
	assert_string_equal(progs, " 10:7 10:2 11:2");
	engine__free(e);
}

/* A thread made in a gone thread's slot finds none of the gone one's
 * entries, though the stacks' places name that slot still. */
static void stacks_of_a_slot_given_again(void **state)
{
	(void)state;
	struct engine *e = start_stacks(1);
	sw(0, 0, 0, 10);
	ssmp(0, 1 * MS, 10, 1);
	ssmp(0, 1 * MS + 1, 10, 0);
	ssmp(0, 1 * MS + 2, 10, 0);
	rt(0, 2 * MS, 10, 2 * MS);
	ex(0, 2 * MS, 10, 10);
	sw(0, 2 * MS, 10, 0);
	uint64_t again = push_out_and_fork_again();	/* 10 handed out, let go */
	ssmp(0, again + 2 * MS, 10, 0);	/* at 0 of the new 10: stack 0 was at 1 */
	ssmp(0, again + 2 * MS + 1, 10, 1);	/* at 1, where stack 0 was named */
	ssmp(0, again + 2 * MS + 2, 10, 0);
	rt(0, again + 3 * MS, 10, 2 * MS);
	sw(0, again + 3 * MS, 10, 0);
	for (uint32_t i = 0; i < nevs; i++)
		assert_int_equal(engine__push(e, &evs[i]), 0);
	assert_int_equal(engine__advance(e, again), 0);
	assert_int_equal(engine__stats(e)->threads_gone, 1);
	assert_string_equal(stack_samples(10, 0), "2");
	assert_string_equal(stack_samples(10, 1), "1");
	nstk = 0;
	assert_int_equal(engine__finish(e, 0), 0);
	assert_string_equal(stack_samples(10, 0), "2");
	assert_string_equal(stack_samples(10, 1), "1");
	engine__free(e);
}

/* A thread that exited and left its CPU, with no stint waiting once the
 * rest are judged, is handed out before the end and forgotten; its tid
 * given again later is a new thread, handed out on its own. */
static void exited_threads_are_forgotten(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING, 1);
	sw(0, 0, 0, 10);
	smp(0, 1 * MS, 10, 10, FN_F);
	rt(0, 2 * MS, 10, 2 * MS);
	ex(0, 2 * MS, 10, 10);
	sw(0, 2 * MS, 10, 0);
	uint64_t again = push_out_and_fork_again();
	smp(0, again + 2 * MS, 10, 10, FN_G);
	rt(0, again + 3 * MS, 10, 2 * MS);
	sw(0, again + 3 * MS, 10, 0);
	for (uint32_t i = 0; i < nevs; i++)
		assert_int_equal(engine__push(e, &evs[i]), 0);
	assert_int_equal(engine__advance(e, again), 0);
	/* the first 10 is out, as a final figure, before the end */
	assert_int_equal(ngot, 1);
	assert_true(got[0].final);
	assert_int_equal(got[0].tid, 10);
	assert_int_equal(got[0].function, FN_F);
	assert_int_equal(got[0].run_ns, 2 * MS);
	/* alive at the start: no fork seen */
	assert_int_equal(got[0].proc_start, 0);
	assert_int_equal(got[0].thread_start, 0);
	assert_int_equal(engine__stats(e)->threads_gone, 1);
	assert_int_equal(engine__stats(e)->threads_live, 2);	/* 30, the new 10 */
	assert_int_equal(engine__finish(e, 0), 0);
	assert_int_equal(prog(10, FN_G)->run_ns, 2 * MS);
	/* the new 10, process and thread, began at its fork: what tells
	 * it from the first (rows key by it) */
	assert_int_equal(prog(10, FN_G)->proc_start, again);
	assert_int_equal(prog(10, FN_G)->thread_start, again);
	assert_int_equal(engine__stats(e)->threads_live, 0);
	engine__free(e);
}

/* Idle time is the time between a switch to the idle task and the next
 * switch; with run and steal it covers the CPU's time. */
static void idle_time(void **state)
{
	(void)state;
	const uint64_t s = 1000 * MS;	/* recording began */
	struct engine_config c = { .method = METHOD_PRECEDING, .mode = STEAL_STINTS,
				   .interval_ns = MS, .ncpus = 1, .unknown_fn = FN_UNKNOWN,
				   .scope_all = true, .start_ns = s };
	ngot = ngone = nevs = 0;
	struct engine *e = engine__new(&c, &sink);
	sw(0, s + 3 * MS, 0, 10);	/* idle 0-3 */
	rt(0, s + 5 * MS, 10, 2 * MS);
	sw(0, s + 5 * MS, 10, 0);	/* idle 5-9 */
	add((struct eng_event){ .kind = EK_SAMPLE, .time = s + 6 * MS, .cpu = 0,
				.stack = ENGINE_NONE });
	sw(0, s + 9 * MS, 0, 10);
	rt(0, s + 10 * MS, 10, 1 * MS);
	sw(0, s + 10 * MS, 10, 0);	/* idle 10-12 */
	run_all(e, s + 12 * MS);
	const struct engine_stats *st = engine__stats(e);
	assert_int_equal(st->idle_ns, 9 * MS);
	assert_int_equal(st->run_ns, 3 * MS);
	assert_int_equal(st->idle_samples, 1);
	assert_int_equal(st->run_ns + st->steal_ns + st->idle_ns, 12 * MS);
	engine__free(e);
}

static struct engine *start_at(uint64_t s, uint32_t ncpus)
{
	struct engine_config c = { .method = METHOD_PRECEDING, .mode = STEAL_STINTS,
				   .interval_ns = MS, .ncpus = ncpus, .unknown_fn = FN_UNKNOWN,
				   .scope_all = true, .start_ns = s };
	return start_config(&c);
}

/*
 * The scheduler reads the clock before it reports a switch: a task's
 * runtime starts a few microseconds before the switch to it (from idle)
 * and stops a microsecond or two before the switch from it (to idle).
 * Idle is what no runtime holds: 0-2.994 ms (10's runtime read at 2.994,
 * its switch reported at 3), and 4.998-6 ms. Before, the 6 us before the
 * switch to 10 counted as idle and 10's run, and the 2 us before the
 * switch from it as neither: over 27 000 such wakes in 3 s, run + idle came
 * 130 ms over the CPUs' 6 s.
 */
static void idle_ends_where_runtime_begins(void **state)
{
	(void)state;
	struct engine *e = start_at(0, 1);
	sw(0, 0, 0, 0);
	sw(0, 3 * MS, 0, 10);
	rt(0, 4998 * US, 10, 2004 * US);	/* from 2.994 ms */
	sw(0, 5 * MS, 10, 0);
	run_all(e, 6 * MS);
	const struct engine_stats *st = engine__stats(e);
	assert_int_equal(st->run_ns, 2004 * US);
	assert_int_equal(st->idle_ns, 2994 * US + 1002 * US);
	assert_int_equal(st->run_ns + st->steal_ns + st->idle_ns, 6 * MS);
	engine__free(e);
}

/*
 * The kernel did not report the switch from idle to 20 at 5 ms (as on
 * some guests); a sample of 20 at 6 ms shows it running, and its first
 * runtime event (3 ms at 8 ms) says it began at 5 ms. With a sample or
 * without, idle is 0-1, 3-5 and 8-10 ms, 20 ran 3 ms, and run + idle is
 * the CPU's 10 ms.
 */
static void missed_switch_from_idle(void **state)
{
	(void)state;
	const uint64_t s = 1000 * MS;
	for (int sampled = 0; sampled < 2; sampled++) {
		struct engine *e = start_at(s, 1);
		sw(0, s + 1 * MS, 0, 10);
		rt(0, s + 3 * MS, 10, 2 * MS);
		sw(0, s + 3 * MS, 10, 0);
		if (sampled)
			smp(0, s + 6 * MS, 20, 20, FN_F);
		rt(0, s + 8 * MS, 20, 3 * MS);
		sw(0, s + 8 * MS, 20, 0);
		run_all(e, s + 10 * MS);
		const struct engine_stats *st = engine__stats(e);
		assert_int_equal(st->missed_switches, 1);
		assert_int_equal(thread_cpu(20), 3 * MS);
		assert_int_equal(st->idle_ns, 5 * MS);
		assert_int_equal(st->run_ns, 5 * MS);
		assert_int_equal(st->steal_ns, 0);
		assert_int_equal(st->unmatched_runtime_ns, 0);
		assert_int_equal(st->unmeasured_stints, 0);
		engine__free(e);
	}
}

/*
 * A missed switch from one thread to another: 10 runs from 0 (its last
 * runtime at 4 ms), 20 from 4 ms unreported, and switches out at 7 ms.
 * 10's stint ends at its last checkpoint, so the missed switch makes no
 * steal of it (before, 10's stint ran to 7 ms with 4 ms of runtime: 3 ms
 * of steal that never was).
 */
static void missed_switch_between_threads(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING, 1);
	sw(0, 0, 0, 10);
	smp(0, 1 * MS, 10, 10, FN_F);
	smp(0, 2 * MS, 10, 10, FN_F);
	smp(0, 3 * MS, 10, 10, FN_F);
	rt(0, 4 * MS, 10, 4 * MS);
	smp(0, 5 * MS, 20, 20, FN_G);
	smp(0, 6 * MS, 20, 20, FN_G);
	rt(0, 7 * MS, 20, 3 * MS);
	sw(0, 7 * MS, 20, 0);
	run_all(e, 8 * MS);
	const struct engine_stats *st = engine__stats(e);
	assert_int_equal(st->missed_switches, 1);
	assert_int_equal(st->steal_ns, 0);
	assert_int_equal(thread_cpu(10), 4 * MS);
	assert_int_equal(thread_cpu(20), 3 * MS);
	assert_int_equal(st->idle_ns, 1 * MS);	/* 7-8 ms, and none counted twice */
	engine__free(e);
}

/*
 * A task that raises no runtime (69: not a fair task) runs from 1 ms; the
 * switches from it to idle and from idle to 30 are not reported. 30's
 * runtime (0.5 ms, raised at 10 ms) says it began at 9.5 ms; 69 left no
 * trace after its switch in, so 1-9.5 ms was idle. Run + idle is the
 * CPU's 12 ms.
 */
static void missed_switch_after_silent_task(void **state)
{
	(void)state;
	const uint64_t s = 1000 * MS;
	struct engine *e = start_at(s, 1);
	sw(0, s + 1 * MS, 0, 69);
	rt(0, s + 10 * MS, 30, 500 * US);
	sw(0, s + 10 * MS, 30, 0);
	run_all(e, s + 12 * MS);
	const struct engine_stats *st = engine__stats(e);
	assert_int_equal(st->run_ns, 500 * US);
	assert_int_equal(st->idle_ns, 11500 * US);
	assert_int_equal(st->missed_switches, 1);
	engine__free(e);
}

/*
 * perf's exit record comes before the thread's last runtime event and
 * switch out (do_exit reports it, then schedules away). The thread is
 * kept until its switch out, so that runtime is its own, under its pid,
 * and not a new thread's of no process. A thread whose switch out is
 * never seen is done ENGINE_EXIT_GRACE_NS after its exit.
 */
static void exit_before_last_runtime(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING, 2);
	add((struct eng_event){ .kind = EK_FORK, .time = 0, .pid = 10, .tid = 10,
				.ppid = 1, .ptid = 1 });
	sw(0, 1 * MS, 0, 10);
	smp(0, 1500 * US, 10, 10, FN_F);
	ex(0, 2 * MS, 10, 10);
	rt(0, 2050 * US, 10, 1050 * US);
	sw(0, 2060 * US, 10, 0);
	/* 40 only samples on CPU 1, and exits */
	smp(1, 3 * MS, 40, 40, FN_G);
	ex(1, 4 * MS, 40, 40);
	smp(0, 5 * MS, 0, 0, FN_UNKNOWN);
	uint64_t later = 4 * MS + ENGINE_EXIT_GRACE_NS;
	smp(0, later, 0, 0, FN_UNKNOWN);
	for (uint32_t i = 0; i < nevs; i++)
		assert_int_equal(engine__push(e, &evs[i]), 0);
	/* 10 waits for its stint to be judged; 40 for its grace to pass */
	assert_int_equal(engine__advance(e, later - 1), 0);
	assert_int_equal(engine__stats(e)->threads_live, 2);
	assert_int_equal(engine__advance(e, later), 0);
	assert_int_equal(engine__stats(e)->threads_live, 1);
	assert_int_equal(ngot, 1);
	assert_true(prog(40, FN_G)->final);
	assert_int_equal(engine__finish(e, 0), 0);
	/* 10's whole time, under its pid */
	const struct got *g = prog(10, FN_F);
	assert_int_equal(g->pid, 10);
	assert_int_equal(g->run_ns, 1050 * US);
	assert_int_equal(engine__stats(e)->unmatched_runtime_ns, 0);
	assert_int_equal(engine__stats(e)->threads_gone, 2);
	assert_int_equal(ngot, 2);
	engine__free(e);
}

/* perf's ":-1 -1/-1" (a task that had exited when perf wrote it) has pid
 * and tid -1, the value of ENGINE_NONE: it is a thread of process -1 all
 * the same (before, its name crashed the engine). */
static void exited_task_minus_one(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING, 1);
	add((struct eng_event){ .kind = EK_TASK, .time = 1, .pid = UINT32_MAX,
				.tid = UINT32_MAX, .comm = 7 });
	smp(0, 1 * MS, UINT32_MAX, UINT32_MAX, FN_F);
	add((struct eng_event){ .kind = EK_COMM, .time = 2 * MS, .pid = UINT32_MAX,
				.tid = UINT32_MAX, .comm = 8 });
	run_all(e, 3 * MS);
	const struct got *g = prog(UINT32_MAX, FN_F);
	assert_int_equal(g->pid, UINT32_MAX);
	assert_int_equal(g->samples, 1);
	engine__free(e);
}

/*
 * A long run: more stints than the queue holds, each 1 ms with a residual
 * of 5 us (the bias), and every 1000th stint 400 us stolen (its sample
 * 400 us late). The rolling window finds the same bias as a batch would,
 * and exactly the stolen time; memory holds no more than the window.
 */
static void rolling_calibration(void **state)
{
	(void)state;
	struct engine *e = start(METHOD_PRECEDING, 1);
	uint64_t t = 0, stolen = 0;
	for (uint32_t i = 0; i < 3 * ENGINE_PENDING; i++) {
		uint32_t tid = 100 + i % 2;
		bool steal = i % 1000 == 500;
		uint64_t len = steal ? 1400 * US + 5 * US : MS + 5 * US;
		struct eng_event ev[3] = {
			{ .kind = EK_SWITCH, .time = t, .pid = i ? 100 + (i - 1) % 2 : 0, .tid = tid },
			{ .kind = EK_SAMPLE, .time = t + len - 2 * US, .pid = tid, .tid = tid,
			  .function = FN_F, .dso = NO_DSO, .account = NO_DSO, .stack = ENGINE_NONE },
			{ .kind = EK_RUNTIME, .time = t + len, .tid = tid, .value = MS },
		};
		for (int k = 0; k < 3; k++)
			assert_int_equal(engine__push(e, &ev[k]), 0);
		assert_int_equal(engine__advance(e, t + len), 0);
		stolen += steal ? 400 * US : 0;
		t += len;
		assert_true(engine__stats(e)->pending_stints <= ENGINE_PENDING);
	}
	struct eng_event last = { .kind = EK_SWITCH, .time = t, .pid = 100 + (3 * ENGINE_PENDING - 1) % 2 };
	assert_int_equal(engine__push(e, &last), 0);
	assert_int_equal(engine__finish(e, t), 0);
	assert_int_equal(engine__stats(e)->bias_ns, 5 * US);
	assert_int_equal(engine__stats(e)->steal_ns, stolen);
	engine__free(e);
}


/*
 * Heavy steal: of 200 stints of 2 ms, 160 hold 300 to 900 us of steal and
 * 40 hold none (residual 3 us +-2, the switch path). The bias is the
 * switch path's, not the median residual (which is steal), and every
 * stint's steal is counted whole, with or without a late sample.
 */
static void heavy_steal_bias(void **state)
{
	(void)state;
	struct engine *e = start_acct(ACCT_EXCLUDED, false);
	uint64_t t = 0, truth = 0;
	for (uint32_t i = 0; i < 200; i++) {
		uint32_t tid = 100 + i % 2;
		uint64_t stolen = i % 5 ? 300 * US + (i * 7919 % 600) * US : 0;
		uint64_t bias = (1 + i % 5) * US;
		sw(0, t, i ? 100 + (i - 1) % 2 : 0, tid);
		smp(0, t + MS, tid, tid, FN_F);
		rt(0, t + 2 * MS + stolen + bias, tid, 2 * MS);
		t += 2 * MS + stolen + bias;
		truth += stolen;
	}
	sw(0, t, 101, 0);
	run_all(e, t);
	const struct engine_stats *st = engine__stats(e);
	assert_true(st->bias_ns >= 1 * (int64_t)US && st->bias_ns <= 5 * (int64_t)US);
	/* each stint's steal is its residual less the bias: off by the
	 * bias's spread (2 us) at most per stint */
	assert_true(st->steal_ns + 160 * 3 * US >= truth && st->steal_ns <= truth + 160 * 3 * US);
	engine__free(e);
}

/*
 * Runtime that includes steal (no PARAVIRT_TIME_ACCOUNTING): a 10 ms
 * stint whose 1 ms grid missed the points of 3.5 ms stolen (the sample due
 * at 4 ms fires at 6.8 ms, when the vCPU runs again). Its residual is
 * only the switch path; the late sample covered 3 grid points: 3 ms of
 * steal, taken out of its runtime.
 */
static void steal_in_runtime_from_gaps(void **state)
{
	(void)state;
	struct engine *e = start_acct(ACCT_INCLUDED, false);
	sw(0, 0, 0, 10);
	for (uint64_t p = 1; p <= 9; p++)
		if (p < 4 || p > 6)
			smp(0, p * MS + 10 * US, 10, 10, p < 4 ? FN_F : FN_G);
	smp(0, 6 * MS + 800 * US, 10, 10, FN_G);	/* points 4, 5, 6: late */
	rt(0, 10 * MS, 10, 10 * MS - 3 * US);
	sw(0, 10 * MS, 10, 0);
	run_all(e, 10 * MS);
	assert_int_equal(thread_steal(10), 3 * MS);
	assert_int_equal(thread_cpu(10), 7 * MS - 3 * US);
	assert_int_equal(prog(10, FN_F)->steal_ns, 3 * MS);	/* sampled before it */
	assert_int_equal(engine__stats(e)->accounting, ACCT_INCLUDED);
	engine__free(e);
}

/*
 * A late sample whose missed grid points fell before its thread's stint:
 * the CPU idled from 0 (sampled at 1 ms), its timer missed 2-5 ms (the
 * vCPU was halted, and not run), and 10 was switched in at 5.2 ms. Its
 * first sample, at 5.5 ms, covers points 2-5 ms, none of them its own:
 * no steal for 10 (it was given 4 ms, more than its 3.8 ms runtime, and
 * run + steal + idle came out 4 ms over the CPU's time). A late sample
 * later in the stint still counts.
 */
static void gap_before_stint_not_its_steal(void **state)
{
	(void)state;
	struct engine *e = start_acct(ACCT_INCLUDED, false);
	sw(0, 0, 0, 0);
	smp(0, 1 * MS, 0, 0, 0);
	sw(0, 5 * MS + 200 * US, 0, 10);
	smp(0, 5 * MS + 500 * US, 10, 10, FN_F);	/* points 2-5: idle's */
	smp(0, 6 * MS + 500 * US, 10, 10, FN_F);
	smp(0, 8 * MS + 700 * US, 10, 10, FN_F);	/* points 7, 8: 10's */
	rt(0, 9 * MS, 10, 3800 * US);
	sw(0, 9 * MS, 10, 0);
	run_all(e, 10 * MS);
	assert_int_equal(thread_steal(10), 2 * MS);
	assert_int_equal(thread_cpu(10), 1800 * US);
	const struct engine_stats *st = engine__stats(e);
	assert_int_equal(st->run_ns + st->steal_ns + st->idle_ns, 10 * MS);
	engine__free(e);
}

/*
 * A late sample counts whole intervals; a kworker's stint is shorter: 10
 * runs 3.95-4.15 ms (200 us of runtime) and the sample due at 4.01 ms
 * fires at 4.12 ms, 1 ms of steal by the grid. Its runtime held 170 us
 * at the sample: that much is its steal, the rest (830 us) is counted as
 * too much, not taken out of a runtime that never held it (10's cpu was
 * 0 and run + steal + idle passed the CPU's time by 830 us).
 */
static void gap_steal_no_more_than_runtime(void **state)
{
	(void)state;
	struct engine *e = start_acct(ACCT_INCLUDED, false);
	sw(0, 0, 0, 20);
	for (uint64_t p = 1; p <= 3; p++)
		smp(0, p * MS + 10 * US, 20, 20, FN_F);
	rt(0, 3950 * US, 20, 3950 * US);
	sw(0, 3950 * US, 20, 10);
	smp(0, 4120 * US, 10, 10, FN_G);	/* due at 4.01 ms */
	rt(0, 4150 * US, 10, 200 * US);
	sw(0, 4150 * US, 10, 20);
	smp(0, 5 * MS + 10 * US, 20, 20, FN_F);
	rt(0, 6 * MS, 20, 1850 * US);
	sw(0, 6 * MS, 20, 0);
	run_all(e, 6 * MS);
	assert_int_equal(thread_steal(10), 170 * US);
	assert_int_equal(thread_cpu(10), 30 * US);
	assert_int_equal(thread_steal(20), 0);
	const struct engine_stats *st = engine__stats(e);
	assert_int_equal(st->steal_over_runtime_ns, 830 * US);
	assert_int_equal(st->run_ns + st->steal_ns + st->idle_ns, 6 * MS);
	engine__free(e);
}

/*
 * Where gaps are counted as found (runtime holds steal, no steal clock to
 * scale them by), the series shows their steal where it fell: a 2.5 s
 * stint from t = 1 s whose sample due at 1.4 s fires 2.8 ms late, in
 * second 0 of the series (it was all put in the last second, at the
 * settling, once), and the CPU time taken out of that second too.
 */
static void gap_steal_in_series_where_it_fell(void **state)
{
	(void)state;
	const uint64_t t0 = 1000 * MS;
	struct engine *e = start_acct(ACCT_INCLUDED, false);
	sw(0, t0, 0, 10);
	for (uint64_t p = 1; p < 2500; p++)
		if (p < 400 || p > 402)
			smp(0, t0 + p * MS + 10 * US, 10, 10, FN_F);
	smp(0, t0 + 402 * MS + 800 * US, 10, 10, FN_F);	/* points 400-402 */
	rt(0, t0 + 2500 * MS, 10, 2500 * MS - 3 * US);
	sw(0, t0 + 2500 * MS, 10, 0);
	run_all(e, t0 + 2500 * MS);
	assert_int_equal(thread_steal(10), 3 * MS);
	const struct eng_series *s = engine__series(e);
	assert_true(s->nbuckets >= 3);
	uint64_t b = 402 * MS / s->bucket_ns;	/* where the late sample is */
	for (uint32_t i = 0; i < s->nbuckets; i++)
		assert_int_equal(s->steal_ns[(uint64_t)i * s->ncpus], i == b ? 3 * MS : 0);
	uint64_t run = 0;
	for (uint32_t i = 0; i < s->nbuckets; i++)
		run += s->run_ns[(uint64_t)i * s->ncpus];
	assert_int_equal(run, thread_cpu(10));
	engine__free(e);
}

/*
 * The sample timer's latency grows by 80 us at 200 ms and stays so (the
 * guest of faults_live's starved recorder: a second of it, 1579 samples
 * late, 1.6 s of "steal" in one spinner). The first late sample counts a
 * point (it cannot be told from 80 us of steal); the next, one interval
 * after it, shows the timer's new phase, which the grid takes: no more
 * late samples. Steal found after it still is: 3 points at 600-602 ms.
 */
static void timer_latency_shift_is_not_steal(void **state)
{
	(void)state;
	struct engine *e = start_acct(ACCT_INCLUDED, false);
	sw(0, 0, 0, 10);
	for (uint64_t p = 1; p < 1000; p++)
		if (p < 600 || p > 602)
			smp(0, p * MS + (p < 200 ? 10 : 90) * US, 10, 10, FN_F);
	smp(0, 602 * MS + 800 * US, 10, 10, FN_G);	/* points 600-602: late */
	rt(0, 1000 * MS, 10, 1000 * MS - 3 * US);
	sw(0, 1000 * MS, 10, 0);
	run_all(e, 1000 * MS);
	assert_int_equal(thread_steal(10), 4 * MS);
	assert_int_equal(prog(10, FN_F)->steal_samples, 2);
	engine__free(e);
}

/* Two 5 ms stints on CPU 0, of threads 10 and 20, whose residuals are
 * 1 ms and 3 ms. */
static void push_residuals_1_and_3(struct engine *e)
{
	sw(0, 0, 0, 10);
	rt(0, 5 * MS, 10, 4 * MS);
	sw(0, 5 * MS, 10, 20);
	rt(0, 10 * MS, 20, 2 * MS);
	sw(0, 10 * MS, 20, 0);
	for (uint32_t i = 0; i < nevs; i++)
		assert_int_equal(engine__push(e, &evs[i]), 0);
}

/* The kernel's steal as the reference: two stints' residuals (1 ms and
 * 3 ms) share the CPU's /proc/stat steal (8 ms) as 1 to 3. */
static void residuals_scaled_to_kernel(void **state)
{
	(void)state;
	struct engine *e = start_acct(ACCT_EXCLUDED, true);
	push_residuals_1_and_3(e);
	engine__set_kernel_steal(e, 0, 8 * MS);
	assert_int_equal(engine__finish(e, 10 * MS), 0);
	assert_int_equal(thread_steal(10), 2 * MS);
	assert_int_equal(thread_steal(20), 6 * MS);
	assert_true(engine__stats(e)->steal_scaled);
	engine__free(e);
}

/* Residuals held to the kernel's steal, which /proc/stat counts in 10 ms
 * ticks. */
static struct engine *start_ticked(void)
{
	struct engine_config c = { .method = METHOD_PRECEDING, .mode = STEAL_STINTS,
				   .interval_ns = MS, .ncpus = 1, .unknown_fn = FN_UNKNOWN,
				   .scope_all = true, .accounting = ACCT_EXCLUDED,
				   .scale_to_kernel = true, .kernel_tick_ns = 10 * MS };
	return start_config(&c);
}

/* /proc/stat counts steal in 10 ms ticks: its growth is the truth to a
 * tick either way. Residuals of 1 and 3 ms against a kernel count of 10
 * ms agree with it (a tick crossed): they stand, not grown to 10 ms;
 * against 20 ms they do not: the nearest the kernel allows, 10 ms, is
 * shared as 1 to 3. (Scaled at every count, 0.2 ms of a CPU's steal was
 * reported as 10 ms, past the CPUs' time: live_truth.) */
static void residuals_within_the_kernels_tick_stand(void **state)
{
	(void)state;
	const uint64_t kernel[] = { 10 * MS, 20 * MS }, want10[] = { MS, 5 * MS / 2 },
		       want20[] = { 3 * MS, 15 * MS / 2 };
	for (int i = 0; i < 2; i++) {
		struct engine *e = start_ticked();
		push_residuals_1_and_3(e);
		engine__set_kernel_steal(e, 0, kernel[i]);
		assert_int_equal(engine__finish(e, 10 * MS), 0);
		assert_int_equal(thread_steal(10), want10[i]);
		assert_int_equal(thread_steal(20), want20[i]);
		assert_true(engine__stats(e)->steal_scaled);
		engine__free(e);
	}
}

/* Thread 10's steal, and CPU 0's idle, from one stint [0, stint) with
 * runtime `runtime`, idle after it to `end`, the kernel's count 40 ms. */
static uint64_t one_stint_steal(uint64_t stint, uint64_t runtime, uint64_t end,
				uint64_t *idle)
{
	struct engine *e = start_ticked();
	sw(0, 0, 0, 10);
	rt(0, stint, 10, runtime);
	sw(0, stint, 10, 0);
	for (uint32_t k = 0; k < nevs; k++)
		assert_int_equal(engine__push(e, &evs[k]), 0);
	engine__set_kernel_steal(e, 0, 40 * MS);
	assert_int_equal(engine__finish(e, end), 0);
	uint64_t steal = thread_steal(10);
	*idle = engine__cpu(e, 0)->idle_ns;
	engine__free(e);
	return steal;
}

/* The kernel's count holds steal of idle moments no residual can: a CPU
 * idle but for one 5 ms stint (1 ms of residual) in a second whose count
 * is 40 ms keeps its 1 ms. Held to the count less a tick, the thread was
 * given 30 ms of steal in a 5 ms stint, past the CPU's time (live_truth
 * in CI, 41 ms over on an idle machine); the floor is the count's share
 * of the second threads held it, 0.2 ms, less the tick. With 0.2 s of
 * idle after the stint the floor is 40 x 5/205 ms less the tick: 1 ms
 * stands still. A CPU busy the whole second is held to the count less
 * a tick, as before. */
static void idle_steal_stays_off_the_threads(void **state)
{
	(void)state;
	uint64_t idle;
	assert_int_equal(one_stint_steal(5 * MS, 4 * MS, 1000 * MS, &idle), MS);
	assert_int_equal(idle, 995 * MS);
	assert_int_equal(one_stint_steal(5 * MS, 4 * MS, 205 * MS, &idle), MS);
	assert_int_equal(idle, 200 * MS);
	/* all the second busy: 1 ms of residual against 40 ms is taken to
	 * the count less a tick */
	assert_int_equal(one_stint_steal(1000 * MS, 999 * MS, 1000 * MS, &idle), 30 * MS);
	assert_int_equal(idle, 0);
}

/* Stints of threads 10 and 20 on CPU 0, 1 ms each, from stint `from`
 * to `to`: those in [steal_from, steal_to) have 100 us stolen. Returns
 * the time the last ends. */
static uint64_t alternate(uint32_t from, uint32_t to, uint32_t steal_from, uint32_t steal_to)
{
	uint64_t t = (uint64_t)from * (MS + 10 * US);
	for (uint32_t i = from; i < to; i++) {
		uint32_t tid = i % 2 ? 20 : 10;
		uint64_t stolen = i >= steal_from && i < steal_to ? 100 * US : 0;
		rt(0, t + MS, tid, MS - stolen);
		sw(0, t + MS + 5 * US, tid, 30 - tid);
		t += MS + 10 * US;
	}
	return t;
}

/* The steal placed at each settling (each a ledger's collection) adds
 * up to what one settling at the end places: residuals of 5 ms by the
 * first, of 25 ms in all, the kernel's count 20 ms at both (within a
 * tick of 25, not of 5). Taken to the kernel's count where they were
 * off, and measured where they agreed, the collections held 20 ms of a
 * report's 25. */
static void settlings_add_up_to_one_at_the_end(void **state)
{
	(void)state;
	uint64_t total[2];
	for (int collect = 0; collect < 2; collect++) {
		struct engine *e = start_ticked();
		sw(0, 0, 0, 10);
		/* 9000 stints: the first 808 judged by the first settling
		 * (ENGINE_PENDING wait), 50 of them with steal */
		uint64_t mid = alternate(0, 9000, 100, 150);
		uint32_t first = nevs;
		uint64_t end = alternate(9000, 15000, 9100, 9300);
		for (uint32_t i = 0; i < first; i++)
			assert_int_equal(engine__push(e, &evs[i]), 0);
		if (collect) {
			assert_int_equal(engine__advance(e, mid), 0);
			engine__set_kernel_steal(e, 0, 20 * MS);
			assert_int_equal(engine__settle(e), 0);
			assert_int_equal(engine__cpu(e, 0)->steal_ns, 10 * MS);
		}
		for (uint32_t i = first; i < nevs; i++)
			assert_int_equal(engine__push(e, &evs[i]), 0);
		engine__set_kernel_steal(e, 0, 20 * MS);
		assert_int_equal(engine__finish(e, end), 0);
		total[collect] = engine__cpu(e, 0)->steal_ns;
		assert_int_equal(thread_steal(10) + thread_steal(20), total[collect]);
		engine__free(e);
	}
	assert_int_equal(total[0], 25 * MS);
	assert_int_equal(total[1], total[0]);
}

/* Not told: 20 stints with a late sample whose residual stays at the
 * switch path judge runtime to include steal; 20 whose residual holds
 * the gap judge it to exclude steal. */
static void accounting_judged(void **state)
{
	(void)state;
	for (int held = 0; held < 2; held++) {
		struct engine *e = start_acct(ACCT_JUDGE, false);
		uint64_t t = 0;
		for (uint32_t i = 0; i < 20; i++) {
			sw(0, t, i ? 10 : 0, 10);
			smp(0, t + 500 * US, 10, 10, FN_F);
			smp(0, t + 3 * MS, 10, 10, FN_F);	/* 1.5 ms late */
			rt(0, t + 4 * MS, 10, held ? 4 * MS - 2 * MS : 4 * MS - 2 * US);
			t += 4 * MS;
		}
		sw(0, t, 10, 0);
		run_all(e, t);
		const struct engine_stats *st = engine__stats(e);
		assert_true(st->accounting_judged);
		assert_int_equal(st->accounting, held ? ACCT_EXCLUDED : ACCT_INCLUDED);
		assert_int_equal(st->judge_gapped, 20);
		engine__free(e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_stint_steal),
		cmocka_unit_test(bracketed_leaves_switch),
		cmocka_unit_test(bias_calibrated),
		cmocka_unit_test(runtime_from_other_cpu),
		cmocka_unit_test(steal_between_samples_counts),
		cmocka_unit_test(heavy_steal_bias),
		cmocka_unit_test(steal_in_runtime_from_gaps),
		cmocka_unit_test(gap_before_stint_not_its_steal),
		cmocka_unit_test(idle_ends_where_runtime_begins),
		cmocka_unit_test(gap_steal_no_more_than_runtime),
		cmocka_unit_test(gap_steal_in_series_where_it_fell),
		cmocka_unit_test(residuals_scaled_to_kernel),
		cmocka_unit_test(residuals_within_the_kernels_tick_stand),
		cmocka_unit_test(idle_steal_stays_off_the_threads),
		cmocka_unit_test(settlings_add_up_to_one_at_the_end),
		cmocka_unit_test(accounting_judged),
		cmocka_unit_test(noise_is_not_steal),
		cmocka_unit_test(switch_paths_of_two_kinds_are_not_steal),
		cmocka_unit_test(unraised_runtime_is_not_steal),
		cmocka_unit_test(unraised_tail_is_no_gap),
		cmocka_unit_test(shares_in_64_and_128_bits),
		cmocka_unit_test(lost_records_are_not_steal),
		cmocka_unit_test(starts_and_ends_mid_stint),
		cmocka_unit_test(any_interleaving_same_result),
		cmocka_unit_test(queue_order_whatever_the_disorder),
		cmocka_unit_test(exited_threads_are_forgotten),
		cmocka_unit_test(stacks_found_whoever_sampled_them_last),
		cmocka_unit_test(stacks_of_a_slot_given_again),
		cmocka_unit_test(idle_time),
		cmocka_unit_test(rolling_calibration),
		cmocka_unit_test(missed_switch_from_idle),
		cmocka_unit_test(missed_switch_between_threads),
		cmocka_unit_test(missed_switch_after_silent_task),
		cmocka_unit_test(exit_before_last_runtime),
		cmocka_unit_test(exited_task_minus_one),
		cmocka_unit_test(timer_latency_shift_is_not_steal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
