/* live: see live.h. */
#include "live_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "../analysis/collector.h"
#include "../collect/procfs.h"
#include "../ledger/writer.h"
#include "../record/recorder.h"
#include "../core/banned.h"

enum { L_ALL = 1, L_PID, L_FREQ, L_G, L_CALL_GRAPH, L_OUTPUT, L_DURATION,
       L_NO_TRACEPOINTS, L_ACCOUNTS, L_LEDGER, L_INTERVAL, L_MMAP_PAGES, L_REALTIME };

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
	{ "no-tracepoints", 0, NULL, L_NO_TRACEPOINTS, "measure steal from sample gaps scaled to\n"
	  "/proc/stat, not per stint" },
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

void live_opts__init(struct live_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->hz = LIVE_HZ;
	o->root = "/";
	o->a.method = METHOD_PRECEDING;
}

void live_opts__release(struct live_opts *o)
{
	free(o->pids);
	o->pids = NULL;
}

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

volatile sig_atomic_t live_stop_signal, live_collect_requested, live_reload_requested;

static void on_stop(int sig)
{
	live_stop_signal = sig;
}

void live_stop(void)
{
	live_stop_signal = SIGTERM;
}

static void on_hup_reload(int sig)
{
	(void)sig;
	live_reload_requested = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	live_collect_requested = 1;
}

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

void live_block_signals(void)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < 4; i++)
		sigaddset(&set, stop_signals[i]);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* Handlers in place, then what came before them is let through. */
void live_install_signals(bool hup_reloads)
{
	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < 4; i++) {
		sa.sa_handler = stop_signals[i] == SIGHUP && hup_reloads ? on_hup_reload : on_stop;
		sigaction(stop_signals[i], &sa, NULL);
	}
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < 4; i++)
		sigaddset(&set, stop_signals[i]);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

