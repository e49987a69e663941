/*
 * Cgroups (docs/cgroups.md): the path /proc/PID/cgroup gives on each
 * layout, the counters of a hybrid host's hierarchies (a captured tree),
 * the change over a recording (a group made during it, counters missing),
 * run-queue waits per thread, and the engine's cgroup of a thread (its
 * process's, its own, its parent's after a fork).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "collect/cgroup.h"
#include "core/cgroup_name.h"
#include "core/cgstats.h"
#include "core/engine.h"
#include "core/strtab.h"

static void proc_cgroup_paths(void **state)
{
	(void)state;
	char p[256];
	const char *hybrid = "9:name=systemd:/system.slice/a.service\n2:cpuacct:/x\n"
			     "1:cpu:/system.slice/a.service\n0::/system.slice/a.service\n";
	assert_int_equal(cgroup_parse_proc(hybrid, p, sizeof(p)), 0);
	assert_string_equal(p, "/system.slice/a.service");
	assert_int_equal(cgroup_parse_proc("0::/user.slice/u 1.scope\n", p, sizeof(p)), 0);
	assert_string_equal(p, "/user.slice/u 1.scope");
	/* v1 alone: the cpu controller's (here joined with cpuacct) */
	assert_int_equal(cgroup_parse_proc("4:memory:/m\n3:cpu,cpuacct:/docker/abc\n", p,
					   sizeof(p)), 0);
	assert_string_equal(p, "/docker/abc");
	assert_int_equal(cgroup_parse_proc("4:memory:/m\n", p, sizeof(p)), -ENOENT);
	assert_int_equal(cgroup_parse_proc("", p, sizeof(p)), -ENOENT);
}

