/*
 * What `top` shows (analysis/topview.h) from the engine's figures: per
 * refresh each process's share of a CPU and its time since the start;
 * threads (H) and programs (g); a thread that went shown once, its time
 * kept in its program's after; filters and sorting.
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

#include "analysis/topview.h"
#include "core/engine.h"
#include "core/strtab.h"

#define MS 1000000ULL

static struct topview v;

static int on_program(void *ctx, const struct engine *e, const struct eng_thread *t,
		      const struct eng_figures *f, bool final)
{
	(void)ctx;
	return topview__program(&v, e, t, f, final);
}

static int on_gone(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	(void)ctx;
	return topview__thread_gone(&v, e, t);
}

static void push(struct engine *e, struct eng_event ev)
{
	assert_int_equal(engine__push(e, &ev), 0);
}

/* Thread tid of process pid runs on cpu from t for ms. */
static void run(struct engine *e, uint32_t pid, uint32_t tid, uint32_t cpu, uint64_t t,
		uint64_t ms)
{
	push(e, (struct eng_event){ .kind = EK_SWITCH, .time = t, .cpu = cpu, .pid = 0,
				    .tid = tid });
	push(e, (struct eng_event){ .kind = EK_RUNTIME, .time = t + ms * MS, .cpu = cpu,
				    .tid = tid, .value = ms * MS });
	push(e, (struct eng_event){ .kind = EK_SWITCH, .time = t + ms * MS, .cpu = cpu,
				    .pid = tid, .tid = 0 });
	(void)pid;
}

static const struct top_row *find(uint32_t pid, uint32_t tid, const char *name)
{
	for (uint32_t i = 0; i < v.nrows; i++)
		if ((!pid || v.rows[i].pid == pid) && (!tid || v.rows[i].tid == tid) &&
		    (!name || !strcmp(v.rows[i].name, name)))
			return &v.rows[i];
	return NULL;
}

