/*
 * Engine tests for seed 001's methods: synthetic sample sequences in, the
 * whole result table out. A sequence is a string, one character a sample
 * 1 ms apart: S steal, I idle, a letter a program:
 *   A = pid 100 tid 10 function F      B = pid 200 tid 20 function G
 *   C = pid 100 tid 10 function H      D = pid 100 tid 11 function F
 * Links libcore.a alone.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

/* sampling data's keys, as analyze gives them */
#define BY_PROCESS "vm,process"
#define BY_THREAD "vm,thread"
#define BY_FUNCTION "vm,thread,function"

#include "core/attribute.h"
#include "core/table.h"

#define MS 1000000ULL

struct prog_def {
	char ch;
	uint32_t pid, tid;
	const char *fn;
};

static const struct prog_def defs[] = {
	{ 'A', 100, 10, "F" },
	{ 'B', 200, 20, "G" },
	{ 'C', 100, 10, "H" },
	{ 'D', 100, 11, "F" },
};

static uint32_t prog_of(struct attributor *a, uint32_t vm, char ch)
{
	for (size_t i = 0; i < sizeof(defs) / sizeof(*defs); i++)
		if (defs[i].ch == ch)
			return attributor__program(a, vm, defs[i].pid, defs[i].tid,
						   attributor__string(a, defs[i].fn,
								      strlen(defs[i].fn)));
	fail_msg("no program '%c'", ch);
	return PROG_NONE;
}

/* Pushes sample i of seq at times[i] (or t0 + i ms when times is NULL). */
static void feed_at(struct attributor *a, const char *vm, uint32_t vcpu,
		    const char *seq, const uint64_t *times)
{
	uint32_t vmid = attributor__string(a, vm, strlen(vm));
	uint32_t s = attributor__stream(a, vmid, vcpu);
	for (size_t i = 0; seq[i]; i++) {
		uint64_t t = times ? times[i] : 1000 * MS + i * MS;
		enum sample_state st = seq[i] == 'S' ? SAMPLE_STEAL :
				       seq[i] == 'I' ? SAMPLE_IDLE : SAMPLE_RUN;
		uint32_t p = st == SAMPLE_RUN ? prog_of(a, vmid, seq[i]) : PROG_NONE;
		assert_int_equal(attributor__push(a, s, t, st, p), 0);
	}
}

static struct table *analyze(enum steal_method m, const char *by,
			     const char *seq, struct attributor *a)
{
	attributor__init(a, m, MS, false);
	feed_at(a, "vm0", 0, seq, NULL);
	attributor__finish(a);
	struct table *t = table__new_keys(a, by);
	assert_non_null(t);
	return t;
}

/* Asserts the whole table: n rows as given, in order. */
static void expect_rows(const struct table *t, const struct table_row *want,
			size_t n)
{
	assert_int_equal(t->nrows, n);
	for (size_t i = 0; i < n; i++) {
		const struct table_row *g = &t->rows[i], *w = &want[i];
		assert_string_equal(g->vm, w->vm);
		assert_int_equal(g->pid, w->pid);
		assert_int_equal(g->tid, w->tid);
		if (w->function)
			assert_string_equal(g->function, w->function);
		else
			assert_null(g->function);
		assert_int_equal(g->samples, w->samples);
		assert_int_equal(g->steal_samples, w->steal_samples);
		assert_int_equal(g->cpu_ns, w->cpu_ns);
		assert_int_equal(g->steal_ns, w->steal_ns);
		assert_int_equal(g->apparent_ns, w->apparent_ns);
		assert_int_equal(g->corrected_ns, w->corrected_ns);
	}
}

static void expect_steal(const struct table *t, uint64_t total,
			 uint64_t attributed)
{
	assert_int_equal(t->totals.steal_ns, total);
	assert_int_equal(t->totals.attributed_steal_ns, attributed);
	assert_int_equal(t->totals.unattributed_steal_ns,
			 (int64_t)total - (int64_t)attributed);
}

