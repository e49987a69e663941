/*
 * cpuledger top: a live view of every CPU, refreshed every -d seconds:
 * per CPU its busy time and steal (cpuledger's, beside /proc/stat's), and
 * per process (threads with H, programs with P) the share of a CPU it ran
 * and had stolen, its apparent and corrected time since top started, and
 * its account. ncurses draws it; --batch prints each refresh as text, as
 * `top -b` does. The recording is live_run's (no file, no ledger); the
 * figures are topview's (src/analysis/topview.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pwd.h>
#include <unistd.h>
#include <curses.h>

#include "cli.h"
#include "live.h"
#include "options.h"
#include "../analysis/topview.h"
#include "../collect/kernel_acct.h"
#include "../collect/procfs.h"
#include "../format/procstat.h"
#include "../record/recorder.h"
#include "../core/banned.h"

enum { T_DELAY = 1, T_PID, T_BATCH, T_ITER, T_FREQ, T_THREADS, T_PROGRAMS, T_ACCOUNTS };

static const struct cli_option top_options[] = {
	{ "delay", 'd', "SEC", T_DELAY, "refresh every SEC seconds (default 2)" },
	{ "pid", 'p', "PID[,PID]", T_PID, "only these processes (and their children)" },
	{ "batch", 'b', NULL, T_BATCH, "print each refresh as plain text (no terminal\n"
	  "needed), as top -b does" },
	{ "iterations", 'n', "N", T_ITER, "stop after N refreshes" },
	{ "freq", 'F', "HZ", T_FREQ, "cpu-clock samples per second (default 49: CPU time\n"
	  "and steal come from the tracepoints)" },
	{ "threads", 'H', NULL, T_THREADS, "a row per thread (key H)" },
	{ "programs", 'P', NULL, T_PROGRAMS, "a row per program, its processes summed (key P)" },
	{ "accounts", 0, "FILE", T_ACCOUNTS, "charge accounts by these rules (docs/accounts.md)" },
	{ 0 },
};

static const struct cli_option *const top_tables[] = { top_options, NULL };

const struct cli_command top_command = {
	"top", "[options]",
	"A live view of where CPU time goes and how much of it the hypervisor\n"
	"steals: per CPU, and per process, thread or program.",
	top_tables,
	"Keys: q quit, H threads, P programs, p processes, < > or s sort column,\n"
	"/ filter (Enter ends, Esc clears), space pause, ? help.",
	false,
};

static const char *const sort_names[TOP_SORT_COUNT] = {
	"CPU%", "STEAL%", "APPARENT_S", "CPU_S", "PID", "NAME",
};

struct top {
	struct topview v;
	bool ready, curses, batch, paused, help, filtering;
	enum top_mode mode;
	enum top_sort sort;
	char filter[64];
	uint64_t delay_ns, next_ns, last_ns, start_ns, iterations, max_iterations;
	uint32_t ncpus;
	struct procstat_cpu *stat0, *stat1;	/* /proc/stat at the last refresh, now */
	uint64_t *steal0;			/* the engine's per CPU then */
	int width;				/* --batch: characters a row */
	double cost_ms;				/* CPU per refresh, the last */
	double cost_total_ms;
	struct recorder *rec;
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int hook_program(void *ctx, const struct engine *e, const struct eng_thread *t,
			const struct eng_figures *f, bool final)
{
	struct top *tp = ctx;
	return tp->ready && final ? topview__program(&tp->v, e, t, f, true) : 0;
}

static int hook_gone(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	struct top *tp = ctx;
	return tp->ready ? topview__thread_gone(&tp->v, e, t) : 0;
}

/* /proc/stat now, into tp->stat1. */
static void read_stat(struct top *tp)
{
	char *text = procfs_read("/", "proc/stat", NULL);
	memset(tp->stat1, 0, tp->ncpus * sizeof(*tp->stat1));
	if (text && procstat_times(text, tp->stat1, tp->ncpus) < 0)
		memset(tp->stat1, 0, tp->ncpus * sizeof(*tp->stat1));
	free(text);
}

