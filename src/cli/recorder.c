/* recorder: see recorder.h; the file it writes is docs/recording-format.md. */
#include "recorder.h"
#include "ledger_write.h"

#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "../collect/perf.h"
#include "../collect/procfs.h"
#include "../core/accounts.h"
#include "../core/grow.h"
#include "../core/hindex.h"
#include "../core/regions.h"
#include "../format/live_load.h"
#include "../format/perf_regions.h"
#include "../symbols/symbolizer.h"
#include "../format/recording.h"
#include "../core/banned.h"

static volatile sig_atomic_t stop_signal, collect_requested;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void on_usr1(int sig)
{
	(void)sig;
	collect_requested = 1;
}

void record_opts__init(struct record_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->hz = 1000;
	o->output = "cpuledger.rec";
	o->root = "/";
}

void record_opts__release(struct record_opts *o)
{
	free(o->pids);
	o->pids = NULL;
}

static int parse_pids(struct record_opts *o, const char *arg)
{
	for (const char *p = arg; *p;) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno || v <= 0 || v > 4194304 || (*end && *end != ',')) {
			cli_error("--pid: '%s' is not a list of process ids", arg);
			return -1;
		}
		pid_t *n = realloc(o->pids, (size_t)(o->npids + 1) * sizeof(*n));
		if (!n)
			return -1;
		o->pids = n;
		o->pids[o->npids++] = (pid_t)v;
		p = *end ? end + 1 : end;
	}
	return 1;
}

