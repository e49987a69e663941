/* collector: see collector.h. */
#include "collector.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/banned.h"

/* One thread's figures for one account, now (c->collected has them as
 * last collected). */
struct coll_entry {
	uint32_t pid, tid, account;	/* account: id in c->accounts */
	int64_t proc_start;
	int64_t now_cpu, now_steal, now_samples;
	uint32_t epoch;			/* the collection that set now_* */
	char *command, *executable, *comm, *cgroup;
	int64_t uid;
	uint64_t first_ns, last_ns;
	bool used;
};

int collector__init(struct collector *c, const struct strtab *names, const char *host,
		    const char *boot_id, uint64_t mono_start, int64_t realtime_start,
		    bool steal_known)
{
	memset(c, 0, sizeof(*c));
	c->epoch = 1;	/* a new entry's 0 is no round's */
	c->names = names;
	snprintf(c->host, sizeof(c->host), "%s", host);
	snprintf(c->boot_id, sizeof(c->boot_id), "%s", boot_id);
	/* a recording is known by where and when it began */
	snprintf(c->recording, sizeof(c->recording), "%s %s %llu", host, boot_id,
		 (unsigned long long)mono_start);
	c->realtime_shift = realtime_start - (int64_t)mono_start;
	c->last_end_ns = realtime_start;
	c->steal_known = steal_known;
	hindex__init(&c->index);
	strtab__init(&c->accounts);
	tracker__init(&c->collected);
	tracker__init(&c->waited);
	return 0;
}

static void entry_release(struct coll_entry *e)
{
	free(e->command);
	free(e->executable);
	free(e->comm);
	free(e->cgroup);
	*e = (struct coll_entry){ 0 };
}

void collector__release(struct collector *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->n; i++)
		entry_release(&c->v[i]);
	free(c->v);
	hindex__release(&c->index);
	strtab__release(&c->accounts);
	tracker__release(&c->collected);
	tracker__release(&c->waited);
	batch__free(c->gone);
	memset(c, 0, sizeof(*c));
}

struct key {
	const struct collector *c;
	uint32_t pid, tid, account;
	int64_t proc_start;
};

static uint64_t key_hash(const struct key *k)
{
	return hash_mix(((uint64_t)k->pid << 32 | k->tid) ^
			hash_mix((uint64_t)k->proc_start ^ ((uint64_t)k->account << 48)));
}

static bool key_eq(const void *ctx, uint32_t id)
{
	const struct key *k = ctx;
	const struct coll_entry *e = &k->c->v[id];
	return e->used && e->pid == k->pid && e->tid == k->tid && e->account == k->account &&
	       e->proc_start == k->proc_start;
}

/* The process's start, to the clock tick /proc keeps it in. */
static int64_t proc_start(const struct eng_proc *p)
{
	return (int64_t)(p->start_ns / 10000000 * 10000000);
}

static struct coll_entry *entry(struct collector *c, const struct eng_proc *p,
				const struct eng_thread *t, const char *account)
{
	uint32_t acc = strtab__intern(&c->accounts, account, strlen(account));
	if (acc == HINDEX_NONE)
		return NULL;
	struct key k = { c, p->pid, t->tid, acc, proc_start(p) };
	uint64_t h = key_hash(&k);
	uint32_t id = hindex__find(&c->index, h, key_eq, &k);
	if (id != HINDEX_NONE)
		return &c->v[id];
	if (grow_array((void **)&c->v, &c->cap, c->n, sizeof(*c->v), 256) ||
	    hindex__insert(&c->index, h, c->n))
		return NULL;
	c->v[c->n] = (struct coll_entry){ .pid = p->pid, .tid = t->tid, .account = acc,
					  .proc_start = k.proc_start, .used = true };
	return &c->v[c->n++];
}

static int replace(char **slot, const char *s)
{
	if ((!*slot && !s) || (*slot && s && !strcmp(*slot, s)))
		return 0;
	free(*slot);
	*slot = s ? strdup(s) : NULL;
	return s && !*slot ? -ENOMEM : 0;
}

/* What the ledger keeps of a task, as it is now. */
static int note_task(struct collector *c, struct coll_entry *e, const struct engine *eng,
		     const struct eng_proc *p, const struct eng_thread *t)
{
	uint32_t cg = engine__cgroup(eng, t);
	int err = replace(&e->cgroup, cg != ENGINE_NONE ? strtab__str(c->names, cg) : NULL);
	if (err)
		return err;
	const char *comm = t->comm != ENGINE_NONE ? strtab__str(c->names, t->comm) : NULL;
	char bracketed[40];
	const char *command = p->command;
	if (!command && comm) {
		snprintf(bracketed, sizeof(bracketed), "[%s]", comm);
		command = bracketed;
	}
	e->uid = p->uid;
	e->first_ns = t->first_ns;
	e->last_ns = t->last_ns;
	err = replace(&e->command, command);
	if (!err)
		err = replace(&e->executable, p->executable);
	return err ? err : replace(&e->comm, comm);
}

