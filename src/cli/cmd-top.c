/*
 * cpuledger top: a live view of every CPU, refreshed every -d seconds:
 * per CPU its busy time and steal (cpuledger's, beside /proc/stat's), and
 * per process (threads with H, programs with P) the share of a CPU it ran
 * and had stolen, its apparent and corrected time since top started, and
 * its account. The header has top's load average and task states; t shows
 * the processes as a tree, k sends a signal and r renices, each asked and
 * confirmed first. ncurses draws it; --batch prints each refresh as text,
 * as `top -b` does. The recording is live_run's (no file, no ledger); the
 * figures are topview's (src/analysis/topview.h).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/stat.h>
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
#include "../report/report.h"
#include "../core/units.h"
#include "../core/banned.h"

enum { T_DELAY = 1, T_PID, T_BATCH, T_ITER, T_FREQ, T_THREADS, T_PROGRAMS, T_ACCOUNTS,
       T_TREE, T_MMAP_PAGES, T_SOURCE };

static const struct cli_option top_options[] = {
	{ "delay", 'd', "SEC", T_DELAY, "refresh every SEC seconds (default 2)" },
	{ "pid", 'p', "PID[,PID]", T_PID, "only these processes (and their children)" },
	{ "batch", 'b', NULL, T_BATCH, "print each refresh as plain text (no terminal\n"
	  "needed), as top -b does" },
	{ "iterations", 'n', "N", T_ITER, "stop after N refreshes" },
	LIVE_FREQ_OPTION(T_FREQ, LIVE_HZ_LIGHT, ": CPU time\nand steal come from --source"),
	LIVE_SOURCE_OPTION(T_SOURCE),
	{ "threads", 'H', NULL, T_THREADS, "a row per thread (key H)" },
	{ "programs", 'g', NULL, T_PROGRAMS, "a row per program, its processes summed (key g)" },
	{ "tree", 't', NULL, T_TREE, "processes as a tree, each under its parent (key t)" },
	{ "mmap-pages", 'm', "N", T_MMAP_PAGES, "ring buffer pages per CPU, a power of 2, as\n"
	  "record's (fewer: records lost sooner, and said)" },
	{ "accounts", 0, "FILE", T_ACCOUNTS, "charge accounts by these rules (docs/accounts.md):\n"
	  "an ACCOUNT column" },
	{ 0 },
};

static const struct cli_option *const top_tables[] = { top_options, NULL };

const struct cli_command top_command = {
	"top", "[options]",
	"A live view of where CPU time goes and how much of it the hypervisor\n"
	"steals: per CPU, and per process, thread or program.",
	top_tables,
	"Keys: q quit, P sort by CPU%, M by memory, T by time, < > or s sort column,\n"
	"H threads, g programs, p processes, t (V, F5) tree, k kill, r renice,\n"
	"/ filter (Enter ends, Esc clears), space pause, ? help.",
	false,
};

static const char *const sort_names[TOP_SORT_COUNT] = {
	"CPU%", "STEAL%", "APPARENT_S", "CPU_S", "PID", "NAME", "RES",
};

/* What a k or r asks, step by step (Esc or Enter on nothing cancels). */
enum ask { ASK_NONE, ASK_KILL_PID, ASK_KILL_SIG, ASK_KILL_SURE, ASK_NICE_PID, ASK_NICE_VAL,
	   ASK_NICE_SURE };

/* top's "Tasks:" line: processes by state */
enum { TASKS_ALL, TASKS_RUNNING, TASKS_SLEEPING, TASKS_STOPPED, TASKS_ZOMBIE, TASKS_N };

