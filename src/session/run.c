/*
 * live_run: a recording from start to end (session.h): the order of the
 * steps is what keeps it safe. The perf events and the kernel's symbols
 * are opened as root; then, under sudo, the recorder becomes the user who
 * ran sudo, before it opens any file, so nothing it writes is root's and
 * nothing it writes could not be written by that user.
 */
#include "session_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../analysis/pipeline.h"
#include "../collect/procfs.h"
#include "../ledger/writer.h"
#include "../collect/kernel_acct.h"
#include "../record/recorder.h"
#include "../collect/clock.h"
#include "../core/units.h"
#include "../output/outfile.h"
#include "../core/banned.h"

struct live {
	struct live_opts *o;
	struct live_result *res;
	struct account_rules rules;
	char *rules_text;
	pid_t child;
	int go_fd, exec_fd;	/* release the command; its exec's failure */
	int exec_errno;		/* the command could not be run */
	bool sudo;
	uid_t uid;
	gid_t gid;
	struct recorder *rec;
	struct outfile out;
	bool have_out;
	struct engine *engine;	/* pipe's */
	struct pipeline pipe;
	bool piped;		/* pipe set up */
	struct ledger_writer *writer;
	bool said_failing;
	uint64_t said_written;	/* collections said to be in the ledger */
	uint64_t start, end;
	int64_t retained_ns;	/* when retention was last asked for */
};

/* The command, held at a pipe until recording has begun; a second pipe
 * (closed by a successful exec) says why it could not be run. */
