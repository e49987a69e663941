/*
 * cpuledger sched: the BPF collector (src/bpf/sched_clock.h) from the
 * command line: every thread's CPU time, steal and run-queue wait as the
 * kernel's own clocks count them at each context switch, over a
 * duration or until SIGINT. Small on purpose: record, agent and top take
 * the collector as one of their sources later (issue 21); this is where
 * its figures are seen and tested now (docs/bpf.md).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "../bpf/sched_clock.h"
#include "../collect/procfs.h"
#include "../format/procstat.h"
#include "../report/report.h"
#include "../collect/clock.h"
#include "../core/units.h"
#include "../core/banned.h"

enum { S_DURATION = 1, S_PID, S_FORMAT, S_STINTS, S_MAX_THREADS, S_WAIT_EVENTS, S_STEAL_FROM,
       S_INTERVAL };

static const struct cli_option sched_options[] = {
	{ "duration", 'd', "SEC", S_DURATION, "collect for SEC seconds (default: until SIGINT\n"
	  "or SIGTERM)" },
	{ "pid", 'p', "PID[,PID]", S_PID, "print only the threads of these processes" },
	{ "format", 0, "FORMAT", S_FORMAT, "text (default) or json", "text json" },
	{ "stints", 0, "FILE", S_STINTS, "write every stint to FILE as CSV (tid, pid, cpu,\n"
	  "start and end in CLOCK_MONOTONIC ns, steal_ns, runtime_ns)" },
	{ "max-threads", 0, "N", S_MAX_THREADS, "threads the kernel map holds (default 16384);\n"
	  "threads past it are counted as map_full, not measured" },
	{ "wait-from-events", 0, NULL, S_WAIT_EVENTS, "time run-queue waits from wakeups and\n"
	  "preemptions, even where the kernel keeps run_delay" },
	{ "steal-from", 0, "SOURCE", S_STEAL_FROM, "auto (default: the KVM steal clock, else the\n"
	  "kernel's tick-granular steal), kvm, or cpustat", "auto kvm cpustat" },
	{ "interval", 0, "SEC", S_INTERVAL, "with --format json: one line a collection every SEC\n"
	  "seconds, what each thread and CPU did since the last" },
	{ 0 },
};

static const struct cli_option *const sched_tables[] = { sched_options, NULL };

const struct cli_command sched_command = {
	"sched", "[options]",
	"Per thread CPU time, steal and run-queue wait, read by BPF programs from\n"
	"the kernel's own clocks at every context switch (the KVM steal clock,\n"
	"sum_exec_runtime, run_delay). Needs root (CAP_BPF and CAP_PERFMON) and\n"
	"a kernel with BTF.",
	sched_tables, NULL, false,
};

struct sched_args {
	uint64_t duration_s;	/* 0: until a signal */
	struct cli_ids pids;
	bool json;
	const char *stints;
	uint64_t interval_s;	/* 0: one result at the end */
	struct sched_clock_opts opts;
	bool help;	/* --help printed: nothing more to do */
};

/* Per CPU at one end: the steal clock (in the collector) and /proc/stat's. */
struct ends {
	struct sched_clock_cpu *cpus;
	uint64_t *kernel;	/* /proc/stat steal, ticks */
	uint8_t *seen;
	uint64_t mono_ns;
};

static int parse_steal_from(const char *arg, enum sched_clock_steal_from *to)
{
	static const char *const names[] = { "auto", "kvm", "cpustat" };
	for (int i = 0; i < 3; i++)
		if (!strcmp(arg, names[i])) {
			*to = (enum sched_clock_steal_from)i;
			return 0;
		}
	cli_error("--steal-from: '%s' is not auto, kvm or cpustat", arg);
	return EXIT_USAGE;
}

