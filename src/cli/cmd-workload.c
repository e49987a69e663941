/*
 * cpuledger workload: built-in programs to record, so that live tests and
 * demonstrations need nothing installed. Each spends its time in functions
 * of its own, so reports can be checked against what it did.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "cli.h"
#include "options.h"
#include "../collect/clock.h"
#include "../core/units.h"
#include "../core/banned.h"

enum { W_SECONDS = 1, W_THREADS, W_RATE, W_DUTY, W_ITERATIONS, W_SCHEDSTAT, W_EXEC };

static const struct cli_option workload_options[] = {
	{ "seconds", 0, "N", W_SECONDS, "run for N seconds (default 5)" },
	{ "threads", 0, "N", W_THREADS, "threads for 'threads' (default 2)" },
	{ "rate", 0, "N", W_RATE, "processes a second for 'spawn' (default 2000)" },
	{ "exec", 0, NULL, W_EXEC, "'spawn': each process execs /bin/true" },
	{ "duty", 0, "F", W_DUTY, "'threads': each spins this part of every 10 ms\n"
	  "and sleeps the rest (default 1: always spins)" },
	{ "iterations", 0, "N", W_ITERATIONS, "spin and threads: each thread does N thousand\n"
	  "loop iterations and stops (fixed work, for timing)" },
	{ "schedstat", 0, NULL, W_SCHEDSTAT, "'threads': each thread, as it ends, prints\n"
	  "'schedstat TID NS', the kernel's run time of it" },
	{ 0 },
};

static const struct cli_option *const workload_tables[] = { workload_options, NULL };

const struct cli_command workload_command = {
	"workload", "NAME [options]",
	"Built-in programs to record, so that tests need nothing installed:\n"
	"  spin      one thread spinning in user code\n"
	"  threads   --threads threads, each spinning in a function of its own\n"
	"  syscall   a loop of cheap system calls (time in the kernel)\n"
	"  libcall   a loop of C library calls (time in libc)\n"
	"  spawn     --rate short processes a second (forks that exit at once;\n"
	"            with --exec, /bin/true), reaped; says how many it managed",
	workload_tables, NULL, false,
};

static atomic_bool stop;
static uint64_t iterations;	/* --iterations: fixed work, then stop */

/* True when the workload should stop: time is up, or with --iterations,
 * this thread has done its share (counted in thousands of inner loops). */
static inline bool done(uint64_t *count)
{
	if (iterations && ++*count >= iterations)
		return true;
	return atomic_load_explicit(&stop, memory_order_relaxed);
}

/* The spinning functions are kept apart (noinline, distinct bodies) so a
 * profile can tell them apart. */
__attribute__((noinline)) static uint64_t spin_a(void)
{
	volatile uint64_t x = 0;
	uint64_t n = 0;
	while (!done(&n))
		for (int i = 0; i < 1000; i++)
			x += (uint64_t)i;
	return x;
}

__attribute__((noinline)) static uint64_t spin_b(void)
{
	volatile uint64_t x = 1;
	uint64_t n = 0;
	while (!done(&n))
		for (int i = 0; i < 1000; i++)
			x ^= x << 1 | (uint64_t)i;
	return x;
}

__attribute__((noinline)) static uint64_t spin_c(void)
{
	volatile uint64_t x = 3;
	uint64_t n = 0;
	while (!done(&n))
		for (int i = 0; i < 1000; i++)
			x = x * 7 + (uint64_t)i;
	return x;
}

static double duty = 1;	/* --duty: the part of each 10 ms a thread spins */

/* Spins for the duty's part of each 10 ms period and sleeps the rest: many
 * threads that run a little, as a server's do. */
__attribute__((noinline)) static void spin_part(void)
{
	volatile uint64_t x = 5;
	uint64_t busy = (uint64_t)(duty * 10000000.0);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint64_t t = clock_mono_ns();
		while (clock_mono_ns() - t < busy)
			for (int i = 0; i < 100; i++)
				x += (uint64_t)i;
		struct timespec ts = { 0, (long)(10000000 - busy) };
		nanosleep(&ts, NULL);
	}
}

static bool print_schedstat;	/* --schedstat */

/* The kernel's own count of the calling thread's run time: the first field
 * of its schedstat (sum_exec_runtime). Printed by a thread as it ends, it
 * covers the thread's whole life, so a recording that holds that life can
 * be checked against it to the nanosecond, with no window to line up. */
static void say_schedstat(void)
{
	char buf[128];
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f))
		fprintf(stderr, "schedstat %ld %llu\n", (long)gettid(),
			strtoull(buf, NULL, 10));
	fclose(f);
}

static void *spinner(void *arg)
{
	uintptr_t i = (uintptr_t)arg;
	uint64_t (*const fns[])(void) = { spin_a, spin_b, spin_c };
	if (duty < 1)
		spin_part();
	else
		fns[i % 3]();
	if (print_schedstat)
		say_schedstat();
	return NULL;
}

__attribute__((noinline)) static void syscall_loop(void)
{
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		for (int i = 0; i < 1000; i++)
			syscall(SYS_getppid);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) static void libcall_loop(void)
{
	static int v[4096];
	static char s[8192], d[8192];
	memset(s, 'x', sizeof(s) - 1);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int i = 0; i < 4096; i++)
			v[i] = (i * 7919) % 4096;
		qsort(v, 4096, sizeof(*v), cmp_int);
		memcpy(d, s, sizeof(s));
		if (strlen(d) == 0)
			break;
	}
}

