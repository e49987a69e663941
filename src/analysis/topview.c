/* topview: see topview.h. */
#include "topview.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "../core/grow.h"
#include "../core/banned.h"

struct top_thread {
	uint32_t tid, pid;
	int64_t uid;
	uint32_t comm;			/* string id, or ENGINE_NONE */
	char *command;			/* its process's, or NULL */
	char program[64];
	uint64_t cpu_ns, steal_ns;	/* so far (v->shown: at the last refresh) */
	uint32_t account;		/* where most of its time went */
	/* while its figures are handed, function by function */
	uint64_t sum_cpu, sum_steal, best_ns;
	uint32_t best_account;
	bool gone, shown_gone;
	bool wait_seen;			/* its wait read at a refresh before */
};

struct top_program {
	uint64_t cpu_ns, steal_ns;	/* of gone processes */
};

int topview__init(struct topview *v, const struct strtab *names)
{
	memset(v, 0, sizeof(*v));
	v->names = names;
	v->cur = UINT32_MAX;
	hindex__init(&v->index);
	strtab__init(&v->prog_names);
	tracker__init(&v->shown);
	return 0;
}

void topview__release(struct topview *v)
{
	for (uint32_t i = 0; i < v->n; i++)
		free(v->t[i].command);
	free(v->t);
	free(v->progs);
	free(v->rows);
	hindex__release(&v->index);
	strtab__release(&v->prog_names);
	tracker__release(&v->shown);
	memset(v, 0, sizeof(*v));
}

static bool tid_eq(const void *ctx, uint32_t id)
{
	const struct { const struct topview *v; uint32_t tid; } *k = ctx;
	return k->v->t[id].tid == k->tid;
}

/* Who a thread is, to the tracker: its tid (an entry is reset, and its
 * last look forgotten, when the tid is given again). */
static struct track_key shown_key(uint32_t tid)
{
	return (struct track_key){ tid, 0, 0 };
}

/* Its run-queue wait's key: apart from its figures'. */
static struct track_key wait_key(uint32_t tid)
{
	return (struct track_key){ tid, 0, 1 };
}

static uint32_t find(const struct topview *v, uint32_t tid)
{
	struct { const struct topview *v; uint32_t tid; } k = { v, tid };
	return hindex__find(&v->index, hash_mix(tid), tid_eq, &k);
}

/* What t's process says of it now: its command line, user, program. */
static int describe(struct topview *v, struct top_thread *x, const struct engine *e,
		    const struct eng_thread *t)
{
	const struct eng_proc *p = engine__proc(e, t->proc);
	x->pid = p ? p->pid : t->tid;
	x->uid = p ? p->uid : -1;
	x->comm = t->comm;
	metrics_program_of(p, v->names, x->program, sizeof(x->program));
	const char *cmd = p ? p->command : NULL;
	if ((!cmd && !x->command) || (cmd && x->command && !strcmp(cmd, x->command)))
		return 0;
	free(x->command);
	x->command = cmd ? strdup(cmd) : NULL;
	return cmd && !x->command ? -ENOMEM : 0;
}

/* The entry of thread t, made or reset (its tid given again). */
static struct top_thread *entry(struct topview *v, const struct engine *e,
				const struct eng_thread *t)
{
	uint32_t id = find(v, t->tid);
	const struct eng_proc *p = engine__proc(e, t->proc);
	uint32_t pid = p ? p->pid : t->tid;
	if (id != HINDEX_NONE && (v->t[id].gone || v->t[id].pid != pid) && id != v->cur) {
		/* another thread of that tid: the one before is forgotten */
		free(v->t[id].command);
		v->t[id] = (struct top_thread){ .tid = t->tid };
		struct track_key k = shown_key(t->tid);
		tracker__forget(&v->shown, &k);
		k = wait_key(t->tid);
		tracker__forget(&v->shown, &k);
	}
	if (id == HINDEX_NONE) {
		if (grow_array((void **)&v->t, &v->cap, v->n, sizeof(*v->t), 256) ||
		    hindex__insert(&v->index, hash_mix(t->tid), v->n))
			return NULL;
		id = v->n++;
		v->t[id] = (struct top_thread){ .tid = t->tid, .account = ENGINE_NONE };
	}
	return &v->t[id];
}