static void refreshes(void **state)
{
	(void)state;
	struct strtab names;
	strtab__init(&names);
	uint32_t unknown = strtab__intern(&names, "[unknown]", 9);
	uint32_t comm = strtab__intern(&names, "worker", 6);
	struct engine_config c = { .method = METHOD_PRECEDING, .mode = STEAL_STINTS,
				   .interval_ns = MS, .ncpus = 2, .unknown_fn = unknown,
				   .scope_all = true };
	struct engine_sink sink = { NULL, on_program, NULL, on_gone };
	struct engine *e = engine__new(&c, &sink);
	assert_non_null(e);
	assert_int_equal(topview__init(&v, &names), 0);
	/* process 10 (two threads) and 20 both run /usr/bin/w */
	push(e, (struct eng_event){ .kind = EK_PROC, .time = 1, .pid = 10,
				    .text = strdup("w --ten"), .exe = strdup("/usr/bin/w"), .uid = 0 });
	push(e, (struct eng_event){ .kind = EK_PROC, .time = 1, .pid = 20,
				    .text = strdup("w --twenty"), .exe = strdup("/usr/bin/w"),
				    .uid = 0 });
	push(e, (struct eng_event){ .kind = EK_TASK, .time = 1, .pid = 10, .tid = 10, .comm = comm });
	push(e, (struct eng_event){ .kind = EK_TASK, .time = 1, .pid = 10, .tid = 11, .comm = comm });
	push(e, (struct eng_event){ .kind = EK_TASK, .time = 1, .pid = 20, .tid = 20, .comm = comm });
	run(e, 10, 10, 0, 10 * MS, 500);	/* in the first second: 0.5 + 0.25 + 0.1 s */
	run(e, 10, 11, 1, 10 * MS, 250);
	run(e, 20, 20, 1, 300 * MS, 100);
	assert_int_equal(engine__advance(e, 1000 * MS), 0);
	assert_int_equal(topview__refresh(&v, e, TOP_PROCESSES, 1000 * MS, NULL, TOP_SORT_CPU), 0);
	assert_int_equal(v.nrows, 2);
	assert_int_equal(v.rows[0].pid, 10);	/* most CPU first */
	assert_true(v.rows[0].cpu_pct > 74.9 && v.rows[0].cpu_pct < 75.1);
	assert_int_equal(v.rows[0].cpu_ns, 750 * MS);
	assert_int_equal(v.rows[0].threads, 2);
	assert_string_equal(v.rows[0].name, "w --ten");

	/* the recording ends: every thread goes, each shown once more (its
	 * last gain), then forgotten; its program keeps its time */
	run(e, 10, 10, 0, 1100 * MS, 200);
	push(e, (struct eng_event){ .kind = EK_EXIT, .time = 1400 * MS, .pid = 10, .tid = 11 });
	assert_int_equal(engine__finish(e, 2000 * MS), 0);
	assert_int_equal(topview__refresh(&v, e, TOP_THREADS, 1000 * MS, NULL, TOP_SORT_PID), 0);
	assert_int_equal(v.nrows, 3);
	assert_int_equal(v.rows[0].tid, 10);	/* by pid, then tid */
	assert_int_equal(v.rows[1].tid, 11);
	assert_int_equal(v.rows[1].cpu_ns, 250 * MS);
	assert_true(v.rows[1].cpu_pct == 0);
	assert_true(v.rows[0].cpu_pct > 19.9 && v.rows[0].cpu_pct < 20.1);
	assert_int_equal(v.rows[0].cpu_ns, 700 * MS);
	assert_int_equal(topview__refresh(&v, e, TOP_PROCESSES, 1000 * MS, NULL, TOP_SORT_CPU), 0);
	assert_int_equal(v.nrows, 0);	/* shown once: gone */
	assert_int_equal(topview__refresh(&v, e, TOP_PROGRAMS, 1000 * MS, NULL, TOP_SORT_CPU), 0);
	const struct top_row *w = find(0, 0, "w");
	assert_non_null(w);
	assert_int_equal(v.nrows, 1);
	assert_int_equal(w->cpu_ns, 1050 * MS);
	assert_true(w->cpu_pct == 0);

	/* a filter keeps the rows whose name holds it */
	assert_int_equal(topview__refresh(&v, e, TOP_PROGRAMS, 1000 * MS, "nope", TOP_SORT_CPU), 0);
	assert_int_equal(v.nrows, 0);
	assert_int_equal(topview__refresh(&v, e, TOP_PROGRAMS, 1000 * MS, "w", TOP_SORT_CPU), 0);
	assert_int_equal(v.nrows, 1);
	topview__release(&v);
	engine__free(e);
	strtab__release(&names);
}

/* top -p 20: process 20's rows only, though 10 ran more */
static void scoped(void **state)
{
	(void)state;
	struct strtab names;
	strtab__init(&names);
	uint32_t unknown = strtab__intern(&names, "[unknown]", 9);
	uint32_t comm = strtab__intern(&names, "worker", 6);
	struct engine_config c = { .method = METHOD_PRECEDING, .mode = STEAL_STINTS,
				   .interval_ns = MS, .ncpus = 2, .unknown_fn = unknown };
	struct engine_sink sink = { NULL, on_program, NULL, on_gone };
	struct engine *e = engine__new(&c, &sink);
	assert_non_null(e);
	assert_int_equal(topview__init(&v, &names), 0);
	assert_int_equal(engine__scope(e, 20), 0);
	push(e, (struct eng_event){ .kind = EK_TASK, .time = 1, .pid = 10, .tid = 10, .comm = comm });
	push(e, (struct eng_event){ .kind = EK_TASK, .time = 1, .pid = 20, .tid = 20, .comm = comm });
	run(e, 10, 10, 0, 10 * MS, 500);
	run(e, 20, 20, 1, 300 * MS, 100);
	assert_int_equal(engine__advance(e, 1000 * MS), 0);
	assert_int_equal(topview__refresh(&v, e, TOP_PROCESSES, 1000 * MS, NULL, TOP_SORT_CPU), 0);
	assert_int_equal(v.nrows, 1);
	assert_int_equal(v.rows[0].pid, 20);
	assert_int_equal(v.rows[0].cpu_ns, 100 * MS);
	topview__release(&v);
	engine__free(e);
	strtab__release(&names);
}