/* Starts `rate` processes a second until stopped, reaping as it goes:
 * forks that exit at once, or with exec_them /bin/true (costlier: this
 * machine manages some hundreds a second). Returns how many it started. */
/* A process that starts and ends at once. vfork: no page tables are
 * copied, so it costs little more than the kernel's own work. */
__attribute__((noinline)) static pid_t quick_process(void)
{
	pid_t pid = vfork();
	if (pid == 0)
		_exit(0);
	return pid;
}

__attribute__((noinline)) static uint64_t spawn_loop(uint64_t rate, bool exec_them)
{
	static char *const argv[] = { "true", NULL };
	uint64_t started = 0, t0 = clock_mono_ns();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint64_t due = (clock_mono_ns() - t0) * rate / NSEC_PER_SEC;
		if (started >= due) {
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
		} else {
			pid_t pid = exec_them ? 0 : quick_process();
			if (exec_them &&
			    posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) != 0)
				pid = -1;
			started += pid > 0;
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	while (waitpid(-1, NULL, 0) > 0)
		;
	return started;
}

static void *timer(void *arg)
{
	uint64_t end = clock_mono_ns() + *(uint64_t *)arg;
	while (clock_mono_ns() < end) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	atomic_store(&stop, true);
	return NULL;
}

/* The workload called name, until the timer (or --iterations) stops it. */
static int run_workload(const char *name, uint64_t nthreads, uint64_t rate, bool exec_spawn)
{
	if (!strcmp(name, "spin")) {
		spin_a();
	} else if (!strcmp(name, "threads")) {
		pthread_t *t = calloc(nthreads, sizeof(*t));
		if (!t)
			return EXIT_RUNTIME;
		for (uintptr_t i = 0; i < nthreads; i++)
			if (pthread_create(&t[i], NULL, spinner, (void *)i)) {
				cli_error("cannot start thread %u", (unsigned)i);
				atomic_store(&stop, true);
				nthreads = i;
			}
		for (uintptr_t i = 0; i < nthreads; i++)
			pthread_join(t[i], NULL);
		free(t);
	} else if (!strcmp(name, "syscall")) {
		syscall_loop();
	} else if (!strcmp(name, "spawn")) {
		uint64_t t0 = clock_mono_ns(), n = spawn_loop(rate, exec_spawn);
		double secs = (double)(clock_mono_ns() - t0) / NSEC_PER_SEC;
		fprintf(stderr, "cpuledger workload: started %llu processes in %.1f s, "
			"%.0f a second (asked %llu)\n", (unsigned long long)n, secs,
			(double)n / secs, (unsigned long long)rate);
	} else {
		libcall_loop();
	}
	return 0;
}

int cmd_workload(int argc, char **argv)
{
	uint64_t seconds = 5, nthreads = 2, rate = 2000;
	bool exec_spawn = false;
	int id;
	const char *arg;
	cli_begin();
	while ((id = cli_next(&workload_command, argc, argv, &arg)) != CLI_END) {
		switch (id) {
		case W_DUTY:
			if (cli_parse_double("--duty", arg, &duty))
				return EXIT_USAGE;
			if (!(duty > 0 && duty <= 1)) {
				cli_error("--duty: '%s' is not a fraction above 0, at most 1", arg);
				return EXIT_USAGE;
			}
			break;
		case W_EXEC: exec_spawn = true; break;
		case W_SCHEDSTAT: print_schedstat = true; break;
		case W_RATE:
			if (cli_parse_u64("--rate", arg, 1, 100000, &rate))
				return EXIT_USAGE;
			break;
		case W_SECONDS:
			if (cli_parse_u64("--seconds", arg, 1, 86400, &seconds))
				return EXIT_USAGE;
			break;
		case W_THREADS:
			if (cli_parse_u64("--threads", arg, 1, 1024, &nthreads))
				return EXIT_USAGE;
			break;
		case W_ITERATIONS:
			if (cli_parse_u64("--iterations", arg, 1, UINT64_MAX / 2, &iterations))
				return EXIT_USAGE;
			break;
		case CLI_HELP:
			cli_usage(stdout, &workload_command);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		cli_error("give one workload: spin, threads, syscall, libcall or spawn");
		return EXIT_USAGE;
	}
	const char *name = argv[optind];
	if (strcmp(name, "spin") && strcmp(name, "threads") && strcmp(name, "syscall") &&
	    strcmp(name, "libcall") && strcmp(name, "spawn")) {
		cli_error("unknown workload '%s' (spin, threads, syscall, libcall or spawn)", name);
		return EXIT_USAGE;
	}

	uint64_t ns = seconds * NSEC_PER_SEC;
	pthread_t tm;
	if (pthread_create(&tm, NULL, timer, &ns)) {
		cli_error("cannot start a thread");
		return EXIT_RUNTIME;
	}
	int status = run_workload(name, nthreads, rate, exec_spawn);
	if (iterations)
		pthread_detach(tm);	/* the work is done: do not wait out --seconds */
	else
		pthread_join(tm, NULL);
	return status;
}
