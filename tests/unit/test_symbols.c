/*
 * Code regions (core/regions.c) and the symbolizer (symbols/): mappings
 * replace what they overlap, fork copies, exec empties; a function of this
 * very test binary is found through its own /proc/self/maps and libdwfl;
 * kernel symbols come from a captured kallsyms (tests/fixtures/root-kallsyms).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/regions.h"
#include "symbols/symbolizer.h"

static struct strtab strings;
static struct regions t;

static void setup(void)
{
	strtab__init(&strings);
	assert_int_equal(regions__init(&t, &strings), 0);
}

static void teardown(void)
{
	regions__release(&t);
	strtab__release(&strings);
}

static const char *find(uint32_t pid, uint64_t ip, uint64_t *off)
{
	uint32_t dso;
	if (!regions__find(&t, pid, ip, false, &dso, off))
		return NULL;
	return strtab__str(&strings, dso);
}

static void maps_replace_fork_exec(void **state)
{
	(void)state;
	uint64_t off;
	setup();
	assert_int_equal(regions__map(&t, 10, 0x1000, 0x3000, 0, "/bin/a", 6, 100), 0);
	assert_int_equal(regions__map(&t, 10, 0x10000, 0x1000, 0x2000, "/lib/b.so", 9, 110), 0);
	assert_string_equal(find(10, 0x1800, &off), "/bin/a");
	assert_int_equal(off, 0x800);
	assert_string_equal(find(10, 0x10010, &off), "/lib/b.so");
	assert_int_equal(off, 0x2010);
	assert_null(find(10, 0x5000, &off));
	assert_null(find(11, 0x1800, &off));
	/* a mapping over the middle splits the old one */
	assert_int_equal(regions__map(&t, 10, 0x2000, 0x1000, 0, "//anon", 6, 120), 0);
	assert_string_equal(find(10, 0x1800, &off), "/bin/a");
	assert_string_equal(find(10, 0x2800, &off), "[anon]");
	assert_string_equal(find(10, 0x3800, &off), "/bin/a");
	assert_int_equal(off, 0x2800);	/* the tail keeps its file offset */
	/* fork copies, exec empties */
	assert_int_equal(regions__fork(&t, 20, 10, 130), 0);
	assert_string_equal(find(20, 0x10010, &off), "/lib/b.so");
	assert_int_equal(regions__exec(&t, 10, 140), 0);
	assert_null(find(10, 0x1800, &off));
	assert_string_equal(find(20, 0x1800, &off), "/bin/a");
	/* kernel addresses are the kernel's, whoever samples them */
	uint32_t dso;
	assert_true(regions__find(&t, 99, 0xffffffff81003010ULL, false, &dso, &off));
	assert_string_equal(strtab__str(&strings, dso), "[kernel.kallsyms]");
	teardown();
}

/* Changes out of time order (a ring's record written while the heads
 * were taken is read a round late; a recording made ring after ring, as
 * before 2026-12-06): a process that moved CPUs while it exec'd can have
 * its new mappings read before the exec, and its fork after both. Each
 * change counts at its own time. */
static void changes_out_of_order(void **state)
{
	(void)state;
	uint64_t off;
	setup();
	/* parent 10 runs /bin/sh; child 20 forks at 200, execs /bin/x at 300,
	 * which maps /bin/x at 310 and libc at 320; read in the order:
	 * child's maps, its exec, then its fork. */
	assert_int_equal(regions__map(&t, 10, 0x1000, 0x1000, 0, "/bin/sh", 7, 100), 0);
	assert_int_equal(regions__map(&t, 20, 0x7000, 0x1000, 0, "/lib/libc.so", 12, 320), 0);
	assert_int_equal(regions__map(&t, 20, 0x5000, 0x1000, 0, "/bin/x", 6, 310), 0);
	assert_int_equal(regions__exec(&t, 20, 300), 0);
	assert_int_equal(regions__fork(&t, 20, 10, 200), 0);
	assert_string_equal(find(20, 0x7010, &off), "/lib/libc.so");
	assert_string_equal(find(20, 0x5010, &off), "/bin/x");
	assert_null(find(20, 0x1010, &off));	/* the shell is not the child's now */
	assert_string_equal(strtab__str(&strings, regions__exe(&t, 20)), "/bin/x");
	/* an old program's mapping read after the exec is dropped */
	assert_int_equal(regions__map(&t, 20, 0x9000, 0x1000, 0, "/lib/old.so", 11, 250), 0);
	assert_null(find(20, 0x9010, &off));
	/* a fork read after what the child mapped since keeps those */
	assert_int_equal(regions__map(&t, 30, 0x8000, 0x1000, 0, "/lib/dl.so", 10, 420), 0);
	assert_int_equal(regions__fork(&t, 30, 10, 400), 0);
	assert_string_equal(find(30, 0x8010, &off), "/lib/dl.so");
	assert_string_equal(find(30, 0x1010, &off), "/bin/sh");
	assert_string_equal(strtab__str(&strings, regions__exe(&t, 30)), "/bin/sh");
	/* without times (a maps snapshot, an old recording): as they come */
	assert_int_equal(regions__exec(&t, 30, 0), 0);
	assert_null(find(30, 0x8010, &off));
	teardown();
}

