/*
 * The agent's metrics (analysis/metrics.h) from the engine's figures:
 * programs by executable, at most N of them labelled (the rest "other",
 * sticky), counters that never go down and sum to the engine's figures
 * (what a thread gains is split by its shares then), threads gone kept,
 * both exposition formats, series by cgroup with bounded values too.
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

#include "analysis/metrics.h"
#include "core/engine.h"
#include "core/strtab.h"

#define MS 1000000ULL

static struct metrics m;

static int on_program(void *ctx, const struct engine *e, const struct eng_thread *t,
		      const struct eng_figures *f, bool final)
{
	(void)ctx;
	return metrics__program(&m, e, t, f, final);
}

static int on_gone(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	(void)ctx;
	return metrics__thread_gone(&m, e, t);
}

static void push(struct engine *e, struct eng_event ev)
{
	assert_int_equal(engine__push(e, &ev), 0);
}

/* A process pid running exe, its one thread spinning on CPU cpu from t
 * for ms milliseconds (a switch in, a sample in fn, its runtime). */
static void spin(struct engine *e, uint32_t pid, const char *exe, uint32_t cpu, uint64_t t,
		 uint64_t ms, uint32_t fn)
{
	if (exe)
		push(e, (struct eng_event){ .kind = EK_PROC, .time = t, .pid = pid,
					    .exe = strdup(exe), .uid = -1 });
	push(e, (struct eng_event){ .kind = EK_SWITCH, .time = t, .cpu = cpu, .pid = 0,
				    .tid = pid });
	if (fn != ENGINE_NONE)
		push(e, (struct eng_event){ .kind = EK_SAMPLE, .time = t + 1, .cpu = cpu, .pid = pid,
					    .tid = pid, .function = fn, .dso = NO_DSO, .account = fn,
					    .stack = ENGINE_NONE });
	push(e, (struct eng_event){ .kind = EK_RUNTIME, .time = t + ms * MS, .cpu = cpu,
				    .tid = pid, .value = ms * MS });
	push(e, (struct eng_event){ .kind = EK_SWITCH, .time = t + ms * MS, .cpu = cpu,
				    .pid = pid, .tid = 0 });
}

/* The value of the sample line starting with want in text, or -1. */
static double value(const char *text, const char *want)
{
	const char *p = strstr(text, want);
	return p ? atof(p + strlen(want)) : -1;
}

