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
 * the HTTP threads under a lock) and profiles (analysis/profile.h: a
 * second engine fed the same events for the seconds asked).
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
#include "../analysis/profile.h"
#include "../collect/cgroup.h"
#include "../collect/kernel_acct.h"
#include "../collect/procfs.h"
#include "../record/recorder.h"
#include "../core/units.h"
#include "../core/banned.h"

#define DEFAULT_LEDGER "/var/lib/cpuledger/cpuledger.db"

enum { A_LEDGER = 1, A_INTERVAL, A_FREQ, A_NO_CALL_GRAPH, A_ACCOUNTS, A_LISTEN, A_RETAIN,
       A_PROGRAMS, A_DURATION, A_MMAP_PAGES, A_WEB_CONFIG, A_PROFILE_LABELS, A_CLIENT_CONNS,
       A_IDLE_TIMEOUT, A_MAX_NAMES, A_MAX_CGROUPS, A_MAX_SYMBOL_FILES, A_MAX_SYMBOL_MB,
       A_MAX_JIT_MB, A_SOURCE };

static const struct cli_option agent_options[] = {
	{ "ledger", 0, "PATH", A_LEDGER, "the ledger (default " DEFAULT_LEDGER ")" },
	{ "interval", 0, "SEC", A_INTERVAL, "a collection every SEC seconds (default 60)" },
	LIVE_FREQ_OPTION(A_FREQ, LIVE_HZ_LIGHT, ": CPU time\nand steal come from --source, "
			 "samples only\nsplit them among functions"),
	LIVE_SOURCE_OPTION(A_SOURCE),
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
	{ "web.config.file", 0, "FILE", A_WEB_CONFIG, "TLS and basic authentication for --listen,\n"
	  "as Prometheus exporters read them (docs/agent.md)" },
	{ "profile-labels", 0, NULL, A_PROFILE_LABELS, "profiles label samples with command lines\n"
	  "(off: anyone who may fetch a profile would see\nevery user's)" },
	{ "web.client-connections", 0, "N", A_CLIENT_CONNS, "connections one client (a local user,\n"
	  "a remote address) holds at once (default 8)" },
	{ "web.idle-timeout", 0, "SEC", A_IDLE_TIMEOUT, "close a connection silent this long\n"
	  "(default 10)" },
	{ "max-names", 0, "N", A_MAX_NAMES, "thread names and cgroup paths held at once,\n"
	  "recycled once unused (default 65536)" },
	{ "max-cgroups", 0, "N", A_MAX_CGROUPS, "cgroup ids named, least recently used go\n"
	  "(default 16384)" },
	{ "max-symbol-files", 0, "N", A_MAX_SYMBOL_FILES, "files kept open with their functions,\n"
	  "least recently used go (default 1024)" },
	{ "max-symbol-mb", 0, "MB", A_MAX_SYMBOL_MB, "memory of those functions' tables\n"
	  "(default 256)" },
	{ "max-jit-mb", 0, "MB", A_MAX_JIT_MB, "memory of JIT maps (/tmp/perf-PID.map) read\n"
	  "(default 64)" },
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
	/* under lock: the last snapshot, in both formats */
	char *prom, *om;
	size_t prom_len, om_len;
	struct profiles profiles;	/* /debug/pprof/profile's */
	bool profile_labels;
	struct web_config web;
	const char *web_path;
	unsigned client_connections, idle_timeout;
	/* per CPU, for the snapshot */
	uint32_t ncpus;
	uint64_t *cpu_steal, *idle_steal, *kernel_steal, *lost;
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

static int http_profile(void *ctx, const char *client, unsigned seconds, char **body,
			size_t *len)
{
	struct agent *g = ctx;
	return profiles__take(&g->profiles, client, seconds, body, len);
}

/* --- the recording's side */

static int hook_started(void *ctx, struct recorder *r, struct engine *e)
{
	struct agent *g = ctx;
	g->ncpus = recorder__ncpus(r);
	uint32_t n = g->ncpus ? g->ncpus : 1;
	g->cpu_steal = calloc(n, sizeof(*g->cpu_steal));
	g->idle_steal = calloc(n, sizeof(*g->idle_steal));
	g->kernel_steal = calloc(n, sizeof(*g->kernel_steal));
	g->lost = calloc(n, sizeof(*g->lost));
	g->known = calloc(n, sizeof(*g->known));
	g->cgfs_found = !cgroup_fs__find(&g->cgfs, "/");
	if (!g->cpu_steal || !g->idle_steal || !g->kernel_steal || !g->lost || !g->known ||
	    metrics__init(&g->m, recorder__names(r), g->max_programs)) {
		cli_error("out of memory");
		return EXIT_RUNTIME;
	}
	g->m.read_wait = recorder__wait_hook(r, &g->m.wait_ctx);	/* schedstat or bpf's */
	g->m.wait_start = recorder__cgstats(r);	/* the waits when it started */
	g->m.wait_every = 10;	/* a snapshot a second: waits every 10 s */
	g->metrics_ready = true;
	struct engine_sink sink = metrics__sink(&g->m);	/* threads gone, from now */
	if (engine__add_sink(e, &sink)) {
		cli_error("the engine takes no more consumers");
		return EXIT_RUNTIME;
	}
	if (g->listen) {
		char msg[256];
		struct http_handlers h = { g, http_metrics, http_profile };
		struct http_config hc = { g->listen, g->web_path ? &g->web : NULL,
					  g->client_connections, g->idle_timeout };
		if (!(g->http = http_server__start(&hc, &h, msg, sizeof(msg)))) {
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
	bool idle_known = g->ncpus > 0;	/* the BPF collector read the steal clock */
	for (uint32_t c = 0; c < g->ncpus; c++) {
		/* the kernel's clocks' per CPU where the BPF collector reads
		 * them, as they are read: the engine has the same figures once
		 * its queue has reached the read */
		const struct eng_cpu_stats *cs = engine__cpu(e, c);
		if (!recorder__cpu_steal(r, c, &g->cpu_steal[c], &g->idle_steal[c])) {
			g->cpu_steal[c] = cs ? cs->steal_ns : 0;
			idle_known = false;
		}
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
	struct recorder_bounds b;
	recorder__bounds(r, &b);
	struct metrics_extra x = {
		.ncpus = g->ncpus, .cpu_steal_ns = g->cpu_steal,
		.idle_steal_ns = idle_known ? g->idle_steal : NULL, .kernel_steal_ns = g->kernel_steal,
		.kernel_known = g->known, .lost = lost, .lost_window_ns = b.lost_window_ns,
		.lossy_stints = engine__stats(e)->lossy_stints,
		.cache_entries = { b.names, b.cgroups, b.symbol_files, b.jit_entries },
		.cache_evicted = { b.names_recycled, b.cgroups_evicted, b.symbol_files_evicted,
				   b.jit_entries_evicted },
		.cache_bytes = { b.name_bytes, b.cgroup_bytes, b.symbol_bytes, b.jit_bytes },
		.names_refused = b.names_refused, .collections = st->collections,
		.collections_waiting = st->waiting,
		.own_cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
		.own_rss_bytes = (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE),
		.version = CPULEDGER_VERSION,
		.steal_method = engine__config(e)->mode == STEAL_GIVEN ? "kernel-clock" :
				engine__stats(e)->steal_from_gaps ? "sample-gaps" : "residual",
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

static int hook_tick(void *ctx, struct recorder *r, struct engine *e, uint64_t now,
		     const struct live_status *st)
{
	struct agent *g = ctx;
	int err = 0;
	if (now >= g->next_snapshot) {
		g->next_snapshot = now + NSEC_PER_SEC;
		err = snapshot(g, r, e, st);
	}
	profiles__turn(&g->profiles, r, e, now);
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

/* The bounds and the endpoint's limits: each a whole number in [min, max],
 * read alike before it is stored where it belongs. */
static const struct {
	int id;
	const char *name;
	uint64_t min, max;
} bounded_options[] = {
	{ A_CLIENT_CONNS, "--web.client-connections", 1, HTTP_MAX_CONNECTIONS },
	{ A_IDLE_TIMEOUT, "--web.idle-timeout", 1, 3600 },
	{ A_MAX_NAMES, "--max-names", 1024, 16777216 },
	{ A_MAX_CGROUPS, "--max-cgroups", 64, 16777216 },
	{ A_MAX_SYMBOL_FILES, "--max-symbol-files", 8, 1048576 },
	{ A_MAX_SYMBOL_MB, "--max-symbol-mb", 1, 1048576 },
	{ A_MAX_JIT_MB, "--max-jit-mb", 1, 1048576 },
};

/* The options of the endpoint and the bounds: 0, or EXIT_USAGE having
 * said why. */
static int parse_shared_host(int id, const char *arg, struct live_opts *o, struct agent *g)
{
	uint64_t v = 0;
	for (size_t i = 0; i < sizeof(bounded_options) / sizeof(bounded_options[0]); i++) {
		int status;
		if (bounded_options[i].id == id &&
		    (status = cli_parse_u64(bounded_options[i].name, arg, bounded_options[i].min,
					    bounded_options[i].max, &v)))
			return status;
	}
	switch (id) {
	case A_WEB_CONFIG: {
		char msg[600];
		web_config__release(&g->web);
		if (web_config__read(arg, &g->web, msg, sizeof(msg))) {
			cli_error("%s", msg);
			return EXIT_USAGE;
		}
		g->web_path = arg;
		return 0;
	}
	case A_PROFILE_LABELS: g->profile_labels = true; return 0;
	case A_CLIENT_CONNS: g->client_connections = (unsigned)v; return 0;
	case A_IDLE_TIMEOUT: g->idle_timeout = (unsigned)v; return 0;
	case A_MAX_NAMES: o->max_names = (uint32_t)v; return 0;
	case A_MAX_CGROUPS: o->max_cgroups = (uint32_t)v; return 0;
	case A_MAX_SYMBOL_FILES: o->max_symbol_files = (uint32_t)v; return 0;
	case A_MAX_SYMBOL_MB: o->max_symbol_bytes = v << 20; return 0;
	case A_MAX_JIT_MB: o->max_jit_bytes = v << 20; return 0;
	}
	return EXIT_USAGE;
}

/* 0 (*help when --help printed), or EXIT_USAGE having said why. */
static int parse(int argc, char **argv, struct live_opts *o, struct agent *g, bool *help)
{
	int id, status;
	const char *arg;
	uint64_t v;
	double d;
	if (live_opts__source_env(o))
		return EXIT_USAGE;
	cli_begin();
	while ((id = cli_next(&agent_command, argc, argv, &arg)) != CLI_END) {
		switch (id) {
		case CLI_HELP:
			cli_usage(stdout, &agent_command);
			*help = true;
			return 0;
		case A_LEDGER: o->ledger = arg; break;
		case A_INTERVAL:
			if (cli_parse_seconds("--interval", arg, CLI_INTERVAL_MIN,
					       CLI_INTERVAL_MAX, &o->interval))
				return EXIT_USAGE;
			break;
		case A_FREQ:
			if (live_opts__freq(o, arg) < 0)
				return EXIT_USAGE;
			break;
		case A_SOURCE:
			if (live_opts__source(o, arg) < 0)
				return EXIT_USAGE;
			break;
		case A_NO_CALL_GRAPH: o->callchain = false; break;
		case A_ACCOUNTS: o->accounts = g->accounts_path = arg; break;
		case A_LISTEN: {
			struct sockaddr_storage ss;
			unsigned sl;
			if (http_parse_listen(arg, &ss, &sl)) {
				cli_error("--listen: '%s' is not ADDR:PORT (127.0.0.1:9465, [::1]:9465)",
					  arg);
				return EXIT_USAGE;
			}
			g->listen = arg;
			break;
		}
		case A_RETAIN:
			if (cli_parse_double("--retain", arg, &d) || d < 0 || d > 36500) {
				cli_error("--retain: '%s' is not 0 to 36500 days", arg);
				return EXIT_USAGE;
			}
			o->retain_days = d;
			break;
		case A_PROGRAMS:
			if (cli_parse_u64("--programs", arg, 1, 10000, &v))
				return EXIT_USAGE;
			g->max_programs = (uint32_t)v;
			break;
		case A_DURATION:
			if (cli_parse_seconds("--duration", arg, CLI_DURATION_MIN,
					       CLI_MAX_SECONDS, &o->duration))
				return EXIT_USAGE;
			break;
		case A_MMAP_PAGES:
			if (cli_parse_u64("--mmap-pages", arg, 8, 65536, &v) || (v & (v - 1))) {
				cli_error("--mmap-pages: '%s' is not a power of 2 from 8 to 65536", arg);
				return EXIT_USAGE;
			}
			o->mmap_pages = (uint32_t)v;
			break;
		default:
			if ((status = parse_shared_host(id, arg, o, g)))
				return status;
		}
	}
	if (optind < argc) {
		cli_error("unexpected '%s' (the agent records every CPU)", argv[optind]);
		return EXIT_USAGE;
	}
	if (g->web_path && !g->listen) {
		cli_error("--web.config.file: serves nothing without --listen");
		return EXIT_USAGE;
	}
	return 0;
}

/* The line saying it started, and how it serves. */
static void say_start(const struct live_opts *o, const struct agent *g)
{
	bool tls = g->web_path && g->web.cert, auth = g->web_path && g->web.nusers;
	fprintf(stderr, "%s: started (pid %d): recording every CPU at %u Hz%s; a collection "
		"every %g s into '%s'", cli_progname, (int)getpid(), o->hz,
		o->callchain ? " with call chains" : "", o->interval, o->ledger);
	if (g->listen)
		fprintf(stderr, "; serving %s://%s (%s%s)", tls ? "https" : "http", g->listen,
			auth ? "basic auth" : "no authentication",
			g->profile_labels ? ", profiles with command lines" : "");
	fputc('\n', stderr);
}

int cmd_agent(int argc, char **argv)
{
	struct live_opts o;
	live_opts__init(&o);
	struct agent g = { .max_programs = 50, .client_connections = 8, .idle_timeout = 10 };
	o.all = true;
	o.hz = LIVE_HZ_LIGHT;
	o.callchain = true;
	o.interval = 60;
	o.retain_days = 90;
	o.ledger = DEFAULT_LEDGER;
	o.quiet = true;
	o.max_waiting = 64;	/* an hour of minutes wait before merging */
	/* bounds for a busy host: tens of thousands of threads and cgroups,
	 * a thousand binaries (docs/agent.md has what they cost) */
	o.max_names = 65536;
	/* the BPF collector's maps a second: a scrape or a collection is
	 * seconds apart, and each read costs ~5 us a thread */
	o.clock_interval = 1;
	o.max_cgroups = 16384;
	o.max_symbol_files = 1024;
	o.max_symbol_bytes = 256ull << 20;
	o.max_jit_bytes = 64ull << 20;
	bool help = false;
	int status = parse(argc, argv, &o, &g, &help);
	if (status || help) {
		web_config__release(&g.web);
		live_opts__release(&o);
		return status;
	}
	status = ledger_dir(o.ledger);
	if (status) {
		web_config__release(&g.web);
		live_opts__release(&o);
		return status;
	}
	pthread_mutex_init(&g.lock, NULL);
	profiles__init(&g.profiles, g.profile_labels);
	struct live_hooks hooks = { &g, hook_started, hook_tick, hook_reload };
	o.hooks = &hooks;
	say_start(&o, &g);
	struct live_result res;
	status = live_run(&o, &res);
	/* profiles being taken end unanswered; then the server stops (it
	 * waits for its threads), before what they read goes */
	profiles__stop(&g.profiles);
	http_server__stop(g.http);
	profiles__release(&g.profiles);
	fprintf(stderr, "%s: stopped (%s)\n", cli_progname,
		status ? "failed: see above" : "its last interval is in the ledger");
	web_config__release(&g.web);
	live_result__release(&res);
	if (g.metrics_ready)
		metrics__release(&g.m);
	account_rules__release(&g.rules[0]);
	account_rules__release(&g.rules[1]);
	free(g.prom);
	free(g.om);
	free(g.cpu_steal);
	free(g.idle_steal);
	free(g.kernel_steal);
	free(g.cg_throttled);
	free(g.cg_known);
	free(g.lost);
	free(g.known);
	live_opts__release(&o);
	return status;
}