struct top {
	struct topview v;
	bool ready, curses, batch, paused, help, filtering, accounts, tree;
	const char *accounts_file;
	const pid_t *pids;	/* -p: these and their children only */
	int npids;
	enum ask ask;
	char input[24];		/* what is typed at the question */
	uint32_t ask_pid;	/* the process asked about */
	char ask_name[32];	/* its comm */
	int ask_sig, ask_nice, ask_old_nice;
	char message[200];	/* the outcome, until the next key */
	char loadavg[64];	/* /proc/loadavg's three figures, as top shows them */
	uint32_t tasks[TASKS_N];
	bool narrow;		/* under 100 columns: no APPARENT_S, CPU_S */
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
	double own_pct;		/* the whole process's CPU, recorder too, of one CPU */
	uint64_t own0;		/* its CPU time at the refresh before */
	uint64_t lost0, lost_new;	/* records lost by then; in the last refresh */
	struct recorder *rec;
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
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

/* The load average as top prints it ("0.52, 0.58, 0.59"): /proc/loadavg's
 * first three figures as they are, so they read the same. */
static void read_loadavg(struct top *tp)
{
	char *text = procfs_read("/", "proc/loadavg", NULL);
	char a[16], b[16], c[16];
	if (text && sscanf(text, "%15s %15s %15s", a, b, c) == 3)
		snprintf(tp->loadavg, sizeof(tp->loadavg), "%s, %s, %s", a, b, c);
	else
		snprintf(tp->loadavg, sizeof(tp->loadavg), "?");
	free(text);
}

/* A process's state and parent from /proc/PID/stat (after comm, which
 * may hold ')'); false when it is gone. */
static bool proc_head(const char *pid, char *state, uint32_t *ppid)
{
	char rel[64];
	unsigned pp = 0;
	snprintf(rel, sizeof(rel), "proc/%.40s/stat", pid);
	char *text = procfs_read("/", rel, NULL);
	const char *p = text ? strrchr(text, ')') : NULL;
	bool ok = p && sscanf(p + 1, " %c %u", state, &pp) == 2;
	free(text);
	*ppid = ok ? pp : 0;
	return ok;
}

/* Every process in /proc by its state, as top's "Tasks:" line counts
 * them: running R; sleeping S, D (waiting on I/O) and I (idle kernel
 * threads); stopped T and t (traced); zombie Z. */
static void count_tasks(struct top *tp)
{
	memset(tp->tasks, 0, sizeof(tp->tasks));
	DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		char st;
		uint32_t ppid;
		if (!proc_head(de->d_name, &st, &ppid))
			continue;	/* gone since: not counted */
		tp->tasks[TASKS_ALL]++;
		tp->tasks[st == 'R' ? TASKS_RUNNING : st == 'T' || st == 't' ? TASKS_STOPPED :
			  st == 'Z' ? TASKS_ZOMBIE : TASKS_SLEEPING]++;
	}
	if (d)
		closedir(d);
}

/* -p PID: the processes already under those pids when top starts are in
 * scope too (the engine follows only the forks it sees): their pids, from
 * each process's parent in /proc, a level a pass. 0 or -ENOMEM. */
static int scope_descendants(struct engine *e, const pid_t *pids, int npids)
{
	struct { uint32_t pid, ppid; bool in; } *procs = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && (de = readdir(d)) && !err) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (n == cap) {
			void *bigger = realloc(procs, (cap = cap ? 2 * cap : 512) * sizeof(*procs));
			if (!bigger) {
				err = -ENOMEM;
				break;
			}
			procs = bigger;
		}
		uint32_t pid = (uint32_t)strtoul(de->d_name, NULL, 10);
		procs[n].pid = pid;
		char st;
		proc_head(de->d_name, &st, &procs[n].ppid);	/* gone: ppid 0 */
		procs[n].in = false;
		for (int i = 0; i < npids; i++)
			procs[n].in |= pid == (uint32_t)pids[i];
		n++;
	}
	if (d)
		closedir(d);
	for (bool more = !err; more;) {	/* until a pass adds none */
		more = false;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n && !procs[i].in; j++)
				if (procs[j].in && procs[j].pid == procs[i].ppid)
					procs[i].in = more = true;
	}
	for (size_t i = 0; i < n && !err; i++)
		if (procs[i].in)
			err = engine__scope(e, procs[i].pid);
	free(procs);
	return err;
}