/* The figures handed for v->cur are all in: they are its figures now. */
static void settle(struct topview *v)
{
	if (v->cur == UINT32_MAX)
		return;
	struct top_thread *x = &v->t[v->cur];
	x->cpu_ns = x->sum_cpu;
	x->steal_ns = x->sum_steal;
	x->account = x->best_account;
	v->cur = UINT32_MAX;
}

int topview__program(struct topview *v, const struct engine *e, const struct eng_thread *t,
		     const struct eng_figures *f, bool final)
{
	const struct eng_proc *p = engine__proc(e, t->proc);
	if (!engine__config(e)->scope_all && (!p || !p->in_scope))
		return 0;	/* top -p: not one of those processes or their children */
	if (v->cur != UINT32_MAX && v->t[v->cur].tid != t->tid)
		settle(v);
	if (v->cur == UINT32_MAX) {
		struct top_thread *x = entry(v, e, t);
		if (!x || describe(v, x, e, t))
			return -ENOMEM;
		x->sum_cpu = x->sum_steal = x->best_ns = 0;
		x->best_account = ENGINE_NONE;
		v->cur = (uint32_t)(x - v->t);
	}
	struct top_thread *x = &v->t[v->cur];
	x->sum_cpu += f->run_ns;
	x->sum_steal += f->steal_ns;
	if (f->run_ns > x->best_ns || x->best_account == ENGINE_NONE) {
		x->best_ns = f->run_ns;
		x->best_account = f->account;
	}
	(void)final;
	return 0;
}

int topview__thread_gone(struct topview *v, const struct engine *e, const struct eng_thread *t)
{
	(void)e;
	if (v->cur != UINT32_MAX && v->t[v->cur].tid == t->tid) {
		v->t[v->cur].gone = true;
		settle(v);
		return 0;
	}
	settle(v);
	uint32_t id = find(v, t->tid);	/* handed nothing: as it was */
	if (id != HINDEX_NONE)
		v->t[id].gone = true;
	return 0;
}

static int walk_program(void *ctx, const struct engine *e, const struct eng_thread *t,
			const struct eng_figures *f, bool final)
{
	return topview__program(ctx, e, t, f, final);
}

static int sink_gone(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	return topview__thread_gone(ctx, e, t);
}

struct engine_sink topview__sink(struct topview *v)
{
	return (struct engine_sink){ v, walk_program, NULL, sink_gone };
}

/* What gone processes of a program ran, by its name's id. */
static struct top_program *program_of(struct topview *v, const char *name)
{
	uint32_t id = strtab__intern(&v->prog_names, name, strlen(name));
	if (id == HINDEX_NONE)
		return NULL;
	while (v->nprogs <= id) {
		if (grow_array((void **)&v->progs, &v->progs_cap, v->nprogs, sizeof(*v->progs), 64))
			return NULL;
		v->progs[v->nprogs++] = (struct top_program){ 0 };
	}
	return &v->progs[id];
}

/* Threads shown gone whose process has gone too are forgotten; what they
 * ran stays with their program. */
static int forget_gone(struct topview *v, const struct engine *e)
{
	uint32_t kept = 0;
	for (uint32_t i = 0; i < v->n; i++) {
		struct top_thread *x = &v->t[i];
		if (x->shown_gone && !engine__find_proc(e, x->pid)) {
			struct top_program *p = program_of(v, x->program);
			if (!p)
				return -ENOMEM;
			p->cpu_ns += x->cpu_ns;
			p->steal_ns += x->steal_ns;
			struct track_key k = shown_key(x->tid);
			tracker__forget(&v->shown, &k);
			k = wait_key(x->tid);
			tracker__forget(&v->shown, &k);
			free(x->command);
			continue;
		}
		v->t[kept++] = *x;
	}
	v->n = kept;
	hindex__release(&v->index);
	hindex__init(&v->index);
	for (uint32_t i = 0; i < v->n; i++)
		if (hindex__insert(&v->index, hash_mix(v->t[i].tid), i))
			return -ENOMEM;
	return 0;
}