static int start_command(struct live *l)
{
	int go[2], ex[2];
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ex, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	l->child = fork();
	if (l->child == 0) {
		char c;
		close(go[1]);
		close(ex[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* the recorder gave up */
		execvp(l->o->command[0], l->o->command);
		int e = errno;
		ssize_t w = write(ex[1], &e, sizeof(e));
		(void)w;
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	if (l->child < 0) {
		close(go[1]);
		close(ex[0]);
		return -errno;
	}
	l->go_fd = go[1];
	l->exec_fd = ex[0];
	return 0;
}

/* Whether the command failed to exec (said once it is known). */
static bool exec_failed(struct live *l)
{
	if (l->exec_fd < 0)
		return l->exec_errno != 0;
	int e;
	int flags = fcntl(l->exec_fd, F_GETFL);
	fcntl(l->exec_fd, F_SETFL, flags | O_NONBLOCK);
	ssize_t n = read(l->exec_fd, &e, sizeof(e));
	if (n == sizeof(e))
		l->exec_errno = e;
	if (n >= 0 || errno != EAGAIN) {	/* an answer: closed, or why */
		close(l->exec_fd);
		l->exec_fd = -1;
	}
	return l->exec_errno != 0;
}

/* Who ran sudo: SUDO_UID and SUDO_GID, when root runs for a user. */
static bool sudo_user(struct live *l)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	if (geteuid() != 0 || !su || !sg || !*su || !*sg)
		return false;
	char *e1, *e2;
	unsigned long uid = strtoul(su, &e1, 10), gid = strtoul(sg, &e2, 10);
	if (*e1 || *e2 || uid == 0 || uid >= UINT32_MAX || gid >= UINT32_MAX)
		return false;	/* sudo from root, or nothing sudo would set */
	l->uid = (uid_t)uid;
	l->gid = (gid_t)gid;
	return true;
}

static int give_up_root(struct live *l)
{
	const char *user = getenv("SUDO_USER");
	if ((user ? initgroups(user, l->gid) : setgroups(1, &l->gid)) ||
	    setresgid(l->gid, l->gid, l->gid) || setresuid(l->uid, l->uid, l->uid)) {
		live_say("cannot become the sudo user %u: %s", (unsigned)l->uid, strerror(errno));
		return LIVE_EXIT_RUNTIME;
	}
	if (!l->o->quiet)
		live_say("recording as user %u from here on (sudo)", (unsigned)l->uid);
	return 0;
}

/* The recorder must drain the rings while the machine is busiest:
 * measured with 1 000 runnable threads, at nice 0 it lost 44 % of the
 * records, at -10 none; SCHED_FIFO when asked (tests/shell/load.sh). */
static int priority(const struct live_opts *o)
{
	if (setpriority(PRIO_PROCESS, 0, -10) != 0)
		errno = 0;	/* not allowed: record at the priority given */
	struct sched_param sp = { .sched_priority = o->realtime };
	if (o->realtime && sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp)) {
		live_say("--realtime %d: %s", o->realtime, strerror(errno));
		return LIVE_EXIT_RUNTIME;
	}
	return 0;
}

static const char *paranoid(const char *root)
{
	static char v[16];
	char *t = procfs_read(root, "proc/sys/kernel/perf_event_paranoid", NULL);
	snprintf(v, sizeof(v), "%.*s", t ? (int)strcspn(t, "\n") : 1, t ? t : "?");
	free(t);
	return v;
}

static int open_recorder(struct live *l)
{
	const struct live_opts *o = l->o;
	struct recorder_opts ro = {
		.all = o->all, .pids = o->pids, .npids = o->npids, .child = l->child,
		.command = o->command, .hz = o->hz, .callchain = o->callchain,
		.no_tracepoints = o->no_tracepoints, .mmap_pages = o->mmap_pages,
		.source = o->source, .forget_exited = o->hooks != NULL,
		.bpf_interval_ns = (uint64_t)(o->clock_interval * NSEC_PER_SEC),
		.root = o->root, .accounts = l->rules_text,
		.rules = o->accounts ? &l->rules : NULL, .hide_addresses = l->sudo,
		.user = l->uid, .max_names = o->max_names, .max_cgroups = o->max_cgroups,
		.max_symbol_files = o->max_symbol_files, .max_symbol_bytes = o->max_symbol_bytes,
		.max_jit_bytes = o->max_jit_bytes,
	};
	enum recorder_failure why;
	l->rec = recorder__new(&ro, &why);
	if (!l->rec) {
		if (why == REC_FAIL_BPF)
			live_say("cannot start the BPF collector (--source bpf): %s",
				 recorder__failure_why());
		else if (why == REC_FAIL_NOT_ALLOWED)
			live_say("cannot record: perf_event_open: %s (system-wide recording needs "
				  "root, CAP_PERFMON or kernel.perf_event_paranoid <= 0, now %s; "
				  "without them, one command or one process of yours can be "
				  "recorded: -- COMMAND or -p PID)", strerror(errno), paranoid(o->root));
		else
			live_say("cannot record: %s", strerror(errno));
		return LIVE_EXIT_RUNTIME;
	}
	const struct recorder_stats *st = recorder__stats(l->rec);
	if (st->task_only)
		live_say("not allowed to record system-wide (perf_event_paranoid %s); "
			 "recording its own user-space samples, steal unknown", paranoid(o->root));
	/* root expects the collector: why not is news; a user expects none */
	if (*st->source_why && o->source == RECORDER_SOURCE_AUTO && !st->task_only &&
	    geteuid() == 0)
		live_say("the BPF collector did not load (%s); CPU time and steal from perf",
			 st->source_why);
	if (st->tracepoints_missing)
		live_say("tracepoints sched:sched_switch and sched:sched_stat_runtime "
			 "unavailable; steal will come from sample gaps");
	return 0;
}


static int setup_engine(struct live *l)
{
	if (!l->o->ledger && !l->o->analyse && !l->o->hooks)
		return 0;
	uint32_t *pids = calloc((size_t)l->o->npids + 1, sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	uint32_t n = 0;
	for (int i = 0; i < l->o->npids; i++)
		pids[n++] = (uint32_t)l->o->pids[i];
	if (l->child > 0)
		pids[n++] = (uint32_t)l->child;
	/* the agent's /metrics and top's view add their sinks when started */
	struct pipeline_opts po = {
		.analysis = l->o->analyse ? &l->res->a : NULL,
		.analysis_opts = &l->o->a, .collect = l->o->ledger != NULL,
		.pids = pids, .npids = n,
	};
	l->res->analysed = l->o->analyse;
	l->piped = true;
	int err = pipeline__init(&l->pipe, recorder__source(l->rec), &po);
	free(pids);
	l->engine = l->pipe.engine;
	if (!err)
		err = pipeline__feed(&l->pipe);
	if (err)
		return err;
	if (!l->o->ledger)
		return 0;
	l->writer = ledger_writer__new(l->o->ledger, l->o->max_waiting ? l->o->max_waiting : 8);
	return l->writer ? 0 : -errno;
}

/* After recorder__start: the collector knows the recording's start, and
 * reads waits from the recorder's start snapshot on. */
static int setup_collector(struct live *l)
{
	int err = l->piped ? pipeline__collector(&l->pipe) : 0;
	if (!err && l->piped && l->pipe.collecting) {
		l->pipe.coll.read_wait = recorder__wait_hook(l->rec, &l->pipe.coll.wait_ctx);
		l->pipe.coll.wait_start = recorder__cgstats(l->rec);
	}
	return err;
}

/* A collection now (seed 000's collection means): queued for the writer. */
static int collect(struct live *l, const char *reason)
{
	int64_t now = clock_real_ns();
	if (recorder__settle(l->rec, l->engine)) {
		live_say("cannot read the kernel's steal");
		return LIVE_EXIT_RUNTIME;
	}
	struct batch *b = collector__collect(&l->pipe.coll, l->engine, reason, now);
	if (!b) {
		live_say("out of memory");
		return LIVE_EXIT_RUNTIME;
	}
	/* retention with the first collection, then once a day */
	if (l->o->retain_days > 0 && now - l->retained_ns >= 86400LL * NSEC_PER_SEC) {
		b->retain_before_ns = now - (int64_t)(l->o->retain_days * 86400e9);
		l->retained_ns = now;
	}
	ledger_writer__submit(l->writer, b);
	return 0;
}

/* Says when the ledger cannot be written, and when it can again. */
static void writer_news(struct live *l)
{
	struct writer_status ws;
	if (!l->writer)
		return;
	ledger_writer__status(l->writer, &ws);
	/* off a terminal, each collection as it is committed */
	if (ws.written > l->said_written && !l->o->quiet && !isatty(STDERR_FILENO))
		live_say("collection %lld (%s) added to '%s'%s", (long long)ws.last_seq, ws.last_reason, l->o->ledger,
			ws.written - l->said_written > 1 ? " (and those before it)" : "");
	l->said_written = ws.written;
	if (ws.failing && !l->said_failing)
		live_say("%s: %u collection(s) wait in memory, retried", ws.error, ws.waiting);
	else if (!ws.failing && l->said_failing)
		live_say("ledger '%s' written again", l->o->ledger);
	l->said_failing = ws.failing;
}

static bool pids_alive(const struct live_opts *o)
{
	for (int i = 0; i < o->npids; i++)
		if (kill(o->pids[i], 0) == 0 || errno == EPERM)
			return true;
	return false;
}

static void show_progress(struct live *l, bool tty)
{
	const struct recorder_stats *st = recorder__stats(l->rec);
	if (tty)
		fprintf(stderr, "\rrecording: %.0f s, %llu samples, %.1f MB  ",
			(double)(clock_mono_ns() - l->start) / NSEC_PER_SEC, (unsigned long long)st->samples,
			(double)st->bytes / 1e6);
}

/* Whether recording should end now. */
static bool over(struct live *l, uint64_t end)
{
	if (live_stop_signal || clock_mono_ns() >= end || exec_failed(l))
		return true;
	int st;
	if (l->child > 0 && wait4(l->child, &st, WNOHANG, &l->res->child_usage) == l->child) {
		l->res->child_status = st;
		l->child = -1;
		return true;
	}
	return l->o->npids && !l->o->command && !pids_alive(l->o);
}

static int loop(struct live *l)
{
	const struct live_opts *o = l->o;
	uint64_t every = o->interval > 0 ? (uint64_t)(o->interval * NSEC_PER_SEC) : 0;
	uint64_t next = every ? l->start + every : UINT64_MAX, last_show = l->start;
	uint64_t end = o->duration > 0 ? l->start + (uint64_t)(o->duration * NSEC_PER_SEC) : UINT64_MAX;
	bool tty = isatty(STDERR_FILENO) && !o->quiet;
	int err = 0;
	while (!err && !over(l, end)) {
		err = recorder__poll(l->rec, 100);
		uint64_t now = clock_mono_ns();
		if (now - last_show > NSEC_PER_SEC) {
			show_progress(l, tty);
			writer_news(l);
			last_show = now;
		}
		const struct live_hooks *h = o->hooks;
		if (!err && h && h->reload && live_reload_requested) {
			live_reload_requested = 0;
			if ((err = h->reload(h->ctx, l->rec)))
				return err;
		}
		if (!err && h && h->tick) {
			struct live_status ls = { 0 };
			struct writer_status ws;
			if (l->writer) {
				ledger_writer__status(l->writer, &ws);
				ls = (struct live_status){ ws.written, ws.waiting, ws.failing };
			}
			if ((err = h->tick(h->ctx, l->rec, l->engine, now, &ls)))
				return err;
		}
		if (!err && l->pipe.collecting && (now >= next || live_collect_requested)) {
			const char *why = live_collect_requested ? "request" : "interval";
			live_collect_requested = 0;
			while (next <= now)
				next += every;
			if (collect(l, why))
				return LIVE_EXIT_RUNTIME;
		}
	}
	if (tty)
		fputs("\r\033[K", stderr);
	if (err)
		live_say("cannot record into '%s': %s", o->output ? o->output : "memory",
			  strerror(-err));
	return err ? LIVE_EXIT_RUNTIME : 0;
}

/* The engine to its end (GAPS mode shares the kernel's steal now), the
 * last collection, run's table. */
static int finish_engine(struct live *l)
{
	for (uint32_t c = 0; c < recorder__ncpus(l->rec); c++) {
		uint64_t steal, lost;
		if (recorder__cpu(l->rec, c, &steal, &lost))
			engine__set_kernel_steal(l->engine, c, steal);
	}
	int err = pipeline__finish(&l->pipe, l->end);
	if (!err && l->pipe.collecting)
		err = collect(l, "end") ? -ENOMEM : 0;
	if (!err)
		err = pipeline__build(&l->pipe, l->end);
	if (err)
		live_say("cannot finish the analysis: %s", strerror(-err));
	return err ? LIVE_EXIT_RUNTIME : 0;
}

/* The last collections written (waiting up to 30 s for a locked ledger). */
static int drain_writer(struct live *l)
{
	if (!l->writer)
		return 0;
	uint32_t left = ledger_writer__drain(l->writer, 30000);
	struct writer_status ws;
	writer_news(l);
	ledger_writer__status(l->writer, &ws);
	if (!left)
		return 0;
	live_say("%u collection(s) could not be written to '%s' (%s)%s", left, l->o->ledger,
		  ws.error, l->o->output ? "; 'cpuledger ledger add' of the recording adds "
		  "them later" : "");
	return LIVE_EXIT_RUNTIME;
}

static void summary(struct live *l)
{
	const struct recorder_stats *st = recorder__stats(l->rec);
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru))
		ru.ru_maxrss = 0;
	if (l->o->quiet)
		return;
	live_say("%.1f s, %llu records, %.2f MB written%s%s%s; %llu records lost%s; "
		 "source %s; peak memory %.1f MB", (double)(l->end - l->start) / NSEC_PER_SEC,
		(unsigned long long)st->records, (double)st->bytes / 1e6,
		l->o->output ? " to '" : "", l->o->output ? l->o->output : "",
		l->o->output ? "'" : "", (unsigned long long)st->lost,
		live_stop_signal ? " (stopped by a signal)" : "", st->source,
		(double)ru.ru_maxrss / 1024);
	if (st->bpf_map_full || st->bpf_reused)
		live_say("not measured: %llu switch(es) of threads the BPF collector's map had no "
			 "room for, %llu exited thread(s) whose id was given again before a read",
			 (unsigned long long)st->bpf_map_full, (unsigned long long)st->bpf_reused);
}