#define ROW(p, t, fn, n, ns, cpu, st) \
	{ .vm = "vm0", .function = fn, .pid = p, .tid = t, .samples = n, \
	  .steal_samples = ns, .cpu_ns = cpu, .steal_ns = st, .apparent_ns = (cpu) + (st), \
	  .corrected_ns = cpu }

/*
 * FIG. 7A, preceding: A is stolen and resumes.  A A S S S A A
 *   vm0 100 10 F  samples 4  steal_samples 3  cpu 4 ms  steal 3 ms
 */
static void fig7a_preceding(void **state)
{
	(void)state;
	struct attributor a;
	struct table *t = analyze(METHOD_PRECEDING, BY_FUNCTION, "AASSSAA", &a);
	const struct table_row want[] = { ROW(100, 10, "F", 4, 3, 4 * MS, 3 * MS) };
	expect_rows(t, want, 1);
	expect_steal(t, 3 * MS, 3 * MS);
	table__free(t);
	attributor__release(&a);
}

/*
 * FIG. 7B, preceding: A is stolen, ends right after, B starts: the steal is
 * A's.  A A S S B B
 *   vm0 100 10 F  2 2  cpu 2 ms steal 2 ms  (apparent 4 ms)
 *   vm0 200 20 G  2 0  cpu 2 ms steal 0
 */
static void fig7b_preceding(void **state)
{
	(void)state;
	struct attributor a;
	struct table *t = analyze(METHOD_PRECEDING, BY_FUNCTION, "AASSBB", &a);
	const struct table_row want[] = {
		ROW(100, 10, "F", 2, 2, 2 * MS, 2 * MS),
		ROW(200, 20, "G", 2, 0, 2 * MS, 0),
	};
	expect_rows(t, want, 2);
	expect_steal(t, 2 * MS, 2 * MS);
	table__free(t);
	attributor__release(&a);
}

/*
 * FIG. 7C, preceding: A is stolen at its very end, then B: still A's.
 *   A S S S B
 *   vm0 100 10 F  1 3  cpu 1 ms steal 3 ms
 *   vm0 200 20 G  1 0  cpu 1 ms
 */
static void fig7c_preceding(void **state)
{
	(void)state;
	struct attributor a;
	struct table *t = analyze(METHOD_PRECEDING, BY_FUNCTION, "ASSSB", &a);
	const struct table_row want[] = {
		ROW(100, 10, "F", 1, 3, 1 * MS, 3 * MS),
		ROW(200, 20, "G", 1, 0, 1 * MS, 0),
	};
	expect_rows(t, want, 2);
	expect_steal(t, 3 * MS, 3 * MS);
	table__free(t);
	attributor__release(&a);
}

/*
 * FIG. 10D, bracketed: A before and after: A's.  A A S S S A
 *   vm0 100 10 F  3 3  cpu 3 ms steal 3 ms
 */
static void fig10d_bracketed(void **state)
{
	(void)state;
	struct attributor a;
	struct table *t = analyze(METHOD_BRACKETED, BY_FUNCTION, "AASSSA", &a);
	const struct table_row want[] = { ROW(100, 10, "F", 3, 3, 3 * MS, 3 * MS) };
	expect_rows(t, want, 1);
	expect_steal(t, 3 * MS, 3 * MS);
	table__free(t);
	attributor__release(&a);
}

/*
 * FIG. 10E, bracketed: A, steal, then B: nobody's.  A A S S B B
 *   vm0 100 10 F  2 0  cpu 2 ms      vm0 200 20 G  2 0  cpu 2 ms
 *   unattributed 2 ms
 */