static void put(const char *dir, const char *file, const char *text)
{
	char path[512];
	int n = snprintf(path, sizeof(path), "%s/%s", dir, file);
	assert_true(n > 0 && (size_t)n < sizeof(path));
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void hybrid_counters(void **state)
{
	(void)state;
	char root[] = "/tmp/cgtest.XXXXXX", d[512], mi[2048];
	assert_non_null(mkdtemp(root));
	const char *dirs[] = { "proc", "proc/self", "u", "u/g", "u/g/h", "cpu", "cpu/g",
			       "acct", "acct/g" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		snprintf(d, sizeof(d), "%s/%s", root, dirs[i]);
		assert_int_equal(mkdir(d, 0755), 0);
	}
	snprintf(mi, sizeof(mi),
		 "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
		 "32 31 0:29 / /cpu rw,relatime - cgroup cgroup rw,cpu\n"
		 "33 31 0:30 / /acct rw,relatime - cgroup cgroup rw,cpuacct\n"
		 "41 31 0:38 / /u rw,relatime - cgroup2 cgroup2 rw\n");
	snprintf(d, sizeof(d), "%s/proc/self", root);
	put(d, "mountinfo", mi);
	struct cgroup_fs fs;
	assert_int_equal(cgroup_fs__find(&fs, root), 0);
	snprintf(d, sizeof(d), "%s/u/g", root);
	/* v2 without the cpu controller: usage, no throttling */
	put(d, "cpu.stat", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n");
	snprintf(d, sizeof(d), "%s/cpu/g", root);
	put(d, "cpu.stat", "nr_periods 10\nnr_throttled 4\nthrottled_time 123456789\n");
	struct cg_counters c;
	assert_int_equal(cgroup_counters__read(&fs, "/g", &c), 0);
	assert_true(c.usage_known && c.throttled_known);
	assert_int_equal(c.usage_ns, 1500000);
	assert_int_equal(c.throttled_ns, 123456789);
	assert_int_equal(c.nr_throttled, 4);
	/* no v2 cpu.stat: cpuacct's usage; no cpu group: throttling unknown */
	snprintf(d, sizeof(d), "%s/acct/g", root);
	put(d, "cpuacct.usage", "777\n");
	snprintf(d, sizeof(d), "%s/u/g/cpu.stat", root);
	unlink(d);
	snprintf(d, sizeof(d), "%s/cpu/g/cpu.stat", root);
	unlink(d);
	assert_int_equal(cgroup_counters__read(&fs, "/g", &c), 0);
	assert_true(c.usage_known && !c.throttled_known);
	assert_int_equal(c.usage_ns, 777);
	assert_int_equal(cgroup_counters__read(&fs, "/gone", &c), -ENOENT);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void changes_and_waits(void **state)
{
	(void)state;
	struct cgstats s;
	cgstats__init(&s);
	struct cg_counters a = { true, true, 100, 50, 1 }, b = { true, true, 400, 250, 3 };
	struct cg_counters made = { true, false, 70, 0, 0 }, out;
	assert_int_equal(cgstats__counters(&s, 0, 7, &a), 0);
	assert_false(cgstats__change(&s, 7, &out));	/* not read at the end */
	assert_int_equal(cgstats__counters(&s, 1, 7, &b), 0);
	assert_true(cgstats__change(&s, 7, &out));
	assert_int_equal(out.usage_ns, 300);
	assert_int_equal(out.throttled_ns, 200);
	assert_int_equal(out.nr_throttled, 2);
	/* made during the recording: from 0; throttling not there: unknown */
	assert_int_equal(cgstats__counters(&s, 1, 8, &made), 0);
	assert_true(cgstats__change(&s, 8, &out));
	assert_true(out.usage_known && !out.throttled_known);
	assert_int_equal(out.usage_ns, 70);

	uint64_t ns;
	assert_int_equal(cgstats__wait(&s, 0, 5, 5, 1000), 0);
	cgstats__waits_taken(&s, 0);
	assert_false(cgstats__thread_wait(&s, 5, 5, &ns));	/* no end yet */
	assert_int_equal(cgstats__wait(&s, 1, 5, 5, 4000), 0);
	assert_int_equal(cgstats__wait(&s, 1, 5, 6, 900), 0);	/* born meanwhile */
	cgstats__waits_taken(&s, 1);
	assert_true(cgstats__thread_wait(&s, 5, 5, &ns));
	assert_int_equal(ns, 3000);
	assert_true(cgstats__thread_wait(&s, 5, 6, &ns));
	assert_int_equal(ns, 900);
	assert_false(cgstats__thread_wait(&s, 9, 9, &ns));	/* gone before the end */
	cgstats__release(&s);
}

static int no_program(void *ctx, const struct engine *e, const struct eng_thread *t,
		      const struct eng_figures *f, bool final)
{
	(void)ctx, (void)e, (void)t, (void)f, (void)final;
	return 0;
}

/* Each live thread's tid and cgroup, as engine__each_thread gives them. */
struct walk {
	const struct engine *e;
	uint32_t tid[4], cg[4];
	size_t n;
};

static int walk_threads(void *ctx, const struct eng_proc *p, const struct eng_thread *t)
{
	(void)p;
	struct walk *w = ctx;
	if (w->n < 4) {
		w->tid[w->n] = t->tid;
		w->cg[w->n++] = engine__cgroup(w->e, t);
	}
	return 0;
}

static void engine_cgroup_of_threads(void **state)
{
	(void)state;
	struct strtab names;
	strtab__init(&names);
	uint32_t unknown = strtab__intern(&names, "[unknown]", 9);
	uint32_t svc = strtab__intern(&names, "/svc", 4), box = strtab__intern(&names, "/box", 4);
	struct engine_config c = { .method = METHOD_PRECEDING, .mode = STEAL_STINTS,
				   .interval_ns = 1000000, .ncpus = 1, .unknown_fn = unknown,
				   .scope_all = true };
	struct engine_sink sink = { NULL, no_program, NULL, NULL };
	struct engine *e = engine__new(&c, &sink);
	assert_non_null(e);
	struct eng_event evs[] = {
		{ .kind = EK_TASK, .time = 1, .pid = 10, .tid = 10, .comm = ENGINE_NONE },
		{ .kind = EK_TASK, .time = 1, .pid = 10, .tid = 11, .comm = ENGINE_NONE },
		{ .kind = EK_CGROUP, .time = 2, .pid = 10, .tid = 0, .cgroup = svc },
		/* thread 11 was moved: its samples say so */
		{ .kind = EK_CGROUP, .time = 3, .pid = 10, .tid = 11, .cgroup = box },
		/* a child of thread 11 starts where it is */
		{ .kind = EK_FORK, .time = 4, .pid = 20, .tid = 20, .ppid = 10, .ptid = 11 },
	};
	for (size_t i = 0; i < sizeof(evs) / sizeof(*evs); i++)
		assert_int_equal(engine__push(e, &evs[i]), 0);
	assert_int_equal(engine__advance(e, 10), 0);
	struct walk w = { .e = e };
	assert_int_equal(engine__each_thread(e, walk_threads, &w), 0);
	assert_int_equal(w.n, 3);
	for (size_t i = 0; i < w.n; i++)	/* 10: its process's; 11, 20: /box */
		assert_int_equal(w.cg[i], w.tid[i] == 10 ? svc : box);
	engine__free(e);
	strtab__release(&names);
}

static void names_people_know(void **state)
{
	(void)state;
	char b[256];
	const char *id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char p[512];
	struct { const char *fmt, *want; } cases[] = {
		{ "/system.slice/docker-%s.scope", "docker:0123456789ab" },
		{ "/docker/%s", "docker:0123456789ab" },
		{ "/system.slice/containerd.service/kubepods-burstable-pod1f2e3d4c_aaaa_bbbb_cccc_0123456789ab.slice:cri-containerd:%s",
		  NULL },
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f2e3d4c_aaaa_bbbb_cccc_0123456789ab.slice/cri-containerd-%s.scope",
		  "pod 1f2e3d4c/containerd:0123456789ab" },
		{ "/kubepods/besteffort/pod1f2e3d4c-aaaa-bbbb-cccc-0123456789ab/%s",
		  "pod 1f2e3d4c/container:0123456789ab" },
		{ "/machine.slice/libpod-%s.scope", "podman:0123456789ab" },
		{ "/machine.slice/libpod-conmon-%s.scope", "podman conmon:0123456789ab" },
		{ "/system.slice/crio-%s.scope", "cri-o:0123456789ab" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		snprintf(p, sizeof(p), cases[i].fmt, id);
		cgroup_name(p, b, sizeof(b));
		assert_string_equal(b, cases[i].want ? cases[i].want : p);
	}
	assert_string_equal(cgroup_name("/kubepods.slice/kubepods-burstable.slice/"
					"kubepods-burstable-pod1f2e3d4c_aaaa_bbbb_cccc_0123456789ab.slice",
					b, sizeof(b)), "pod 1f2e3d4c-aaaa-bbbb-cccc-0123456789ab");
	assert_string_equal(cgroup_name("/system.slice/nginx.service", b, sizeof(b)),
			    "nginx.service");
	assert_string_equal(cgroup_name("/user.slice/user-1000.slice/session-3.scope", b,
					sizeof(b)), "session-3.scope");
	assert_string_equal(cgroup_name("/", b, sizeof(b)), "/");
	assert_string_equal(cgroup_name("/cpltest-quota", b, sizeof(b)), "/cpltest-quota");
	assert_string_equal(cgroup_name("/docker/not-an-id", b, sizeof(b)), "/docker/not-an-id");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(proc_cgroup_paths),
		cmocka_unit_test(hybrid_counters),
		cmocka_unit_test(changes_and_waits),
		cmocka_unit_test(engine_cgroup_of_threads),
		cmocka_unit_test(names_people_know),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