static int hook_started(void *ctx, struct recorder *r, struct engine *e)
{
	(void)e;
	struct top *tp = ctx;
	uint32_t n = recorder__ncpus(r) ? recorder__ncpus(r) : 1;
	tp->rec = r;
	tp->ncpus = n;
	tp->stat0 = calloc(n, sizeof(*tp->stat0));
	tp->stat1 = calloc(n, sizeof(*tp->stat1));
	tp->steal0 = calloc(n, sizeof(*tp->steal0));
	if (!tp->stat0 || !tp->stat1 || !tp->steal0 ||
	    topview__init(&tp->v, recorder__names(r))) {
		cli_error("out of memory");
		return EXIT_RUNTIME;
	}
	tp->ready = true;
	read_stat(tp);
	memcpy(tp->stat0, tp->stat1, n * sizeof(*tp->stat0));
	tp->start_ns = tp->last_ns = clock_ns(CLOCK_MONOTONIC);
	tp->next_ns = tp->start_ns + tp->delay_ns;
	return 0;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static uint64_t since(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

/* Where steal comes from (docs/record.md), in a header line. */
static void steal_line(const struct top *tp, const struct engine *e, char line[160])
{
	const struct engine_stats *st = engine__stats(e);
	const struct engine_config *c = engine__config(e);
	const struct kernel_acct *k = recorder__kernel_acct(tp->rec);
	if (c->mode != STEAL_STINTS) {
		snprintf(line, 160, "steal: %s", c->mode == STEAL_GAPS ?
			 "sample gaps scaled to /proc/stat" : "unknown");
		return;
	}
	char text[320];
	snprintf(text, sizeof(text), "steal: %s%s, resolution %llu us (%s: %s; by %s)",
		 st->steal_from_gaps ? "sample gaps" : "residual of each stint",
		 c->scale_to_kernel ? " scaled to /proc/stat" : "",
		 (unsigned long long)(st->steal_from_gaps ? c->interval_ns : (uint64_t)st->noise_ns)
		 / 1000, steal_accounting__name(st->accounting),
		 steal_accounting__describe(st->accounting), k->source);
	snprintf(line, 160, "%.159s", text);
}

/* The header's lines into buf, one per element of lines[]: the title,
 * one per CPU, the totals. Returns how many. */
static int header(struct top *tp, struct engine *e, uint64_t interval, char lines[][160],
		  int max)
{
	uint64_t lost = recorder__lost(tp->rec);
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	int n = 0;
	snprintf(lines[n++], 160, "cpuledger top - %02d:%02d:%02d, %u CPUs, every %.1f s, "
		 "%llu records lost%s%s%s", tm.tm_hour, tm.tm_min, tm.tm_sec, tp->ncpus,
		 (double)tp->delay_ns / 1e9, (unsigned long long)lost,
		 tp->paused ? " [paused]" : "", tp->filter[0] ? " filter: " : "", tp->filter);
	steal_line(tp, e, lines[n++]);
	for (uint32_t c = 0; c < tp->ncpus && n < max - 1; c++) {
		const struct procstat_cpu *a = &tp->stat0[c], *b = &tp->stat1[c];
		uint64_t busy = since(b->busy, a->busy), idle = since(b->idle, a->idle);
		uint64_t kst = since(b->steal, a->steal), total = busy + idle + kst;
		const struct eng_cpu_stats *cs = engine__cpu(e, c);
		uint64_t st = cs ? since(cs->steal_ns, tp->steal0[c]) : 0;
		snprintf(lines[n++], 160, "CPU%-3u busy %5.1f%%  steal %5.1f%% (kernel %5.1f%%)", c,
			 share(busy, total), share(st, interval), share(kst, total));
	}
	snprintf(lines[n++], 160, "%s: %u; sort %s; top's own CPU %.1f ms a refresh  "
		 "(q quit, ? help)", tp->mode == TOP_THREADS ? "threads" :
		 tp->mode == TOP_PROGRAMS ? "programs" : "processes", tp->v.nrows,
		 sort_names[tp->sort], tp->cost_ms);
	return n;
}

/* The columns' titles, the sorted one marked. */
static void titles(const struct top *tp, char *buf, size_t size)
{
	const char *first = tp->mode == TOP_THREADS ? "    PID     TID" :
			    tp->mode == TOP_PROGRAMS ? "  PROCS" : "    PID";
	snprintf(buf, size, "%s %-8s %6s %7s %11s %10s %-10s %s", first, "USER", "CPU%",
		 "STEAL%", "APPARENT_S", "CPU_S", "ACCOUNT",
		 tp->mode == TOP_PROGRAMS ? "PROGRAM" : tp->mode == TOP_THREADS ? "COMM" :
		 "COMMAND");
}

/* A user's name, as top shows it (its number when it has none). */
static const char *user_name(int64_t uid, char *buf, size_t size)
{
	struct passwd pw, *found = NULL;
	char tmp[1024];
	if (uid < 0)
		return "?";
	if (!getpwuid_r((uid_t)uid, &pw, tmp, sizeof(tmp), &found) && found)
		snprintf(buf, size, "%s", found->pw_name);
	else
		snprintf(buf, size, "%lld", (long long)uid);
	return buf;
}

static void row_text(const struct top *tp, const struct top_row *r, char *buf, size_t size)
{
	char user[64], first[32];
	if (tp->mode == TOP_THREADS)
		snprintf(first, sizeof(first), "%7u %7u", r->pid, r->tid);
	else if (tp->mode == TOP_PROGRAMS)
		snprintf(first, sizeof(first), "%7u", r->threads);
	else
		snprintf(first, sizeof(first), "%7u", r->pid);
	snprintf(buf, size, "%s %-8.8s %6.1f %7.1f %11.3f %10.3f %-10.10s %s", first,
		 tp->mode == TOP_PROGRAMS ? "" : user_name(r->uid, user, sizeof(user)),
		 r->cpu_pct, r->steal_pct, (double)(r->cpu_ns + r->steal_ns) / 1e9,
		 (double)r->cpu_ns / 1e9, r->account ? r->account : "", r->name);
	for (char *p = buf; *p; p++)	/* a command line is not the terminal's */
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

static const char *const help_text[] = {
	"cpuledger top: CPU time and steal, live",
	"",
	"  q         quit",
	"  H         a row per thread (again: per process)",
	"  P         a row per program, its processes summed",
	"  p         a row per process",
	"  < >       sort by the column to the left, to the right",
	"  s         sort by the next column",
	"  /         filter rows by name or pid (Enter ends, Esc clears)",
	"  space     pause (the recording goes on; figures catch up after)",
	"  ?         this help (any key: back)",
	"",
	"CPU%: the share of one CPU a row ran since the refresh before, steal",
	"taken out; STEAL%: the share the hypervisor stole while it held a CPU;",
	"APPARENT_S and CPU_S: since top started, with and without the steal.",
	"Per CPU: busy and steal by /proc/stat beside the steal cpuledger",
	"attributed to the tasks on it.",
};

#define HEADER_MAX 64

static void draw(struct top *tp, struct engine *e, uint64_t interval)
{
	char lines[HEADER_MAX][160], buf[512];
	erase();
	if (tp->help) {
		for (size_t i = 0; i < sizeof(help_text) / sizeof(*help_text); i++)
			mvaddnstr((int)i, 0, help_text[i], COLS);
		refresh();
		return;
	}
	int n = header(tp, e, interval, lines, LINES - 2 < HEADER_MAX ? LINES - 2 : HEADER_MAX);
	for (int i = 0; i < n; i++)
		mvaddnstr(i, 0, lines[i], COLS);
	titles(tp, buf, sizeof(buf));
	attron(A_REVERSE);
	mvaddnstr(n, 0, buf, COLS);
	for (int x = (int)strlen(buf); x < COLS; x++)
		mvaddch(n, x, ' ');
	attroff(A_REVERSE);
	for (uint32_t i = 0; i < tp->v.nrows && n + 1 + (int)i < LINES; i++) {
		row_text(tp, &tp->v.rows[i], buf, sizeof(buf));
		mvaddnstr(n + 1 + (int)i, 0, buf, COLS);
	}
	if (tp->filtering) {
		snprintf(buf, sizeof(buf), "filter: %s_", tp->filter);
		mvaddnstr(LINES - 1, 0, buf, COLS);
	}
	refresh();
}

static void print_batch(struct top *tp, struct engine *e, uint64_t interval)
{
	char lines[HEADER_MAX][160], buf[512];
	int n = header(tp, e, interval, lines, HEADER_MAX);
	for (int i = 0; i < n; i++)
		printf("%s\n", lines[i]);
	titles(tp, buf, sizeof(buf));
	printf("%s\n", buf);
	for (uint32_t i = 0; i < tp->v.nrows; i++) {
		row_text(tp, &tp->v.rows[i], buf, sizeof(buf));
		printf("%.*s\n", tp->width, buf);	/* as wide as a terminal's line */
	}
	printf("\n");
	fflush(stdout);
}

/* New figures: the engine walked, the rows made and shown. */
static int update(struct top *tp, struct engine *e, uint64_t now)
{
	uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t interval = now - tp->last_ns;
	read_stat(tp);
	int err = topview__refresh(&tp->v, e, tp->mode, interval, tp->filter, tp->sort);
	if (err)
		return err;
	if (tp->batch)
		print_batch(tp, e, interval);
	else
		draw(tp, e, interval);
	memcpy(tp->stat0, tp->stat1, tp->ncpus * sizeof(*tp->stat0));
	for (uint32_t c = 0; c < tp->ncpus; c++) {
		const struct eng_cpu_stats *cs = engine__cpu(e, c);
		tp->steal0[c] = cs ? cs->steal_ns : 0;
	}
	tp->last_ns = now;
	tp->iterations++;
	tp->cost_ms = (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1e6;
	tp->cost_total_ms += tp->cost_ms;
	return 0;
}

/* A key typed while filtering: the filter's text. */
static void filter_key(struct top *tp, int ch)
{
	size_t n = strlen(tp->filter);
	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
		tp->filtering = false;
	else if (ch == 27) {
		tp->filter[0] = '\0';
		tp->filtering = false;
	} else if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && n)
		tp->filter[n - 1] = '\0';
	else if (ch >= 0x20 && ch < 0x7f && n + 1 < sizeof(tp->filter)) {
		tp->filter[n] = (char)ch;
		tp->filter[n + 1] = '\0';
	}
}

/* Keys waiting: whether the view must be made again now. */
static bool keys(struct top *tp)
{
	bool again = false;
	int ch;
	while ((ch = getch()) != ERR) {
		again = true;
		if (tp->help) {
			tp->help = false;
			continue;
		}
		if (tp->filtering) {
			filter_key(tp, ch);
			continue;
		}
		switch (ch) {
		case 'q': live_stop(); break;
		case 'H': tp->mode = tp->mode == TOP_THREADS ? TOP_PROCESSES : TOP_THREADS; break;
		case 'P': tp->mode = tp->mode == TOP_PROGRAMS ? TOP_PROCESSES : TOP_PROGRAMS; break;
		case 'p': tp->mode = TOP_PROCESSES; break;
		case '<': tp->sort = (enum top_sort)((tp->sort + TOP_SORT_COUNT - 1) % TOP_SORT_COUNT); break;
		case '>':
		case 's': tp->sort = (enum top_sort)((tp->sort + 1) % TOP_SORT_COUNT); break;
		case ' ': tp->paused = !tp->paused; break;
		case '?': tp->help = true; break;
		case '/': tp->filtering = true; break;
		case KEY_RESIZE: break;
		default: again = false; break;
		}
	}
	return again;
}

static int hook_tick(void *ctx, struct recorder *r, struct engine *e, uint64_t now,
		     const struct live_status *st)
{
	(void)r, (void)st;
	struct top *tp = ctx;
	bool again = tp->curses && keys(tp);
	bool due = now >= tp->next_ns;
	if (due)
		tp->next_ns = now + tp->delay_ns;
	if ((due && !tp->paused) || (again && tp->iterations)) {
		/* a key remakes the rows at once, over the time since the last;
		 * the steal weighed since is shared out first */
		int err = recorder__settle(r, e);
		if (!err)
			err = update(tp, e, now);
		if (err) {
			cli_error("top: %s", strerror(-err));
			return EXIT_RUNTIME;
		}
		if (tp->max_iterations && tp->iterations >= tp->max_iterations)
			live_stop();
	} else if (again) {
		draw(tp, e, 0);
	}
	return 0;
}

static int parse(int argc, char **argv, struct live_opts *o, struct top *tp)
{
	int id;
	const char *arg;
	uint64_t v;
	double d;
	cli_begin();
	while ((id = cli_next(&top_command, argc, argv, &arg)) != CLI_END) {
		switch (id) {
		case CLI_HELP:
			cli_usage(stdout, &top_command);
			return 1;
		case T_DELAY:
			if (!cli_parse_double("--delay", arg, &d) || d < 0.1 || d > 3600) {
				cli_error("--delay: '%s' is not 0.1 to 3600 seconds", arg);
				return -1;
			}
			tp->delay_ns = (uint64_t)(d * 1e9);
			break;
		case T_PID:
			if (live_opts__add_pids(o, arg) < 0)
				return -1;
			o->all = false;
			break;
		case T_BATCH: tp->batch = true; break;
		case T_ITER:
			if (!cli_parse_u64("--iterations", arg, 1, 1000000, &v))
				return -1;
			tp->max_iterations = v;
			break;
		case T_FREQ:
			if (!cli_parse_u64("--freq", arg, 1, 100000, &v))
				return -1;
			o->hz = (uint32_t)v;
			break;
		case T_THREADS: tp->mode = TOP_THREADS; break;
		case T_PROGRAMS: tp->mode = TOP_PROGRAMS; break;
		case T_ACCOUNTS: o->accounts = arg; break;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		cli_error("unexpected '%s' (top watches running processes: -p PID)", argv[optind]);
		return -1;
	}
	return 0;
}

static void release(struct top *tp)
{
	if (tp->ready)
		topview__release(&tp->v);
	free(tp->stat0);
	free(tp->stat1);
	free(tp->steal0);
}

int cmd_top(int argc, char **argv)
{
	struct live_opts o;
	live_opts__init(&o);
	struct top tp = { .delay_ns = 2000000000ULL, .width = 200 };
	const char *columns = getenv("COLUMNS");
	if (columns && atoi(columns) >= 40 && atoi(columns) <= 500)
		tp.width = atoi(columns);
	o.all = true;
	o.hz = 49;
	o.quiet = true;
	int r = parse(argc, argv, &o, &tp);
	if (r) {
		live_opts__release(&o);
		return r > 0 ? 0 : EXIT_USAGE;
	}
	if (!tp.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		cli_error("needs a terminal (--batch prints plain text)");
		live_opts__release(&o);
		return EXIT_USAGE;
	}
	struct live_hooks hooks = { &tp, hook_program, NULL, hook_gone, hook_started, hook_tick,
				    NULL };
	o.hooks = &hooks;
	if (!tp.batch) {
		initscr();
		cbreak();
		noecho();
		nodelay(stdscr, TRUE);
		keypad(stdscr, TRUE);
		curs_set(0);
		tp.curses = true;
		mvaddstr(0, 0, "cpuledger top: starting...");
		refresh();
	}
	struct live_result res;
	int status = live_run(&o, &res);
	if (tp.curses)
		endwin();
	if (tp.iterations && !status)
		fprintf(stderr, "%s: %llu refreshes, %.2f ms of CPU each on average (rows and "
			"drawing; the recording's own cost is apart)\n", cli_progname,
			(unsigned long long)tp.iterations, tp.cost_total_ms / (double)tp.iterations);
	live_result__release(&res);
	release(&tp);
	live_opts__release(&o);
	return status;
}
