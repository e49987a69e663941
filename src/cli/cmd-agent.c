/*
 * cpuledger agent: continuous accounting (docs/agent.md). Records every
 * CPU with the streaming engine for as long as it runs, commits one
 * collection per interval to the ledger, deletes what is older than the
 * retention, and, with --listen, serves /metrics (Prometheus) and
 * /debug/pprof/profile (continuous profilers). SIGTERM or SIGINT commits
 * the open interval and exits 0; SIGHUP re-reads the accounts file;
 * SIGUSR1 (cpuledger collect) asks for a collection now.
 *
 * The recording itself is live_run's; this file adds, through its hooks:
 * the metrics (a snapshot a second, on the recording's thread, handed to
 * the HTTP threads under a lock) and profiles (a second engine fed the
 * same events for the seconds asked).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "live.h"
#include "options.h"
#include "../agent/http.h"
#include "../analysis/metrics.h"
#include "../collect/cgroup.h"
#include "../collect/kernel_acct.h"
#include "../record/recorder.h"
#include "../report/report.h"
#include "../core/banned.h"

#define DEFAULT_LEDGER "/var/lib/cpuledger/cpuledger.db"

enum { A_LEDGER = 1, A_INTERVAL, A_FREQ, A_NO_CALL_GRAPH, A_ACCOUNTS, A_LISTEN, A_RETAIN,
       A_PROGRAMS, A_DURATION, A_MMAP_PAGES };

static const struct cli_option agent_options[] = {
	{ "ledger", 0, "PATH", A_LEDGER, "the ledger (default " DEFAULT_LEDGER ")" },
	{ "interval", 0, "SEC", A_INTERVAL, "a collection every SEC seconds (default 60)" },
	{ "freq", 'F', "HZ", A_FREQ, "cpu-clock samples per second (default 49: CPU time\n"
	  "and steal come from the tracepoints, samples only\nsplit them among functions)" },
	{ "no-call-graph", 0, NULL, A_NO_CALL_GRAPH, "no call chains (profiles then have one\n"
	  "frame a sample)" },
	{ "accounts", 0, "FILE", A_ACCOUNTS, "charge accounts by these rules (docs/accounts.md);\n"
	  "SIGHUP reads the file again" },
	{ "listen", 0, "ADDR:PORT", A_LISTEN, "serve /metrics and /debug/pprof/profile there\n"
	  "(off unless given; 127.0.0.1:9465)" },
	{ "retain", 0, "DAYS", A_RETAIN, "delete collections older than DAYS (default 90;\n"
	  "0 keeps everything)" },
	{ "programs", 0, "N", A_PROGRAMS, "at most N program label values in /metrics, the\n"
	  "rest as \"other\" (default 50)" },
	{ "duration", 0, "SEC", A_DURATION, "stop after SEC seconds (default: until a signal)" },
	{ "mmap-pages", 'm', "N", A_MMAP_PAGES, "ring buffer pages per CPU, a power of 2" },
	{ 0 },
};

static const struct cli_option *const agent_tables[] = { agent_options, NULL };

const struct cli_command agent_command = {
	"agent", "[options]",
	"Records every CPU for as long as it runs and adds a collection to the\n"
	"ledger every interval: CPU time and steal per process, thread and account,\n"
	"for bills (cpuledger bill) and, with --listen, for Prometheus.",
	agent_tables,
	"SIGTERM or SIGINT adds the open interval and exits 0; SIGHUP reads the\n"
	"accounts file again; 'cpuledger collect PID' asks for a collection now.\n"
	"docs/agent.md has a systemd unit and Prometheus rules.",
	false,
};

/* A profile of some seconds: asked by an HTTP thread, taken by the
 * recording's. */
struct profile {
	bool asked, active, done;
	unsigned seconds;
	uint64_t start_ns, end_ns;
	struct engine *engine;
	struct analysis a;
	int err;
	char *body;
	size_t len;
};

struct agent {
	const char *accounts_path;
	struct account_rules rules[2];	/* the ones in use, and the last */
	int current;
	const char *listen;
	uint32_t max_programs;
	struct metrics m;
	bool metrics_ready;
	uint64_t next_snapshot;
	struct http_server *http;
	pthread_mutex_t lock;
	pthread_cond_t profile_done;
	/* under lock: the last snapshot, in both formats */
	char *prom, *om;
	size_t prom_len, om_len;
	struct profile p;		/* under lock */
	/* per CPU, for the snapshot */
	uint32_t ncpus;
	uint64_t *cpu_steal, *kernel_steal, *lost;
	bool *known;
	/* per labelled cgroup, for the snapshot: its throttled time */
	struct cgroup_fs cgfs;
	bool cgfs_found;
	uint64_t *cg_throttled;
	bool *cg_known;
	uint32_t cg_cap;
};

