/* analysis: see analysis.h. */
#include "analysis.h"

#include "../core/grow.h"
#include "../core/units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/banned.h"

int analysis__init(struct analysis *a, const struct analysis_opts *o,
		   const struct strtab *names, struct stacktab *stack_frames,
		   uint32_t unknown, uint32_t vm)
{
	memset(a, 0, sizeof(*a));
	a->o = *o;
	a->names = names;
	a->stack_frames = stack_frames;
	a->unknown = unknown;
	a->vm = vm;
	rows__init(&a->rows, &o->keys);
	if (o->row_store)
		rows__store(&a->rows, o->row_store);
	/* stacks by thread and account, labelled with the command */
	struct row_keys sk = { .v = { RF_THREAD, RF_ACCOUNT, RF_STACK }, .n = 3,
			       .mask = RF_BIT(RF_THREAD) | RF_BIT(RF_ACCOUNT) |
				       RF_BIT(RF_STACK) };
	rows__init(&a->stacks, &sk);
	rows__init(&a->staged, &sk);
	/* fold_stacks: the stacks by the line folded shows (report_folds) */
	report_folds__init(&a->folds);
	hindex__init(&a->incl_index);
	hindex__init(&a->cgsum.index);
	hindex__init(&a->accsum.index);
	return 0;
}

static const char *name(const struct analysis *a, uint32_t id)
{
	/* the names may be growing on the recording's reading thread */
	return id == ENGINE_NONE || id == NO_DSO || id >= strtab__count(a->names) ? NULL :
	       strtab__str(a->names, id);
}

static bool is_control(const struct analysis *a, const char *account)
{
	for (size_t i = 0; account && i < a->o.ncontrol; i++)
		if (!strcmp(account, a->o.control[i]))
			return true;
	return false;
}

