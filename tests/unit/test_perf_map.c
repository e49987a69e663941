/*
 * JIT maps (symbols/perf_map.c) read as perf reads them, from a root made
 * here (ROOT/tmp/perf-PID.map, ROOT/proc/PID/status): a file owned by
 * another user than the process's (and not root) is not read, nor a
 * symbolic link, a FIFO (without blocking), or a file past the size bound;
 * a file is looked at again only after recheck_ns, and files are read at
 * most at the rate's bytes a second. Owners other than root need root to
 * make (chown): those checks are skipped otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/strtab.h"
#include "symbols/perf_map.h"

static char root[] = "/tmp/test_perf_map.XXXXXX";
static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

static void put(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* pid's /proc status with effective uid eff (real uid 0: the real one is
 * not the one that counts) */
static void proc_of(uint32_t pid, unsigned eff)
{
	char rel[64], text[128];
	snprintf(rel, sizeof(rel), "proc/%u", pid);
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdir(path, 0755);
	snprintf(rel, sizeof(rel), "proc/%u/status", pid);
	snprintf(text, sizeof(text), "Name:\tjit\nUid:\t0\t%u\t%u\t%u\n", eff, eff, eff);
	put(rel, text);
}

static const char *name_at(struct perf_maps *m, struct strtab *names, uint32_t pid,
			   uint64_t addr)
{
	(void)names;	/* a map owns its names (they were interned once) */
	const struct jit_func *f = perf_maps__find(m, pid, addr);
	return f ? f->name : NULL;
}

static void init(struct perf_maps *m, struct strtab *names)
{
	strtab__init(names);
	perf_maps__init(m, root);
	m->clock_ns = fake_clock;
	fake_now = 5000000000ull;
}

static void map_path(uint32_t pid, char *path, size_t size)
{
	snprintf(path, size, "%s/tmp/perf-%u.map", root, pid);
}

/* Root's file, and the process's own user's, are read; another user's,
 * a link and a FIFO are not. */
static void owners_links_fifos(void **state)
{
	(void)state;
	struct perf_maps m;
	struct strtab names;
	init(&m, &names);
	char path[512];
	proc_of(100, 1000);
	put("tmp/perf-100.map", "1000 10 ROOTS\n");	/* we are root: owned by 0 */
	if (geteuid() == 0)
		assert_string_equal(name_at(&m, &names, 100, 0x1004), "ROOTS");

	proc_of(101, 1000);
	put("tmp/perf-101.map", "1000 10 FORGED\n");
	map_path(101, path, sizeof(path));
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 2000, 2000), 0);	/* mallory's */
		assert_null(name_at(&m, &names, 101, 0x1004));
		/* the process's own user: read (after recheck_ns) */
		assert_int_equal(chown(path, 1000, 1000), 0);
		fake_now += m.recheck_ns;
		assert_string_equal(name_at(&m, &names, 101, 0x1004), "FORGED");
	}

	/* a link to a file it could read is not followed */
	proc_of(102, 0);
	put("secret", "1000 10 SECRET\n");
	map_path(102, path, sizeof(path));
	char target[512];
	snprintf(target, sizeof(target), "%s/secret", root);
	assert_int_equal(symlink(target, path), 0);
	assert_null(name_at(&m, &names, 102, 0x1004));

	/* a FIFO does not hold the reader, and is not read */
	proc_of(103, 0);
	map_path(103, path, sizeof(path));
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_null(name_at(&m, &names, 103, 0x1004));

	/* a process that has gone (no status): another user's file unread */
	put("tmp/perf-104.map", "1000 10 GONE\n");
	map_path(104, path, sizeof(path));
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 1000, 1000), 0);
		assert_null(name_at(&m, &names, 104, 0x1004));
	}
	assert_true(m.refused >= 3);
	perf_maps__release(&m);
	strtab__release(&names);
}

/* Past max_file_bytes a file is not read; the table read before stays. */
static void size_bound(void **state)
{
	(void)state;
	struct perf_maps m;
	struct strtab names;
	init(&m, &names);
	m.max_file_bytes = 64;
	proc_of(200, 0);
	put("tmp/perf-200.map", "1000 10 SMALL\n");
	assert_string_equal(name_at(&m, &names, 200, 0x1000), "SMALL");
	char big[256] = "";
	for (int i = 0; i < 10; i++)
		strcat(big, "2000 10 BIG_NAME\n");
	put("tmp/perf-200.map", big);
	fake_now += m.recheck_ns;
	assert_string_equal(name_at(&m, &names, 200, 0x1000), "SMALL");
	assert_null(name_at(&m, &names, 200, 0x2000));
	perf_maps__release(&m);
	strtab__release(&names);
}

/* A file rewritten (same size, new names) is read again only after
 * recheck_ns; files together read at most at the rate. A map that was
 * not there yet (a lookup before the JIT wrote it) is looked for again at
 * once. */
static void rate(void **state)
{
	(void)state;
	struct perf_maps m;
	struct strtab names;
	init(&m, &names);
	proc_of(299, 0);
	assert_null(name_at(&m, &names, 299, 0x1000));
	put("tmp/perf-299.map", "1000 10 EARLY\n");
	assert_string_equal(name_at(&m, &names, 299, 0x1000), "EARLY");
	proc_of(300, 0);
	put("tmp/perf-300.map", "1000 10 AAAA\n");
	assert_string_equal(name_at(&m, &names, 300, 0x1000), "AAAA");
	put("tmp/perf-300.map", "1000 10 BBBB\n");
	/* a new mtime, perhaps not: make sure the rewrite shows */
	char path[512];
	map_path(300, path, sizeof(path));
	struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	fake_now += m.recheck_ns / 2;
	assert_string_equal(name_at(&m, &names, 300, 0x1000), "AAAA");	/* not yet */
	fake_now += m.recheck_ns / 2;
	assert_string_equal(name_at(&m, &names, 300, 0x1000), "BBBB");

	/* a budget of 20 bytes a second: a second file waits for it */
	m.rate = 20;
	m.budget = 0;
	m.budget_ns = fake_now;
	proc_of(301, 0);
	put("tmp/perf-301.map", "1000 10 CCCC\n");	/* 13 bytes */
	assert_null(name_at(&m, &names, 301, 0x1000));
	fake_now += 500000000;	/* 10 bytes come: not enough */
	assert_null(name_at(&m, &names, 301, 0x1000));
	fake_now += 200000000;	/* 14 */
	assert_string_equal(name_at(&m, &names, 301, 0x1000), "CCCC");
	perf_maps__release(&m);
	strtab__release(&names);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(root))
		return -1;
	char path[512];
	snprintf(path, sizeof(path), "%s/tmp", root);
	mkdir(path, 01777);
	snprintf(path, sizeof(path), "%s/proc", root);
	mkdir(path, 0755);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(owners_links_fifos),
		cmocka_unit_test(size_bound),
		cmocka_unit_test(rate),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