/* --- the HTTP threads' side */

static int http_metrics(void *ctx, bool om, char **body, size_t *len)
{
	struct agent *g = ctx;
	pthread_mutex_lock(&g->lock);
	const char *src = om ? g->om : g->prom;
	size_t n = om ? g->om_len : g->prom_len;
	*body = src ? malloc(n ? n : 1) : NULL;
	if (*body)
		memcpy(*body, src, n);
	*len = n;
	pthread_mutex_unlock(&g->lock);
	return *body ? 0 : -ENOENT;
}

static int http_profile(void *ctx, unsigned seconds, char **body, size_t *len)
{
	struct agent *g = ctx;
	pthread_mutex_lock(&g->lock);
	if (g->p.asked || g->p.active) {
		pthread_mutex_unlock(&g->lock);
		return -EBUSY;
	}
	g->p = (struct profile){ .asked = true, .seconds = seconds };
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += seconds + 60;
	int err = 0;
	while (!g->p.done && !err)
		err = pthread_cond_timedwait(&g->profile_done, &g->lock, &until);
	if (g->p.done && !g->p.err) {
		*body = g->p.body;
		*len = g->p.len;
		g->p.body = NULL;
		err = 0;
	} else {
		err = g->p.done ? g->p.err : -ETIMEDOUT;
	}
	g->p.asked = g->p.done = false;
	pthread_mutex_unlock(&g->lock);
	return err;
}

/* --- the recording's side */

/* A thread's last figures, and its end: into the metrics. */
static int hook_program(void *ctx, const struct engine *e, const struct eng_thread *t,
			const struct eng_figures *f, bool final)
{
	struct agent *g = ctx;
	return g->metrics_ready && final ? metrics__program(&g->m, e, t, f, true) : 0;
}

static int hook_gone(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	struct agent *g = ctx;
	return g->metrics_ready ? metrics__thread_gone(&g->m, e, t) : 0;
}

static int hook_started(void *ctx, struct recorder *r, struct engine *e)
{
	(void)e;
	struct agent *g = ctx;
	g->ncpus = recorder__ncpus(r);
	uint32_t n = g->ncpus ? g->ncpus : 1;
	g->cpu_steal = calloc(n, sizeof(*g->cpu_steal));
	g->kernel_steal = calloc(n, sizeof(*g->kernel_steal));
	g->lost = calloc(n, sizeof(*g->lost));
	g->known = calloc(n, sizeof(*g->known));
	g->cgfs_found = !cgroup_fs__find(&g->cgfs, "/");
	if (!g->cpu_steal || !g->kernel_steal || !g->lost || !g->known ||
	    metrics__init(&g->m, recorder__names(r), g->max_programs)) {
		cli_error("out of memory");
		return EXIT_RUNTIME;
	}
	g->metrics_ready = true;
	if (g->listen) {
		char msg[256];
		struct http_handlers h = { g, http_metrics, http_profile };
		if (!(g->http = http_server__start(g->listen, &h, msg, sizeof(msg)))) {
			cli_error("%s", msg);
			return EXIT_RUNTIME;
		}
	}
	return 0;
}

/* Each labelled cgroup's throttled time now, from its cpu.stat: a few
 * dozen small reads a second at most (--programs bounds them). */
static int read_cgroups(struct agent *g)
{
	uint32_t n = g->m.labelled_cgroups.count;
	if (n > g->cg_cap) {
		uint64_t *t = realloc(g->cg_throttled, n * sizeof(*t));
		if (t)
			g->cg_throttled = t;
		bool *k = realloc(g->cg_known, n * sizeof(*k));
		if (k)
			g->cg_known = k;
		if (!t || !k)
			return -ENOMEM;
		g->cg_cap = n;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct cg_counters c = { 0 };
		const char *path = strtab__str(&g->m.labelled_cgroups, i);
		g->cg_known[i] = g->cgfs_found && path[0] == '/' &&
				 !cgroup_counters__read(&g->cgfs, path, &c) && c.throttled_known;
		g->cg_throttled[i] = c.throttled_ns;
	}
	return 0;
}