static void maps_lines(void **state)
{
	(void)state;
	uint64_t off;
	setup();
	const char *lines[] = {
		"55d0c0a00000-55d0c0a02000 r--p 00000000 fe:01 123 /usr/bin/x\n",
		"55d0c0a02000-55d0c0a05000 r-xp 00002000 fe:01 123 /usr/bin/x\n",
		"7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n",
		"7f0000002000-7f0000003000 r-xp 00001000 fe:01 9 /tmp/my lib.so (deleted)\n",
		"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]\n",
	};
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(regions__maps_line(&t, 7, lines[i], strlen(lines[i])), 0);
	assert_null(find(7, 0x55d0c0a00100, &off));	/* not executable */
	assert_string_equal(find(7, 0x55d0c0a02100, &off), "/usr/bin/x");
	assert_int_equal(off, 0x2100);
	assert_string_equal(find(7, 0x7f0000000010, &off), "[anon]");
	assert_string_equal(find(7, 0x7f0000002010, &off), "/tmp/my lib.so");
	assert_string_equal(find(7, 0x7ffd00000010, &off), "[vdso]");
	assert_int_equal(regions__maps_line(&t, 7, "zz-1 r-xp", 9), -EINVAL);
	teardown();
}

/* This process's own code regions, as pid 1 of the table. */
static void load_own_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		assert_int_equal(regions__maps_line(&t, 1, line, strlen(line)), 0);
	fclose(f);
}

__attribute__((noinline)) int cpuledger_test_marker(int x)
{
	return x * 3 + 1;
}

/* This binary's own function, found as a sample would be. */
static void symbolizes_own_function(void **state)
{
	(void)state;
	setup();
	load_own_maps();
	uint64_t ip = (uint64_t)(uintptr_t)cpuledger_test_marker + 2, off;
	const char *dso = find(1, ip, &off);
	assert_non_null(dso);
	struct symbolizer *s = symbolizer__new("/");
	struct sym sym;
	assert_int_equal(symbolizer__lookup(s, dso, off, &sym), 0);
	assert_string_equal(sym.name, "cpuledger_test_marker");
	assert_int_equal(sym.start, off - 2);
	assert_true(sym.end > off);
	assert_int_equal(symbolizer__lookup(s, "/nonexistent/lib.so", 0x100, &sym), -ENOENT);
	assert_int_equal(symbolizer__lookup(s, "[vdso]", 0x100, &sym), -ENOENT);
	symbolizer__free(s);
	teardown();
}

/* Two copies of one file (one library under two paths): one build-id,
 * and both resolve. */
static void shares_by_build_id(void **state)
{
	(void)state;
	char dir[] = "/tmp/cpuledger-bid-XXXXXX", a[128], b[128], cmd[512];
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/one", dir);
	snprintf(b, sizeof(b), "%s/two", dir);
	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe %s && cp %s %s", (int)getpid(), a, a, b);
	assert_int_equal(system(cmd), 0);
	/* the marker's offset in the file, from this process's own map */
	setup();
	load_own_maps();
	uint64_t off;
	assert_non_null(find(1, (uint64_t)(uintptr_t)cpuledger_test_marker, &off));
	teardown();

	struct symbolizer *s = symbolizer__new("/");
	char ida[160], idb[160];
	assert_int_equal(symbolizer__build_id(s, a, ida, sizeof(ida)), 0);
	assert_int_equal(symbolizer__build_id(s, b, idb, sizeof(idb)), 0);
	assert_string_equal(ida, idb);
	assert_true(strlen(ida) >= 16);
	struct sym sym;
	assert_int_equal(symbolizer__lookup(s, b, off, &sym), 0);
	assert_string_equal(sym.name, "cpuledger_test_marker");
	assert_int_equal(symbolizer__lookup(s, a, off, &sym), 0);
	assert_string_equal(sym.name, "cpuledger_test_marker");
	symbolizer__free(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void kernel_symbols(void **state)
{
	(void)state;
	char root[512];
	snprintf(root, sizeof(root), "%s/tests/fixtures/root-kallsyms",
		 getenv("CPULEDGER_ROOT") ? getenv("CPULEDGER_ROOT") : ".");
	struct symbolizer *s = symbolizer__new(root);
	struct sym sym;
	assert_int_equal(symbolizer__lookup(s, "[kernel.kallsyms]", 0xffffffff81003050ULL, &sym), 0);
	assert_string_equal(sym.name, "__x64_sys_getppid");
	assert_int_equal(sym.start, 0xffffffff81003000ULL);
	assert_int_equal(sym.end, 0xffffffff81003100ULL);
	/* data symbols are not functions: the text before them holds */
	assert_int_equal(symbolizer__lookup(s, "[kernel.kallsyms]", 0xffffffff81002010ULL, &sym), 0);
	assert_string_equal(sym.name, "do_one_initcall");
	assert_int_equal(symbolizer__lookup(s, "[kernel.kallsyms]", 0xffffffffc0000010ULL, &sym), 0);
	assert_string_equal(sym.name, "ext4_sync_fs");
	assert_int_equal(symbolizer__lookup(s, "[kernel.kallsyms]", 0x1000, &sym), -ENOENT);
	symbolizer__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(maps_replace_fork_exec),
		cmocka_unit_test(changes_out_of_order),
		cmocka_unit_test(maps_lines),
		cmocka_unit_test(symbolizes_own_function),
		cmocka_unit_test(shares_by_build_id),
		cmocka_unit_test(kernel_symbols),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