int collector__program(struct collector *c, const struct engine *eng,
		       const struct eng_thread *t, const struct eng_figures *f, bool final)
{
	const struct eng_proc *p = engine__proc(eng, t->proc);
	if (!p || !p->in_scope)
		return 0;
	const char *account = f->account != NO_DSO ? strtab__str(c->names, f->account) :
			      "[unknown]";
	struct coll_entry *e = entry(c, p, t, account);
	if (!e)
		return -ENOMEM;
	if (e->epoch != c->epoch) {	/* the first figure of this round */
		e->epoch = c->epoch;
		e->now_cpu = e->now_steal = e->now_samples = 0;
	}
	e->now_cpu += (int64_t)f->run_ns;
	e->now_steal += (int64_t)f->steal_ns;
	e->now_samples += (int64_t)f->samples;
	(void)final;
	return note_task(c, e, eng, p, t);
}

/* Who e is, to the tracker. */
static struct track_key track_key(const struct coll_entry *e)
{
	return (struct track_key){ (uint64_t)e->pid << 32 | e->tid, (uint64_t)e->proc_start,
				   e->account };
}

/* e's thread's run-queue wait since it was last collected, onto u: once
 * a collection per thread (on the first of its rows written; the
 * tracker's samples hold the collection's epoch), from its figure at the
 * recording's start (0 for one born since, or a tid given again). Not
 * read (unknown): no reader, or the thread is gone past reading. */
static int take_wait(struct collector *c, const struct coll_entry *e, struct usage *u)
{
	struct track_key k = { (uint64_t)e->pid << 32 | e->tid, (uint64_t)e->proc_start, 0 };
	uint64_t since;
	if (!c->read_wait || tracker__last(&c->waited, &k).samples == c->epoch ||
	    cgstats__wait_since_start(c->wait_start, c->read_wait, c->wait_ctx, e->pid, e->tid,
				      &since))
		return 0;
	struct track_figs fig = { (int64_t)since, 0, c->epoch }, d;
	if (tracker__look(&c->waited, &k, &fig, TRACK_COUNTER, &d))
		return -ENOMEM;
	u->wait_ns = d.cpu_ns;
	u->wait_known = true;
	return 0;
}

/* A row of what e gained since it was last collected (now its last
 * collection). */
static int add_row(struct collector *c, struct batch *b, const struct coll_entry *e)
{
	struct track_key k = track_key(e);
	struct track_figs now = { e->now_cpu, e->now_steal, e->now_samples }, d;
	if (tracker__look(&c->collected, &k, &now, TRACK_EXACT, &d))
		return -ENOMEM;
	struct task_info t = { .pid = e->pid, .tid = e->tid, .uid = e->uid,
			       .command = e->command, .executable = e->executable,
			       .cgroup = e->cgroup,
			       .comm = e->comm, .start_ns = -1, .end_ns = -1,
			       .proc_start_ns = e->proc_start };
	if (e->first_ns) {
		t.start_ns = (int64_t)e->first_ns + c->realtime_shift;
		t.end_ns = (int64_t)e->last_ns + c->realtime_shift;
	}
	struct usage u = { .account = strtab__str(&c->accounts, e->account),
			   .cpu_ns = d.cpu_ns, .steal_ns = d.steal_ns, .samples = d.samples,
			   .steal_known = c->steal_known };
	if (!u.cpu_ns && !u.steal_ns && !u.samples)
		return 0;
	int err = take_wait(c, e, &u);
	return err ? err : batch__add(b, &t, &u);
}

/* How the engine found steal, as the ledger keeps it: "residual
 * (paravirt)", "sample-gaps (plain), scaled to /proc/stat", "unknown". */
static void steal_source(const struct collector *c, const struct engine *e, char *buf,
			 size_t size)
{
	const struct engine_config *ec = engine__config(e);
	const struct engine_stats *st = engine__stats(e);
	if (!c->steal_known || ec->mode == STEAL_UNKNOWN)
		snprintf(buf, size, "unknown");
	else if (ec->mode == STEAL_GIVEN)
		snprintf(buf, size, "kernel-clock (bpf)");
	else if (ec->mode == STEAL_GAPS)
		snprintf(buf, size, "sample-gaps, scaled to /proc/stat");
	else
		snprintf(buf, size, "%s (%s)%s", st->steal_from_gaps ? "sample-gaps" : "residual",
			 steal_accounting__name(st->accounting),
			 ec->scale_to_kernel ? ", scaled to /proc/stat" : "");
}