static const char *name_of(const struct topview *v, const struct top_thread *x,
			   enum top_mode mode)
{
	const char *comm = x->comm != ENGINE_NONE ? strtab__str(v->names, x->comm) : "?";
	if (mode == TOP_PROGRAMS)
		return x->program;
	return mode == TOP_THREADS || !x->command ? comm : x->command;
}

static bool row_eq(const void *ctx, uint32_t id)
{
	const struct { const struct topview *v; uint32_t key; } *k = ctx;
	return k->v->rows[id].key == k->key;
}

/* The row that sums x's figures: its own (threads), its pid's, its
 * program's (key: the pid, or the program's name id); made when new. */
static struct top_row *row_for(struct topview *v, struct hindex *idx, const struct top_thread *x,
			       enum top_mode mode, uint32_t key)
{
	struct { const struct topview *v; uint32_t key; } k = { v, key };
	uint32_t id = mode == TOP_THREADS ? HINDEX_NONE :
		      hindex__find(idx, hash_mix(key), row_eq, &k);
	if (id != HINDEX_NONE)
		return &v->rows[id];
	if (grow_array((void **)&v->rows, &v->rows_cap, v->nrows, sizeof(*v->rows), 256) ||
	    (mode != TOP_THREADS && hindex__insert(idx, hash_mix(key), v->nrows)))
		return NULL;
	struct top_row *r = &v->rows[v->nrows++];
	*r = (struct top_row){ .pid = mode == TOP_PROGRAMS ? 0 : x->pid,
			       .tid = mode == TOP_THREADS ? x->tid : 0, .uid = x->uid,
			       .name = name_of(v, x, mode), .key = key };
	return r;
}

static double pct(uint64_t ns, uint64_t interval_ns)
{
	return interval_ns ? 100.0 * (double)ns / (double)interval_ns : 0;
}

static uint64_t gain(int64_t d)
{
	return d > 0 ? (uint64_t)d : 0;
}

/* A live thread's wait since the refresh before into its row: from its
 * first read on (a thread seen first shows none yet); a thread that cannot
 * be read (gone, no schedstat) leaves its row's wait as it is. */
static int add_wait(struct topview *v, struct top_thread *x, struct top_row *r,
		    uint64_t interval_ns)
{
	uint64_t ns;
	bool seen = x->wait_seen;
	x->wait_seen = false;
	if (!v->read_wait || x->gone || v->read_wait(v->wait_ctx, x->pid, x->tid, &ns))
		return 0;
	x->wait_seen = true;
	struct track_key k = wait_key(x->tid);
	struct track_figs now = { (int64_t)ns, 0, 0 }, d;
	if (tracker__look(&v->shown, &k, &now, TRACK_COUNTER, &d))
		return -ENOMEM;
	if (seen) {
		r->wait_pct += pct(gain(d.cpu_ns), interval_ns);
		r->wait_known = true;
	}
	return 0;
}

/* Each thread into its row; a row shows the account of its member that
 * ran most. A thread gone is a row of its own once (threads), and stays
 * in its process's and program's time. */
static int add_threads(struct topview *v, struct hindex *idx, enum top_mode mode,
		       uint64_t interval_ns)
{
	for (uint32_t i = 0; i < v->n; i++) {
		struct top_thread *x = &v->t[i];
		if (x->shown_gone && mode == TOP_THREADS)
			continue;
		/* (a pid or tid may be UINT32_MAX: perf's -1, a task sampled
		 * past its exit; only a program's name id fails as NONE) */
		uint32_t key = mode == TOP_PROCESSES ? x->pid : mode == TOP_THREADS ? x->tid :
			       strtab__intern(&v->prog_names, x->program, strlen(x->program));
		struct top_row *r = mode == TOP_PROGRAMS && key == HINDEX_NONE ? NULL :
				    row_for(v, idx, x, mode, key);
		struct track_key k = shown_key(x->tid);
		struct track_figs now = { (int64_t)x->cpu_ns, (int64_t)x->steal_ns, 0 }, d;
		if (!r || tracker__look(&v->shown, &k, &now, TRACK_EXACT, &d))
			return -ENOMEM;
		r->threads += !x->gone;
		r->cpu_ns += x->cpu_ns;
		r->steal_ns += x->steal_ns;
		r->cpu_pct += pct(gain(d.cpu_ns), interval_ns);
		r->steal_pct += pct(gain(d.steal_ns), interval_ns);
		if (add_wait(v, x, r, interval_ns))
			return -ENOMEM;
		if (x->account != ENGINE_NONE && x->account != NO_DSO &&
		    (!r->account || x->cpu_ns > r->best_ns)) {
			r->best_ns = x->cpu_ns;
			r->account = strtab__str(v->names, x->account);
		}
		x->shown_gone = x->gone;
	}
	return 0;
}