static void fig10e_bracketed(void **state)
{
	(void)state;
	struct attributor a;
	struct table *t = analyze(METHOD_BRACKETED, BY_FUNCTION, "AASSBB", &a);
	const struct table_row want[] = {
		ROW(100, 10, "F", 2, 0, 2 * MS, 0),
		ROW(200, 20, "G", 2, 0, 2 * MS, 0),
	};
	expect_rows(t, want, 2);
	expect_steal(t, 2 * MS, 0);
	table__free(t);
	attributor__release(&a);
}

/*
 * FIG. 10F, bracketed: A stolen at its end, then B: nobody's.  A S S S B
 *   vm0 100 10 F  1 0  cpu 1 ms      vm0 200 20 G  1 0  cpu 1 ms
 *   unattributed 3 ms
 */
static void fig10f_bracketed(void **state)
{
	(void)state;
	struct attributor a;
	struct table *t = analyze(METHOD_BRACKETED, BY_FUNCTION, "ASSSB", &a);
	const struct table_row want[] = {
		ROW(100, 10, "F", 1, 0, 1 * MS, 0),
		ROW(200, 20, "G", 1, 0, 1 * MS, 0),
	};
	expect_rows(t, want, 2);
	expect_steal(t, 3 * MS, 0);
	table__free(t);
	attributor__release(&a);
}

/*
 * Bracketed compares the function too: the same thread in another function
 * after the steal is another program.  A S S C
 *   vm0 100 10 F 1 0 1 ms; vm0 100 10 H 1 0 1 ms; unattributed 2 ms
 * By thread the rows merge, but the run was judged per program.
 */
static void bracketed_compares_function(void **state)
{
	(void)state;
	struct attributor a;
	struct table *t = analyze(METHOD_BRACKETED, BY_THREAD, "ASSC", &a);
	const struct table_row want[] = { ROW(100, 10, NULL, 2, 0, 2 * MS, 0) };
	expect_rows(t, want, 1);
	expect_steal(t, 2 * MS, 0);
	table__free(t);
	attributor__release(&a);
}

/*
 * FIG. 12, ratio, fixed interval: A A A S A S S B B
 * A: samples 4, labelled steal 3 (1 + 2); apparent 7 ms;
 *    steal = floor(3 * 7 ms / 7) = 3 ms, cpu 4 ms.  B: 2 samples, 2 ms.
 */
static void fig12_ratio(void **state)
{
	(void)state;
	struct attributor a;
	struct table *t = analyze(METHOD_RATIO, BY_FUNCTION, "AAASASSBB", &a);
	const struct table_row want[] = {
		ROW(100, 10, "F", 4, 3, 4 * MS, 3 * MS),
		ROW(200, 20, "G", 2, 0, 2 * MS, 0),
	};
	expect_rows(t, want, 2);
	expect_steal(t, 3 * MS, 3 * MS);
	table__free(t);
	attributor__release(&a);
}

/*
 * FIG. 12, ratio with timestamps, where it differs from preceding: run
 * samples of A last 2 ms, steal samples 1 ms, the last sample one interval.
 *   A@0 A@2 S@4 S@5 A@6 (ms)
 * A: samples 3, steal_samples 2, run 5 ms, labelled 2 ms, apparent 7 ms
 *   ratio:     steal = floor(2 * 7 ms / 5) = 2.8 ms, cpu 4.2 ms
 *   preceding: steal 2 ms, cpu 5 ms
 */
static void ratio_with_timestamps(void **state)
{
	(void)state;
	const uint64_t times[] = { 0, 2 * MS, 4 * MS, 5 * MS, 6 * MS };
	enum steal_method methods[] = { METHOD_RATIO, METHOD_PRECEDING };
	const struct table_row want[] = {
		{ .vm = "vm0", .function = "F", .pid = 100, .tid = 10, .samples = 3, .steal_samples = 2, .cpu_ns = 4200000, .steal_ns = 2800000, .apparent_ns = 7 * MS, .corrected_ns = 4200000 },
		{ .vm = "vm0", .function = "F", .pid = 100, .tid = 10, .samples = 3, .steal_samples = 2, .cpu_ns = 5 * MS, .steal_ns = 2 * MS, .apparent_ns = 7 * MS, .corrected_ns = 5 * MS },
	};
	for (int i = 0; i < 2; i++) {
		struct attributor a;
		attributor__init(&a, methods[i], MS, true);
		feed_at(&a, "vm0", 0, "AASSA", times);
		attributor__finish(&a);
		struct table *t = table__new_keys(&a, BY_FUNCTION);
		expect_rows(t, &want[i], 1);
		expect_steal(t, 2 * MS, want[i].steal_ns);
		assert_int_equal(t->totals.run_ns, 5 * MS);
		table__free(t);
		attributor__release(&a);
	}
}

