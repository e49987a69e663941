/* ledger_write: see ledger_write.h. */
#include "ledger_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "../core/grow.h"
#include "../ledger/ledger.h"
#include "../core/banned.h"

struct cumulative {
	uint32_t pid, tid, account;	/* account: in c->accounts */
	int64_t cpu, steal, samples;	/* as last written */
	int64_t now_cpu, now_steal, now_samples;	/* this collection */
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void collector__init(struct collector *c, const char *path, bool import)
{
	memset(c, 0, sizeof(*c));
	c->path = path;
	c->seq = import ? -1 : 0;
	strtab__init(&c->accounts);
	hindex__init(&c->index);
}

void collector__release(struct collector *c)
{
	if (!c)
		return;
	strtab__release(&c->accounts);
	hindex__release(&c->index);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

struct key {
	const struct collector *c;
	uint32_t pid, tid, account;
};

static bool key_eq(const void *ctx, uint32_t id)
{
	const struct key *k = ctx;
	const struct cumulative *e = &k->c->v[id];
	return e->pid == k->pid && e->tid == k->tid && e->account == k->account;
}

static struct cumulative *entry(struct collector *c, uint32_t pid, uint32_t tid,
				const char *account)
{
	uint32_t acc = strtab__intern(&c->accounts, account, strlen(account));
	if (acc == HINDEX_NONE)
		return NULL;
	struct key k = { c, pid, tid, acc };
	uint64_t h = hash_mix(((uint64_t)pid << 32 | tid) ^ hash_mix(acc));
	uint32_t id = hindex__find(&c->index, h, key_eq, &k);
	if (id != HINDEX_NONE)
		return &c->v[id];
	if (grow_array((void **)&c->v, &c->cap, c->n, sizeof(*c->v), 256) ||
	    hindex__insert(&c->index, h, c->n))
		return NULL;
	c->v[c->n] = (struct cumulative){ .pid = pid, .tid = tid, .account = acc };
	return &c->v[c->n++];
}

int collector__collect(struct collector *c, const struct loaded_recording *r,
		       const char *reason)
{
	const struct live *lv = &r->live;
	/* What r holds now, per thread and account, in scope. */
	for (uint32_t i = 0; i < c->n; i++)
		c->v[i].now_cpu = c->v[i].now_steal = c->v[i].now_samples = 0;
	for (uint32_t i = 0; i < lv->nprogs; i++) {
		const struct program *p = &lv->progs[i];
		const struct loaded_process *proc = loaded_recording__process(r, p->pid);
		if (proc ? !proc->in_scope : strcmp(r->scope, "all"))
			continue;
		const char *account = p->account != NO_DSO ?
			strtab__str(&lv->strings, p->account) : "[unknown]";
		struct cumulative *e = entry(c, p->pid, p->tid, account);
		if (!e) {
			cli_error("out of memory");
			return EXIT_RUNTIME;
		}
		e->now_cpu += (int64_t)p->run_ns;
		e->now_steal += (int64_t)p->steal_ns;
		e->now_samples += (int64_t)p->samples;
	}

	char msg[512], id[400];
	struct ledger *l;
	int err = ledger__open(c->path, true, &l, msg, sizeof(msg));
	if (err) {
		cli_error("%s", msg);
		return err == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	}
	/* a recording is known by where and when it began */
	snprintf(id, sizeof(id), "%s %s %llu", r->host, r->boot_id,
		 (unsigned long long)r->start_ns);
	int64_t now = now_ns();
	int64_t start = c->last_ns ? c->last_ns :
			r->realtime_start_ns ? r->realtime_start_ns : now;
	int64_t end = !strcmp(reason, "end") || !strcmp(reason, "import") ?
		      (r->realtime_end_ns ? r->realtime_end_ns : now) : now;
	struct collection col = {
		.collected_ns = now, .reason = reason, .start_ns = start,
		.end_ns = end < start ? start : end, .host = r->host,
		.boot_id = r->boot_id, .recording = id, .seq = c->seq,
	};
	err = ledger__begin(l, &col, msg, sizeof(msg));
	if (err) {
		cli_error("cannot add to ledger '%s': %s", c->path, msg);
		ledger__close(l);
		return err == -EEXIST ? EXIT_USAGE : EXIT_RUNTIME;
	}
	for (uint32_t i = 0; i < c->n && !err; i++) {
		struct cumulative *e = &c->v[i];
		struct usage u = {
			.account = strtab__str(&c->accounts, e->account),
			.cpu_ns = e->now_cpu - e->cpu,
			.steal_ns = e->now_steal - e->steal,
			.samples = e->now_samples - e->samples,
		};
		if (!u.cpu_ns && !u.steal_ns && !u.samples)
			continue;
		/* Looked up in this recording: an entry of an earlier one may
		 * be back only to take time away (its delta negative). */
		const struct loaded_process *proc = loaded_recording__process(r, e->pid);
		struct task_info t = {
			.pid = e->pid, .tid = e->tid, .uid = proc ? proc->uid : -1,
			.command = proc ? proc->command : NULL,
			.executable = proc ? proc->executable : NULL,
			.start_ns = -1, .end_ns = -1,
		};
		/* when it was seen, on the wall clock */
		const struct live_thread *th = live__thread(lv, e->tid);
		if (th && th->first_ns && r->realtime_start_ns) {
			int64_t shift = r->realtime_start_ns - (int64_t)r->start_ns;
			t.start_ns = (int64_t)th->first_ns + shift;
			t.end_ns = (int64_t)th->last_ns + shift;
		}
		err = ledger__add(l, &t, &u, msg, sizeof(msg));
	}
	if (!err)
		err = ledger__commit(l, msg, sizeof(msg));
	else
		ledger__abort(l);
	ledger__close(l);
	if (err) {
		cli_error("cannot add to ledger '%s': %s", c->path, msg);
		return EXIT_RUNTIME;
	}
	/* committed: this is now what was written */
	for (uint32_t i = 0; i < c->n; i++) {
		c->v[i].cpu = c->v[i].now_cpu;
		c->v[i].steal = c->v[i].now_steal;
		c->v[i].samples = c->v[i].now_samples;
	}
	c->last_ns = col.end_ns;
	if (c->seq >= 0)
		c->seq++;
	return 0;
}

int ledger_write_recording(const char *path, const struct loaded_recording *r,
			   const char *reason)
{
	struct collector c;
	collector__init(&c, path, true);
	int status = collector__collect(&c, r, reason);
	collector__release(&c);
	return status;
}