int record_opts__parse(struct record_opts *o, int c, const char *arg)
{
	uint64_t v;
	char *end;
	switch (c) {
	case 'a':
		o->all = true;
		return 1;
	case 'p':
		return parse_pids(o, arg);
	case 'F':
		if (!cli_parse_u64("--freq", arg, 1, 100000, &v))
			return -1;
		o->hz = (uint32_t)v;
		return 1;
	case 'g':
		o->callchain = true;
		return 1;
	case 'r':
		if (!cli_parse_u64("--realtime", arg, 1, 99, &v))
			return -1;
		o->realtime = (int)v;
		return 1;
	case 'M':
		if (!cli_parse_u64("--mmap-pages", arg, 8, 65536, &v))
			return -1;
		if (v & (v - 1)) {
			cli_error("--mmap-pages: %s is not a power of 2", arg);
			return -1;
		}
		o->mmap_pages = (uint32_t)v;
		return 1;
	case 'T':
		o->no_tracepoints = true;
		return 1;
	case 'A':
		o->accounts = arg;
		return 1;
	case 'l':
		o->ledger = arg;
		return 1;
	case 'N':
		errno = 0;
		o->interval = strtod(arg, &end);
		if (!*arg || *end || errno || !(o->interval >= 0.1)) {
			cli_error("--interval: '%s' is not a number of seconds, at least 0.1", arg);
			return -1;
		}
		return 1;
	case 'o':
		o->output = arg;
		return 1;
	case 'D':
		errno = 0;
		o->duration = strtod(arg, &end);
		if (!*arg || *end || errno || !(o->duration > 0)) {
			cli_error("--duration: '%s' is not a positive number of seconds", arg);
			return -1;
		}
		return 1;
	default:
		return 0;
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The processes a -p or -- CMD recording may describe: its pids and their
 * descendants, learnt from FORK records as they come. A system-wide
 * recording describes every process. */
struct scope {
	bool all;
	uint32_t *pids;
	uint32_t n, cap;
	struct hindex index;
};

static bool scope_eq(const void *ctx, uint32_t id)
{
	const struct { const struct scope *s; uint32_t pid; } *k = ctx;
	return k->s->pids[id] == k->pid;
}

static bool scope_has(const struct scope *s, uint32_t pid)
{
	struct { const struct scope *s; uint32_t pid; } k = { s, pid };
	return s->all || hindex__find(&s->index, hash_mix(pid), scope_eq, &k) != HINDEX_NONE;
}

static int scope_add(struct scope *s, uint32_t pid)
{
	if (scope_has(s, pid))
		return 0;
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 16;
		uint32_t *p = realloc(s->pids, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->pids = p;
		s->cap = cap;
	}
	if (hindex__insert(&s->index, hash_mix(pid), s->n))
		return -ENOMEM;
	s->pids[s->n++] = pid;
	return 0;
}

/* The (dso, file offset) pairs samples fell on: their functions are
 * looked up and stored at the end, while the files are still there. */
struct spot {
	uint32_t dso;
	uint64_t offset;
};

struct spots {
	struct spot *v;
	uint32_t n, cap;
	struct hindex index;
};

static bool spot_eq(const void *ctx, uint32_t id)
{
	const struct { const struct spots *s; struct spot k; } *q = ctx;
	return q->s->v[id].dso == q->k.dso && q->s->v[id].offset == q->k.offset;
}

static int spots_add(struct spots *s, uint32_t dso, uint64_t offset)
{
	struct { const struct spots *s; struct spot k; } q = { s, { dso, offset } };
	uint64_t h = hash_mix(offset ^ hash_mix(dso));
	if (hindex__find(&s->index, h, spot_eq, &q) != HINDEX_NONE)
		return 0;
	if (grow_array((void **)&s->v, &s->cap, s->n, sizeof(*s->v), 1024) ||
	    hindex__insert(&s->index, h, s->n))
		return -ENOMEM;
	s->v[s->n++] = q.k;
	return 0;
}

struct session {
	struct collector coll;	/* --ledger */
	uint64_t symbols_ns;	/* time the symbol lookup at the end took */
	uint32_t symbols;	/* functions stored */
	const struct record_opts *o;
	struct scope scope;
	struct strtab strings;
	struct regions regions;
	struct spots spots;
	struct rec_writer *w;
	struct perf_session perf;
	struct tp_formats tp;
	bool tracepoints;
	pid_t child;
	uint64_t samples, bytes_flushed;
	struct symbolizer *sy;	/* made early when root is given up */
};

/* Appends "key=value\n" to buf. */
__attribute__((format(printf, 4, 5)))
static void meta(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	if (*len >= size)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n;
}

static int write_meta(struct session *s, const char *phase)
{
	/* a few lines a CPU: sized by the machine, not fixed */
	size_t size = 8192 + (size_t)s->perf.ncpus * 160;
	char *buf = malloc(size);
	size_t n = 0;
	if (!buf)
		return -ENOMEM;
	const struct record_opts *o = s->o;
	struct utsname u;
	meta(buf, size, &n, "phase=%s\n", phase);
	if (!strcmp(phase, "start")) {
		char host[256] = "";
		gethostname(host, sizeof(host) - 1);
		uname(&u);
		char *boot = procfs_read(o->root, "proc/sys/kernel/random/boot_id", NULL);
		meta(buf, size, &n, "host=%s\nkernel=%s\nboot_id=%s\n", host,
		     u.release, boot ? strtok_r(boot, "\n", &(char *){ NULL }) : "");
		free(boot);
		meta(buf, size, &n, "hz=%u\ninterval_ns=%llu\nclk_tck=%ld\ncallchain=%d\n",
		     o->hz, 1000000000ULL / o->hz, sysconf(_SC_CLK_TCK), o->callchain);
		meta(buf, size, &n, "steal_source=%s\n",
		     s->perf.opts.task ? "unknown (no permission to record system-wide)" :
		     s->tracepoints ? "tracepoints" : "sample-gaps");
		/* -a with a command records everything, until it exits */
		meta(buf, size, &n, "scope=%s\n", o->all ? "all" :
		     o->command ? "command" : o->npids ? "pids" : "all");
		for (int i = 0; i < o->npids; i++)
			meta(buf, size, &n, "pid=%d\n", (int)o->pids[i]);
		if (s->child > 0)
			meta(buf, size, &n, "child=%d\n", (int)s->child);
		const char *names[EV_KINDS] = { "clock", "switch", "runtime" };
		for (int k = 0; k < EV_KINDS; k++)
			meta(buf, size, &n, "sample_type.%s=%llu\n", names[k],
			     (unsigned long long)perf_session__sample_type(&s->perf.opts,
									   (enum perf_event_kind)k));
		for (int i = 0; i < s->perf.ncpus; i++) {
			const struct perf_cpu *c = &s->perf.cpus[i];
			meta(buf, size, &n, "cpu=%d\n", c->cpu);
			for (int k = 0; k < EV_KINDS; k++)
				if (c->fd[k] >= 0)
					meta(buf, size, &n, "id.%s=%llu\n", names[k],
					     (unsigned long long)c->id[k]);
		}
		if (s->tracepoints)
			meta(buf, size, &n,
			     "tp.prev_pid=%u:%u\ntp.next_pid=%u:%u\ntp.rt_pid=%u:%u\ntp.rt_runtime=%u:%u\n",
			     s->tp.prev_pid.offset, s->tp.prev_pid.size,
			     s->tp.next_pid.offset, s->tp.next_pid.size,
			     s->tp.rt_pid.offset, s->tp.rt_pid.size,
			     s->tp.rt_runtime.offset, s->tp.rt_runtime.size);
	}
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	meta(buf, size, &n, "time_ns=%llu\nrealtime_ns=%llu\n", (unsigned long long)mono_ns(),
	     (unsigned long long)rt.tv_sec * 1000000000ULL + (unsigned long long)rt.tv_nsec);
	int err = n >= size ? -E2BIG : rec_writer__add(s->w, REC_META, buf, n, NULL, 0);
	free(buf);
	return err;
}

static int write_procstat(struct session *s, uint32_t phase)
{
	size_t len;
	char *text = procfs_read(s->o->root, "proc/stat", &len);
	if (!text)
		return -errno;
	uint32_t pre[2] = { phase, 0 };
	int err = rec_writer__add(s->w, REC_PROCSTAT, pre, sizeof(pre), text, len);
	free(text);
	return err;
}

/* Who a process runs as and what it runs, for the ledger's tasks. */
static int write_procinfo(struct session *s, pid_t pid, uint32_t uid, const char *exe)
{
	uint32_t pre[2] = { (uint32_t)pid, uid };
	return rec_writer__add(s->w, REC_PROCINFO, pre, sizeof(pre), exe, strlen(exe));
}

static int read_procinfo(struct session *s, pid_t pid)
{
	char rel[64], exe[4096] = "";
	snprintf(rel, sizeof(rel), "%s/proc/%d/exe", strcmp(s->o->root, "/") ? s->o->root : "",
		 (int)pid);
	ssize_t n = readlink(rel, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(rel, sizeof(rel), "proc/%d/status", (int)pid);
	char *status = procfs_read(s->o->root, rel, NULL);
	if (!status)
		return 0;	/* gone: normal */
	char *u = strstr(status, "\nUid:");
	uint32_t uid = u ? (uint32_t)strtoul(u + 5, NULL, 10) : UINT32_MAX;
	free(status);
	return write_procinfo(s, pid, uid, exe);
}

static int write_cmdline(struct session *s, pid_t pid)
{
	char cmd[4096];
	procfs_cmdline(s->o->root, pid, cmd, sizeof(cmd));
	uint32_t pre[2] = { (uint32_t)pid, 0 };
	return rec_writer__add(s->w, REC_CMDLINE, pre, sizeof(pre), cmd, strlen(cmd));
}

/* A running process's code regions, for samples before any MMAP2 of it. */
static int write_maps(struct session *s, pid_t pid)
{
	char rel[64];
	size_t len;
	snprintf(rel, sizeof(rel), "proc/%d/maps", (int)pid);
	char *text = procfs_read(s->o->root, rel, &len);
	if (!text)
		return 0;	/* gone, or a kernel thread: normal */
	uint32_t pre[2] = { (uint32_t)pid, 0 };
	int err = rec_writer__add(s->w, REC_MAPS, pre, sizeof(pre), text, len);
	if (!err)
		err = perf_regions__maps(&s->regions, (uint32_t)pid, text, len);
	free(text);
	return err == -EINVAL ? 0 : err;
}

/* Where a cpu-clock sample fell, kept for the symbols at the end. */
static int note_sample(struct session *s, int cpu, const struct perf_event_header *h)
{
	struct { uint64_t id, ip; uint32_t pid, tid; } b;
	if (h->size < sizeof(*h) + sizeof(b))
		return 0;
	memcpy(&b, h + 1, sizeof(b));
	const struct perf_cpu *c = NULL;
	for (int i = 0; i < s->perf.ncpus; i++)
		if (s->perf.cpus[i].cpu == cpu)
			c = &s->perf.cpus[i];
	if (!c || b.id != c->id[EV_CLOCK] || !b.tid)
		return 0;
	uint32_t dso;
	uint64_t off;
	bool kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	int err = 0;
	if (regions__find(&s->regions, b.pid, b.ip, kernel, &dso, &off))
		err = spots_add(&s->spots, dso, off);
	if (err || !s->o->callchain)
		return err;
	/* The callers too: id, ip, tid, time, cpu, period, then nr and the
	 * chain (sample IP first; PERF_CONTEXT_* markers switch the mode). */
	const uint8_t *body = (const uint8_t *)(h + 1), *end = (const uint8_t *)h + h->size;
	uint64_t nr;
	if (end - body < 56)
		return 0;
	memcpy(&nr, body + 48, 8);
	if (nr > (uint64_t)(end - body - 56) / 8)
		return 0;
	bool kmode = kernel;
	for (uint64_t i = 1; i < nr && !err; i++) {
		uint64_t ip;
		memcpy(&ip, body + 56 + 8 * i, 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			kmode = ip == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		/* a return address: the call is the byte before */
		if (regions__find(&s->regions, b.pid, ip - 1, kmode, &dso, &off))
			err = spots_add(&s->spots, dso, off);
	}
	return err;
}

/* The functions every sample fell in, looked up now that recording is
 * over and the files are still there. */

static int write_symbols(struct session *s)
{
	uint64_t t0 = mono_ns();
	struct symbolizer *sy = s->sy ? s->sy : symbolizer__new(s->o->root);
	s->sy = NULL;
	if (!sy)
		return -ENOMEM;
	struct spots seen = { 0 };	/* (dso, function start) written */
	struct spots files = { 0 };	/* dsos whose build-id is written */
	int err = 0;
	for (uint32_t i = 0; i < s->spots.n && !err; i++) {
		const struct spot *p = &s->spots.v[i];
		const char *dso = strtab__str(&s->strings, p->dso);
		struct sym sym;
		if (symbolizer__lookup(sy, dso, p->offset, &sym))
			continue;
		uint32_t before = seen.n;
		err = spots_add(&seen, p->dso, sym.start);
		if (err || seen.n == before)
			continue;
		uint32_t dlen = strtab__len(&s->strings, p->dso);
		struct { uint64_t start, end; uint32_t dso_len, zero; } head =
			{ sym.start, sym.end, dlen, 0 };
		char buf[8192];
		int n = snprintf(buf, sizeof(buf), "%s%s", dso, sym.name);
		if (n < 0 || (size_t)n >= sizeof(buf))
			continue;
		err = rec_writer__add(s->w, REC_SYMBOL, &head, sizeof(head), buf, (size_t)n);
		s->symbols++;
		/* the file's build-id, once, so a report can tell it apart */
		uint32_t had = files.n;
		char bid[160];
		if (!err)
			err = spots_add(&files, p->dso, 0);
		if (!err && files.n != had && !symbolizer__build_id(sy, dso, bid, sizeof(bid))) {
			uint32_t pre[2] = { dlen, 0 };
			n = snprintf(buf, sizeof(buf), "%s%s", dso, bid);
			if (n > 0 && (size_t)n < sizeof(buf))
				err = rec_writer__add(s->w, REC_DSO, pre, sizeof(pre), buf, (size_t)n);
		}
	}
	free(files.v);
	hindex__release(&files.index);
	s->symbols_ns = mono_ns() - t0;
	free(seen.v);
	hindex__release(&seen.index);
	symbolizer__free(sy);
	return err;
}

/* The command's line, from its argv: in /proc it is still the recorder's
 * until it execs, and a short command may be gone before the exec is read. */
static int write_command_line(struct session *s)
{
	char line[4096];
	size_t n = 0;
	for (char **a = s->o->command; *a && n < sizeof(line); a++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s",
				      a == s->o->command ? "" : " ", *a);
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	uint32_t pre[2] = { (uint32_t)s->child, 0 };
	return rec_writer__add(s->w, REC_CMDLINE, pre, sizeof(pre), line, n);
}

static int on_task(void *ctx, pid_t pid, pid_t tid, const char *comm)
{
	struct session *s = ctx;
	if (!scope_has(&s->scope, (uint32_t)pid))
		return 0;
	uint32_t pre[2] = { (uint32_t)pid, (uint32_t)tid };
	int err = rec_writer__add(s->w, REC_TASK, pre, sizeof(pre), comm, strlen(comm));
	if (!err && pid == tid)
		err = pid == s->child ? write_command_line(s) : write_cmdline(s, pid);
	if (!err && pid == tid && pid != s->child)
		err = write_maps(s, pid);
	if (!err && pid == tid)
		err = pid == s->child ? write_procinfo(s, pid, (uint32_t)getuid(), s->o->command[0])
				      : read_procinfo(s, pid);
	return err;
}

/* Whether pid's parent, by /proc, is in scope (a scope is never all here
 * when it matters: scope_has is true for every pid then). */
static bool parent_in_scope(struct session *s, uint32_t pid)
{
	char rel[64];
	size_t len;
	snprintf(rel, sizeof(rel), "proc/%u/stat", pid);
	char *text = procfs_read(s->o->root, rel, &len);
	if (!text)
		return false;
	/* "pid (comm) state ppid ...": comm may hold spaces and ')' */
	const char *close = strrchr(text, ')');
	unsigned ppid = 0;
	bool ok = close && sscanf(close + 1, " %*c %u", &ppid) == 1;
	free(text);
	return ok && scope_has(&s->scope, ppid);
}

static int on_record(void *ctx, int cpu, const struct perf_event_header *h)
{
	struct session *s = ctx;
	uint32_t pre[2] = { (uint32_t)cpu, 0 };
	int err = rec_writer__add(s->w, REC_PERF, pre, sizeof(pre), h, h->size);
	if (!err)
		err = perf_regions__apply(&s->regions, h, h->size);
	if (err == -EINVAL)
		err = 0;	/* a record we cannot read changes no region */
	if (h->type == PERF_RECORD_SAMPLE) {
		s->samples++;
		if (!err)
			err = note_sample(s, cpu, h);
	}
	/* A child of a process in scope is in scope. */
	if (!err && h->type == PERF_RECORD_FORK && !s->scope.all) {
		uint32_t ids[2];	/* pid, ppid */
		memcpy(ids, h + 1, sizeof(ids));
		if (scope_has(&s->scope, ids[1]))
			err = scope_add(&s->scope, ids[0]);
	}
	/* An exec: keep its command line now, while the process lives. */
	if (!err && h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC)) {
		uint32_t pid;
		memcpy(&pid, h + 1, sizeof(pid));
		/* Rings are read one CPU after another: the exec may come
		 * before the fork that puts the process in scope. */
		if (!scope_has(&s->scope, pid) && parent_in_scope(s, pid))
			err = scope_add(&s->scope, pid);
		if (scope_has(&s->scope, pid) && (pid_t)pid != s->child)
			err = write_cmdline(s, (pid_t)pid);
		if (!err && scope_has(&s->scope, pid))
			err = read_procinfo(s, (pid_t)pid);
	}
	return err;
}

/* Starts the command stopped at a pipe, so that nothing it does is missed:
 * it execs only when go[1] is written. */
static pid_t start_command(char **argv, int *go_fd)
{
	int go[2];
	if (pipe2(go, O_CLOEXEC))
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* the recorder gave up */
		execvp(argv[0], argv);
		fprintf(stderr, "cpuledger: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	*go_fd = go[1];
	return pid;
}

/* kernel.perf_event_paranoid, for a message. */
static const char *paranoid(const char *root)
{
	static char v[16];
	char *t = procfs_read(root, "proc/sys/kernel/perf_event_paranoid", NULL);
	snprintf(v, sizeof(v), "%s", t ? t : "?");
	v[strcspn(v, "\n")] = '\0';
	free(t);
	return v;
}

static bool pids_alive(const struct record_opts *o)
{
	for (int i = 0; i < o->npids; i++)
		if (kill(o->pids[i], 0) == 0 || errno == EPERM)
			return true;
	return false;
}

static void show_progress(const struct session *s, uint64_t start, bool tty)
{
	if (tty)
		fprintf(stderr, "\rrecording: %.0f s, %llu samples, %.1f MB  ",
			(double)(mono_ns() - start) / 1e9,
			(unsigned long long)s->samples,
			(double)rec_writer__bytes(s->w) / 1e6);
}

static int collect_now(const struct record_opts *o, struct collector *c,
		       const char *reason, bool partial);

/* Ring pages per CPU. Root is not held to perf_event_mlock_kb, and a busy
 * machine (thousands of context switches a second, each two tracepoint
 * records) fills 512 KiB between two drains: 4 MiB as root. */
static size_t ring_pages(const struct record_opts *o)
{
	if (o->mmap_pages)
		return o->mmap_pages;
	size_t pages = geteuid() == 0 ? 1024 : 128;
	return o->callchain ? 2 * pages : pages;
}

/*
 * Started as root through sudo: once the perf descriptors are open and the
 * processes running now are read, the recorder goes on as the user who
 * ran sudo (SUDO_UID, SUDO_GID, SUDO_USER), so the recording, a ledger it
 * creates and anything else it writes are that user's. The kernel's
 * symbols are read first, while their addresses still show. What it can no
 * longer read later (/proc of other users' processes started while
 * recording) goes without, as for any unprivileged reader.
 */
static int give_up_root(struct session *s, int out_fd)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	if (geteuid() != 0 || !su || !sg)
		return 0;
	char *e1, *e2;
	unsigned long uid = strtoul(su, &e1, 10), gid = strtoul(sg, &e2, 10);
	if (*e1 || *e2 || !*su || !*sg || uid == 0 || uid > UINT32_MAX - 1 ||
	    gid > UINT32_MAX - 1)
		return 0;	/* sudo from root, or nothing sudo would set */
	s->sy = symbolizer__new(s->o->root);
	if (!s->sy)
		return -ENOMEM;
	symbolizer__read_kernel(s->sy);
	const char *user = getenv("SUDO_USER");
	if (fchown(out_fd, (uid_t)uid, (gid_t)gid) ||
	    (user ? initgroups(user, (gid_t)gid) : setgroups(1, &(gid_t){ (gid_t)gid })) ||
	    setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) ||
	    setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid)) {
		int err = -errno;
		cli_error("cannot become the sudo user %lu: %s", uid, strerror(errno));
		return err;
	}
	if (!s->o->quiet)
		fprintf(stderr, "%s: recording as user %lu from here on (sudo)\n",
			cli_progname, uid);
	return 0;
}

int record_run(const struct record_opts *o, int *child_status)
{
	struct session s = { .o = o, .child = -1 };
	int status = EXIT_RUNTIME, go = -1, fd = -1, err;
	*child_status = -1;

	if (!o->all && !o->npids && !o->command) {
		cli_error("nothing to record: give -a, -p PID or -- COMMAND");
		return EXIT_USAGE;
	}
	char *rules_text = NULL;
	if (o->accounts) {
		struct account_rules rules;
		int st = cli_load_accounts(o->accounts, &rules, &rules_text);
		if (st)
			return st;
		account_rules__release(&rules);
	}
	for (int i = 0; i < o->npids; i++)
		if (kill(o->pids[i], 0) && errno == ESRCH) {
			cli_error("--pid: no process %d", (int)o->pids[i]);
			free(rules_text);
			return EXIT_USAGE;
		}

	if (o->interval > 0 && !o->ledger) {
		cli_error("--interval needs --ledger");
		free(rules_text);
		return EXIT_USAGE;
	}
	collector__init(&s.coll, o->ledger, false);
	strtab__init(&s.strings);
	if (regions__init(&s.regions, &s.strings)) {
		cli_error("out of memory");
		goto out_child;
	}
	if (o->command) {
		s.child = start_command(o->command, &go);
		if (s.child < 0) {
			cli_error("cannot start '%s': %s", o->command[0], strerror(errno));
			goto out_child;
		}
	}
	/* The recorder must drain the rings while the machine is busiest:
	 * measured with 1 000 runnable threads, at nice 0 it lost 44 % of
	 * the records, at -10 none. Where allowed (root, CAP_SYS_NICE) it
	 * runs at -10; the command, started above, keeps its own. */
	if (setpriority(PRIO_PROCESS, 0, -10) != 0)
		errno = 0;	/* not allowed: record at the priority given */
	/* Under CFS even -10 waits behind a crowd of runnable threads now and
	 * then; SCHED_FIFO does not (tests/shell/load.sh lost nothing). */
	struct sched_param sp = { .sched_priority = o->realtime };
	if (o->realtime && sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp)) {
		cli_error("--realtime %d: %s", o->realtime, strerror(errno));
		goto out_child;
	}
	s.tracepoints = !o->no_tracepoints && tp_formats__load(&s.tp, o->root) == 0;
	struct perf_options po = { .hz = o->hz, .callchain = o->callchain,
				   .tracepoints = s.tracepoints,
				   .ring_pages = ring_pages(o) };
	err = perf_session__open(&s.perf, &po, &s.tp);
	if (err == -ENOENT && s.tracepoints) {
		s.tracepoints = false;	/* tracefs said yes, the kernel no */
		po.tracepoints = false;
		err = perf_session__open(&s.perf, &po, &s.tp);
	}
	if ((err == -EACCES || err == -EPERM) && s.child > 0 && !o->all && !o->npids) {
		/* Not allowed system-wide: the command's own user-space samples
		 * are still ours to take; steal cannot be measured so. */
		fprintf(stderr, "%s: not allowed to record system-wide (perf_event_paranoid %s); recording the command's own user-space samples, steal unknown\n",
			cli_progname, paranoid(o->root));
		s.tracepoints = false;
		po.tracepoints = false;
		po.task = s.child;
		err = perf_session__open(&s.perf, &po, &s.tp);
	}
	if (err) {
		if (err == -EACCES || err == -EPERM)
			cli_error("cannot record: perf_event_open: %s (system-wide recording needs root, CAP_PERFMON or kernel.perf_event_paranoid <= 0)",
				  strerror(-err));
		else
			cli_error("cannot record: perf_event_open: %s", strerror(-err));
		goto out_child;
	}
	if (!s.tracepoints && !po.task && !o->no_tracepoints)
		fprintf(stderr, "%s: tracepoints sched:sched_switch and sched:sched_stat_runtime unavailable; steal will come from sample gaps\n",
			cli_progname);

	fd = open(o->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		cli_error("cannot create '%s': %s", o->output, strerror(errno));
		goto out_perf;
	}
	s.w = rec_writer__new(fd);
	if (!s.w) {
		cli_error("cannot write '%s': %s", o->output, strerror(errno));
		goto out_close;
	}

	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);

	s.scope.all = o->all || (!o->npids && !o->command);
	for (int i = 0; i < o->npids && !err; i++)
		err = scope_add(&s.scope, (uint32_t)o->pids[i]);
	if (s.child > 0 && !err)
		err = scope_add(&s.scope, (uint32_t)s.child);
	if (!err)
		err = write_meta(&s, "start");
	if (!err && rules_text)	/* after META, which every reader needs first */
		err = rec_writer__add(s.w, REC_ACCOUNTS, rules_text, strlen(rules_text),
				      NULL, 0);
	if (!err)
		err = write_procstat(&s, 0);
	if (!err)
		err = procfs_tasks(o->root, on_task, &s);
	if (!err)
		err = give_up_root(&s, fd);
	if (!err)
		err = perf_session__enable(&s.perf);
	if (err) {
		cli_error("cannot start recording: %s", strerror(-err));
		goto out_writer;
	}
	if (go >= 0) {
		if (write(go, "g", 1) != 1)
			err = -errno;
		close(go);
		go = -1;
	}

	uint64_t start = mono_ns(), last_show = start;
	uint64_t every = o->interval > 0 ? (uint64_t)(o->interval * 1e9) : 0;
	uint64_t next_collect = every ? start + every : UINT64_MAX;
	uint64_t end = o->duration > 0 ? start + (uint64_t)(o->duration * 1e9) : UINT64_MAX;
	bool tty = isatty(STDERR_FILENO) && !o->quiet;
	while (!err && !stop_signal) {
		perf_session__wait(&s.perf, 100);
		err = perf_session__read(&s.perf, on_record, &s);
		uint64_t now = mono_ns();
		if (now >= end)
			break;
		if (s.child > 0) {
			int st;
			if (waitpid(s.child, &st, WNOHANG) == s.child) {
				*child_status = st;
				s.child = -1;
				break;
			}
		}
		if (o->npids && !o->command && !pids_alive(o))
			break;
		if (now - last_show > 1000000000ULL) {
			show_progress(&s, start, tty);
			last_show = now;
		}
		/* A recorder killed later keeps what it flushed. */
		if (!err && rec_writer__bytes(s.w) - s.bytes_flushed > (4u << 20)) {
			err = rec_writer__flush(s.w);
			s.bytes_flushed = rec_writer__bytes(s.w);
		}
		/* Seed 000's collection means: periodically, or when asked. */
		if (!err && o->ledger && (now >= next_collect || collect_requested)) {
			const char *why = collect_requested ? "request" : "interval";
			collect_requested = 0;
			while (next_collect <= now)
				next_collect += every;
			err = rec_writer__flush(s.w);
			s.bytes_flushed = rec_writer__bytes(s.w);
			if (!err && !collect_now(o, &s.coll, why, true) && !o->quiet && !tty)
				fprintf(stderr, "%s: collection %lld (%s) added to '%s'\n",
					cli_progname, (long long)s.coll.seq - 1, why, o->ledger);
		}
	}
	if (tty)
		fputs("\r\033[K", stderr);
	perf_session__disable(&s.perf);
	if (!err)
		err = perf_session__read(&s.perf, on_record, &s);
	if (!err)
		err = write_procstat(&s, 1);
	if (!err)
		err = write_meta(&s, "end");
	if (!err)
		err = write_symbols(&s);
	uint64_t lost = 0;
	for (int i = 0; i < s.perf.ncpus && !err; i++) {
		uint32_t pre[2] = { (uint32_t)s.perf.cpus[i].cpu, 0 };
		uint64_t l = perf_session__lost(&s.perf, i);
		lost += l;
		err = rec_writer__add(s.w, REC_LOST, pre, sizeof(pre), &l, sizeof(l));
	}
	if (!err)
		err = rec_writer__finish(s.w);
	if (!err && fsync(fd) && errno != EINVAL)
		err = -errno;
	if (err) {
		cli_error("cannot write '%s': %s", o->output, strerror(-err));
		goto out_writer;
	}
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru))
		ru.ru_maxrss = 0;
	if (!o->quiet)
		fprintf(stderr, "%s: %.1f s, %llu records, %.2f MB written to '%s'; %llu records lost%s; %u functions named in %.3f s; peak memory %.1f MB\n",
			cli_progname, (double)(mono_ns() - start) / 1e9,
			(unsigned long long)rec_writer__items(s.w),
			(double)rec_writer__bytes(s.w) / 1e6, o->output,
			(unsigned long long)lost,
			stop_signal ? " (stopped by a signal)" : "",
			s.symbols, (double)s.symbols_ns / 1e9, (double)ru.ru_maxrss / 1024);
	status = 0;
	if (o->ledger)
		status = collect_now(o, &s.coll, "end", false);