/*
 * Ratio by process uses the process's own profile (seed 001, eq. 6), not a
 * sum of its functions' roundings. With timestamps:
 *   A@0 S@3 C@4 (ms)  durations: A 3, S 1, C 1 (interval)
 * by function: A: 1 sample + 1 steal, apparent 4 ms -> steal 2 ms
 *              C: 1 sample, apparent 1 ms -> steal 0
 * by process 100: samples 2, steal_samples 1, apparent 5 ms
 *              -> steal floor(1 * 5 / 3) = 1.666666 ms, cpu 3.333334 ms
 */
static void ratio_per_level(void **state)
{
	(void)state;
	const uint64_t times[] = { 0, 3 * MS, 4 * MS };
	struct attributor a;
	attributor__init(&a, METHOD_RATIO, MS, true);
	feed_at(&a, "vm0", 0, "ASC", times);
	attributor__finish(&a);

	struct table *t = table__new_keys(&a, BY_FUNCTION);
	const struct table_row by_fn[] = {
		{ .vm = "vm0", .function = "F", .pid = 100, .tid = 10, .samples = 1, .steal_samples = 1, .cpu_ns = 2 * MS, .steal_ns = 2 * MS, .apparent_ns = 4 * MS, .corrected_ns = 2 * MS },
		{ .vm = "vm0", .function = "H", .pid = 100, .tid = 10, .samples = 1, .steal_samples = 0, .cpu_ns = 1 * MS, .steal_ns = 0, .apparent_ns = 1 * MS, .corrected_ns = 1 * MS },
	};
	expect_rows(t, by_fn, 2);
	table__free(t);

	t = table__new_keys(&a, BY_PROCESS);
	const struct table_row by_proc[] = {
		{ .vm = "vm0", .function = NULL, .pid = 100, .tid = 0, .samples = 2, .steal_samples = 1, .cpu_ns = 3333334, .steal_ns = 1666666, .apparent_ns = 5 * MS, .corrected_ns = 3333334 },
	};
	expect_rows(t, by_proc, 1);
	expect_steal(t, 1 * MS, 1666666);
	table__free(t);
	attributor__release(&a);
}

/*
 * Steal at the start of a stream has no program before it; at the end, no
 * program after it.  S S A A S S
 *   preceding: the first run is nobody's, the last A's: steal 2 of 4 ms
 *   bracketed: both nobody's
 */
static void steal_at_stream_ends(void **state)
{
	(void)state;
	struct attributor a;
	struct table *t = analyze(METHOD_PRECEDING, BY_THREAD, "SSAASS", &a);
	const struct table_row pre[] = { ROW(100, 10, NULL, 2, 2, 2 * MS, 2 * MS) };
	expect_rows(t, pre, 1);
	expect_steal(t, 4 * MS, 2 * MS);
	table__free(t);
	attributor__release(&a);

	t = analyze(METHOD_BRACKETED, BY_THREAD, "SSAASS", &a);
	const struct table_row br[] = { ROW(100, 10, NULL, 2, 0, 2 * MS, 0) };
	expect_rows(t, br, 1);
	expect_steal(t, 4 * MS, 0);
	table__free(t);
	attributor__release(&a);
}