/* Programs: what their gone processes ran too. */
static int add_departed(struct topview *v, struct hindex *idx)
{
	for (uint32_t id = 0; id < v->nprogs; id++) {
		const struct top_program *p = &v->progs[id];
		if (!p->cpu_ns && !p->steal_ns)
			continue;
		struct top_thread x = { .uid = -1, .comm = ENGINE_NONE };
		snprintf(x.program, sizeof(x.program), "%s", strtab__str(&v->prog_names, id));
		struct top_row *r = row_for(v, idx, &x, TOP_PROGRAMS, id);
		if (!r)
			return -ENOMEM;
		/* the pointer must outlive x: the name table's copy */
		r->name = strtab__str(&v->prog_names, id);
		r->cpu_ns += p->cpu_ns;
		r->steal_ns += p->steal_ns;
	}
	return 0;
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct top_row *x = a, *y = b;
	enum top_sort s = *(const enum top_sort *)ctx;
	double dx = 0, dy = 0;
	switch (s) {
	case TOP_SORT_CPU: dx = x->cpu_pct; dy = y->cpu_pct; break;
	case TOP_SORT_STEAL: dx = x->steal_pct; dy = y->steal_pct; break;
	case TOP_SORT_APPARENT:
		dx = (double)(x->cpu_ns + x->steal_ns);
		dy = (double)(y->cpu_ns + y->steal_ns);
		break;
	case TOP_SORT_TIME: dx = (double)x->cpu_ns; dy = (double)y->cpu_ns; break;
	case TOP_SORT_MEM: dx = (double)x->rss_kb; dy = (double)y->rss_kb; break;
	case TOP_SORT_PID:	/* ascending */
		return (x->pid > y->pid) - (x->pid < y->pid) ?: (x->tid > y->tid) - (x->tid < y->tid);
	case TOP_SORT_NAME:
	case TOP_SORT_COUNT:
		return strcmp(x->name, y->name);
	}
	if (dx != dy)
		return dx < dy ? 1 : -1;
	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns < y->cpu_ns ? 1 : -1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Rows whose name (or pid) does not hold filter go. */
static void keep_matching(struct topview *v, const char *filter)
{
	if (!filter || !*filter)
		return;
	uint32_t kept = 0;
	for (uint32_t i = 0; i < v->nrows; i++) {
		char pid[16];
		snprintf(pid, sizeof(pid), "%u", v->rows[i].pid);
		if (strstr(v->rows[i].name, filter) || (v->rows[i].pid && !strcmp(pid, filter)))
			v->rows[kept++] = v->rows[i];
	}
	v->nrows = kept;
}

int topview__refresh(struct topview *v, struct engine *e, enum top_mode mode,
		     uint64_t interval_ns, const char *filter, enum top_sort sort)
{
	settle(v);
	int err = forget_gone(v, e);
	struct engine_sink walk = { v, walk_program, NULL, NULL };
	if (!err)
		err = engine__walk(e, &walk);
	settle(v);
	v->nrows = 0;
	struct hindex idx;
	hindex__init(&idx);
	if (!err)
		err = add_threads(v, &idx, mode, interval_ns);
	if (!err && mode == TOP_PROGRAMS)
		err = add_departed(v, &idx);
	hindex__release(&idx);
	if (err)
		return err;
	keep_matching(v, filter);
	topview__sort(v, sort);
	return 0;
}

void topview__sort(struct topview *v, enum top_sort sort)
{
	if (v->nrows > 1)	/* none yet: rows may be NULL, which qsort_r refuses */
		qsort_r(v->rows, v->nrows, sizeof(*v->rows), cmp_rows, &sort);
}

static int cmp_pid_index(const void *a, const void *b, void *ctx)
{
	const struct top_row *rows = ctx;
	uint32_t x = rows[*(const uint32_t *)a].pid, y = rows[*(const uint32_t *)b].pid;
	return x < y ? -1 : x > y;
}

/* The index of the row of process pid among rows by_pid sorts, or
 * UINT32_MAX. */
static uint32_t row_of_pid(const struct top_row *rows, const uint32_t *by_pid, uint32_t n,
			   uint32_t pid)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (rows[by_pid[mid]].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && rows[by_pid[lo]].pid == pid ? by_pid[lo] : UINT32_MAX;
}

/* Rows from root down, depth first, appended to out (at *k), children in
 * the order of the rows (child and next: the lists). An explicit stack: a
 * deep chain of parents must not take the call stack; each row is pushed
 * once (from its one parent, or as a root), so n entries hold it. */
struct tree_scratch {
	uint32_t *by_pid, *child, *next, *stack, *depth;
	bool *done;
};

static void tree_walk(const struct top_row *rows, struct tree_scratch *s, uint32_t root,
		      struct top_row *out, uint32_t *k)
{
	uint32_t sp = 0;
	s->stack[sp++] = root;
	s->depth[root] = 0;
	while (sp) {
		uint32_t r = s->stack[--sp];
		if (s->done[r])
			continue;
		s->done[r] = true;
		out[*k] = rows[r];
		out[*k].depth = s->depth[r];
		(*k)++;
		uint32_t m = 0;
		for (uint32_t c = s->child[r]; c != UINT32_MAX; c = s->next[c])
			m++;
		/* pushed so that the first child is popped first */
		uint32_t j = 0;
		for (uint32_t c = s->child[r]; c != UINT32_MAX; c = s->next[c], j++) {
			s->stack[sp + m - 1 - j] = c;
			s->depth[c] = s->depth[r] + 1;
		}
		sp += m;
	}
}

/* Each row's children, as lists in the rows' order; roots: -1 parent. */
static void tree_lists(const struct top_row *rows, uint32_t n, struct tree_scratch *s,
		       uint32_t *parent)
{
	for (uint32_t i = 0; i < n; i++) {
		s->by_pid[i] = i;
		s->child[i] = s->next[i] = UINT32_MAX;
		s->done[i] = false;
	}
	qsort_r(s->by_pid, n, sizeof(*s->by_pid), cmp_pid_index, (void *)rows);
	for (uint32_t i = n; i-- > 0;) {
		uint32_t p = rows[i].ppid && rows[i].ppid != rows[i].pid ?
			     row_of_pid(rows, s->by_pid, n, rows[i].ppid) : UINT32_MAX;
		parent[i] = p;
		if (p != UINT32_MAX) {
			s->next[i] = s->child[p];
			s->child[p] = i;
		}
	}
}

int topview__tree(struct topview *v)
{
	uint32_t n = v->nrows;
	if (n < 2) {
		if (n)
			v->rows[0].depth = 0;
		return 0;
	}
	struct tree_scratch s;
	uint32_t *block = malloc((size_t)n * 6 * sizeof(uint32_t));
	bool *done = malloc(n * sizeof(bool));
	struct top_row *out = malloc(n * sizeof(*out));
	int err = -ENOMEM;
	if (!block || !done || !out)
		goto out_free;
	s = (struct tree_scratch){ block, block + n, block + 2 * n, block + 3 * n,
				   block + 4 * n, done };
	uint32_t *parent = block + 5 * n, k = 0;
	tree_lists(v->rows, n, &s, parent);
	for (uint32_t i = 0; i < n; i++)	/* the roots, in the sort's order */
		if (parent[i] == UINT32_MAX)
			tree_walk(v->rows, &s, i, out, &k);
	for (uint32_t i = 0; i < n; i++)	/* a loop of parents: broken here */
		if (!s.done[i])
			tree_walk(v->rows, &s, i, out, &k);
	memcpy(v->rows, out, n * sizeof(*out));
	err = 0;
out_free:
	free(out);
	free(done);
	free(block);
	return err;
}