static bool in_list(const uint32_t *v, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static bool in_names(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

/* A thread's process, its command (or [comm]) and comm. */
static void who_of(const struct analysis *a, const struct engine *e,
		   const struct eng_thread *t, struct analysis_thread *w)
{
	w->proc = engine__proc(e, t->proc);
	w->comm = name(a, t->comm);
	w->cgroup = engine__cgroup(e, t);
	const char *pcomm = w->proc ? name(a, w->proc->comm) : NULL;
	if (!pcomm)
		pcomm = w->comm;
	w->command = w->proc ? w->proc->command : NULL;
	if (!w->command && pcomm) {
		snprintf(w->bracketed, sizeof(w->bracketed), "[%s]", pcomm);
		w->command = w->bracketed;
	}
}

/* Whether figures of this thread are reported at all (--dso aside). */
static bool thread_wanted(const struct analysis *a, const struct analysis_thread *w,
			  const struct eng_thread *t)
{
	if (!w->proc || !w->proc->in_scope)
		return false;
	if (a->o.npids && !in_list(a->o.pids, a->o.npids, w->proc->pid))
		return false;
	if (a->o.ntids && !in_list(a->o.tids, a->o.ntids, t->tid))
		return false;
	if (a->o.ncomms && !in_names(a->o.comms, a->o.ncomms, w->comm))
		return false;
	return true;
}

/* Whether figures of the thread handed out, in dso, are reported. */
static bool wanted(const struct analysis *a, const char *dso)
{
	return a->cur.wanted && (!a->o.ndsos || in_names(a->o.dsos, a->o.ndsos, dso));
}

static struct row_key key_of(const struct analysis *a, const struct analysis_thread *w,
			     const struct eng_thread *t)
{
	return (struct row_key){
		.vm = name(a, a->vm), .pid = w->proc->pid, .tid = t->tid,
		.proc_start_ns = w->proc->start_ns, .thread_start_ns = t->start_ns, .comm = w->comm,
		.command = w->command, .executable = w->proc->executable,
		.uid = w->proc->uid, .cpu = ROW_NO_CPU, .cgroup = name(a, w->cgroup),
	};
}

/* The thread's part of the keys of r (a->rows or a->stacks), interned
 * once; NULL: out of memory. */
static struct row_base *base_of(struct analysis *a, struct rows *r)
{
	struct analysis_thread *w = &a->cur;
	bool rows = r == &a->rows;
	struct row_base *b = rows ? &w->rows : &w->stacks;
	bool *done = rows ? &w->rows_based : &w->stacks_based;
	if (*done)
		return b;
	struct row_attrs at = { w->command, w->comm };
	if (rows__base(r, &w->key, &at, b))
		return NULL;
	*done = true;
	return b;
}

static bool same_name(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

/* The program folded lines name the thread's stacks by, as
 * report_stack_program names it from a row's attributes: a->staged holds
 * the names of the thread it was made for last, the last thread's too
 * when they are the same (a compile's threads mostly are). */
static int fold_program(struct analysis *a)
{
	struct analysis_thread *w = &a->cur;
	struct rows *st = &a->staged;
	if (st->n && same_name(rows__str(st, st->v[0].attr_command), w->command) &&
	    same_name(rows__str(st, st->v[0].attr_comm), w->comm))
		return 0;
	struct row_keys keys = st->keys;
	rows__release(st);
	rows__init(st, &keys);
	struct row_attrs at = { w->command, w->comm };
	struct row_figures none = { 0 };
	if (rows__add(st, &w->key, &at, &none))
		return -ENOMEM;
	report_stack_program(st, &st->v[0], w->prog, sizeof(w->prog));
	return 0;
}

/* Before a thread's figures: who it is, and whether it is wanted. */
static int on_thread(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	struct analysis *a = ctx;
	struct analysis_thread *w = &a->cur;
	who_of(a, e, t, w);
	w->wanted = thread_wanted(a, w, t);
	w->rows_based = w->stacks_based = false;
	if (!w->wanted)
		return 0;
	w->key = key_of(a, w, t);
	return a->o.fold_stacks ? fold_program(a) : 0;
}

static bool sum_eq(const void *ctx, uint32_t id)
{
	const struct { const struct analysis_sums *t; uint32_t name; } *k = ctx;
	return k->t->v[id].name == k->name;
}

/* The figures of name (a string id) in t, or NULL: out of memory. */
static struct analysis_sum *sum_of(struct analysis_sums *t, uint32_t name)
{
	if (t->last && t->v[t->last - 1].name == name)
		return &t->v[t->last - 1];
	struct { const struct analysis_sums *t; uint32_t name; } k = { t, name };
	uint32_t id = hindex__find(&t->index, hash_mix(name), sum_eq, &k);
	if (id == HINDEX_NONE) {
		if (grow_array((void **)&t->v, &t->cap, t->n, sizeof(*t->v), 16) ||
		    hindex__insert(&t->index, hash_mix(name), t->n))
			return NULL;
		id = t->n++;
		t->v[id] = (struct analysis_sum){ .name = name };
	}
	t->last = id + 1;
	return &t->v[id];
}

/* Rows that a thread's run-queue wait can be summed into: keyed by what
 * is the thread's as a whole (not a function, account or CPU of it). */
static bool wait_rows(const struct analysis *a)
{
	return !(a->o.keys.mask & ROW_PROGRAM_FIELDS);
}

/* A thread's wait over the recording, into its cgroup and its row. */
static int thread_wait(struct analysis *a, const struct analysis_thread *w,
		       const struct eng_thread *t)
{
	uint64_t ns;
	/* a thread gone before the end has no end figure of its own unless
	 * its wait was counted as it went: read at the end, it was a zombie
	 * not yet reaped, or nothing. Unknown, whenever it is handed out (a
	 * gap's steal holds a thread to the end of the recording) */
	if (!a->cg || !w->proc || !w->proc->in_scope ||
	    (t->exited && !cgstats__wait_counted(a->cg, w->proc->pid, t->tid)) ||
	    !cgstats__thread_wait(a->cg, w->proc->pid, t->tid, &ns))
		return 0;
	if (w->cgroup != ENGINE_NONE) {
		struct analysis_sum *c = sum_of(&a->cgsum, w->cgroup);
		if (!c)
			return -ENOMEM;
		c->wait_ns += ns;
		c->wait_threads++;
	}
	/* a wait of 0 is a figure too, but makes no row of its own */
	if ((!ns && !t->cpu_ns && !t->samples) || !wait_rows(a) || !wanted(a, NULL))
		return 0;
	struct row_attrs at = { w->command, w->comm, name(a, w->cgroup) };
	struct row_figures rf = { .wait_ns = ns, .wait_threads = 1 };
	return rows__add(&a->rows, &w->key, &at, &rf);
}

/*
 * Inclusive time, as self time is shared: a function's inclusive samples
 * (samples with it anywhere on the stack, once each) are its thread's
 * runtime in proportion, plus the rounding leftover its self time got, so
 * that inclusive is never below self. A thread's functions are gathered
 * as its figures come (self, then stacks) and summed into rows when it
 * is gone.
 */
struct incl_entry {
	uint32_t function, dso, account;
	uint64_t self_ns, self_samples, incl_samples;
};

struct incl_key {
	const struct analysis *a;
	uint32_t function, dso, account;
};

static bool incl_eq(const void *ctx, uint32_t id)
{
	const struct incl_key *k = ctx;
	const struct incl_entry *e = &k->a->incl[id];
	return e->function == k->function && e->dso == k->dso && e->account == k->account;
}

static struct incl_entry *incl_entry(struct analysis *a, uint32_t fn, uint32_t dso,
				     uint32_t acc)
{
	struct incl_key k = { a, fn, dso, acc };
	uint64_t h = hash_mix(((uint64_t)fn << 32 | dso) ^ hash_mix(acc));
	uint32_t id = hindex__find(&a->incl_index, h, incl_eq, &k);
	if (id != HINDEX_NONE)
		return &a->incl[id];
	if (grow_array((void **)&a->incl, &a->incl_cap, a->nincl, sizeof(*a->incl), 64) ||
	    hindex__insert(&a->incl_index, h, a->nincl))
		return NULL;
	a->incl[a->nincl] = (struct incl_entry){ .function = fn, .dso = dso, .account = acc };
	return &a->incl[a->nincl++];
}

static bool counts_inclusive(const struct analysis *a)
{
	return a->have_stacks && row_keys__has(&a->o.keys, RF_FUNCTION) && !a->o.no_rows;
}

/* Each distinct named function on stack gains its samples (the leaf
 * counts however it is named; an unnamed caller adds nothing). */
static int stack_inclusive(struct analysis *a, uint32_t stack, uint64_t samples)
{
	static __thread struct stack_frame f[4096];
	uint32_t n = stacktab__frames(a->stack_frames, stack, f, 4096);
	for (uint32_t i = 0; i < n; i++) {
		if (i && f[i].function == a->unknown)
			continue;
		bool dup = false;
		for (uint32_t j = 0; j < i && !dup; j++)
			dup = f[j].function == f[i].function && f[j].dso == f[i].dso;
		if (dup)
			continue;
		struct incl_entry *e = incl_entry(a, f[i].function, f[i].dso, f[i].account);
		if (!e)
			return -ENOMEM;
		e->incl_samples += samples;
	}
	return 0;
}

/* A stack row made for an account of the thread (stacks_out), and how
 * many are kept: a thread's stacks name a few. */
struct made_row {
	uint32_t account;	/* a name id */
	struct row w;
};
enum { STACKS_ACCOUNTS = 8 };

/* A gone thread's stacks handed on (stack_out) as rows of a->stacks, in
 * the order they came, and let go. */
static int stacks_out(struct analysis *a)
{
	struct report_stack rs = {
		.attrs = row_keys__has(&a->o.keys, RF_PROCESS) ||
			 row_keys__has(&a->o.keys, RF_THREAD),
		.names = a->names, .frames = a->stack_frames, .no_steal = a->no_steal,
		.batch = ++a->stack_batches,
	};
	int err = pending_stacks__merge(&a->pending);
	struct row_base *b = a->pending.n ? base_of(a, &a->stacks) : NULL;
	if (a->pending.n && !b)
		err = -ENOMEM;
	struct row_key k = a->cur.key;
	/* the row made first for each of the thread's accounts (its few:
	 * program, libraries, kernel), made again for the others */
	struct made_row made[STACKS_ACCOUNTS];
	uint32_t nmade = 0;
	for (uint32_t i = 0; i < a->pending.n && !err; i++) {
		const struct pending_stack *p = &a->pending.v[i];
		if (p->same)
			continue;
		struct row_figures rf = { .samples = p->samples, .cpu_ns = p->cpu_ns,
					  .steal_ns = p->steal_ns };
		struct row w;
		uint32_t m = 0;
		while (m < nmade && made[m].account != p->account)
			m++;
		rs.like = 0;
		if (m < nmade) {
			rows__make_like(&a->stacks, &made[m].w, p->stack, &rf, &w);
			rs.like = m + 1;
		} else {
			k.account = name(a, p->account);
			k.stack = p->stack;
			err = rows__make(&a->stacks, b, &k, &rf, &w);
			if (!err && nmade < STACKS_ACCOUNTS) {
				made[nmade++] = (struct made_row){ p->account, w };
				rs.like = nmade;
			}
		}
		if (!err)
			err = a->o.stack_out(a->o.stack_ctx, &rs, &a->stacks, &w);
	}
	pending_stacks__clear(&a->pending);
	rows__clear(&a->stacks);
	return err;
}

static int on_gone(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	struct analysis *a = ctx;
	int err = 0;
	(void)e;
	if (a->o.fold_stacks)
		return 0;
	if (a->o.stack_out && (err = stacks_out(a)))
		return err;
	struct row_key k = a->cur.key;
	err = thread_wait(a, &a->cur, t);
	for (uint32_t i = 0; i < a->nincl && !err; i++) {
		const struct incl_entry *en = &a->incl[i];
		if (!en->incl_samples || !wanted(a, name(a, en->dso)))
			continue;
		struct row_base *b = base_of(a, &a->rows);
		if (!b)
			return -ENOMEM;
		uint64_t leftover = en->self_ns - share_u64(t->cpu_ns, en->self_samples, t->samples);
		k.function = name(a, en->function);
		k.dso = name(a, en->dso);
		k.account = name(a, en->account);
		struct row_figures rf = {
			.inclusive_ns = share_u64(t->cpu_ns, en->incl_samples, t->samples) + leftover,
		};
		err = rows__add_to(&a->rows, b, &k, &rf);
	}
	a->nincl = 0;
	hindex__release(&a->incl_index);
	hindex__init(&a->incl_index);
	if (!err && a->rows.store && a->cur.wanted) {
		/* its row is whole (rows__can_store): out of memory */
		err = rows__retire(&a->rows, &a->cur.key);
		a->cur.rows_based = false;
	}
	return err;
}

/* Whether account (a string id) is a control program's: a thread's
 * programs mostly name the same one. */
static bool control_account(struct analysis *a, uint32_t account)
{
	if (!a->control_known || a->control_id != account) {
		a->control_id = account;
		a->control_is = is_control(a, name(a, account));
		a->control_known = true;
	}
	return a->control_is;
}

static int on_program(void *ctx, const struct engine *e, const struct eng_thread *t,
		      const struct eng_figures *f, bool final)
{
	struct analysis *a = ctx;
	const struct analysis_thread *w = &a->cur;
	(void)e;
	(void)t;
	(void)final;
	if (!w->proc || !w->proc->in_scope)
		return 0;
	/* the totals are the scope's, whatever the filters show */
	a->totals.samples += f->samples;
	a->totals.steal_samples += f->steal_samples;
	a->totals.run_ns += f->run_ns;
	a->totals.steal_ns += f->steal_ns;
	a->programs++;
	struct analysis_sum *acc = sum_of(&a->accsum, f->account);
	struct analysis_sum *cg = w->cgroup != ENGINE_NONE ? sum_of(&a->cgsum, w->cgroup) : NULL;
	if (!acc || (w->cgroup != ENGINE_NONE && !cg))
		return -ENOMEM;
	acc->cpu_ns += f->run_ns;
	acc->steal_ns += f->steal_ns;
	if (cg) {
		cg->cpu_ns += f->run_ns;
		cg->steal_ns += f->steal_ns;
	}
	const char *dso = name(a, f->dso);
	if (!wanted(a, dso) || a->o.no_rows)
		return 0;
	if (counts_inclusive(a)) {
		struct incl_entry *en = incl_entry(a, f->function, f->dso, f->account);
		if (!en)
			return -ENOMEM;
		en->self_ns += f->run_ns;
		en->self_samples += f->samples;
	}
	struct row_base *b = base_of(a, &a->rows);
	if (!b)
		return -ENOMEM;
	struct row_key k = w->key;
	k.dso = dso;
	k.function = name(a, f->function);
	k.account = name(a, f->account);
	k.cpu = f->cpu == ENGINE_NONE ? ROW_NO_CPU : (int32_t)f->cpu;
	struct row_figures rf = {
		.samples = f->samples, .steal_samples = f->steal_samples,
		.cpu_ns = f->run_ns, .steal_ns = f->steal_ns,
		.control_ns = control_account(a, f->account) ? f->run_ns : 0,
	};
	return rows__add_to(&a->rows, b, &k, &rf);
}

/* The stack f names: the engine's, or one of its function alone where
 * no sample placed it; HINDEX_NONE without stacks, or with *err set when
 * out of memory. */
static uint32_t stack_of(struct analysis *a, const struct eng_stack_figures *f, int *err)
{
	*err = 0;
	if (f->stack != ENGINE_NONE || !a->stack_frames)
		return a->stack_frames ? f->stack : HINDEX_NONE;
	struct stack_frame one = { f->function, f->dso != NO_DSO ? f->dso : a->unknown,
				   f->account };
	uint32_t id = stacktab__intern(a->stack_frames, &one, 1);
	if (id == HINDEX_NONE)
		*err = -ENOMEM;
	return id;
}

static int on_stack(void *ctx, const struct engine *e, const struct eng_thread *t,
		    const struct eng_stack_figures *f)
{
	struct analysis *a = ctx;
	int err;
	(void)e;
	(void)t;
	uint32_t stack = stack_of(a, f, &err);
	if (stack == HINDEX_NONE || !stacktab__depth(a->stack_frames, stack) || !a->cur.wanted)
		return err;
	/* the leaf's file matters to --dsos alone: reading it is a miss of
	 * the cache for each stack of each thread */
	if (a->o.ndsos && !wanted(a, name(a, stacktab__frame(a->stack_frames, stack, 0).dso)))
		return err;
	if (counts_inclusive(a) && f->stack != ENGINE_NONE)
		err = stack_inclusive(a, stack, f->samples);
	if (err || !a->o.stacks)
		return err;
	if (a->o.fold_stacks)
		return report_folds__add(&a->folds, a->cur.prog, stack, f->samples);
	/* made rows as they are handed on; accounts alike as their names
	 * are: a source's names are interned, one id a string (a table of
	 * pooled names, the live recorder's, gives no stack_out), and name()
	 * is NULL for several */
	if (a->o.stack_out)
		return pending_stacks__add(&a->pending, stack,
					   name(a, f->account) ? f->account : ENGINE_NONE,
					   f->samples, f->cpu_ns, f->steal_ns);
	struct row_base *b = base_of(a, &a->stacks);
	if (!b)
		return -ENOMEM;
	struct row_key k = a->cur.key;
	k.account = name(a, f->account);
	k.stack = stack;
	struct row_figures rf = { .samples = f->samples, .cpu_ns = f->cpu_ns,
				  .steal_ns = f->steal_ns };
	return rows__add_to(&a->stacks, b, &k, &rf);
}

struct engine_sink analysis__sink(struct analysis *a)
{
	bool stacks = a->o.stacks || row_keys__has(&a->o.keys, RF_FUNCTION);
	return (struct engine_sink){ a, on_program, stacks ? on_stack : NULL, on_gone,
				     on_thread };
}

static int build_cpus(struct analysis *a, const struct engine *e,
		      const struct source_desc *s)
{
	a->cpus = calloc(s->ncpus ? s->ncpus : 1, sizeof(*a->cpus));
	if (!a->cpus)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t c = 0; c < s->ncpus; c++) {
		const struct eng_cpu_stats *st = engine__cpu(e, c);
		if (!s->cpus[c].present && !(st && st->seen))
			continue;
		a->cpus[n++] = (struct report_cpu){
			.cpu = c, .steal_ns = st ? st->steal_ns : 0,
			.idle_ns = st ? st->idle_ns : 0,
			.kernel_known = s->cpus[c].kernel_known,
			.kernel_steal_ns = s->cpus[c].kernel_steal_ns, .lost = s->cpus[c].lost,
		};
		a->x.lost += s->cpus[c].lost;
	}
	a->x.cpus = a->cpus;
	a->x.ncpus = n;
	return 0;
}

static int build_events(struct analysis *a, const struct source_desc *s)
{
	a->events = calloc(s->nevents ? s->nevents : 1, sizeof(*a->events));
	if (!a->events)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->nevents; i++)
		a->events[i] = (struct report_event){ s->events[i].name, s->events[i].samples };
	a->x.events = a->events;
	a->x.nevents = s->nevents;
	return 0;
}

static bool over_limit(const struct table_row *r, void *ctx)
{
	const struct analysis *a = ctx;
	return 100.0 * (double)r->cpu_ns / (double)a->table->totals.run_ns >=
	       a->o.percent_limit;
}

/* Rows under --percent-limit of the cpu time go. */
static void percent_limit(struct analysis *a)
{
	if (a->o.percent_limit > 0 && a->table->totals.run_ns)
		table__keep(a->table, over_limit, a);
}

static int cmp_cgroup(const void *x, const void *y)
{
	const struct report_cgroup *a = x, *b = y;
	if (a->cpu_ns != b->cpu_ns)
		return a->cpu_ns < b->cpu_ns ? 1 : -1;
	return strcmp(a->path, b->path);
}

/* The cgroups section: every cgroup that ran in scope, with its counters
 * over the recording. */
static int build_cgroups(struct analysis *a)
{
	a->cgroups = calloc(a->cgsum.n ? a->cgsum.n : 1, sizeof(*a->cgroups));
	if (!a->cgroups)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = 0; i < a->cgsum.n; i++) {
		const struct analysis_sum *c = &a->cgsum.v[i];
		if (!c->cpu_ns && !c->steal_ns)
			continue;
		struct report_cgroup *r = &a->cgroups[n++];
		struct cg_counters ch = { 0 };
		if (a->cg)
			cgstats__change(a->cg, c->name, &ch);
		*r = (struct report_cgroup){
			.path = name(a, c->name), .cpu_ns = c->cpu_ns, .steal_ns = c->steal_ns,
			.usage_known = ch.usage_known, .usage_ns = ch.usage_ns,
			.throttled_known = ch.throttled_known, .throttled_ns = ch.throttled_ns,
			.nr_throttled = ch.nr_throttled,
			.wait_known = c->wait_threads > 0, .wait_ns = c->wait_ns,
		};
	}
	qsort(a->cgroups, n, sizeof(*a->cgroups), cmp_cgroup);
	a->x.cgroups = a->cgroups;
	a->x.ncgroups = n;
	return 0;
}