/*
 * Idle between a program and steal: the vCPU was not the program's.
 *   A I S S A     every method: steal unattributed, idle 1 ms
 */
static void idle_before_steal(void **state)
{
	(void)state;
	enum steal_method ms[] = { METHOD_PRECEDING, METHOD_BRACKETED, METHOD_RATIO };
	for (int i = 0; i < 3; i++) {
		struct attributor a;
		struct table *t = analyze(ms[i], BY_FUNCTION, "AISSA", &a);
		const struct table_row want[] = { ROW(100, 10, "F", 2, 0, 2 * MS, 0) };
		expect_rows(t, want, 1);
		expect_steal(t, 2 * MS, 0);
		assert_int_equal(t->totals.idle_ns, 1 * MS);
		assert_int_equal(t->totals.idle_samples, 1);
		table__free(t);
		attributor__release(&a);
	}
}

/*
 * Several VMs and vCPUs, samples interleaved one by one across streams: each
 * stream's runs are judged within the stream alone.
 *   vm0/0: A S S A      vm0/1: D D S B     vm1/0: A S B B
 * preceding:
 *   vm0 100 10 F  2 2  2 ms 2 ms     vm0 100 11 F  2 1  2 ms 1 ms
 *   vm1 100 10 F  1 1  1 ms 1 ms     vm1 200 20 G  2 0  2 ms
 *   vm0 200 20 G  1 0  1 ms
 * (equal apparent time sorts by key)
 * Had the streams been mixed up, A's steal in vm0/0 would have been cut by
 * vm0/1's D.
 */
static void interleaved_streams(void **state)
{
	(void)state;
	const char *seq[3] = { "ASSA", "DDSB", "ASBB" };
	const char *vm[3] = { "vm0", "vm0", "vm1" };
	const uint32_t vcpu[3] = { 0, 1, 0 };
	struct attributor a;
	attributor__init(&a, METHOD_PRECEDING, MS, false);
	for (int i = 0; i < 4; i++)
		for (int s = 0; s < 3; s++) {
			char one[2] = { seq[s][i], 0 };
			uint64_t t = 1000 * MS + (uint64_t)i * MS;
			feed_at(&a, vm[s], vcpu[s], one, &t);
		}
	attributor__finish(&a);
	struct table *t = table__new_keys(&a, BY_THREAD);
	const struct table_row want[] = {
		{ .vm = "vm0", .function = NULL, .pid = 100, .tid = 10, .samples = 2, .steal_samples = 2, .cpu_ns = 2 * MS, .steal_ns = 2 * MS, .apparent_ns = 4 * MS, .corrected_ns = 2 * MS },
		{ .vm = "vm0", .function = NULL, .pid = 100, .tid = 11, .samples = 2, .steal_samples = 1, .cpu_ns = 2 * MS, .steal_ns = 1 * MS, .apparent_ns = 3 * MS, .corrected_ns = 2 * MS },
		{ .vm = "vm1", .function = NULL, .pid = 100, .tid = 10, .samples = 1, .steal_samples = 1, .cpu_ns = 1 * MS, .steal_ns = 1 * MS, .apparent_ns = 2 * MS, .corrected_ns = 1 * MS },
		{ .vm = "vm1", .function = NULL, .pid = 200, .tid = 20, .samples = 2, .steal_samples = 0, .cpu_ns = 2 * MS, .steal_ns = 0, .apparent_ns = 2 * MS, .corrected_ns = 2 * MS },
		{ .vm = "vm0", .function = NULL, .pid = 200, .tid = 20, .samples = 1, .steal_samples = 0, .cpu_ns = 1 * MS, .steal_ns = 0, .apparent_ns = 1 * MS, .corrected_ns = 1 * MS },
	};
	expect_rows(t, want, 5);
	expect_steal(t, 4 * MS, 4 * MS);
	assert_int_equal(t->totals.streams, 3);
	table__free(t);
	attributor__release(&a);
}