/* Stops, writes the end, commits the file (or not: a command that could
 * not be run leaves no recording, and an earlier one in place). */
static int finish(struct live *l)
{
	int err = recorder__finish(l->rec);
	l->end = recorder__stats(l->rec)->end_ns;
	if (exec_failed(l)) {
		live_say("cannot run '%s': %s", l->o->command[0], strerror(l->exec_errno));
		if (l->have_out)
			outfile__abort(&l->out);
		l->have_out = false;
		return 127;
	}
	if (err) {
		live_say("cannot write '%s': %s", l->o->output, strerror(-err));
		if (l->have_out)
			outfile__keep_partial(&l->out);
		l->have_out = false;
		return LIVE_EXIT_RUNTIME;
	}
	if (l->have_out && outfile__commit(&l->out))
		return LIVE_EXIT_RUNTIME;
	l->have_out = false;
	summary(l);
	int status = l->engine ? finish_engine(l) : 0;
	int st2 = drain_writer(l);
	return status ? status : st2;
}

static int check(struct live *l)
{
	const struct live_opts *o = l->o;
	if (!o->all && !o->npids && !o->command) {
		live_say("nothing to record: give -a, -p PID or -- COMMAND");
		return LIVE_EXIT_USAGE;
	}
	if (o->interval > 0 && !o->ledger) {
		live_say("--interval needs --ledger");
		return LIVE_EXIT_USAGE;
	}
	if (outfile__is_input(o->output, o->ledger, "the ledger"))
		return LIVE_EXIT_USAGE;
	for (int i = 0; i < o->npids; i++)
		if (kill(o->pids[i], 0) && errno == ESRCH) {
			live_say("--pid: no process %d", (int)o->pids[i]);
			return LIVE_EXIT_USAGE;
		}
	if (o->accounts && live_load_accounts(o->accounts, &l->rules, &l->rules_text))
		return LIVE_EXIT_USAGE;
	return 0;
}