static int cmp_account(const void *x, const void *y)
{
	const struct report_account *a = x, *b = y;
	if (a->cpu_ns != b->cpu_ns)
		return a->cpu_ns < b->cpu_ns ? 1 : -1;
	return strcmp(a->account ? a->account : "", b->account ? b->account : "");
}

/* The accounts table: every account that ran in scope, target or control. */
static int build_accounts(struct analysis *a)
{
	a->accounts = calloc(a->accsum.n ? a->accsum.n : 1, sizeof(*a->accounts));
	if (!a->accounts)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = 0; i < a->accsum.n; i++) {
		const struct analysis_sum *c = &a->accsum.v[i];
		if (!c->cpu_ns && !c->steal_ns)
			continue;
		const char *acc = name(a, c->name);
		a->accounts[n++] = (struct report_account){ .account = acc, .cpu_ns = c->cpu_ns,
							    .steal_ns = c->steal_ns,
							    .control = is_control(a, acc) };
	}
	qsort(a->accounts, n, sizeof(*a->accounts), cmp_account);
	a->x.accounts = a->accounts;
	a->x.naccounts = n;
	return 0;
}

/* The engine's series over time, copied: the report may outlive it. */
static int build_series(struct analysis *a, const struct engine *e)
{
	const struct eng_series *s = engine__series(e);
	size_t n = (size_t)s->nbuckets * s->ncpus;
	a->series = (struct report_series){ .start_ns = s->origin_ns, .bucket_ns = s->bucket_ns,
					    .nbuckets = s->nbuckets, .ncpus = s->ncpus };
	if (!n)
		return 0;
	a->series.run_ns = malloc(n * sizeof(uint64_t));
	a->series.steal_ns = malloc(n * sizeof(uint64_t));
	if (!a->series.run_ns || !a->series.steal_ns)
		return -ENOMEM;
	memcpy(a->series.run_ns, s->run_ns, n * sizeof(uint64_t));
	memcpy(a->series.steal_ns, s->steal_ns, n * sizeof(uint64_t));
	a->x.series = &a->series;
	return 0;
}