static int hook_started(void *ctx, struct recorder *r, struct engine *e)
{
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
	tp->v.read_wait = recorder__wait_hook(r, &tp->v.wait_ctx);	/* schedstat or bpf's */
	if (tp->npids && scope_descendants(e, tp->pids, tp->npids)) {
		cli_error("out of memory");
		return EXIT_RUNTIME;
	}
	tp->ready = true;
	struct engine_sink sink = topview__sink(&tp->v);	/* threads gone, from now */
	if (engine__add_sink(e, &sink)) {
		cli_error("the engine takes no more consumers");
		return EXIT_RUNTIME;
	}
	read_stat(tp);
	memcpy(tp->stat0, tp->stat1, n * sizeof(*tp->stat0));
	tp->start_ns = tp->last_ns = clock_ns(CLOCK_MONOTONIC);
	tp->own0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	tp->lost0 = recorder__lost(r);
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

#define HEADER_LINE 256

/* Where steal comes from (docs/record.md), in a header line. */
static void steal_line(const struct top *tp, const struct engine *e, char line[160])
{
	const struct engine_stats *st = engine__stats(e);
	const struct engine_config *c = engine__config(e);
	const struct kernel_acct *k = recorder__kernel_acct(tp->rec);
	if (c->mode == STEAL_GIVEN) {	/* "bpf (steal: ...; wait: ...)" */
		snprintf(line, 160, "steal: %s", recorder__stats(tp->rec)->steal_source);
		return;
	}
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

/* The header's lines into buf, one per element of lines[]: the title with
 * the load average, the tasks by state, where steal comes from, records
 * lost (said, and why, when they are), what ACCOUNT means (with
 * --accounts), one per CPU, the totals. Top's own CPU is the whole
 * process's, the recorder's included, over the same time as its row's, so
 * that the two agree. Returns how many. */
static int header(struct top *tp, struct engine *e, uint64_t interval, char lines[][HEADER_LINE],
		  int max)
{
	uint64_t lost = recorder__lost(tp->rec);
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	int n = 0;
	/* as top's first line, fitting 80 columns with loads of 100 and more
	 * (the refresh interval is what -d says) */
	snprintf(lines[n++], HEADER_LINE, "cpuledger top - %02d:%02d:%02d, %u CPUs, "
		 "load average: %s", tm.tm_hour, tm.tm_min, tm.tm_sec, tp->ncpus, tp->loadavg);
	snprintf(lines[n++], HEADER_LINE, "Tasks: %u total, %u running, %u sleeping, %u stopped, "
		 "%u zombie%s", tp->tasks[TASKS_ALL], tp->tasks[TASKS_RUNNING],
		 tp->tasks[TASKS_SLEEPING], tp->tasks[TASKS_STOPPED], tp->tasks[TASKS_ZOMBIE],
		 tp->batch ? "" : "  (q quit, ? help)");
	steal_line(tp, e, lines[n++]);
	if (tp->accounts)
		snprintf(lines[n++], HEADER_LINE, "ACCOUNT: who pays for a row's CPU time, by the rules "
			 "in '%s' (the account most of its time went to)", tp->accounts_file);
	if (tp->lost_new)
		snprintf(lines[n++], HEADER_LINE, "%llu records lost in this refresh (%llu in all): the "
			 "kernel's buffers filled faster than top read them, so this refresh's "
			 "CPU and steal are low by what they held",
			 (unsigned long long)tp->lost_new, (unsigned long long)lost);
	for (uint32_t c = 0; c < tp->ncpus && n < max - 1; c++) {
		const struct procstat_cpu *a = &tp->stat0[c], *b = &tp->stat1[c];
		uint64_t busy = since(b->busy, a->busy), idle = since(b->idle, a->idle);
		uint64_t kst = since(b->steal, a->steal), total = busy + idle + kst;
		const struct eng_cpu_stats *cs = engine__cpu(e, c);
		uint64_t st = cs ? since(cs->steal_ns, tp->steal0[c]) : 0;
		snprintf(lines[n++], HEADER_LINE, "CPU%-3u busy %5.1f%%  steal %5.1f%% (kernel %5.1f%%)", c,
			 share(busy, total), share(st, interval), share(kst, total));
	}
	/* the kernel's clock holds steal unless its runtime leaves it out */
	enum steal_accounting acct = engine__stats(e)->accounting;
	bool clock_has_steal = acct != ACCT_EXCLUDED && acct != ACCT_EXCLUDED_IRQ;
	snprintf(lines[n++], HEADER_LINE, "%s: %u; sort %s;%s top's own CPU %.1f%% (its row's "
		 "CPU%%%s)%s%s%s", tp->mode == TOP_THREADS ? "threads" :
		 tp->mode == TOP_PROGRAMS ? "programs" : "processes", tp->v.nrows,
		 sort_names[tp->sort], tp->tree && tp->mode == TOP_PROCESSES ? " tree;" : "", tp->own_pct,
		 clock_has_steal ? " + STEAL%" : "", tp->paused ? " [paused]" : "",
		 tp->filter[0] ? " filter: " : "", tp->filter);
	return n;
}

/* The columns' titles: top's (PID USER NI RES S %CPU TIME+) with steal,
 * apparent (not under 100 columns: the command keeps room at 80) and
 * corrected time beside them. */
static void titles(const struct top *tp, char *buf, size_t size)
{
	const char *first = tp->mode == TOP_THREADS ? "    PID     TID" :
			    tp->mode == TOP_PROGRAMS ? "  PROCS" : "    PID";
	snprintf(buf, size, "%s %-8s %3s %5s %s %5s %6s %5s %7s %8s%s%s%s%s %s", first, "USER",
		 "NI", "RES", "S", "CPU%", "STEAL%", "WAIT%", "DENIED%", "TIME+",
		 tp->narrow ? "" : " APPARENT_S", tp->narrow ? "" : "    CPU_S",
		 tp->accounts ? " " : "", tp->accounts ? "ACCOUNT   " : "",
		 tp->mode == TOP_PROGRAMS ? "PROGRAM" : tp->mode == TOP_THREADS ? "COMM" :
		 "COMMAND");
}

/* The owner of process pid (its /proc directory's), or -1. */
static int64_t proc_uid(uint32_t pid)
{
	char path[48];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%u", pid);
	return stat(path, &st) ? -1 : (int64_t)st.st_uid;
}

/* What /proc/PID/stat (or a thread's) says: state, parent, nice, utime +
 * stime, RSS; a process gone since is left unknown. */
static void proc_figures(struct top_row *r, bool thread, long page_kb)
{
	char rel[64];
	if (thread)
		snprintf(rel, sizeof(rel), "proc/%u/task/%u/stat", r->pid, r->tid);
	else
		snprintf(rel, sizeof(rel), "proc/%u/stat", r->pid);
	char *text = procfs_read("/", rel, NULL);
	const char *p = text ? strrchr(text, ')') : NULL;	/* comm may hold ')' */
	char state;
	unsigned long long utime, stime, rss;
	unsigned ppid;
	long nice;
	/* after comm: state(3) ppid(4) ... utime(14) stime(15) ... nice(19) ... rss(24) */
	if (p && sscanf(p + 1, " %c %u %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d "
			"%*d %ld %*d %*d %*u %*u %llu", &state, &ppid, &utime, &stime, &nice,
			&rss) == 6) {
		r->state = state;
		r->ppid = ppid;
		if (r->uid < 0)	/* not known to the recording (there before it) */
			r->uid = proc_uid(r->pid);
		r->nice = (int)nice;
		r->time_ticks = utime + stime;
		r->rss_kb = rss * (unsigned long long)page_kb;
	}
	free(text);
}

static void all_proc_figures(struct top *tp)
{
	long page = sysconf(_SC_PAGESIZE) / 1024;
	if (tp->mode == TOP_PROGRAMS)
		return;	/* a program's processes come and go: no one figure */
	for (uint32_t i = 0; i < tp->v.nrows; i++)
		proc_figures(&tp->v.rows[i], tp->mode == TOP_THREADS, page > 0 ? page : 4);
}

/* RES as top shows it: KiB, then m and g. */
static const char *res_text(uint64_t kb, char *buf, size_t size)
{
	if (!kb)
		snprintf(buf, size, "-");
	else if (kb < 100000)
		snprintf(buf, size, "%llu", (unsigned long long)kb);
	else if (kb < 1000ULL * 1024)
		snprintf(buf, size, "%.0fm", (double)kb / 1024);
	else if (kb < 100ULL * 1024 * 1024)
		snprintf(buf, size, "%.1fm", (double)kb / 1024);
	else
		snprintf(buf, size, "%.1fg", (double)kb / (1024 * 1024));
	return buf;
}

/* TIME+ as top shows it: minutes:seconds.hundredths of CPU time. */
static const char *time_text(uint64_t ticks, bool known, char *buf, size_t size)
{
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t cs = hz > 0 ? ticks * 100 / (uint64_t)hz : 0;
	if (!known)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%llu:%02llu.%02llu", (unsigned long long)(cs / 6000),
			 (unsigned long long)(cs / 100 % 60), (unsigned long long)(cs % 100));
	return buf;
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

static long long task_id(uint32_t id)
{
	return id == UINT32_MAX ? -1 : (long long)id;
}

static void row_text(const struct top *tp, const struct top_row *r, char *buf, size_t size)
{
	char user[64], first[32], res[16], tm[24], ni[8], acc[16] = "", ap[40] = "";
	/* (a task sampled past its exit is -1, as perf shows it) */
	if (tp->mode == TOP_THREADS)
		snprintf(first, sizeof(first), "%7lld %7lld", task_id(r->pid),
			 task_id(r->tid));
	else if (tp->mode == TOP_PROGRAMS)
		snprintf(first, sizeof(first), "%7u", r->threads);
	else
		snprintf(first, sizeof(first), "%7lld", task_id(r->pid));
	snprintf(ni, sizeof(ni), r->state ? "%d" : "-", r->nice);
	if (tp->accounts)
		snprintf(acc, sizeof(acc), " %-10.10s", r->account ? r->account : "");
	if (!tp->narrow)
		snprintf(ap, sizeof(ap), " %10.3f %8.2f", (double)(r->cpu_ns + r->steal_ns) /
			 NSEC_PER_SEC, (double)r->cpu_ns / NSEC_PER_SEC);
	/* not read (yet): unknown, not 0; and so is what it makes denied */
	char wait[16] = "    ?", denied[16] = "      ?";
	if (r->wait_known) {
		snprintf(wait, sizeof(wait), "%5.1f", r->wait_pct);
		snprintf(denied, sizeof(denied), "%7.1f", r->steal_pct + r->wait_pct);
	}
	int n = snprintf(buf, size, "%s %-8.8s %3s %5s %c %5.1f %6.1f %5s %7s %8s%s%s ",
			 first, tp->mode == TOP_PROGRAMS ? "-" : user_name(r->uid, user, sizeof(user)),
			 ni, res_text(r->rss_kb, res, sizeof(res)), r->state ? r->state : '-',
			 r->cpu_pct, r->steal_pct, wait, denied,
			 time_text(r->time_ticks, r->state != 0, tm, sizeof(tm)), ap, acc);
	/* the tree as top's forest view draws it: a child's name indented
	 * under its parent's, after "`- " (deep trees stop indenting at 12) */
	for (uint32_t d = 1; d <= r->depth && d <= 12 && n >= 0 && (size_t)n + 4 < size; d++)
		n += snprintf(buf + n, size - (size_t)n, "%s", d == r->depth || d == 12 ? "`- " : "   ");
	/* a command line is not the terminal's: no control characters */
	if (n >= 0 && (size_t)n < size)
		text_clean(buf + n, size - (size_t)n, r->name);
}

/* A whole number in [lo, hi], all of s (a sign, then digits). */
static bool whole_number(const char *s, long lo, long hi, long *out)
{
	char *end;
	if (!*s || !(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9')))
		return false;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static const struct { const char *name; int sig; } signal_names[] = {
	{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "KILL", SIGKILL },
	{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "TERM", SIGTERM }, { "CONT", SIGCONT },
	{ "STOP", SIGSTOP },
};

/* A signal as kill(1) takes it: 15, TERM, SIGTERM (any case); 0 if none. */
static int signal_of(const char *s)
{
	long v;
	if (whole_number(s, 1, SIGRTMAX, &v))
		return (int)v;
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof(signal_names) / sizeof(*signal_names); i++)
		if (!strcasecmp(s, signal_names[i].name))
			return signal_names[i].sig;
	return 0;
}

static const char *signal_name(int sig, char *buf, size_t size)
{
	for (size_t i = 0; i < sizeof(signal_names) / sizeof(*signal_names); i++)
		if (signal_names[i].sig == sig) {
			snprintf(buf, size, "%s (%d)", signal_names[i].name, sig);
			return buf;
		}
	snprintf(buf, size, "signal %d", sig);
	return buf;
}

/* The pid a k or r offers first, as top does: the first row's (a
 * thread's with H); 0 in the programs view (no one process) or for a
 * row of pid -1. */
static uint32_t default_pid(const struct top *tp)
{
	if (!tp->v.nrows || tp->mode == TOP_PROGRAMS)
		return 0;
	uint32_t id = tp->mode == TOP_THREADS ? tp->v.rows[0].tid : tp->v.rows[0].pid;
	return id == UINT32_MAX ? 0 : id;	/* -1: a task gone, none to offer */
}

/* The pid typed (or the default offered, tp->ask_pid), its comm kept:
 * false, said in the message, when it is not one or there is no such
 * process. */
static bool ask_take_pid(struct top *tp)
{
	long v = tp->ask_pid;
	if (tp->input[0] && !whole_number(tp->input, 1, INT_MAX, &v)) {
		snprintf(tp->message, sizeof(tp->message), "'%.20s' is not a pid", tp->input);
		return false;
	}
	if (v <= 0) {	/* never kill(0) or kill(-1): a group, or every process */
		snprintf(tp->message, sizeof(tp->message), "no pid given (the programs view has none)");
		return false;
	}
	char rel[48];
	snprintf(rel, sizeof(rel), "proc/%ld/comm", v);
	char *comm = procfs_read("/", rel, NULL);
	if (!comm) {
		snprintf(tp->message, sizeof(tp->message), "pid %ld: no such process", v);
		return false;
	}
	comm[strcspn(comm, "\n")] = '\0';
	text_clean(tp->ask_name, sizeof(tp->ask_name), comm);
	free(comm);
	tp->ask_pid = (uint32_t)v;
	return true;
}

/* Why kill or setpriority refused, in words. */
static const char *refusal(int err, bool renice)
{
	if (err == ESRCH)
		return "no such process (it ended)";
	if (err == EACCES)
		return "permission denied (a lower nice value needs root or CAP_SYS_NICE)";
	if (err == EPERM && renice)
		return "not permitted (another user's process, or one holding capabilities top "
		       "has not, needs CAP_SYS_NICE)";
	if (err == EPERM)
		return "not permitted (another user's process needs root or CAP_KILL)";
	return strerror(err);
}

static void do_kill(struct top *tp)
{
	char sig[24];
	signal_name(tp->ask_sig, sig, sizeof(sig));
	if (kill((pid_t)tp->ask_pid, tp->ask_sig) == 0)
		snprintf(tp->message, sizeof(tp->message), "sent %s to pid %u (%s)", sig,
			 tp->ask_pid, tp->ask_name);
	else
		snprintf(tp->message, sizeof(tp->message), "cannot send %s to pid %u (%s): %s", sig,
			 tp->ask_pid, tp->ask_name, refusal(errno, false));
}

static void do_renice(struct top *tp)
{
	if (setpriority(PRIO_PROCESS, (id_t)tp->ask_pid, tp->ask_nice) == 0)
		snprintf(tp->message, sizeof(tp->message), "pid %u (%s) reniced from %d to %d",
			 tp->ask_pid, tp->ask_name, tp->ask_old_nice, tp->ask_nice);
	else
		snprintf(tp->message, sizeof(tp->message), "cannot renice pid %u (%s) to %d: %s",
			 tp->ask_pid, tp->ask_name, tp->ask_nice,
			 refusal(errno, true));
}

/* Enter at a question: the next question, or the message of what went
 * wrong. */
static void ask_enter(struct top *tp)
{
	long v;
	switch (tp->ask) {
	case ASK_KILL_PID:
	case ASK_NICE_PID:
		if (!ask_take_pid(tp)) {
			tp->ask = ASK_NONE;
			break;
		}
		errno = 0;
		v = getpriority(PRIO_PROCESS, (id_t)tp->ask_pid);
		tp->ask_old_nice = errno ? 0 : (int)v;
		tp->ask = tp->ask == ASK_KILL_PID ? ASK_KILL_SIG : ASK_NICE_VAL;
		break;
	case ASK_KILL_SIG:
		tp->ask_sig = tp->input[0] ? signal_of(tp->input) : SIGTERM;
		tp->ask = tp->ask_sig ? ASK_KILL_SURE : ASK_NONE;
		if (!tp->ask_sig)
			snprintf(tp->message, sizeof(tp->message), "'%.20s' is not a signal (a number "
				 "or a name: TERM, KILL, HUP, INT, STOP, CONT...): nothing sent", tp->input);
		break;
	case ASK_NICE_VAL:
		if (whole_number(tp->input, -20, 19, &v)) {
			tp->ask_nice = (int)v;
			tp->ask = ASK_NICE_SURE;
		} else {
			snprintf(tp->message, sizeof(tp->message), "'%.20s' is not a nice value "
				 "(-20 to 19): not reniced", tp->input);
			tp->ask = ASK_NONE;
		}
		break;
	default:
		break;
	}
	tp->input[0] = '\0';
}

/* A key while k or r asks: typed into the answer, Enter for the next
 * question, Esc cancels; at the last, y does it and any other key not. */
static void ask_key(struct top *tp, int ch)
{
	size_t n = strlen(tp->input);
	if (tp->ask == ASK_KILL_SURE || tp->ask == ASK_NICE_SURE) {
		bool yes = ch == 'y' || ch == 'Y';
		if (yes)
			tp->ask == ASK_KILL_SURE ? do_kill(tp) : do_renice(tp);
		else
			snprintf(tp->message, sizeof(tp->message), "%s", tp->ask == ASK_KILL_SURE ?
				 "not sent" : "not reniced");
		tp->ask = ASK_NONE;
	} else if (ch == 27) {
		snprintf(tp->message, sizeof(tp->message), "cancelled");
		tp->ask = ASK_NONE;
		tp->input[0] = '\0';
	} else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
		ask_enter(tp);
	else if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && n)
		tp->input[n - 1] = '\0';
	else if (ch >= 0x20 && ch < 0x7f && n + 1 < sizeof(tp->input)) {
		tp->input[n] = (char)ch;
		tp->input[n + 1] = '\0';
	}
}

/* The question k or r asks now, as top words it, with what is typed. */
static void ask_line(const struct top *tp, char *buf, size_t size)
{
	char sig[24], def[32] = "";
	if (tp->ask_pid)
		snprintf(def, sizeof(def), " [default pid = %u]", tp->ask_pid);
	switch (tp->ask) {
	case ASK_KILL_PID:
		snprintf(buf, size, "PID to signal/kill%s: %s_", def, tp->input);
		break;
	case ASK_KILL_SIG:
		snprintf(buf, size, "Send pid %u (%s) signal [15/TERM]: %s_", tp->ask_pid,
			 tp->ask_name, tp->input);
		break;
	case ASK_KILL_SURE:
		snprintf(buf, size, "Send %s to pid %u (%s)? [y/N] ",
			 signal_name(tp->ask_sig, sig, sizeof(sig)), tp->ask_pid, tp->ask_name);
		break;
	case ASK_NICE_PID:
		snprintf(buf, size, "PID to renice%s: %s_", def, tp->input);
		break;
	case ASK_NICE_VAL:
		snprintf(buf, size, "Renice pid %u (%s), nice %d now, to value [-20..19]: %s_",
			 tp->ask_pid, tp->ask_name, tp->ask_old_nice, tp->input);
		break;
	case ASK_NICE_SURE:
		snprintf(buf, size, "Renice pid %u (%s) from %d to %d? [y/N] ", tp->ask_pid,
			 tp->ask_name, tp->ask_old_nice, tp->ask_nice);
		break;
	default:
		snprintf(buf, size, "%s", tp->message);
		break;
	}
}

static const char *const help_text[] = {
	"cpuledger top: CPU time and steal, live",
	"",
	"  q         quit",
	"  P M T     sort by CPU%, by memory (RES), by time (CPU_S), as top",
	"  < >       sort by the column to the left, to the right",
	"  s         sort by the next column",
	"  H         a row per thread (again: per process)",
	"  g         a row per program, its processes summed (again: per process)",
	"  p         a row per process",
	"  t V F5    processes as a tree, each under its parent (again: a list)",
	"  k F9      send a signal: asks the pid, the signal (TERM), then y",
	"  r         renice: asks the pid, the nice value, then y",
	"  /         filter rows by name or pid (Enter ends, Esc clears)",
	"  space     pause (the recording goes on; figures catch up after)",
	"  ?         this help (any key: back)",
	"",
	"CPU%: the share of one CPU a row ran since the refresh before, steal",
	"taken out; STEAL%: the share the hypervisor stole while it held a CPU;",
	"WAIT%: the share of one CPU its threads were runnable but waited on a",
	"run queue (schedstat run_delay: other tasks, its cgroup's quota; ? not",
	"yet read). DENIED%: the CPU it wanted and did not get, STEAL% + WAIT%.",
	"APPARENT_S and CPU_S (100 columns or more): since top started, with and",
	"without the steal.",
	"NI, RES (KiB), S and TIME+ (CPU time since it started) as top shows",
	"them, from /proc. ACCOUNT (--accounts): who pays for the row's time.",
	"Per CPU: busy and steal by /proc/stat beside the steal cpuledger",
	"attributed to the tasks on it.",
};

#define HEADER_MAX 64

static void draw(struct top *tp, struct engine *e, uint64_t interval)
{
	char lines[HEADER_MAX][HEADER_LINE], buf[512];
	erase();
	if (tp->help) {
		for (size_t i = 0; i < sizeof(help_text) / sizeof(*help_text); i++)
			mvaddnstr((int)i, 0, help_text[i], COLS);
		refresh();
		return;
	}
	tp->narrow = COLS < 100;
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
	if (tp->filtering)
		snprintf(buf, sizeof(buf), "filter: %s_", tp->filter);
	else
		ask_line(tp, buf, sizeof(buf));
	if (buf[0]) {	/* the last line: a question or what came of one */
		move(LINES - 1, 0);
		clrtoeol();
		mvaddnstr(LINES - 1, 0, buf, COLS);
	}
	refresh();
}

static void print_batch(struct top *tp, struct engine *e, uint64_t interval)
{
	char lines[HEADER_MAX][HEADER_LINE], buf[512];
	tp->narrow = tp->width < 100;
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

/* New figures: the engine walked, the rows made and shown. own: the
 * process's CPU clock when the tick began, before the engine was settled,
 * so that it covers what its own row covers. */
static int update(struct top *tp, struct engine *e, uint64_t now, uint64_t own)
{
	uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t interval = now - tp->last_ns;
	read_stat(tp);
	read_loadavg(tp);
	count_tasks(tp);
	bool tree = tp->tree && tp->mode == TOP_PROCESSES;
	int err = topview__refresh(&tp->v, e, tp->mode, interval, tp->filter, tp->sort);
	if (err)
		return err;
	all_proc_figures(tp);
	if (tp->sort == TOP_SORT_MEM)
		topview__sort(&tp->v, tp->sort);
	if (tree && (err = topview__tree(&tp->v)))
		return err;
	uint64_t lost = recorder__lost(tp->rec);
	tp->own_pct = interval ? 100.0 * (double)since(own, tp->own0) / (double)interval : 0;
	tp->lost_new = since(lost, tp->lost0);
	tp->own0 = own;
	tp->lost0 = lost;
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

/* Keys waiting: whether the view must be made again now. Drawn, it is
 * made again too: the rows' names point into the recorder's string table,
 * which the records read since may have moved. */
static bool keys(struct top *tp)
{
	bool again = false;
	int ch;
	while ((ch = getch()) != ERR) {
		again = true;
		tp->message[0] = '\0';	/* said until the next key */
		if (tp->help) {
			tp->help = false;
			continue;
		}
		if (tp->ask) {
			ask_key(tp, ch);
			continue;
		}
		if (tp->filtering) {
			filter_key(tp, ch);
			continue;
		}
		switch (ch) {
		case 'q': live_stop(); break;
		case 't':
		case 'V':
		case KEY_F(5):
			tp->tree = !tp->tree || tp->mode != TOP_PROCESSES;
			tp->mode = TOP_PROCESSES;
			break;
		case 'k':
		case KEY_F(9):
		case 'r':
			/* the default offered is fixed now: a refresh while the
			 * question is open must not change what Enter picks */
			tp->ask = ch == 'r' ? ASK_NICE_PID : ASK_KILL_PID;
			tp->ask_pid = default_pid(tp);
			tp->input[0] = '\0';
			break;
		case 'H': tp->mode = tp->mode == TOP_THREADS ? TOP_PROCESSES : TOP_THREADS; break;
		case 'g': tp->mode = tp->mode == TOP_PROGRAMS ? TOP_PROCESSES : TOP_PROGRAMS; break;
		case 'P': tp->sort = TOP_SORT_CPU; break;
		case 'M': tp->sort = TOP_SORT_MEM; break;
		case 'T': tp->sort = TOP_SORT_TIME; break;
		case 'p': tp->mode = TOP_PROCESSES; break;
		case '<': tp->sort = (enum top_sort)((tp->sort + TOP_SORT_COUNT - 1) % TOP_SORT_COUNT); break;
		case '>':
		case 's': tp->sort = (enum top_sort)((tp->sort + 1) % TOP_SORT_COUNT); break;
		case ' ': tp->paused = !tp->paused; break;
		case '?': tp->help = true; break;
		case '/': tp->filtering = true; break;
		case KEY_RESIZE: break;
		default: break;
		}
	}
	return again;
}

static int hook_tick(void *ctx, struct recorder *r, struct engine *e, uint64_t now,
		     const struct live_status *st)
{
	(void)r, (void)st;
	struct top *tp = ctx;
	uint64_t own = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	bool again = tp->curses && keys(tp);
	bool due = now >= tp->next_ns;
	if (due)
		tp->next_ns = now + tp->delay_ns;
	if ((due && !tp->paused) || (again && tp->iterations)) {
		/* a key remakes the rows at once, over the time since the last;
		 * the steal weighed since is shared out first */
		int err = recorder__settle(r, e);
		if (!err)
			err = update(tp, e, now, own);
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

/* 0 (*help when --help printed), or EXIT_USAGE having said why. */
static int parse(int argc, char **argv, struct live_opts *o, struct top *tp, bool *help)
{
	int id;
	const char *arg;
	uint64_t v;
	double d;
	if (live_opts__source_env(o))
		return EXIT_USAGE;
	cli_begin();
	while ((id = cli_next(&top_command, argc, argv, &arg)) != CLI_END) {
		switch (id) {
		case CLI_HELP:
			cli_usage(stdout, &top_command);
			*help = true;
			return 0;
		case T_DELAY:
			if (cli_parse_seconds("--delay", arg, 0.1, 3600, &d))
				return EXIT_USAGE;
			tp->delay_ns = (uint64_t)(d * NSEC_PER_SEC);
			break;
		case T_PID:
			if (live_opts__add_pids(o, arg) < 0)
				return EXIT_USAGE;
			o->all = false;
			break;
		case T_BATCH: tp->batch = true; break;
		case T_ITER:
			if (cli_parse_u64("--iterations", arg, 1, 1000000, &v))
				return EXIT_USAGE;
			tp->max_iterations = v;
			break;
		case T_FREQ:
			if (live_opts__freq(o, arg) < 0)
				return EXIT_USAGE;
			break;
		case T_THREADS: tp->mode = TOP_THREADS; break;
		case T_PROGRAMS: tp->mode = TOP_PROGRAMS; break;
		case T_ACCOUNTS:
			o->accounts = tp->accounts_file = arg;
			tp->accounts = true;
			break;
		case T_TREE: tp->tree = true; tp->mode = TOP_PROCESSES; break;
		case T_MMAP_PAGES:
			if (live_opts__mmap_pages(o, arg) < 0)
				return EXIT_USAGE;
			break;
		case T_SOURCE:
			if (live_opts__source(o, arg) < 0)
				return EXIT_USAGE;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_error("unexpected '%s' (top watches running processes: -p PID)", argv[optind]);
		return EXIT_USAGE;
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
	o.hz = LIVE_HZ_LIGHT;
	o.quiet = true;
	bool help = false;
	int status = parse(argc, argv, &o, &tp, &help);
	if (status || help) {
		live_opts__release(&o);
		return status;
	}
	if (!tp.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		cli_error("needs a terminal (--batch prints plain text)");
		live_opts__release(&o);
		return EXIT_USAGE;
	}
	tp.pids = o.pids;
	tp.npids = o.npids;
	struct live_hooks hooks = { &tp, hook_started, hook_tick, NULL };
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
	status = live_run(&o, &res);
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
