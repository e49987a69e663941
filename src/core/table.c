/* table: rows after the method's arithmetic, sorted. See table.h. */
#include "table.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "grow.h"
#include "banned.h"

static const char *const sort_names[SORT_COUNT] = {
	[SORT_CPU] = "cpu", [SORT_STEAL] = "steal", [SORT_STEAL_SHARE] = "steal-share",
	[SORT_APPARENT] = "apparent", [SORT_SAMPLES] = "samples",
};

const char *sort_column__name(enum sort_column c)
{
	return c < SORT_COUNT ? sort_names[c] : "?";
}

int sort_spec__parse(struct sort_spec *s, const char *list, size_t *bad)
{
	memset(s, 0, sizeof(*s));
	const char *p = list;
	for (;;) {
		size_t len = strcspn(p, ",");
		int found = -1;
		for (int i = 0; i < SORT_COUNT; i++)
			if (strlen(sort_names[i]) == len && !memcmp(sort_names[i], p, len))
				found = i;
		*bad = (size_t)(p - list);
		if (found < 0 || s->n == SORT_COUNT)
			return -EINVAL;
		s->v[s->n++] = (uint8_t)found;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

double table_row__steal_share(const struct table_row *r)
{
	return r->apparent_ns ? (double)r->steal_ns / (double)r->apparent_ns : 0;
}

/* Row figures from the sums of its programs: run_ns is in cpu_ns and the
 * labelled steal in steal_ns on entry. */
static void apply_method(struct table_row *r, enum steal_method method)
{
	uint64_t run_ns = r->cpu_ns, labelled_ns = r->steal_ns;
	r->apparent_ns = run_ns + labelled_ns;
	if (method == METHOD_RATIO && r->samples + r->steal_samples) {
		/* steal = steal_samples / all samples of the profile, times the
		 * profile's apparent time, rounded down (seed 001, FIG. 12). */
		unsigned __int128 x = (unsigned __int128)r->steal_samples *
				      r->apparent_ns;
		r->steal_ns = (uint64_t)(x / (r->samples + r->steal_samples));
	}
	r->cpu_ns = r->apparent_ns - r->steal_ns;
	r->corrected_ns = r->apparent_ns - r->steal_ns;
}

static int cmp_str(const char *a, const char *b)
{
	if (!a || !b)
		return !a - !b;
	return strcmp(a, b);
}

static int cmp_num(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/*
 * What table__row reads stored rows into. Writers ask for rows in their
 * order, which is not the order they were stored in (threads end in one
 * order and are shown largest first): asked one at a time, a report of
 * 20 000 threads took a tenth of its time in reads of 300 bytes. So the
 * rows from the one asked for on are read as a window of up to
 * TABLE_WINDOW bytes, in the store's order, a row close after another
 * (TABLE_GAP) read in the same read, the bytes between let go; a window
 * read from all over the file is then stored again whole, so that a
 * second pass (text's) reads it back in a few reads.
 */
#define TABLE_WINDOW (512u * 1024)
#define TABLE_GAP (4u * 1024)
#define TABLE_SPAN (64u * 1024)		/* the most one read takes */
#define TABLE_WINDOW_REFS 1024u		/* the most rows a window holds */

/* Rows [from, to) of the table's order, row from + k at win + idx's
 * k-th place, its ref refs[k]; err: loading it failed (-errno). */
struct table_window {
	size_t from, to;
	struct row_ref *refs;
	char *win, *span;
	size_t win_cap, span_cap;
	/* the window's rows' places in win, then their order by offset */
	char *idx;
	size_t idx_cap;
	int err;
};

/*
 * The last pass's windows read ahead (table__last_pass): a writer turns
 * each row to text while the next window is read, on a thread of the
 * reader's: the reads of a JSON report of 35 000 threads' rows were a
 * fifth of the time after the recording was read, when one CPU of two
 * was idle. The store is the thread's alone while it loads (a last pass
 * writes nothing to it); the window it loaded is the next one asked for
 * or, asked out of order, is let go.
 */
enum ahead_state { AHEAD_IDLE, AHEAD_ASKED, AHEAD_LOADED };

struct table_ahead {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool running, stop;
	enum ahead_state state;	/* under mu */
	size_t from;		/* the row its window begins at */
	struct table_window w;
};

struct table_reader {
	struct table_row row;
	char *buf;		/* the row asked for last, unpacked */
	size_t cap;
	int error;
	void (*finish)(void *ctx, struct table_row *r);
	void *finish_ctx;
	struct table_window w;	/* the rows read last */
	/* the order the refs are in (sort_table's): sorted by it again, they
	 * stay as they are, a pass over the store saved */
	struct sort_spec by;
	bool last_pass;		/* table__last_pass: no window stored again */
	bool read_ahead;	/* and the next window read on a thread */
	struct table_ahead ahead;
};

static void forget_windows(struct table_reader *rd);
static void stop_ahead(struct table_reader *rd);
static void end_last_pass(struct table_reader *rd);
static void window_free(struct table_window *w);

static const struct table *sorting;	/* qsort has no context argument */
static const struct sort_spec *sorting_by;

/* Two rows by one key's value (keys.h). */
static int cmp_field(const struct table_row *a, const struct table_row *b,
		     enum row_field f)
{
	const struct key_entry *e = key_entry(f);
	if (e->text)
		return cmp_str(e->text(a), e->text(b));
	return e->number ? cmp_num(e->number(a), e->number(b)) : 0;
}

/* Rows in the order of their key's fields, each with the keys shown with
 * it (a thread's pid first, a function's file after). */
static int cmp_key(const struct table_row *a, const struct table_row *b)
{
	const struct row_keys *k = &sorting->keys;
	int c = 0;
	for (uint8_t i = 0; i < k->n && !c; i++) {
		const struct key_entry *e = key_entry(k->v[i]);
		if (e->before != RF_COUNT)
			c = cmp_field(a, b, e->before);
		c = c ? c : cmp_field(a, b, k->v[i]);
		if (e->after != RF_COUNT)
			c = c ? c : cmp_field(a, b, e->after);
	}
	return c;
}

/* A column's value, larger first. */
static int cmp_column(const struct table_row *a, const struct table_row *b,
		      enum sort_column c)
{
	switch (c) {
	case SORT_CPU: return cmp_num((int64_t)b->cpu_ns, (int64_t)a->cpu_ns);
	case SORT_STEAL: return cmp_num((int64_t)b->steal_ns, (int64_t)a->steal_ns);
	case SORT_SAMPLES: return cmp_num((int64_t)b->samples, (int64_t)a->samples);
	case SORT_APPARENT: return cmp_num((int64_t)b->apparent_ns, (int64_t)a->apparent_ns);
	case SORT_STEAL_SHARE: {
		double x = table_row__steal_share(a), y = table_row__steal_share(b);
		return (x < y) - (x > y);
	}
	default: return 0;
	}
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct table_row *a = pa, *b = pb;
	for (uint8_t i = 0; i < sorting_by->n; i++) {
		int c = cmp_column(a, b, (enum sort_column)sorting_by->v[i]);
		if (c)
			return c;
	}
	return cmp_key(a, b);
}

/* A stored row as much as sorting reads of it (its keys are numbers:
 * rows__can_store), into a row whose other fields stay 0. */
static void ref_row(struct table_row *o, const struct row_ref *f)
{
	o->pid = f->pid;
	o->tid = f->tid;
	o->start_ns = f->start_ns;
	o->samples = f->samples;
	o->steal_samples = f->steal_samples;
	o->cpu_ns = f->cpu_ns;
	o->steal_ns = f->steal_ns;
	o->apparent_ns = f->cpu_ns + f->steal_ns;
}

/* Refs by the table's order (sorting, sorting_by), through rows of
 * their fields. */
static int cmp_refs(const struct row_ref *x, const struct row_ref *y, void *ctx)
{
	/* the first column straight from the refs where it is one of their
	 * sums: rows seldom tie there, and making two rows of each pair was
	 * most of a sort of 35 000 threads' rows */
	int c = 0;
	switch (sorting_by->n ? (enum sort_column)sorting_by->v[0] : SORT_COUNT) {
	case SORT_APPARENT:
		c = cmp_num((int64_t)(y->cpu_ns + y->steal_ns), (int64_t)(x->cpu_ns + x->steal_ns));
		break;
	case SORT_CPU: c = cmp_num((int64_t)y->cpu_ns, (int64_t)x->cpu_ns); break;
	case SORT_STEAL: c = cmp_num((int64_t)y->steal_ns, (int64_t)x->steal_ns); break;
	case SORT_SAMPLES: c = cmp_num((int64_t)y->samples, (int64_t)x->samples); break;
	default: break;
	}
	if (c)
		return c;
	struct table_row *two = ctx;	/* zeros but for what ref_row sets */
	ref_row(&two[0], x);
	ref_row(&two[1], y);
	return cmp_rows(&two[0], &two[1]);
}

/* As cmp_refs, ties in the order the rows were made. */
static int cmp_refs_made(const struct row_ref *x, const struct row_ref *y, void *ctx)
{
	int c = cmp_refs(x, y, ctx);
	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* The table in the order s (NULL: the default) gives, ties as they are,
 * or (stored rows, made) in the order the rows were made. */
static void sort_table(struct table *t, const struct sort_spec *s, bool made)
{
	static const struct sort_spec apparent = { { SORT_APPARENT }, 1 };
	sorting = t;
	sorting_by = s && s->n ? s : &apparent;
	if (t->stored && !made && t->reader->by.n == sorting_by->n &&
	    !memcmp(t->reader->by.v, sorting_by->v, sorting_by->n))
		return;	/* a stable sort by the order they are in */
	if (t->nrows && t->stored) {
		end_last_pass(t->reader);	/* the store is sorted in */
		struct table_row two[2];
		memset(two, 0, sizeof(two));
		int err = ref_list__sort(&t->refs, t->src.store, t->src.runs.fanin,
					 made ? cmp_refs_made : cmp_refs, two);
		if (err && !t->reader->error)
			t->reader->error = err;
		if (!err)
			t->reader->by = *sorting_by;
		forget_windows(t->reader);	/* rows read before: elsewhere now */
	} else if (t->nrows) {
		qsort(t->rows, t->nrows, sizeof(*t->rows), cmp_rows);
	}
}

void table__sort(struct table *t, const struct sort_spec *s)
{
	sort_table(t, s, false);
}

/* A kept row as a table row: ids to strings, attributes where shown. */
static struct table_row table_row(const struct table *t, const struct row *w)
{
	const struct rows *r = &t->src;
	struct table_row o = {
		.vm = rows__str(r, w->vm), .comm = rows__str(r, w->comm),
		.command = rows__str(r, w->command),
		.executable = rows__str(r, w->executable), .dso = rows__str(r, w->dso),
		.function = rows__str(r, w->function), .account = rows__str(r, w->account),
		.cgroup = rows__str(r, w->cgroup), .pid = w->pid, .tid = w->tid,
		.start_ns = w->start_ns,
		.uid = w->uid, .cpu = w->cpu, .samples = w->f.samples,
		.steal_samples = w->f.steal_samples, .cpu_ns = w->f.cpu_ns,
		.steal_ns = w->f.steal_ns, .control_ns = w->f.control_ns,
		.inclusive_ns = w->f.inclusive_ns,
		.wait_known = w->f.wait_threads > 0, .wait_ns = w->f.wait_ns,
		.in_cgroup = rows__str(r, w->attr_cgroup),
	};
	for (int i = 0; i < ROW_DERIVED; i++)
		o.derived[i] = rows__str(r, w->derived[i]);
	if (t->attrs && !row_keys__has(&t->keys, RF_COMMAND))
		o.command = rows__str(r, w->attr_command);
	if (t->attrs && !row_keys__has(&t->keys, RF_COMM))
		o.comm = rows__str(r, w->attr_comm);
	return o;
}

/*
 * The kept rows made the table's rows in their own memory, last first:
 * a table row is the larger, so table row i begins at or past the end
 * of kept row i - 1, and row i is read before table row i is written.
 * Kept and table rows side by side were a report's peak when its rows
 * are many (30 000 threads: 4.7 and 6.7 MB). Returns the steal the
 * rows were given, or -ENOMEM.
 */
_Static_assert(sizeof(struct table_row) >= sizeof(struct row), "rows made in place");

static int rows_to_table(struct table *t, enum steal_method arith, uint64_t *attributed)
{
	size_t n = t->src.n, need = (n ? n : 1) * sizeof(struct table_row);
	char *mem = (char *)t->src.v;
	if (need != (size_t)t->src.cap * sizeof(struct row)) {
		mem = realloc(t->src.v, need);
		if (!mem)
			return -ENOMEM;
	}
	t->src.v = NULL;
	t->src.cap = 0;
	*attributed = 0;
	for (size_t i = n; i-- > 0;) {
		struct row w;
		memcpy(&w, mem + i * sizeof(struct row), sizeof(w));
		struct table_row o = table_row(t, &w);
		apply_method(&o, arith);
		*attributed += o.steal_ns;
		memcpy(mem + i * sizeof(struct table_row), &o, sizeof(o));
	}
	t->rows = (struct table_row *)(void *)mem;
	t->nrows = n;
	return 0;
}

/* A row's task: its ids and its start (mark_reused sorts these, not the
 * rows, whose order the sort after keeps). */
struct task_id {
	uint32_t pid, tid;
	uint64_t start_ns;
};

static int cmp_task(const void *pa, const void *pb)
{
	const struct task_id *a = pa, *b = pb;
	int c = cmp_num(a->pid, b->pid);
	c = c ? c : cmp_num(a->tid, b->tid);
	return c ? c : cmp_num((int64_t)a->start_ns, (int64_t)b->start_ns);
}

/* Whether a and b, in their tasks' order, are two tasks of one id
 * (tasks that had exited show -1: not one task). */
static bool id_again(const struct task_id *a, const struct task_id *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->start_ns != b->start_ns &&
	       a->pid < TABLE_ID_EXITED && a->tid < TABLE_ID_EXITED;
}

/* The stored rows as they come out of the runs in their tasks' order:
 * rows of one key (a thread seen again after it had gone) summed, then
 * each ref's figures made the table's by the method, and written. */
struct combine {
	struct table *t;
	struct rows *r;
	enum steal_method arith;
	struct ref_writer out;
	struct row_ref pending;		/* the last task's, while more may come */
	bool have;
	bool written;
	struct task_id last;		/* of the last written */
	uint64_t attributed;
};

static int combine_done(struct combine *c)
{
	struct row_ref *f = &c->pending;
	struct table_row o = { .samples = f->samples, .steal_samples = f->steal_samples,
			       .cpu_ns = f->cpu_ns, .steal_ns = f->steal_ns };
	apply_method(&o, c->arith);
	f->cpu_ns = o.cpu_ns;
	f->steal_ns = o.steal_ns;
	c->attributed += o.steal_ns;
	struct task_id id = { f->pid, f->tid, f->start_ns };
	if (c->written && id_again(&c->last, &id))
		c->t->reused = true;
	c->last = id;
	c->written = true;
	return ref_writer__put(&c->out, f);
}

static int combine(void *ctx, const struct row_ref *ref)
{
	struct combine *c = ctx;
	if (c->have && !refs__cmp_task(&c->pending, ref, NULL))
		return rows__ref_merge(c->r, &c->pending, ref);
	int err = c->have ? combine_done(c) : 0;
	c->pending = *ref;
	c->have = true;
	return err;
}

/*
 * The stored rows made the table's: the rows still in memory stored too,
 * the runs of refs merged in their tasks' order (noting ids given again:
 * table->reused) and combined, into a list in the store. Returns the
 * steal the rows were given, or -errno.
 */
static int stored_to_table(struct table *t, enum steal_method arith, uint64_t *attributed)
{
	struct rows *r = &t->src;
	int err = rows__retire_all(r);
	if (err)
		return err;
	t->reader = calloc(1, sizeof(*t->reader));
	if (!t->reader)
		return -ENOMEM;
	struct combine c = { .t = t, .r = r, .arith = arith };
	ref_writer__init(&c.out, r->store, ref_runs__chunk(&r->runs));
	err = ref_runs__merge(&r->runs, r->store, refs__cmp_task, NULL, combine, &c);
	if (!err && c.have)
		err = combine_done(&c);
	int end = ref_writer__end(&c.out, &t->refs);
	if ((err = err ? err : end))
		return err;
	t->stored = true;
	t->nrows = t->refs.n;
	*attributed = c.attributed;
	t->arith = arith;
	return 0;
}

/*
 * Whether a task's id is on rows of two tasks: the kernel gives a pid
 * again once it has gone round (pid_max, 32768 by default), so a
 * recording of many short processes has the same pid for several. Each
 * is a row of its own (rows.c keys by start too); here RF_START becomes
 * a key of the table, after the task's id, so that every writer shows
 * which is which and rows sort by it. Without an id given again, the
 * table is as it was: the rows are left in the order they came (their
 * tasks are sorted here, apart), for the sort after. 0 or -ENOMEM.
 */
static int mark_reused(struct table *t)
{
	struct row_keys *k = &t->keys;
	enum row_field task = row_keys__has(k, RF_THREAD) ? RF_THREAD : RF_PROCESS;
	if (!row_keys__has(k, task) || t->nrows < 2)
		return 0;
	if (!t->stored) {	/* (stored_to_table saw them in their tasks' order) */
		struct task_id *v = malloc(t->nrows * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < t->nrows; i++)
			v[i] = (struct task_id){ t->rows[i].pid, t->rows[i].tid,
						 t->rows[i].start_ns };
		qsort(v, t->nrows, sizeof(*v), cmp_task);
		for (size_t i = 1; i < t->nrows && !t->reused; i++)
			t->reused = id_again(&v[i - 1], &v[i]);
		free(v);
	}
	if (!t->reused)
		return 0;
	uint8_t at = 0;
	while (k->v[at] != task)
		at++;
	memmove(&k->v[at + 2], &k->v[at + 1], (size_t)(k->n - at - 1));
	k->v[at + 1] = RF_START;
	k->n++;
	k->mask |= RF_BIT(RF_START);
	return 0;
}

struct table *table__from_rows(struct rows *r, const struct table_params *p)
{
	struct table *t = calloc(1, sizeof(*t));
	if (!t) {
		rows__release(r);
		errno = ENOMEM;
		return NULL;
	}
	t->method = p->method;
	t->keys = r->keys;
	row_keys__format(&t->keys, t->by, sizeof(t->by));
	t->timestamps = p->timestamps;
	t->inclusive = p->inclusive && row_keys__has(&t->keys, RF_FUNCTION);
	t->steal_known = p->steal_known;
	t->attrs = p->attrs;
	t->interval_ns = p->interval_ns;
	t->src = *r;
	memset(r, 0, sizeof(*r));
	/* only the strings are read from here on */
	hindex__release(&t->src.index);
	uint64_t attributed;
	enum steal_method arith = p->measured_steal ? METHOD_PRECEDING : p->method;
	int err = t->src.store ? stored_to_table(t, arith, &attributed) :
				 rows_to_table(t, arith, &attributed);
	if (err || (err = mark_reused(t))) {
		table__free(t);
		errno = -err;
		return NULL;
	}
	/* stored: from their tasks' order (mark_reused's) */
	sort_table(t, NULL, t->stored);
	const struct attrib_totals *at = &p->totals;
	t->totals = (struct table_totals){
		.samples = at->samples, .steal_samples = at->steal_samples,
		.idle_samples = at->idle_samples, .run_ns = at->run_ns,
		.steal_ns = at->steal_ns, .idle_ns = at->idle_ns,
		.attributed_steal_ns = attributed,
		.unattributed_steal_ns = (int64_t)at->steal_ns - (int64_t)attributed,
		.streams = p->streams, .programs = p->programs,
	};
	return t;
}

struct table *table__new(const struct attributor *a, const struct row_keys *keys)
{
	struct rows r;
	rows__init(&r, keys);
	for (uint32_t i = 0; i < a->nprogs; i++) {
		const struct program *p = &a->progs[i];
		struct row_key k = {
			.vm = strtab__str(&a->strings, p->vm),
			.function = strtab__str(&a->strings, p->function),
			.pid = p->pid, .tid = p->tid, .uid = ROW_NO_UID, .cpu = ROW_NO_CPU,
		};
		struct row_figures f = { .samples = p->samples,
					 .steal_samples = p->steal_samples,
					 .cpu_ns = p->run_ns, .steal_ns = p->steal_ns };
		if (rows__add(&r, &k, NULL, &f)) {
			rows__release(&r);
			errno = ENOMEM;
			return NULL;
		}
	}
	struct table_params tp = {
		.method = a->method, .timestamps = a->timestamps,
		.interval_ns = a->interval_ns, .steal_known = true, .totals = a->totals,
		.streams = a->nstreams, .programs = a->nprogs,
	};
	return table__from_rows(&r, &tp);
}

struct table *table__new_keys(const struct attributor *a, const char *keys)
{
	struct row_keys k;
	size_t bad;
	if (row_keys__parse(&k, keys, &bad)) {
		errno = EINVAL;
		return NULL;
	}
	return table__new(a, &k);
}

void table__free(struct table *t)
{
	if (!t)
		return;
	if (t->reader)
		stop_ahead(t->reader);	/* it reads the refs and the store */
	rows__release(&t->src);
	free(t->rows);
	ref_list__free(&t->refs);
	if (t->reader) {
		free(t->reader->buf);
		window_free(&t->reader->w);
		window_free(&t->reader->ahead.w);
	}
	free(t->reader);
	free(t);
}

static int cmp_by_offset(const void *pa, const void *pb, void *ctx)
{
	const struct row_ref *refs = ctx;
	uint64_t a = refs[*(const uint32_t *)pa].off;
	uint64_t b = refs[*(const uint32_t *)pb].off;
	return (a > b) - (a < b);
}

/* The window from row i into w: its rows' bytes read in the store's
 * order (stored again after, unless last_pass). */
static int load_window(const struct table *t, struct table_window *w, size_t i, bool last_pass)
{
	const struct row_store *st = t->src.store;
	size_t most = t->nrows - i < TABLE_WINDOW_REFS ? t->nrows - i : TABLE_WINDOW_REFS;
	w->from = w->to = 0;
	if (!w->refs && !(w->refs = malloc(TABLE_WINDOW_REFS * sizeof(*w->refs))))
		return -ENOMEM;
	int err = ref_list__get(st, &t->refs, i, most, w->refs);
	if (err)
		return err;
	struct row_ref *refs = w->refs;
	size_t n = 0, bytes = 0;
	while (n < most && (!n || bytes + refs[n].len <= TABLE_WINDOW))
		bytes += refs[n++].len;
	if (grow_bytes(&w->win, &w->win_cap, bytes, 4096) ||
	    grow_bytes(&w->idx, &w->idx_cap, 2 * n * sizeof(uint32_t), 4096))
		return -ENOMEM;
	uint32_t *at = (uint32_t *)(void *)w->idx, *order = at + n;
	w->from = w->to = i;
	for (size_t k = 0, pos = 0; k < n; pos += refs[k++].len) {
		at[k] = (uint32_t)pos;
		order[k] = (uint32_t)k;
	}
	qsort_r(order, n, sizeof(*order), cmp_by_offset, (void *)refs);
	size_t reads = 0;
	for (size_t a = 0; a < n; reads++) {
		/* rows a..b-1 in one read, from the first's offset */
		const struct row_ref *first = &refs[order[a]];
		uint64_t end = first->off + first->len;
		size_t b = a + 1;
		while (b < n) {
			const struct row_ref *r = &refs[order[b]];
			if (r->off > end + TABLE_GAP || r->off + r->len - first->off > TABLE_SPAN)
				break;
			end = r->off + r->len;
			b++;
		}
		size_t len = (size_t)(end - first->off);
		if (grow_bytes(&w->span, &w->span_cap, len, 4096))
			return -ENOMEM;
		if ((err = st->get(st->ctx, first->off, w->span, len)))
			return err;
		for (; a < b; a++) {
			const struct row_ref *r = &refs[order[a]];
			memcpy(w->win + at[order[a]], w->span + (r->off - first->off), r->len);
		}
	}
	w->to = i + n;
	/* rows read from all over the file: stored again, one after another
	 * in the table's order, so that a pass after (text's second, a keep's)
	 * reads them in a few long reads (where the store cannot, they stay
	 * where they were: both copies are whole) */
	uint64_t off;
	if (!last_pass && st->set && reads > bytes / TABLE_SPAN + 1 &&
	    !st->put(st->ctx, w->win, bytes, &off)) {
		for (size_t k = 0; k < n; k++)
			refs[k].off = off + at[k];
		return ref_list__set(st, &t->refs, i, n, refs);
	}
	return 0;
}

static void window_free(struct table_window *w)
{
	free(w->refs);
	free(w->win);
	free(w->span);
	free(w->idx);
	memset(w, 0, sizeof(*w));
}

static void swap_windows(struct table_window *a, struct table_window *b)
{
	struct table_window c = *a;
	*a = *b;
	*b = c;
}

/* The reading thread: each window asked for, loaded. */
static void *reading_ahead(void *arg)
{
	const struct table *t = arg;
	struct table_ahead *ah = &t->reader->ahead;
	pthread_mutex_lock(&ah->mu);
	for (;;) {
		while (ah->state != AHEAD_ASKED && !ah->stop)
			pthread_cond_wait(&ah->cv, &ah->mu);
		if (ah->stop)
			break;
		size_t from = ah->from;
		pthread_mutex_unlock(&ah->mu);
		int err = load_window(t, &ah->w, from, true);
		pthread_mutex_lock(&ah->mu);
		ah->w.err = err;
		ah->state = AHEAD_LOADED;
		pthread_cond_broadcast(&ah->cv);
	}
	pthread_mutex_unlock(&ah->mu);
	return NULL;
}

/* The window from row `from` asked for, the thread made the first time
 * (none can be made: not read ahead). */
static void ask_ahead(const struct table *t, size_t from)
{
	struct table_ahead *ah = &t->reader->ahead;
	if (!ah->running) {
		if (pthread_mutex_init(&ah->mu, NULL))
			return;
		if (pthread_cond_init(&ah->cv, NULL)) {
			pthread_mutex_destroy(&ah->mu);
			return;
		}
		ah->state = AHEAD_IDLE;
		ah->stop = false;
		if (pthread_create(&ah->thread, NULL, reading_ahead, (void *)t)) {
			pthread_cond_destroy(&ah->cv);
			pthread_mutex_destroy(&ah->mu);
			return;
		}
		ah->running = true;
	}
	pthread_mutex_lock(&ah->mu);
	ah->from = from;
	ah->state = AHEAD_ASKED;
	pthread_cond_broadcast(&ah->cv);
	pthread_mutex_unlock(&ah->mu);
}

static void stop_ahead(struct table_reader *rd)
{
	struct table_ahead *ah = &rd->ahead;
	if (!ah->running)
		return;
	pthread_mutex_lock(&ah->mu);
	ah->stop = true;
	pthread_cond_broadcast(&ah->cv);
	pthread_mutex_unlock(&ah->mu);
	pthread_join(ah->thread, NULL);
	pthread_cond_destroy(&ah->cv);
	pthread_mutex_destroy(&ah->mu);
	ah->running = false;
}

/* The thread's window, once loaded, let go (the thread idle after):
 * whether it was the one from row i. */
static bool ahead_held(struct table_ahead *ah, size_t i)
{
	if (!ah->running)
		return false;
	pthread_mutex_lock(&ah->mu);
	while (ah->state == AHEAD_ASKED)
		pthread_cond_wait(&ah->cv, &ah->mu);
	bool held = ah->state == AHEAD_LOADED && ah->from == i;
	ah->state = AHEAD_IDLE;
	pthread_mutex_unlock(&ah->mu);
	return held;
}

/* No window holds rows any more (their order changed). */
static void forget_windows(struct table_reader *rd)
{
	(void)ahead_held(&rd->ahead, SIZE_MAX);
	rd->w.from = rd->w.to = 0;
}

/* A last pass over, or given up for another (a sort, a keep): the store
 * the caller's alone again, windows stored again for a pass after. */
static void end_last_pass(struct table_reader *rd)
{
	stop_ahead(rd);
	rd->read_ahead = rd->last_pass = false;
}

/* The window holding row i made the reader's: the one read ahead when it
 * is that one (its buffers swapped in: the thread idle), else loaded
 * here; the next asked for on a last pass. */
static int next_window(const struct table *t, size_t i)
{
	struct table_reader *rd = t->reader;
	int err;
	if (ahead_held(&rd->ahead, i)) {
		swap_windows(&rd->w, &rd->ahead.w);
		err = rd->w.err;
	} else {
		err = load_window(t, &rd->w, i, rd->last_pass);
	}
	if (!err && rd->read_ahead && rd->w.to < t->nrows)
		ask_ahead(t, rd->w.to);
	return err;
}

const struct table_row *table__row(const struct table *t, size_t i)
{
	if (!t->stored)
		return &t->rows[i];
	struct table_reader *rd = t->reader;
	struct row w;
	const char *attr[RA_N];
	const struct table_window *win = &rd->w;
	int err = i >= win->from && i < win->to ? 0 : next_window(t, i);
	if (!err)
		err = rows__ref_unpack(&win->refs[i - win->from],
				       win->win + ((const uint32_t *)(void *)win->idx)[i - win->from],
				       &w, attr, &rd->buf, &rd->cap);
	if (err) {
		rd->error = rd->error ? rd->error : err;
		memset(&rd->row, 0, sizeof(rd->row));
		return &rd->row;
	}
	/* its strings are its attributes (numbers key it: rows__can_store) */
	rd->row = table_row(t, &w);
	if (t->attrs) {
		rd->row.command = attr[RA_COMMAND];
		rd->row.comm = attr[RA_COMM];
	}
	rd->row.in_cgroup = attr[RA_CGROUP];
	apply_method(&rd->row, t->arith);
	if (rd->finish)
		rd->finish(rd->finish_ctx, &rd->row);
	return &rd->row;
}

void table__last_pass(struct table *t, bool read_ahead)
{
	if (t->reader) {
		t->reader->last_pass = true;
		t->reader->read_ahead = read_ahead;
	}
}

void table__pass_done(struct table *t)
{
	if (t->reader)
		end_last_pass(t->reader);
}

int table__error(const struct table *t)
{
	return t->reader ? t->reader->error : 0;
}

void table__finish_rows(struct table *t, void (*fn)(void *ctx, struct table_row *r),
			void *ctx)
{
	if (t->stored) {
		t->reader->finish = fn;
		t->reader->finish_ctx = ctx;
		return;
	}
	for (size_t i = 0; i < t->nrows; i++)
		fn(ctx, &t->rows[i]);
}

/* table__keep of stored rows: the refs kept written as a new list. */
static void keep_stored(struct table *t, bool (*keep)(const struct table_row *r, void *ctx),
			void *ctx)
{
	struct table_reader *rd = t->reader;
	struct ref_writer w;
	struct ref_list kept;
	end_last_pass(rd);	/* the kept refs are written to the store */
	ref_writer__init(&w, t->src.store, t->refs.chunk);
	for (size_t i = 0; i < t->nrows && !rd->error; i++) {
		const struct table_row *r = table__row(t, i);
		if (!rd->error && keep(r, ctx))
			(void)ref_writer__put(&w, &rd->w.refs[i - rd->w.from]);
	}
	int err = ref_writer__end(&w, &kept);
	if (!err && rd->error)
		ref_list__free(&kept);	/* the table stays as it was */
	rd->error = rd->error ? rd->error : err;
	if (!rd->error) {
		ref_list__free(&t->refs);
		t->refs = kept;
		t->nrows = kept.n;
	}
	forget_windows(rd);	/* rows read before: elsewhere now */
}

void table__keep(struct table *t, bool (*keep)(const struct table_row *r, void *ctx),
		 void *ctx)
{
	if (t->stored) {
		keep_stored(t, keep, ctx);
		return;
	}
	size_t n = 0;
	for (size_t i = 0; i < t->nrows; i++)
		if (keep(table__row(t, i), ctx))
			t->rows[n++] = t->rows[i];
	t->nrows = n;
}