/* Rows keyed by cgroup carry its throttled time by its own counters;
 * rows of whole threads (wait_rows) that of the one cgroup their threads
 * were in, and the CPU they were denied: steal and run-queue wait (which
 * holds the time a quota kept them off: docs/cgroups.md). */
static void row_throttled(void *ctx, struct table_row *r)
{
	const struct analysis *a = ctx;
	const struct table *t = a->table;
	const char *g = t->cgroup_figures ? r->cgroup : r->in_cgroup;
	uint32_t id = g && a->cg ? strtab__find(a->names, g, strlen(g)) : HINDEX_NONE;
	struct cg_counters ch;
	if (id != HINDEX_NONE && cgstats__change(a->cg, id, &ch) && ch.throttled_known) {
		r->throttled_known = true;
		r->throttled_ns = ch.throttled_ns;
		r->nr_throttled = ch.nr_throttled;
	}
	r->denied_known = t->denied_figures && a->x.steal_known && r->wait_known;
	r->denied_ns = r->denied_known ? r->steal_ns + r->wait_ns : 0;
}

static void row_throttling(struct analysis *a)
{
	struct table *t = a->table;
	t->cgroup_figures = row_keys__has(&a->o.keys, RF_CGROUP);
	t->denied_figures = wait_rows(a);
	if (t->cgroup_figures || t->denied_figures)
		table__finish_rows(t, row_throttled, a);
}