out_writer:
	rec_writer__free(s.w);
out_close:
	if (fd >= 0)
		close(fd);
out_perf:
	symbolizer__free(s.sy);
	perf_session__release(&s.perf);
out_child:
	collector__release(&s.coll);
	free(rules_text);
	free(s.scope.pids);
	hindex__release(&s.scope.index);
	regions__release(&s.regions);
	strtab__release(&s.strings);
	free(s.spots.v);
	hindex__release(&s.spots.index);
	if (go >= 0)
		close(go);	/* the child sees EOF and exits 127 */
	if (s.child > 0) {
		/* Recording stopped first (a signal, --duration, an error):
		 * the command goes with it, as under perf record. */
		int st;
		kill(s.child, SIGTERM);
		if (waitpid(s.child, &st, 0) == s.child)
			*child_status = st;
	}
	return status;
}

/* A collection of what is recorded so far (partial) or of the whole. */
static int collect_now(const struct record_opts *o, struct collector *c,
		       const char *reason, bool partial)
{
	struct loaded_recording r;
	struct rec_error e = { 0 };
	memset(&r, 0, sizeof(r));
	int fd = open(o->output, O_RDONLY | O_CLOEXEC);
	int err = fd < 0 ? -errno :
		  partial ? recording__load_partial(fd, METHOD_PRECEDING, &r, &e) :
			    recording__load(fd, METHOD_PRECEDING, NULL, &r, &e);
	if (fd >= 0)
		close(fd);
	int status = err ? EXIT_RUNTIME : collector__collect(c, &r, reason);
	if (err)
		cli_error("cannot read back '%s' for the ledger: %s", o->output,
			  err == -EINVAL ? e.msg : strerror(-err));
	loaded_recording__release(&r);
	return status;
}

int record_load(const struct record_opts *o, enum steal_method method,
		struct loaded_recording *r)
{
	struct rec_error e = { 0 };
	memset(r, 0, sizeof(*r));
	int fd = open(o->output, O_RDONLY | O_CLOEXEC);
	int err = fd < 0 ? -errno : recording__load(fd, method, NULL, r, &e);
	if (fd >= 0)
		close(fd);
	if (err)
		cli_error("cannot read back '%s': %s", o->output,
			  err == -EINVAL ? e.msg : strerror(-err));
	return err ? EXIT_RUNTIME : 0;
}