static void programs_labels_and_counters(void **state)
{
	(void)state;
	struct strtab names;
	strtab__init(&names);
	uint32_t unknown = strtab__intern(&names, "[unknown]", 9);
	uint32_t acc = strtab__intern(&names, "program", 7);
	uint32_t beta_cg = strtab__intern(&names, "/svc/beta.service", 17);
	uint32_t gamma_cg = strtab__intern(&names, "/c/gamma", 8);
	struct engine_config c = { .method = METHOD_PRECEDING, .mode = STEAL_STINTS,
				   .interval_ns = MS, .ncpus = 2, .unknown_fn = unknown,
				   .scope_all = true };
	struct engine_sink sink = { NULL, on_program, NULL, on_gone };
	struct engine *e = engine__new(&c, &sink);
	assert_non_null(e);
	assert_int_equal(metrics__init(&m, &names, 2), 0);

	/* three programs; only two get labels of their own; likewise their
	 * cgroups (alpha's not known) */
	push(e, (struct eng_event){ .kind = EK_CGROUP, .time = 1 * MS, .pid = 20,
				    .cgroup = beta_cg });
	push(e, (struct eng_event){ .kind = EK_CGROUP, .time = 1 * MS, .pid = 30,
				    .cgroup = gamma_cg });
	spin(e, 10, "/usr/bin/alpha", 0, 1 * MS, 3, ENGINE_NONE);
	spin(e, 20, "/opt/beta (deleted)", 1, 1 * MS, 4, acc);
	spin(e, 30, "/usr/bin/gamma", 0, 10 * MS, 5, acc);
	assert_int_equal(engine__advance(e, 20 * MS), 0);
	assert_int_equal(metrics__take(&m, e), 0);
	struct metrics_extra x = { .version = "t" };
	char *text;
	size_t len;
	assert_int_equal(metrics__write(&m, &x, false, &text, &len), 0);
	assert_true(value(text, "cpuledger_cpu_seconds_total{program=\"alpha\",account=\"[unknown]\",cgroup=\"unknown\"} ") == 0.003);
	assert_true(value(text, "cpuledger_cpu_seconds_total{program=\"beta\",account=\"program\",cgroup=\"/svc/beta.service\"} ") == 0.004);
	assert_true(value(text, "cpuledger_cpu_seconds_total{program=\"other\",account=\"program\",cgroup=\"other\"} ") == 0.005);
	assert_null(strstr(text, "gamma"));	/* neither its program nor its cgroup */
	assert_non_null(strstr(text, "# TYPE cpuledger_cpu_seconds_total counter"));
	free(text);

	/* throttling: each labelled cgroup's own counter where it is known,
	 * absent (not zero) where not */
	assert_int_equal(m.labelled_cgroups.count, 2);
	uint32_t beta_id = strtab__find(&m.labelled_cgroups, "/svc/beta.service", 17);
	assert_true(beta_id < 2);
	uint64_t thr[2] = { 0 };
	bool known[2] = { false };
	thr[beta_id] = 1500000000;
	known[beta_id] = true;
	x.ncgroups = 2;
	x.cgroup_throttled_ns = thr;
	x.cgroup_throttled_known = known;
	assert_int_equal(metrics__write(&m, &x, false, &text, &len), 0);
	assert_true(value(text, "cpuledger_cgroup_throttled_seconds_total{cgroup=\"/svc/beta.service\"} ") == 1.5);
	assert_null(strstr(text, "cpuledger_cgroup_throttled_seconds_total{cgroup=\"unknown\"}"));
	assert_non_null(strstr(text, "# TYPE cpuledger_cgroup_throttled_seconds_total counter"));
	free(text);
	x.ncgroups = 0;

	/* alpha is sampled in "program" from now on: what was counted under
	 * [unknown] stays there, what it gains goes to "program"; the sum is
	 * its 6 ms, no more */
	push(e, (struct eng_event){ .kind = EK_SWITCH, .time = 30 * MS, .cpu = 0, .pid = 0,
				    .tid = 10 });
	push(e, (struct eng_event){ .kind = EK_SAMPLE, .time = 31 * MS, .cpu = 0, .pid = 10,
				    .tid = 10, .function = acc, .dso = NO_DSO, .account = acc,
				    .stack = ENGINE_NONE });
	push(e, (struct eng_event){ .kind = EK_RUNTIME, .time = 33 * MS, .cpu = 0, .tid = 10,
				    .value = 3 * MS });
	/* gamma exits: its figures stay */
	push(e, (struct eng_event){ .kind = EK_EXIT, .time = 34 * MS, .pid = 30, .tid = 30 });
	assert_int_equal(engine__finish(e, 40 * MS), 0);
	assert_int_equal(metrics__take(&m, e), 0);
	assert_int_equal(metrics__write(&m, &x, true, &text, &len), 0);
	assert_true(value(text, "cpuledger_cpu_seconds_total{program=\"alpha\",account=\"[unknown]\",cgroup=\"unknown\"} ") == 0.003);
	assert_true(value(text, "cpuledger_cpu_seconds_total{program=\"alpha\",account=\"program\",cgroup=\"unknown\"} ") == 0.003);
	assert_true(value(text, "cpuledger_cpu_seconds_total{program=\"other\",account=\"program\",cgroup=\"other\"} ") == 0.005);
	/* OpenMetrics: counter families without _total, info, # EOF */
	assert_non_null(strstr(text, "# TYPE cpuledger_cpu_seconds counter"));
	assert_non_null(strstr(text, "# TYPE cpuledger_build info"));
	assert_int_equal(strcmp(text + len - 6, "# EOF\n"), 0);
	free(text);

	metrics__release(&m);
	engine__free(e);
	strtab__release(&names);
}

/* What read_wait says of each tid: its run_delay now; 0: gone. */
static uint64_t delay_of[64];

static int fake_wait(void *ctx, uint32_t pid, uint32_t tid, uint64_t *ns)
{
	(void)ctx;
	(void)pid;
	*ns = tid < 64 ? delay_of[tid] : 0;
	return *ns ? 0 : -2;	/* -ENOENT: gone */
}

/*
 * Run-queue wait per program and cgroup: each live thread's run_delay
 * read at each snapshot, counted from its figure when the agent started
 * (wait_start) or from 0 (born since); a fall counts nothing; a thread
 * that cannot be read (gone) is not counted; without a reader no family.
 *
 *   tid  start  snapshot 1  snapshot 2   counted
 *   10   100ms  400ms       300ms (fall) 300ms (alpha)
 *   20   -      50ms        250ms        250ms (beta)
 *   30   -      unreadable  unreadable   0: no series of its own
 */