/* Up to recording: the command held, the events open, root given up,
 * the file and the engine ready. */
static int prepare(struct live *l)
{
	int status = check(l);
	if (!status && l->o->command && start_command(l)) {
		live_say("cannot start '%s': %s", l->o->command[0], strerror(errno));
		status = LIVE_EXIT_RUNTIME;
	}
	l->sudo = !status && sudo_user(l);
	if (!status)
		status = priority(l->o);
	if (!status)
		status = open_recorder(l);
	if (!status && l->sudo)
		status = give_up_root(l);
	if (!status && l->o->output) {
		if (outfile__open_recording(&l->out, l->o->output))
			status = LIVE_EXIT_RUNTIME;
		l->have_out = !status;
	}
	if (!status && setup_engine(l)) {
		live_say("cannot set up: %s", strerror(errno ? errno : ENOMEM));
		status = LIVE_EXIT_RUNTIME;
	}
	return status;
}

static int start(struct live *l)
{
	int err = recorder__start(l->rec, l->have_out ? l->out.fd : -1);
	if (!err)
		err = setup_collector(l);
	if (err) {
		live_say("cannot start recording: %s", strerror(-err));
		return LIVE_EXIT_RUNTIME;
	}
	l->start = recorder__stats(l->rec)->start_ns;
	const struct live_hooks *h = l->o->hooks;
	if (h && h->started && (err = h->started(h->ctx, l->rec, l->engine)))
		return err;
	if (l->go_fd >= 0) {
		ssize_t w = write(l->go_fd, "g", 1);
		close(l->go_fd);
		l->go_fd = -1;
		if (w != 1)
			return LIVE_EXIT_RUNTIME;
	}
	return 0;
}