/* Time must increase within a stream; another stream may go back. */
static void time_must_increase(void **state)
{
	(void)state;
	struct attributor a;
	attributor__init(&a, METHOD_PRECEDING, MS, false);
	uint32_t vm = attributor__string(&a, "vm0", 3);
	uint32_t s0 = attributor__stream(&a, vm, 0);
	uint32_t s1 = attributor__stream(&a, vm, 1);
	assert_int_equal(attributor__push(&a, s0, 10, SAMPLE_IDLE, PROG_NONE), 0);
	assert_int_equal(attributor__push(&a, s1, 5, SAMPLE_IDLE, PROG_NONE), 0);
	assert_int_equal(attributor__push(&a, s0, 10, SAMPLE_IDLE, PROG_NONE), -ERANGE);
	assert_int_equal(attributor__push(&a, s0, 9, SAMPLE_IDLE, PROG_NONE), -ERANGE);
	assert_int_equal(attributor__push(&a, s0, 11, SAMPLE_IDLE, PROG_NONE), 0);
	attributor__finish(&a);
	assert_int_equal(a.totals.idle_samples, 3);
	attributor__release(&a);
}

/* With --timestamps, durations that would add up past 2^64 ns are refused
 * (before: times 0 and 2^64-1 wrapped the totals to under a millisecond). */
static void durations_do_not_wrap(void **state)
{
	(void)state;
	struct attributor a;
	attributor__init(&a, METHOD_PRECEDING, MS, true);
	uint32_t vm = attributor__string(&a, "vm0", 3);
	uint32_t s0 = attributor__stream(&a, vm, 0);
	assert_int_equal(attributor__push(&a, s0, 0, SAMPLE_IDLE, PROG_NONE), 0);
	assert_int_equal(attributor__push(&a, s0, UINT64_MAX, SAMPLE_IDLE, PROG_NONE),
			 -EOVERFLOW);
	assert_int_equal(attributor__push(&a, s0, UINT64_MAX - 2 * MS, SAMPLE_IDLE, PROG_NONE),
			 0);
	attributor__finish(&a);
	assert_int_equal(a.totals.idle_ns, UINT64_MAX - MS);
	attributor__release(&a);
}

/* Rows sort by apparent time, largest first, then by key. */
static void rows_sorted(void **state)
{
	(void)state;
	struct attributor a;
	struct table *t = analyze(METHOD_PRECEDING, BY_PROCESS, "BAAABDD", &a);
	const struct table_row want[] = {
		{ .vm = "vm0", .function = NULL, .pid = 100, .tid = 0, .samples = 5, .steal_samples = 0, .cpu_ns = 5 * MS, .steal_ns = 0, .apparent_ns = 5 * MS, .corrected_ns = 5 * MS },
		{ .vm = "vm0", .function = NULL, .pid = 200, .tid = 0, .samples = 2, .steal_samples = 0, .cpu_ns = 2 * MS, .steal_ns = 0, .apparent_ns = 2 * MS, .corrected_ns = 2 * MS },
	};
	expect_rows(t, want, 2);
	table__free(t);
	attributor__release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fig7a_preceding),
		cmocka_unit_test(fig7b_preceding),
		cmocka_unit_test(fig7c_preceding),
		cmocka_unit_test(fig10d_bracketed),
		cmocka_unit_test(fig10e_bracketed),
		cmocka_unit_test(fig10f_bracketed),
		cmocka_unit_test(bracketed_compares_function),
		cmocka_unit_test(fig12_ratio),
		cmocka_unit_test(ratio_with_timestamps),
		cmocka_unit_test(ratio_per_level),
		cmocka_unit_test(steal_at_stream_ends),
		cmocka_unit_test(idle_before_steal),
		cmocka_unit_test(interleaved_streams),
		cmocka_unit_test(time_must_increase),
		cmocka_unit_test(durations_do_not_wrap),
		cmocka_unit_test(rows_sorted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