/*
 * The tree (key t): rows sorted by CPU as
 *   pid ppid       after topview__tree      depth
 *   30  20         40  (roots in order)     0
 *   20  10         10                       0
 *   40  99 (none)    20                     1
 *   10  1 (none)       30                   2
 *   50  10           50                     1
 *   60  70         60  (a loop 60 <-> 70:   0
 *   70  60           70   broken at 60)     1
 */
static void tree(void **state)
{
	(void)state;
	static const uint32_t pid[] = { 30, 20, 40, 10, 50, 60, 70 };
	static const uint32_t ppid[] = { 20, 10, 99, 1, 10, 70, 60 };
	static const uint32_t want_pid[] = { 40, 10, 20, 30, 50, 60, 70 };
	static const uint32_t want_depth[] = { 0, 0, 1, 2, 1, 0, 1 };
	struct top_row rows[7];
	memset(&v, 0, sizeof(v));
	memset(rows, 0, sizeof(rows));
	for (int i = 0; i < 7; i++)
		rows[i] = (struct top_row){ .pid = pid[i], .ppid = ppid[i], .depth = 9 };
	v.rows = rows;
	v.nrows = 7;
	assert_int_equal(topview__tree(&v), 0);
	for (int i = 0; i < 7; i++) {
		assert_int_equal(rows[i].pid, want_pid[i]);
		assert_int_equal(rows[i].depth, want_depth[i]);
	}
	v.nrows = 1;	/* one row: a root */
	rows[0].depth = 3;
	assert_int_equal(topview__tree(&v), 0);
	assert_int_equal(rows[0].depth, 0);
	memset(&v, 0, sizeof(v));
}

/* A sample perf took of a task past its exit has pid and tid -1
 * (perf_event_pid: the task is no longer alive): an exec storm makes them.
 * Its time is a row of its own in every view, not a failed refresh (the
 * pid -1 was taken as "no row" and top stopped with ENOMEM). */
static void exited_task(void **state)
{
	(void)state;
	struct strtab names;
	strtab__init(&names);
	uint32_t unknown = strtab__intern(&names, "[unknown]", 9);
	struct engine_config c = { .method = METHOD_PRECEDING, .mode = STEAL_STINTS,
				   .interval_ns = MS, .ncpus = 1, .unknown_fn = unknown,
				   .scope_all = true };
	struct engine_sink sink = { NULL, on_program, NULL, on_gone };
	struct engine *e = engine__new(&c, &sink);
	assert_non_null(e);
	assert_int_equal(topview__init(&v, &names), 0);
	run(e, UINT32_MAX, UINT32_MAX, 0, 10 * MS, 40);
	assert_int_equal(engine__advance(e, 1000 * MS), 0);
	static const enum top_mode modes[] = { TOP_PROCESSES, TOP_THREADS, TOP_PROGRAMS };
	for (int m = 0; m < 3; m++) {
		assert_int_equal(topview__refresh(&v, e, modes[m], 1000 * MS, NULL, TOP_SORT_CPU), 0);
		assert_int_equal(v.nrows, 1);
		assert_int_equal(v.rows[0].cpu_ns, 40 * MS);
		if (modes[m] != TOP_PROGRAMS)
			assert_int_equal(v.rows[0].pid, UINT32_MAX);
	}
	topview__release(&v);
	engine__free(e);
	strtab__release(&names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(refreshes),
		cmocka_unit_test(tree),
		cmocka_unit_test(scoped),
		cmocka_unit_test(exited_task),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