/* How steal was found, for the report's header (docs/record.md). */
static void describe_steal(struct analysis *a, const struct engine *e,
			   const struct source_desc *s)
{
	const struct engine_config *c = engine__config(e);
	const struct engine_stats *st = engine__stats(e);
	struct report_extras *x = &a->x;
	x->steal_method = !s->steal_known ? "" : c->mode == STEAL_GIVEN ? "kernel-clock" :
			  c->mode == STEAL_GAPS || st->steal_from_gaps ? "sample-gaps" : "residual";
	/* read from the kernel's clock: its resolution is the source's to say
	 * (steal_source), none of the engine's making */
	x->steal_resolution_ns = !s->steal_known || c->mode == STEAL_GIVEN ? 0 :
				 *x->steal_method == 's' ? c->interval_ns : (uint64_t)st->noise_ns;
	x->kernel_accounting = c->mode == STEAL_STINTS ?
			       steal_accounting__name(st->accounting) : "";
	if (c->mode != STEAL_STINTS)
		snprintf(a->accounting_source, sizeof(a->accounting_source), "%s", "");
	else if (a->o.accounting_set && a->o.accounting != ACCT_JUDGE)
		snprintf(a->accounting_source, sizeof(a->accounting_source), "option");
	else if (st->accounting_judged && st->judge_kernel_ns)
		snprintf(a->accounting_source, sizeof(a->accounting_source),
			 "data: the residuals held %.3f s of the %.3f s of steal the kernel "
			 "counted", (double)st->judge_residual_ns / NSEC_PER_SEC,
			 (double)st->judge_kernel_ns / NSEC_PER_SEC);
	else if (st->accounting_judged)
		snprintf(a->accounting_source, sizeof(a->accounting_source),
			 "data: %" PRIu64 " of %" PRIu64 " stints with a sample gap held it",
			 st->judge_agreed, st->judge_gapped);
	else if (c->accounting != ACCT_JUDGE)
		snprintf(a->accounting_source, sizeof(a->accounting_source), "%s",
			 s->accounting_source ? s->accounting_source : "recording");
	else if (st->judge_gapped)
		snprintf(a->accounting_source, sizeof(a->accounting_source),
			 "data: %" PRIu64 " of %" PRIu64 " stints with a sample gap held it, "
			 "not clear: --kernel-accounting says it", st->judge_agreed,
			 st->judge_gapped);
	else
		snprintf(a->accounting_source, sizeof(a->accounting_source),
			 "data: no stint with a sample gap to judge by");
	x->accounting_source = a->accounting_source;
	x->steal_scaled = st->steal_scaled;
	x->steal_clock = s->steal_clock;
}

