/* live: see live.h. */
#include "live.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../core/banned.h"

enum { L_ALL = 1, L_PID, L_FREQ, L_G, L_CALL_GRAPH, L_OUTPUT, L_DURATION,
       L_NO_TRACEPOINTS, L_ACCOUNTS, L_LEDGER, L_INTERVAL, L_MMAP_PAGES, L_REALTIME,
       L_SOURCE };

const struct cli_option live_record_options[] = {
	{ "all-cpus", 'a', NULL, L_ALL, "record every CPU and task" },
	{ "pid", 'p', "PID[,PID]", L_PID, "record these processes (their threads and children)" },
	LIVE_FREQ_OPTION(L_FREQ, LIVE_HZ, ""),
	{ "", 'g', NULL, L_G, "record call chains (frame pointers), as --call-graph fp" },
	{ "call-graph", 0, "MODE", L_CALL_GRAPH, "record call chains: fp (frame pointers); dwarf\n"
	  "is not built yet", "fp dwarf" },
	{ "output", 'o', "FILE", L_OUTPUT, "the recording (record: default cpuledger.rec;\n"
	  "run: kept only with -o)" },
	{ "duration", 0, "SEC", L_DURATION, "stop after SEC seconds" },
	LIVE_SOURCE_OPTION(L_SOURCE),
	{ "no-tracepoints", 0, NULL, L_NO_TRACEPOINTS, "with perf: measure steal from sample gaps\n"
	  "scaled to /proc/stat, not per stint" },
	{ "accounts", 0, "FILE", L_ACCOUNTS, "charge accounts by these rules (docs/accounts.md)" },
	{ "ledger", 0, "PATH", L_LEDGER, "add what was recorded to this ledger when it ends,\n"
	  "and when asked (SIGUSR1, cpuledger collect PID)" },
	{ "interval", 0, "SEC", L_INTERVAL, "with --ledger: a collection every SEC seconds" },
	{ "mmap-pages", 'm', "N", L_MMAP_PAGES, "ring buffer pages per CPU, a power of 2 (default\n"
	  "1024 as root, 128 otherwise; twice with -g)" },
	{ "realtime", 'r', "PRIO", L_REALTIME, "drain the rings at this SCHED_FIFO priority\n"
	  "(1-99), as perf record -r, for machines too\nbusy for nice -10 (docs/robustness.md)" },
	{ 0 },
};

int live_opts__add_pids(struct live_opts *o, const char *arg)
{
	struct cli_ids ids = { 0 };
	if (cli_parse_ids("--pid", arg, &ids))
		return -1;
	pid_t *v = realloc(o->pids, (size_t)(o->npids + (int)ids.n) * sizeof(*v));
	if (!v) {
		free(ids.v);
		return -1;
	}
	o->pids = v;
	for (size_t i = 0; i < ids.n; i++)
		o->pids[o->npids++] = (pid_t)ids.v[i];
	free(ids.v);
	return 1;
}

static int parse_seconds(const char *opt, const char *arg, double min, double max,
			 double *out)
{
	return cli_parse_seconds(opt, arg, min, max, out) ? -1 : 1;
}

int live_opts__mmap_pages(struct live_opts *o, const char *arg)
{
	uint64_t v;
	if (cli_parse_u64("--mmap-pages", arg, 8, 65536, &v))
		return -1;
	if (v & (v - 1)) {
		cli_error("--mmap-pages: %s is not a power of 2", arg);
		return -1;
	}
	o->mmap_pages = (uint32_t)v;
	return 1;
}

static int parse_source(struct live_opts *o, const char *what, const char *arg)
{
	static const char *const names[] = { "auto", "bpf", "perf" };
	static const enum recorder_source sources[] = {
		RECORDER_SOURCE_AUTO, RECORDER_SOURCE_BPF, RECORDER_SOURCE_PERF };
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!strcmp(arg, names[i])) {
			o->source = sources[i];
			return 1;
		}
	cli_error("%s: unknown source '%s' (auto, bpf, perf)", what, arg);
	return -1;
}

int live_opts__source(struct live_opts *o, const char *arg)
{
	return parse_source(o, "--source", arg);
}

/* The test suite runs the perf path with it (tests/README.md). */
int live_opts__source_env(struct live_opts *o)
{
	const char *v = getenv("CPULEDGER_SOURCE");
	return v && *v && parse_source(o, "CPULEDGER_SOURCE", v) < 0 ? -1 : 0;
}

int live_opts__freq(struct live_opts *o, const char *arg)
{
	uint64_t v;
	if (cli_parse_u64("--freq", arg, 1, 100000, &v))
		return -1;
	o->hz = (uint32_t)v;
	return 1;
}

int live_opts__parse(struct live_opts *o, int id, const char *arg)
{
	uint64_t v;
	switch (id) {
	case L_ALL: o->all = true; return 1;
	case L_PID: return live_opts__add_pids(o, arg);
	case L_FREQ: return live_opts__freq(o, arg);
	case L_G: o->callchain = true; return 1;
	case L_CALL_GRAPH:
		if (!strcmp(arg, "fp")) {
			o->callchain = true;
			return 1;
		}
		cli_error(!strcmp(arg, "dwarf") || !strcmp(arg, "lbr") ?
			  "--call-graph: '%s' is not built yet: fp (frame pointers) is" :
			  "--call-graph: unknown mode '%s' (fp)", arg);
		return -1;
	case L_OUTPUT: o->output = arg; return 1;
	case L_DURATION: return parse_seconds("--duration", arg, CLI_DURATION_MIN,
						   CLI_MAX_SECONDS, &o->duration);
	case L_NO_TRACEPOINTS: o->no_tracepoints = true; return 1;
	case L_SOURCE: return live_opts__source(o, arg);
	case L_ACCOUNTS: o->accounts = arg; return 1;
	case L_LEDGER: o->ledger = arg; return 1;
	case L_INTERVAL: return parse_seconds("--interval", arg, CLI_INTERVAL_MIN,
						   CLI_INTERVAL_MAX, &o->interval);
	case L_MMAP_PAGES: return live_opts__mmap_pages(o, arg);
	case L_REALTIME:
		if (cli_parse_u64("--realtime", arg, 1, 99, &v))
			return -1;
		o->realtime = (int)v;
		return 1;
	default:
		return 0;
	}
}

/* The session's statuses are passed on as the command's own. */
_Static_assert(LIVE_EXIT_RUNTIME == EXIT_RUNTIME && LIVE_EXIT_USAGE == EXIT_USAGE,
	       "the session's exit statuses are the CLI's");