static int snapshot(struct agent *g, struct recorder *r, struct engine *e,
		    const struct live_status *st)
{
	uint64_t lost = 0;
	recorder__cpus(r, g->kernel_steal, g->lost, g->known);
	/* steal weighed so far shared out as the kernel's (engine__settle) */
	for (uint32_t c = 0; c < g->ncpus; c++)
		if (g->known[c])
			engine__set_kernel_steal(e, c, g->kernel_steal[c]);
	if (engine__settle(e))
		return -ENOMEM;
	for (uint32_t c = 0; c < g->ncpus; c++) {
		const struct eng_cpu_stats *cs = engine__cpu(e, c);
		g->cpu_steal[c] = cs ? cs->steal_ns : 0;
		lost += g->lost[c];
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	long pages = 0;
	FILE *f = fopen("/proc/self/statm", "re");
	if (f) {
		long size;
		if (fscanf(f, "%ld %ld", &size, &pages) != 2)
			pages = 0;
		fclose(f);
	}
	struct metrics_extra x = {
		.ncpus = g->ncpus, .cpu_steal_ns = g->cpu_steal, .kernel_steal_ns = g->kernel_steal,
		.kernel_known = g->known, .lost = lost, .collections = st->collections,
		.collections_waiting = st->waiting,
		.own_cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
		.own_rss_bytes = (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE),
		.version = CPULEDGER_VERSION,
		.steal_method = engine__stats(e)->steal_from_gaps ? "sample-gaps" : "residual",
		.kernel_accounting = steal_accounting__name(engine__stats(e)->accounting),
		.accounting_source = recorder__kernel_acct(r)->source,
		.steal_scaled = engine__config(e)->scale_to_kernel,
	};
	char *prom, *om;
	size_t pl, ol;
	int err = metrics__take(&g->m, e);
	if (!err && !(err = read_cgroups(g))) {
		x.ncgroups = g->m.labelled_cgroups.count;
		x.cgroup_throttled_ns = g->cg_throttled;
		x.cgroup_throttled_known = g->cg_known;
	}
	if (!err)
		err = metrics__write(&g->m, &x, false, &prom, &pl);
	if (!err && (err = metrics__write(&g->m, &x, true, &om, &ol)))
		free(prom);
	if (err)
		return err;
	pthread_mutex_lock(&g->lock);
	free(g->prom);
	free(g->om);
	g->prom = prom;
	g->prom_len = pl;
	g->om = om;
	g->om_len = ol;
	pthread_mutex_unlock(&g->lock);
	return 0;
}

/* The profile engine starts from what the main one knows of the tasks
 * alive: their names and command lines. */
struct seed {
	struct engine *e;
	uint64_t now;
	struct strtab seen;	/* pids given a PROC event */
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int seed_task(void *ctx, const struct eng_proc *p, const struct eng_thread *t)
{
	struct seed *s = ctx;
	uint32_t pid = p ? p->pid : t->tid;
	uint32_t before = s->seen.count;
	if (p && strtab__intern(&s->seen, (const char *)&pid, sizeof(pid)) == HINDEX_NONE)
		return -ENOMEM;
	int err = 0;
	if (p && s->seen.count != before) {
		struct eng_event ev = { .kind = EK_PROC, .time = s->now, .pid = pid,
					.text = dup_or_null(p->command),
					.exe = dup_or_null(p->executable), .uid = p->uid };
		err = engine__push(s->e, &ev);
	}
	struct eng_event ev = { .kind = EK_TASK, .time = s->now, .pid = pid, .tid = t->tid,
				.comm = t->comm };
	return err ? err : engine__push(s->e, &ev);
}

static int profile_start(struct agent *g, struct recorder *r, struct engine *main_e,
			 uint64_t now)
{
	struct profile *p = &g->p;
	struct analysis_opts ao = { .method = METHOD_PRECEDING, .stacks = true };
	size_t bad;
	row_keys__parse(&ao.keys, "thread,function,account", &bad);
	struct engine_config c;
	recorder__config(r, METHOD_PRECEDING, &c);
	c.start_ns = now;
	int err = analysis__init(&p->a, &ao, recorder__names(r), recorder__stacks(r),
				 recorder__unknown(r), c.vm);
	struct engine_sink sink = analysis__sink(&p->a);
	if (!err && !(p->engine = engine__new(&c, &sink)))
		err = -ENOMEM;
	struct seed s = { p->engine, now };
	strtab__init(&s.seen);
	if (!err)
		err = engine__each_thread(main_e, seed_task, &s);
	strtab__release(&s.seen);
	if (err) {
		engine__free(p->engine);
		p->engine = NULL;
		analysis__release(&p->a);
		return err;
	}
	recorder__tap(r, p->engine);
	p->active = true;
	p->start_ns = now;
	p->end_ns = now + (uint64_t)p->seconds * 1000000000ULL;
	return 0;
}

/* The profile's pprof, into memory. */
static int profile_write(struct profile *p, struct recorder *r, uint64_t now)
{
	const struct recorder_stats *st = recorder__stats(r);
	struct analysis_source src = {
		.host = recorder__host(r), .steal_source = st->steal_source,
		.accounting_source = recorder__kernel_acct(r)->source,
		.steal_clock = recorder__kernel_acct(r)->steal_clock, .scope = SCOPE_ALL,
		.steal_known = !st->task_only, .duration_ns = now - p->start_ns,
	};
	int err = engine__finish(p->engine, now);
	if (!err)
		err = analysis__build(&p->a, p->engine, &src);
	FILE *f = err ? NULL : open_memstream(&p->body, &p->len);
	if (!err && !f)
		err = -ENOMEM;
	if (!err)
		err = report_pprof.write(f, p->a.table, &p->a.x);
	if (f && fclose(f) && !err)
		err = -ENOMEM;
	return err;
}

static void profile_end(struct agent *g, struct recorder *r, uint64_t now)
{
	struct profile *p = &g->p;
	int err = profile_write(p, r, now);
	recorder__tap(r, NULL);	/* after writing: the stacks go with it */
	engine__free(p->engine);
	p->engine = NULL;
	analysis__release(&p->a);
	pthread_mutex_lock(&g->lock);
	p->err = err;
	p->active = false;
	p->done = true;
	pthread_cond_broadcast(&g->profile_done);
	pthread_mutex_unlock(&g->lock);
}

static int hook_tick(void *ctx, struct recorder *r, struct engine *e, uint64_t now,
		     const struct live_status *st)
{
	struct agent *g = ctx;
	int err = 0;
	if (now >= g->next_snapshot) {
		g->next_snapshot = now + 1000000000ULL;
		err = snapshot(g, r, e, st);
	}
	pthread_mutex_lock(&g->lock);
	bool start = g->p.asked && !g->p.active && !g->p.done;
	bool end = g->p.active && now >= g->p.end_ns;
	pthread_mutex_unlock(&g->lock);
	if (start && !err && (err = profile_start(g, r, e, now))) {
		pthread_mutex_lock(&g->lock);
		g->p.err = err;
		g->p.done = true;
		pthread_cond_broadcast(&g->profile_done);
		pthread_mutex_unlock(&g->lock);
		err = 0;	/* the request failed, not the agent */
	}
	if (end)
		profile_end(g, r, now);
	if (err)
		cli_error("metrics: %s", strerror(-err));
	return err ? EXIT_RUNTIME : 0;
}

static int hook_reload(void *ctx, struct recorder *r)
{
	struct agent *g = ctx;
	if (!g->accounts_path)
		return 0;
	int next = !g->current;
	account_rules__release(&g->rules[next]);
	if (cli_load_accounts(g->accounts_path, &g->rules[next], NULL)) {
		fprintf(stderr, "%s: SIGHUP: '%s' not read again; the rules before go on\n",
			cli_progname, g->accounts_path);
		return 0;
	}
	recorder__set_rules(r, &g->rules[next]);
	account_rules__release(&g->rules[g->current]);
	g->current = next;
	fprintf(stderr, "%s: SIGHUP: accounts read again from '%s'\n", cli_progname,
		g->accounts_path);
	return 0;
}

/* The default ledger's directory, made as a system service's is. */
static int ledger_dir(const char *path)
{
	if (strcmp(path, DEFAULT_LEDGER))
		return 0;
	if (mkdir("/var/lib/cpuledger", 0700) && errno != EEXIST) {
		cli_error("cannot make /var/lib/cpuledger: %s (give --ledger PATH)", strerror(errno));
		return EXIT_RUNTIME;
	}
	return 0;
}

static int parse(int argc, char **argv, struct live_opts *o, struct agent *g)
{
	int id;
	const char *arg;
	uint64_t v;
	double d;
	cli_begin();
	while ((id = cli_next(&agent_command, argc, argv, &arg)) != CLI_END) {
		switch (id) {
		case CLI_HELP:
			cli_usage(stdout, &agent_command);
			return 1;
		case A_LEDGER: o->ledger = arg; break;
		case A_INTERVAL:
			if (!cli_parse_seconds("--interval", arg, CLI_INTERVAL_MIN,
					       CLI_INTERVAL_MAX, &o->interval))
				return -1;
			break;
		case A_FREQ:
			if (!cli_parse_u64("--freq", arg, 1, 100000, &v))
				return -1;
			o->hz = (uint32_t)v;
			break;
		case A_NO_CALL_GRAPH: o->callchain = false; break;
		case A_ACCOUNTS: o->accounts = g->accounts_path = arg; break;
		case A_LISTEN: {
			struct sockaddr_storage ss;
			unsigned sl;
			if (http_parse_listen(arg, &ss, &sl)) {
				cli_error("--listen: '%s' is not ADDR:PORT (127.0.0.1:9465, [::1]:9465)",
					  arg);
				return -1;
			}
			g->listen = arg;
			break;
		}
		case A_RETAIN:
			if (!cli_parse_double("--retain", arg, &d) || d < 0 || d > 36500) {
				cli_error("--retain: '%s' is not 0 to 36500 days", arg);
				return -1;
			}
			o->retain_days = d;
			break;
		case A_PROGRAMS:
			if (!cli_parse_u64("--programs", arg, 1, 10000, &v))
				return -1;
			g->max_programs = (uint32_t)v;
			break;
		case A_DURATION:
			if (!cli_parse_seconds("--duration", arg, CLI_DURATION_MIN,
					       CLI_MAX_SECONDS, &o->duration))
				return -1;
			break;
		case A_MMAP_PAGES:
			if (!cli_parse_u64("--mmap-pages", arg, 8, 65536, &v) || (v & (v - 1))) {
				cli_error("--mmap-pages: '%s' is not a power of 2 from 8 to 65536", arg);
				return -1;
			}
			o->mmap_pages = (uint32_t)v;
			break;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		cli_error("unexpected '%s' (the agent records every CPU)", argv[optind]);
		return -1;
	}
	return 0;
}

int cmd_agent(int argc, char **argv)
{
	struct live_opts o;
	live_opts__init(&o);
	struct agent g = { .max_programs = 50 };
	o.all = true;
	o.hz = 49;
	o.callchain = true;
	o.interval = 60;
	o.retain_days = 90;
	o.ledger = DEFAULT_LEDGER;
	o.quiet = true;
	o.max_waiting = 64;	/* an hour of minutes wait before merging */
	int r = parse(argc, argv, &o, &g);
	if (r) {
		live_opts__release(&o);
		return r > 0 ? 0 : EXIT_USAGE;
	}
	int status = ledger_dir(o.ledger);
	if (status) {
		live_opts__release(&o);
		return status;
	}
	pthread_mutex_init(&g.lock, NULL);
	pthread_cond_init(&g.profile_done, NULL);
	struct live_hooks hooks = { &g, hook_program, NULL, hook_gone, hook_started, hook_tick,
				    hook_reload };
	o.hooks = &hooks;
	fprintf(stderr, "%s: recording every CPU at %u Hz%s; a collection every %g s into '%s'"
		"%s%s\n", cli_progname, o.hz, o.callchain ? " with call chains" : "", o.interval,
		o.ledger, g.listen ? "; serving http://" : "", g.listen ? g.listen : "");
	struct live_result res;
	status = live_run(&o, &res);
	/* a profile still being taken ends unanswered; then the server
	 * stops (it waits for its threads), before what they read goes */
	pthread_mutex_lock(&g.lock);
	if (g.p.asked || g.p.active) {
		g.p.err = -ECANCELED;
		g.p.done = true;
		pthread_cond_broadcast(&g.profile_done);
	}
	pthread_mutex_unlock(&g.lock);
	http_server__stop(g.http);
	if (g.p.engine) {
		engine__free(g.p.engine);
		analysis__release(&g.p.a);
	}
	live_result__release(&res);
	if (g.metrics_ready)
		metrics__release(&g.m);
	account_rules__release(&g.rules[0]);
	account_rules__release(&g.rules[1]);
	free(g.prom);
	free(g.om);
	free(g.p.body);
	free(g.cpu_steal);
	free(g.kernel_steal);
	free(g.cg_throttled);
	free(g.cg_known);
	free(g.lost);
	free(g.known);
	live_opts__release(&o);
	return status;
}