int analysis__build(struct analysis *a, const struct engine *e,
		    const struct source_desc *s)
{
	const struct engine_stats *st = engine__stats(e);
	a->totals.idle_samples = st->idle_samples;
	a->totals.idle_ns = st->idle_ns;
	const struct engine_config *c = engine__config(e);
	struct table_params p = {
		.method = c->method, .interval_ns = c->interval_ns, .measured_steal = true,
		.steal_known = s->steal_known, .inclusive = a->have_stacks,
		.attrs = row_keys__has(&a->o.keys, RF_PROCESS) ||
			 row_keys__has(&a->o.keys, RF_THREAD),
		.totals = a->totals, .streams = c->ncpus, .programs = (uint32_t)a->programs,
	};
	p.totals.labelled_steal_ns = p.totals.steal_ns;
	a->table = table__from_rows(&a->rows, &p);
	if (!a->table)
		return errno ? -errno : -ENOMEM;	/* or the row store's */
	a->table->origin_ns = s->start_ns;
	table__sort(a->table, &a->o.sort);
	percent_limit(a);
	snprintf(a->steal_source, sizeof(a->steal_source), "%s", s->steal_source);
	a->x = (struct report_extras){
		.host = s->host, .steal_source = a->steal_source,
		.scope = s->scope, .steal_known = s->steal_known,
		.duration_ns = s->duration_ns, .bias_ns = st->bias_ns,
		.bad_records = s->bad_records, .lossy_stints = st->lossy_stints,
		.late_events = st->late_events, .clock_samples = s->clock_samples,
		.missed_switches = st->missed_switches,
		.unmeasured_stints = st->unmeasured_stints,
		.unraised_stints = st->unraised_stints,
		.steal_over_runtime_ns = st->steal_over_runtime_ns,
		.stacks = a->o.stacks ? &a->stacks : NULL, .stack_frames = a->stack_frames,
		.names = a->names, .stream = a->o.stack_ctx,
		.folds = a->o.fold_stacks ? &a->folds : NULL,
	};
	describe_steal(a, e, s);
	row_throttling(a);	/* after a->x: its steal_known */
	int err = build_cpus(a, e, s);
	if (!err)
		err = build_cgroups(a);
	if (!err)
		err = build_accounts(a);
	if (!err)
		err = build_series(a, e);
	return err ? err : build_events(a, s);
}

void analysis__release(struct analysis *a)
{
	if (!a)
		return;
	table__free(a->table);
	rows__release(&a->rows);
	rows__release(&a->stacks);
	pending_stacks__release(&a->pending);
	rows__release(&a->staged);
	report_folds__release(&a->folds);
	free(a->incl);
	hindex__release(&a->incl_index);
	free(a->cgsum.v);
	hindex__release(&a->cgsum.index);
	free(a->accsum.v);
	hindex__release(&a->accsum.index);
	free(a->accounts);
	free(a->series.run_ns);
	free(a->series.steal_ns);
	free(a->cgroups);
	free(a->cpus);
	free(a->events);
	engine__free(a->engine);
	rec_source__free(a->src);
	memset(a, 0, sizeof(*a));
}