static void wait_counters(void **state)
{
	(void)state;
	struct strtab names;
	strtab__init(&names);
	uint32_t unknown = strtab__intern(&names, "[unknown]", 9);
	uint32_t acc = strtab__intern(&names, "program", 7);
	struct engine_config c = { .method = METHOD_PRECEDING, .mode = STEAL_STINTS,
				   .interval_ns = MS, .ncpus = 2, .unknown_fn = unknown,
				   .scope_all = true };
	struct engine_sink sink = { NULL, on_program, NULL, on_gone };
	struct engine *e = engine__new(&c, &sink);
	assert_non_null(e);
	assert_int_equal(metrics__init(&m, &names, 10), 0);
	struct cgstats start;
	cgstats__init(&start);
	assert_int_equal(cgstats__wait(&start, 0, 10, 10, 100 * MS), 0);
	cgstats__waits_taken(&start, 0);
	m.read_wait = fake_wait;
	m.wait_start = &start;
	spin(e, 10, "/usr/bin/alpha", 0, 1 * MS, 3, acc);
	spin(e, 20, "/usr/bin/beta", 1, 1 * MS, 4, acc);
	spin(e, 30, "/usr/bin/gamma", 0, 10 * MS, 5, acc);
	assert_int_equal(engine__advance(e, 20 * MS), 0);
	delay_of[10] = 400 * MS;
	delay_of[20] = 50 * MS;
	assert_int_equal(metrics__take(&m, e), 0);
	delay_of[10] = 300 * MS;
	delay_of[20] = 250 * MS;
	assert_int_equal(metrics__take(&m, e), 0);
	struct metrics_extra x = { .version = "t" };
	char *text;
	size_t len;
	assert_int_equal(metrics__write(&m, &x, false, &text, &len), 0);
	assert_true(value(text, "cpuledger_wait_seconds_total{program=\"alpha\",cgroup=\"unknown\"} ") == 0.3);
	assert_true(value(text, "cpuledger_wait_seconds_total{program=\"beta\",cgroup=\"unknown\"} ") == 0.25);
	assert_null(strstr(text, "cpuledger_wait_seconds_total{program=\"gamma\""));
	assert_non_null(strstr(text, "# TYPE cpuledger_wait_seconds_total counter"));
	/* CPU's families hold no wait series */
	assert_null(strstr(text, "account=\"\""));
	free(text);
	/* no reader: no family (unknown is absent, not 0) */
	m.read_wait = NULL;
	assert_int_equal(metrics__write(&m, &x, false, &text, &len), 0);
	assert_null(strstr(text, "cpuledger_wait_seconds_total"));
	free(text);
	metrics__release(&m);
	cgstats__release(&start);
	engine__free(e);
	strtab__release(&names);
}

/* Each CPU's steal: attributed, stolen while idle (where the steal clock
 * says), and the kernel's where known; unknown is absent, not 0. */
static void per_cpu_steal(void **state)
{
	(void)state;
	struct strtab names;
	strtab__init(&names);
	assert_int_equal(metrics__init(&m, &names, 10), 0);
	const uint64_t attributed[] = { 6 * MS, 2 * MS }, idle[] = { 14 * MS, 0 },
		       kernel[] = { 20 * MS, 30 * MS };
	const bool known[] = { true, false };
	struct metrics_extra x = { .version = "t", .ncpus = 2, .cpu_steal_ns = attributed,
				   .idle_steal_ns = idle, .kernel_steal_ns = kernel,
				   .kernel_known = known };
	char *text;
	size_t len;
	assert_int_equal(metrics__write(&m, &x, false, &text, &len), 0);
	assert_true(value(text, "cpuledger_cpu_steal_seconds_total{cpu=\"0\"} ") == 0.006);
	assert_true(value(text, "cpuledger_cpu_steal_seconds_total{cpu=\"1\"} ") == 0.002);
	assert_true(value(text, "cpuledger_cpu_idle_steal_seconds_total{cpu=\"0\"} ") == 0.014);
	assert_true(value(text, "cpuledger_cpu_idle_steal_seconds_total{cpu=\"1\"} ") == 0);
	assert_non_null(strstr(text, "# TYPE cpuledger_cpu_idle_steal_seconds_total counter"));
	assert_true(value(text, "cpuledger_kernel_steal_seconds_total{cpu=\"0\"} ") == 0.02);
	assert_null(strstr(text, "cpuledger_kernel_steal_seconds_total{cpu=\"1\"}"));
	free(text);
	/* no steal clock read: no idle family */
	x.idle_steal_ns = NULL;
	assert_int_equal(metrics__write(&m, &x, false, &text, &len), 0);
	assert_null(strstr(text, "cpuledger_cpu_idle_steal_seconds_total"));
	assert_non_null(strstr(text, "cpuledger_cpu_steal_seconds_total{cpu=\"0\"}"));
	free(text);
	metrics__release(&m);
	strtab__release(&names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(programs_labels_and_counters),
		cmocka_unit_test(wait_counters),
		cmocka_unit_test(per_cpu_steal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