static struct batch *new_batch(struct collector *c, const struct engine *e,
			       const char *reason, int64_t now)
{
	char source[96];
	steal_source(c, e, source, sizeof(source));
	struct collection col = { .collected_ns = now, .reason = reason,
				  .start_ns = c->last_end_ns, .end_ns = now > c->last_end_ns ?
				  now : c->last_end_ns, .host = c->host, .boot_id = c->boot_id,
				  .recording = c->recording, .seq = c->seq, .steal_source = source };
	return batch__new(&col);
}

/* Whether e was handed a figure this round; if not, it has nothing now.
 * A thread's time is split among its functions (so accounts) by samples:
 * an account's share can fall as samples come, to nothing (time first
 * [unknown], then all in the account of its first sample), so a row may
 * take back some of what an earlier one gave; their sum is exact. */
static void settle(struct collector *c, struct coll_entry *e)
{
	if (e->epoch == c->epoch)
		return;
	e->epoch = c->epoch;
	e->now_cpu = e->now_steal = e->now_samples = 0;
}

/* A gone thread: its entries' last rows wait for the next collection. */
int collector__thread_gone(struct collector *c, const struct engine *eng,
			   const struct eng_thread *t)
{
	const struct eng_proc *p = engine__proc(eng, t->proc);
	if (!p || !p->in_scope)
		return 0;
	if (!c->gone && !(c->gone = new_batch(c, eng, "end", 0)))
		return -ENOMEM;
	int err = 0;
	for (uint32_t i = 0; i < c->n && !err; i++) {
		struct coll_entry *e = &c->v[i];
		if (!e->used || e->pid != p->pid || e->tid != t->tid ||
		    e->proc_start != proc_start(p))
			continue;
		settle(c, e);
		err = add_row(c, c->gone, e);
		struct track_key tk = track_key(e);
		tracker__forget(&c->collected, &tk);
		struct key k = { c, e->pid, e->tid, e->account, e->proc_start };
		hindex__remove(&c->index, key_hash(&k), i);
		entry_release(e);
	}
	/* its wait once all its rows are in (the first took it) */
	struct track_key wk = { (uint64_t)p->pid << 32 | t->tid, (uint64_t)proc_start(p), 0 };
	tracker__forget(&c->waited, &wk);
	c->epoch++;
	return err;
}

/* Entries freed by gone threads leave holes: squeeze them out, now and
 * then, so memory follows the live threads. */
static int compact(struct collector *c)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < c->n; i++)
		if (c->v[i].used)
			c->v[n++] = c->v[i];
	if (n == c->n)
		return 0;
	c->n = n;
	hindex__release(&c->index);
	hindex__init(&c->index);
	for (uint32_t i = 0; i < n; i++) {
		struct key k = { c, c->v[i].pid, c->v[i].tid, c->v[i].account, c->v[i].proc_start };
		if (hindex__insert(&c->index, key_hash(&k), i))
			return -ENOMEM;
	}
	return 0;
}

static int walk_program(void *ctx, const struct engine *e, const struct eng_thread *t,
			const struct eng_figures *f, bool final)
{
	return collector__program(ctx, e, t, f, final);
}

static int sink_gone(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	return collector__thread_gone(ctx, e, t);
}

struct engine_sink collector__sink(struct collector *c)
{
	return (struct engine_sink){ c, walk_program, NULL, sink_gone };
}

struct batch *collector__collect(struct collector *c, struct engine *e, const char *reason,
				 int64_t now_realtime)
{
	struct engine_sink walk = { c, walk_program, NULL, NULL };
	c->epoch++;
	struct batch *b = new_batch(c, e, reason, now_realtime);
	int err = b ? engine__walk(e, &walk) : -ENOMEM;
	for (uint32_t i = 0; i < c->n && !err; i++) {
		struct coll_entry *en = &c->v[i];
		if (!en->used)
			continue;
		settle(c, en);	/* every live thread was walked */
		err = add_row(c, b, en);
	}
	/* the threads gone since the last collection */
	for (uint32_t i = 0; c->gone && i < c->gone->n && !err; i++)
		err = batch__add(b, &c->gone->rows[i].t, &c->gone->rows[i].u);
	batch__free(c->gone);
	c->gone = NULL;
	c->epoch++;
	if (!err)
		err = compact(c);
	if (err) {
		batch__free(b);
		errno = ENOMEM;
		return NULL;
	}
	c->last_end_ns = b->c.end_ns;
	c->seq++;
	return b;
}