static void cleanup(struct live *l)
{
	if (l->have_out)
		outfile__abort(&l->out);
	if (l->go_fd >= 0)
		close(l->go_fd);	/* the child sees EOF and exits 127 */
	if (l->exec_fd >= 0)
		close(l->exec_fd);
	if (l->child > 0) {
		/* recording stopped first (a signal, --duration, an error):
		 * the command goes with it, as under perf record */
		int st;
		kill(l->child, SIGTERM);
		if (wait4(l->child, &st, 0, &l->res->child_usage) == l->child)
			l->res->child_status = st;
	}
	ledger_writer__free(l->writer);
	if (l->piped)
		pipeline__release(&l->pipe);
	recorder__free(l->rec);
	account_rules__release(&l->rules);
	free(l->rules_text);
}

int live_run(struct live_opts *o, struct live_result *res)
{
	struct live l = { .o = o, .res = res, .go_fd = -1, .exec_fd = -1, .child = -1 };
	memset(res, 0, sizeof(*res));
	res->child_status = -1;
	live_install_signals(o->hooks && o->hooks->reload);
	int status = prepare(&l);
	if (!status)
		status = start(&l);
	if (!status && (status = loop(&l)) && l.have_out) {
		outfile__keep_partial(&l.out);	/* a full disk: kept for --salvage */
		l.have_out = false;
	}
	if (!status)
		status = finish(&l);
	if (l.engine && res->analysed) {
		res->a.engine = l.engine;	/* the table borrows its names */
		l.pipe.engine = NULL;
	}
	cleanup(&l);
	return status;
}

int live_result__status(const struct live_result *res, int status)
{
	if (status || res->child_status == -1)
		return status;
	return WIFEXITED(res->child_status) ? WEXITSTATUS(res->child_status) :
	       128 + WTERMSIG(res->child_status);
}

void live_result__release(struct live_result *res)
{
	if (res->analysed)
		analysis__release(&res->a);
}