static int parse_args(int argc, char **argv, struct sched_args *a)
{
	const char *arg;
	int id;
	uint64_t v;
	cli_begin();
	while ((id = cli_next(&sched_command, argc, argv, &arg)) > 0) {
		switch (id) {
		case S_DURATION:
			if (cli_parse_u64("--duration", arg, 1, 86400 * 365, &a->duration_s))
				return EXIT_USAGE;
			break;
		case S_PID:
			if (cli_parse_ids("--pid", arg, &a->pids))
				return EXIT_USAGE;
			break;
		case S_FORMAT:
			if (strcmp(arg, "text") && strcmp(arg, "json")) {
				cli_error("--format: '%s' is not text or json", arg);
				return EXIT_USAGE;
			}
			a->json = !strcmp(arg, "json");
			break;
		case S_STINTS:
			a->stints = arg;
			a->opts.stints = true;
			break;
		case S_MAX_THREADS:
			if (cli_parse_u64("--max-threads", arg, 1, 1u << 24, &v))
				return EXIT_USAGE;
			a->opts.max_threads = (uint32_t)v;
			break;
		case S_WAIT_EVENTS:
			a->opts.wait_from_events = true;
			break;
		case S_STEAL_FROM:
			if (parse_steal_from(arg, &a->opts.steal_from))
				return EXIT_USAGE;
			break;
		case S_INTERVAL:
			if (cli_parse_u64("--interval", arg, 1, 86400, &a->interval_s))
				return EXIT_USAGE;
			break;
		}
	}
	if (id == CLI_HELP) {
		cli_usage(stdout, &sched_command);
		a->help = true;
		return 0;
	}
	if (id == CLI_BAD)
		return EXIT_USAGE;
	if (optind < argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (a->interval_s && (!a->json || a->stints)) {
		cli_error("--interval: needs --format json, and no --stints");
		return EXIT_USAGE;
	}
	return 0;
}

static int stint_csv(void *ctx, const struct sched_clock_stint *s)
{
	fprintf(ctx, "%u,%u,%u,%llu,%llu,%llu,%llu\n", s->tid, s->pid, s->cpu,
		(unsigned long long)s->start_ns, (unsigned long long)s->end_ns,
		(unsigned long long)s->steal_ns, (unsigned long long)s->runtime_ns);
	return 0;
}

/* The signals that stop a collection, waited for with sigtimedwait. */
static void stop_signals(sigset_t *stop)
{
	sigemptyset(stop);
	sigaddset(stop, SIGINT);
	sigaddset(stop, SIGTERM);
	sigaddset(stop, SIGHUP);
}

/* Waits for the duration or a stop signal, draining stints meanwhile. */
static int collect(struct sched_clock *sc, const struct sched_args *a, FILE *stints)
{
	sigset_t stop;
	stop_signals(&stop);
	uint64_t end = a->duration_s ? clock_mono_ns() + a->duration_s * NSEC_PER_SEC : UINT64_MAX;
	for (;;) {
		uint64_t now = clock_mono_ns();
		if (now >= end)
			break;
		uint64_t left = end - now, step = stints ? 100000000u : left;
		if (step > left)
			step = left;
		struct timespec ts = { (time_t)(step / NSEC_PER_SEC), (long)(step % NSEC_PER_SEC) };
		if (sigtimedwait(&stop, NULL, &ts) > 0)
			break;
		if (stints && sched_clock__poll_stints(sc, 0, stint_csv, stints) < 0)
			return -EIO;
	}
	if (stints && sched_clock__poll_stints(sc, 0, stint_csv, stints) < 0)
		return -EIO;
	return 0;
}

/* Said once loaded (tests and scripts wait for it): where each figure
 * comes from. */
static void say_collecting(const struct sched_clock *sc)
{
	char said[512];
	sched_clock__describe(sc, said, sizeof(said));
	fprintf(stderr, "cpuledger sched: collecting; %s\n", said);
}

static int read_ends(struct sched_clock *sc, struct ends *e)
{
	uint32_t n = sched_clock__ncpus(sc);
	e->cpus = calloc(n, sizeof(*e->cpus));
	e->kernel = calloc(n, sizeof(*e->kernel));
	e->seen = calloc(n, 1);
	if (!e->cpus || !e->kernel || !e->seen)
		return -ENOMEM;
	struct sched_clock_thread *t;
	size_t nt;
	int err = sched_clock__read(sc, false, e->cpus, &t, &nt);
	free(t);
	size_t len;
	char *text = procfs_read("/", "proc/stat", &len);
	if (text && procstat_steal(text, e->kernel, e->seen, n) < 0)
		memset(e->seen, 0, n);
	free(text);
	e->mono_ns = clock_mono_ns();
	return err;
}

static void ends__release(struct ends *e)
{
	free(e->cpus);
	free(e->kernel);
	free(e->seen);
}

static bool pid_wanted(const struct sched_args *a, uint32_t pid)
{
	for (size_t i = 0; i < a->pids.n; i++)
		if (a->pids.v[i] == pid)
			return true;
	return a->pids.n == 0;
}

static bool wanted(const struct sched_args *a, const struct sched_clock_thread *t)
{
	return (t->stints || t->runtime_ns || t->wait_ns) && pid_wanted(a, t->pid);
}

static int by_cpu(const void *x, const void *y)
{
	const struct sched_clock_thread *a = x, *b = y;
	if (a->cpu_ns != b->cpu_ns)
		return a->cpu_ns < b->cpu_ns ? 1 : -1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static void put_u64_or_null(FILE *f, const char *key, bool known, uint64_t v)
{
	if (known)
		fprintf(f, "\"%s\": %llu", key, (unsigned long long)v);
	else
		fprintf(f, "\"%s\": null", key);
}

/* A thread's object in JSON, totals (print_json: its flag "partial")
 * and collections (print_collection: "new") alike. */
static void put_thread(FILE *f, const struct sched_clock_status *st,
		       const struct sched_clock_delta *t, const char *comm, const char *flag,
		       bool flag_set)
{
	fprintf(f, "{\"tid\": %u, \"pid\": %u, \"comm\": ", t->tid, t->pid);
	json_put_string(f, comm);
	fprintf(f, ", \"cpu_ns\": %llu, ", (unsigned long long)t->cpu_ns);
	put_u64_or_null(f, "steal_ns", st->steal_known, t->steal_ns);
	fprintf(f, ", \"wait_ns\": %llu, ", (unsigned long long)t->wait_ns);
	put_u64_or_null(f, "irq_ns", st->irq_known, t->irq_ns);
	fprintf(f, ", \"on_ns\": %llu, \"runtime_ns\": %llu, \"seen_runtime_ns\": %llu,"
		" \"stints\": %llu, \"exited\": %s, \"%s\": %s}", (unsigned long long)t->on_ns,
		(unsigned long long)t->runtime_ns, (unsigned long long)t->seen_runtime_ns,
		(unsigned long long)t->stints, t->flags & SCHED_CLOCK_EXITED ? "true" : "false",
		flag, flag_set ? "true" : "false");
}

struct result {
	const struct sched_clock_status *st;
	const struct ends *start, *end;
	uint32_t ncpus;
	const struct sched_clock_thread *t;
	size_t nt;
	uint64_t tick_ns;
};

static void print_json(FILE *f, const struct sched_args *a, const struct result *r)
{
	const struct sched_clock_status *st = r->st;
	fprintf(f, "{\"duration_ns\": %llu, \"steal_source\": ",
		(unsigned long long)(r->end->mono_ns - r->start->mono_ns));
	json_put_string(f, st->steal_source);
	fprintf(f, ", \"wait_source\": ");
	json_put_string(f, st->wait_source);
	fprintf(f, ", \"steal_resolution\": ");
	json_put_string(f, st->steal_resolution);
	fprintf(f, ", \"irq_source\": ");
	json_put_string(f, st->irq_source);
	fprintf(f, ", \"map_reads\": ");
	json_put_string(f, st->map_reads);
	fprintf(f, ", \"runtime_excludes_steal\": %s,"
		" \"switches\": %llu, \"unseen\": %llu, \"reused\": %llu, \"map_full\": %llu, \"ring_lost\": %llu, \"torn_reads\": %llu,"
		"\n \"threads\": [", st->runtime_excludes_steal ? "true" : "false",
		(unsigned long long)st->switches, (unsigned long long)st->unseen,
		(unsigned long long)st->reused,		(unsigned long long)st->map_full,
		(unsigned long long)st->ring_lost, (unsigned long long)st->torn_reads);
	bool first = true;
	for (size_t i = 0; i < r->nt; i++) {
		const struct sched_clock_thread *t = &r->t[i];
		if (!wanted(a, t))
			continue;
		fputs(first ? "\n  " : ",\n  ", f);
		put_thread(f, st, &(struct sched_clock_delta){
			.tid = t->tid, .pid = t->pid, .cpu_ns = t->cpu_ns, .steal_ns = t->steal_ns,
			.wait_ns = t->wait_ns, .irq_ns = t->irq_ns, .on_ns = t->on_ns,
			.runtime_ns = t->runtime_ns, .stints = t->stints,
			.seen_runtime_ns = t->seen_runtime_ns, .flags = t->flags }, t->comm,
			"partial", t->flags & SCHED_CLOCK_PARTIAL);
		first = false;
	}
	fprintf(f, "],\n \"cpus\": [");
	for (uint32_t c = 0; c < r->ncpus; c++) {
		const struct sched_clock_cpu *s = &r->start->cpus[c], *e = &r->end->cpus[c];
		fprintf(f, "%s\n  {\"cpu\": %u, ", c ? "," : "", c);
		put_u64_or_null(f, "steal_ns", st->steal_known, e->steal_clock_ns - s->steal_clock_ns);
		fprintf(f, ", ");
		bool k = r->start->seen[c] && r->end->seen[c];
		put_u64_or_null(f, "kernel_steal_ns", k,
				k ? (r->end->kernel[c] - r->start->kernel[c]) * r->tick_ns : 0);
		fprintf(f, ", \"idle_ns\": %llu, ", (unsigned long long)(e->idle_ns - s->idle_ns));
		put_u64_or_null(f, "idle_steal_ns", st->steal_known,
				e->idle_steal_ns - s->idle_steal_ns);
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
}

static void ms_or_unknown(FILE *f, bool known, uint64_t ns)
{
	if (known)
		fprintf(f, " %10.3f", ns / 1e6);
	else
		fprintf(f, " %10s", "unknown");
}

static void print_text(FILE *f, const struct sched_args *a, const struct result *r)
{
	const struct sched_clock_status *st = r->st;
	fprintf(f, "%.3f s; steal: %s (resolution %s); wait: %s; irq: %s; %llu switches\n",
		(double)(r->end->mono_ns - r->start->mono_ns) / NSEC_PER_SEC, st->steal_source,
		st->steal_resolution, st->wait_source, st->irq_source,
		(unsigned long long)st->switches);
	if (st->map_full || st->ring_lost)
		fprintf(f, "not measured: %llu threads (map full), %llu stints (ring full)\n",
			(unsigned long long)st->map_full, (unsigned long long)st->ring_lost);
	fprintf(f, "\n%8s %8s %-16s %10s %10s %10s %8s\n", "TID", "PID", "COMM", "CPU_MS",
		"STEAL_MS", "WAIT_MS", "STINTS");
	for (size_t i = 0; i < r->nt; i++) {
		const struct sched_clock_thread *t = &r->t[i];
		if (!wanted(a, t))
			continue;
		fprintf(f, "%8u %8u ", t->tid, t->pid);
		text_put(f, t->comm, 16, 16);
		fprintf(f, " %10.3f", t->cpu_ns / 1e6);
		ms_or_unknown(f, st->steal_known, t->steal_ns);
		fprintf(f, " %10.3f %8llu\n", t->wait_ns / 1e6, (unsigned long long)t->stints);
	}
	fprintf(f, "\n%4s %10s %10s %10s\n", "CPU", "STEAL_MS", "PROC_STAT", "IDLE_MS");
	for (uint32_t c = 0; c < r->ncpus; c++) {
		const struct sched_clock_cpu *s = &r->start->cpus[c], *e = &r->end->cpus[c];
		fprintf(f, "%4u", c);
		ms_or_unknown(f, st->steal_known, e->steal_clock_ns - s->steal_clock_ns);
		bool k = r->start->seen[c] && r->end->seen[c];
		ms_or_unknown(f, k, (r->end->kernel[c] - r->start->kernel[c]) * r->tick_ns);
		fprintf(f, " %10.3f\n", (e->idle_ns - s->idle_ns) / 1e6);
	}
}

/* One collection as one JSON line: what each thread and CPU did since
 * the last (sched_clock__collect). */
static void print_collection(FILE *f, const struct sched_args *a, uint64_t n,
			     const struct sched_clock_status *st,
			     const struct sched_clock_collection *c)
{
	fprintf(f, "{\"collection\": %llu, \"start_ns\": %llu, \"end_ns\": %llu, \"steal_source\": ",
		(unsigned long long)n, (unsigned long long)c->start_ns,
		(unsigned long long)c->end_ns);
	json_put_string(f, st->steal_source);
	fprintf(f, ", \"map_reads\": ");
	json_put_string(f, st->map_reads);
	fprintf(f, ", \"vanished\": %u, \"threads\": [", c->vanished);
	bool first = true;
	for (size_t i = 0; i < c->nthreads; i++) {
		const struct sched_clock_delta *t = &c->threads[i];
		if (!pid_wanted(a, t->pid))
			continue;
		fputs(first ? "" : ", ", f);
		put_thread(f, st, t, t->comm, "new", t->flags & SCHED_CLOCK_NEW);
		first = false;
	}
	fprintf(f, "], \"cpus\": [");
	for (uint32_t i = 0; i < c->ncpus; i++) {
		fprintf(f, "%s{\"cpu\": %u, ", i ? ", " : "", i);
		put_u64_or_null(f, "steal_ns", st->steal_known, c->cpus[i].steal_ns);
		fprintf(f, ", \"idle_ns\": %llu, ", (unsigned long long)c->cpus[i].idle_ns);
		put_u64_or_null(f, "irq_ns", st->irq_known, c->cpus[i].irq_ns);
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
	fflush(f);
}

/* A collection every --interval until the duration or a stop signal,
 * and a last one then; an exit status. */
static int run_interval(struct sched_clock *sc, const struct sched_args *a)
{
	sigset_t stop;
	stop_signals(&stop);
	uint64_t end = a->duration_s ? clock_mono_ns() + a->duration_s * NSEC_PER_SEC : UINT64_MAX;
	bool last = false;
	for (uint64_t n = 1; !last; n++) {
		uint64_t now = clock_mono_ns(), step = a->interval_s * NSEC_PER_SEC;
		if (end - now <= step) {
			step = end > now ? end - now : 0;
			last = true;
		}
		struct timespec ts = { (time_t)(step / NSEC_PER_SEC), (long)(step % NSEC_PER_SEC) };
		if (sigtimedwait(&stop, NULL, &ts) > 0)
			last = true;
		struct sched_clock_collection c;
		int err = sched_clock__collect(sc, &c);
		if (err) {
			cli_error("cannot read the collector's maps: %s", strerror(-err));
			return EXIT_RUNTIME;
		}
		print_collection(stdout, a, n, sched_clock__status(sc), &c);
	}
	return 0;
}

/* Collects, then prints; an exit status. */
static int run(struct sched_clock *sc, const struct sched_args *a, FILE *stints)
{
	struct ends start = { 0 }, end = { 0 };
	struct sched_clock_thread *t = NULL;
	size_t nt = 0;
	int status = EXIT_RUNTIME;
	if (read_ends(sc, &start)) {
		cli_error("cannot read the collector's maps: %s", strerror(errno));
		goto out;
	}
	say_collecting(sc);
	if (collect(sc, a, stints)) {
		cli_error("cannot write the stints: %s", strerror(errno));
		goto out;
	}
	if (read_ends(sc, &end) || sched_clock__read(sc, false, NULL, &t, &nt)) {
		cli_error("cannot read the collector's maps: %s", strerror(errno));
		goto out;
	}
	qsort(t, nt, sizeof(*t), by_cpu);
	long hz = sysconf(_SC_CLK_TCK);
	struct result r = { sched_clock__status(sc), &start, &end, sched_clock__ncpus(sc), t, nt,
			    NSEC_PER_SEC / (uint64_t)(hz > 0 ? hz : 100) };
	(a->json ? print_json : print_text)(stdout, a, &r);
	status = 0;
out:
	free(t);
	ends__release(&start);
	ends__release(&end);
	return status;
}

int cmd_sched(int argc, char **argv)
{
	struct sched_args a = { 0 };
	int status = parse_args(argc, argv, &a);
	if (status || a.help)
		goto out;
	/* the stop signals wait for sigtimedwait, from before the load */
	sigset_t stop;
	stop_signals(&stop);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	struct outfile out = { 0 };
	if (a.stints && outfile__open(&out, a.stints)) {
		status = EXIT_RUNTIME;
		goto out;
	}
	char why[512];
	struct sched_clock *sc = sched_clock__new(&a.opts, why, sizeof(why));
	if (!sc) {
		cli_error("cannot start the BPF collector: %s", why);
		outfile__abort(&out);
		status = EXIT_RUNTIME;
		goto out;
	}
	if (out.f)
		fputs("tid,pid,cpu,start_ns,end_ns,steal_ns,runtime_ns\n", out.f);
	if (a.interval_s) {
		say_collecting(sc);
		status = run_interval(sc, &a);
	} else {
		status = run(sc, &a, out.f);
	}
	sched_clock__free(sc);
	if (out.f) {
		if (status)
			outfile__abort(&out);
		else if (outfile__commit(&out))
			status = EXIT_RUNTIME;
	}
out:
	free(a.pids.v);
	return status;
}
