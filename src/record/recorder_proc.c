/*
 * recorder_proc: what /proc says of the processes a recording describes,
 * read while they live: at the start, every thread (TASK) and each
 * process's command line, executable, user (PROC) and code mappings (for
 * the regions); at each exec, the new program's PROC. A -p or -- COMMAND
 * recording describes its processes and their descendants (the scope);
 * -a describes every process.
 */
#include "recorder_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collect/procfs.h"
#include "../core/banned.h"

#define CMDLINE_MAX 32768	/* longer command lines are cut, and marked so */

static bool scope_eq(const void *ctx, uint32_t id)
{
	const struct { const struct rscope *s; uint32_t pid; } *k = ctx;
	return k->s->pids[id] == k->pid;
}

bool rscope_has(const struct rscope *s, uint32_t pid)
{
	struct { const struct rscope *s; uint32_t pid; } k = { s, pid };
	return s->all || hindex__find(&s->index, hash_mix(pid), scope_eq, &k) != HINDEX_NONE;
}

int rscope_add(struct rscope *s, uint32_t pid)
{
	if (rscope_has(s, pid))
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

void rscope_release(struct rscope *s)
{
	free(s->pids);
	hindex__release(&s->index);
}

/* Whether pid's parent, by /proc, is in scope: the rings' records are in
 * time order within a read, not across the moment the heads are taken,
 * so an exec may come before the fork that puts it in. */
bool recorder_parent_in_scope(struct recorder *r, uint32_t pid)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "proc/%u/stat", pid);
	char *text = procfs_read(r->o.root, rel, NULL);
	if (!text)
		return false;
	/* "pid (comm) state ppid ...": comm may hold spaces and ')' */
	const char *close = strrchr(text, ')');
	unsigned ppid = 0;
	bool ok = close && sscanf(close + 1, " %*c %u", &ppid) == 1;
	free(text);
	return ok && rscope_has(&r->scope, ppid);
}

/* The uid of pid by /proc (UINT32_MAX: not known). */
static uint32_t uid_of(struct recorder *r, uint32_t pid)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "proc/%u/status", pid);
	char *status = procfs_read(r->o.root, rel, NULL);
	if (!status)
		return UINT32_MAX;
	char *u = strstr(status, "\nUid:");
	uint32_t uid = u ? (uint32_t)strtoul(u + 5, NULL, 10) : UINT32_MAX;
	free(status);
	return uid;
}

/* Under sudo, only the user's own processes keep their addresses. */
bool recorder_own(struct recorder *r, uint32_t pid)
{
	return !r->o.hide_addresses || uid_of(r, pid) == (uint32_t)r->o.user;
}

/* The command's line, from its argv: in /proc it is still the recorder's
 * until it execs, and a short command may be gone before its exec is read. */
static size_t command_line(const struct recorder *r, char *line, size_t size)
{
	size_t n = 0;
	for (char *const *a = r->o.command; a && *a && n < size; a++)
		n += (size_t)snprintf(line + n, size - n, "%s%s", a == r->o.command ? "" : " ", *a);
	return n < size ? n : size - 1;
}

static int engine_proc(struct recorder *r, uint64_t time, uint32_t pid, const char *cmd,
		       bool cut, const char *exe, uint32_t uid)
{
	struct eng_event ev = { .kind = EK_PROC, .time = time, .pid = pid,
				.uid = uid == UINT32_MAX ? -1 : (int64_t)uid };
	if (*cmd && !(ev.text = strdup(cut ? "" : cmd)))
		return -ENOMEM;
	if (cut) {	/* marked as cut short, as the reader marks it */
		free(ev.text);
		size_t n = strlen(cmd);
		if (!(ev.text = malloc(n + 7)))
			return -ENOMEM;
		memcpy(ev.text, cmd, n);
		memcpy(ev.text + n, " [...]", 7);
	}
	if (*exe && !(ev.exe = strdup(exe))) {
		free(ev.text);
		return -ENOMEM;
	}
	return recorder_push(r, &ev);
}

/* PROC: pid's command line, executable and user, now. */
int recorder_proc_item(struct recorder *r, uint32_t pid, uint64_t time)
{
	static char cmd[CMDLINE_MAX];
	char rel[64], exe[4096] = "";
	bool cut = false;
	size_t n;
	if (r->o.child > 0 && pid == (uint32_t)r->o.child && time == r->st.start_ns)
		n = command_line(r, cmd, sizeof(cmd));
	else {
		cut = procfs_cmdline(r->o.root, (pid_t)pid, cmd, sizeof(cmd));
		n = strlen(cmd);
	}
	snprintf(rel, sizeof(rel), "%s/proc/%u/exe", strcmp(r->o.root, "/") ? r->o.root : "", pid);
	ssize_t e = readlink(rel, exe, sizeof(exe) - 1);
	exe[e > 0 ? e : 0] = '\0';
	uint32_t uid = uid_of(r, pid);
	struct rec_proc p = { .time_ns = time, .pid = pid, .uid = uid,
			      .command_len = (uint32_t)n, .exe_len = (uint32_t)strlen(exe),
			      .flags = cut ? REC_PROC_CUT : 0 };
	int err = 0;
	if (r->w) {
		char *both = malloc(n + p.exe_len + 1);
		if (!both)
			return -ENOMEM;
		memcpy(both, cmd, n);
		memcpy(both + n, exe, p.exe_len);
		err = rec_writer__add(r->w, REC_PROC, &p, sizeof(p), both, n + p.exe_len);
		free(both);
	}
	if (!err)
		err = engine_proc(r, time, pid, cmd, cut, exe, uid);
	return err ? err : recorder_cgroup_proc(r, pid, time);
}

/* A running process's code regions, for samples before any MMAP2 of it. */
static int read_maps(struct recorder *r, pid_t pid)
{
	char rel[64];
	size_t len;
	snprintf(rel, sizeof(rel), "proc/%d/maps", (int)pid);
	char *text = procfs_read(r->o.root, rel, &len);
	if (!text)
		return 0;	/* gone, or a kernel thread: normal */
	int err = resolver__maps(r->res, (uint32_t)pid, text, len);
	free(text);
	return err;
}

static int on_task(void *ctx, pid_t pid, pid_t tid, const char *comm)
{
	struct recorder *r = ctx;
	size_t clen = strlen(comm);
	uint32_t id = strtab__intern(&r->names, comm, clen);
	if (id == HINDEX_NONE)
		return -ENOMEM;
	/* every thread: the engine needs to know which process each is of */
	uint32_t pre[2] = { (uint32_t)pid, (uint32_t)tid };
	int err = r->w ? rec_writer__add(r->w, REC_TASK, pre, sizeof(pre), comm, clen) : 0;
	struct eng_event ev = { .kind = EK_TASK, .time = r->st.start_ns, .pid = (uint32_t)pid,
				.tid = (uint32_t)tid, .comm = id };
	if (!err)
		err = recorder_push(r, &ev);
	if (err || pid != tid || !rscope_has(&r->scope, (uint32_t)pid))
		return err;
	err = read_maps(r, pid);
	return err ? err : recorder_proc_item(r, (uint32_t)pid, r->st.start_ns);
}

/* Every thread running now; the command, held before its exec, is among
 * them with its argv for a command line (see recorder_proc_item). */
int recorder_snapshot(struct recorder *r)
{
	return procfs_tasks(r->o.root, on_task, r);
}
