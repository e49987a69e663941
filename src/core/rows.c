/* rows: see rows.h. */
#include "rows.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "grow.h"
#include "banned.h"

const char *row_field__name(enum row_field f)
{
	return f < RF_COUNT ? key_entry(f)->name : "?";
}

int row_keys__parse_for(struct row_keys *k, const char *list, unsigned uses, size_t *bad)
{
	memset(k, 0, sizeof(*k));
	const char *p = list;
	for (;;) {
		size_t len = strcspn(p, ",");
		enum row_field f;
		*bad = (size_t)(p - list);
		if (key_entry__find(p, len, uses, &f, NULL) || (k->mask & RF_BIT(f)))
			return -EINVAL;
		k->v[k->n++] = (uint8_t)f;
		k->mask |= RF_BIT(f);
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

int row_keys__parse(struct row_keys *k, const char *list, size_t *bad)
{
	return row_keys__parse_for(k, list, KEY_REPORT, bad);
}

void row_keys__format(const struct row_keys *k, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (uint8_t i = 0; i < k->n && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? "," : "",
				      key_entry(k->v[i])->name);
}

void rows__init(struct rows *r, const struct row_keys *keys)
{
	memset(r, 0, sizeof(*r));
	r->keys = *keys;
	strtab__init(&r->strings);
	hindex__init(&r->index);
}

void rows__release(struct rows *r)
{
	if (!r)
		return;
	strtab__release(&r->strings);
	hindex__release(&r->index);
	free(r->v);
	free(r->refs);
	ref_runs__free(&r->runs);
	free(r->rec);
	memset(r, 0, sizeof(*r));
}

/* What rows__clear keeps (40 KB of rows, 16 KB of strings, 1 KB of
 * index); a table grown past it is let go instead, as a thread of 4 000
 * stacks would otherwise leave 640 KB held for the rest of a report.
 * Its index is let go past CLEAR_KEEP_SLOTS alone: emptying it is a
 * wipe of every slot, and one thread's 8 192 were wiped for each of the
 * thousands after it. */
#define CLEAR_KEEP_ROWS 256
#define CLEAR_KEEP_BYTES (16 * 1024)
#define CLEAR_KEEP_SLOTS 128

void rows__clear(struct rows *r)
{
	if (r->cap > CLEAR_KEEP_ROWS || r->strings.cap > CLEAR_KEEP_BYTES ||
	    r->strings.slots > CLEAR_KEEP_ROWS) {
		struct row_keys keys = r->keys;
		rows__release(r);
		rows__init(r, &keys);
		return;
	}
	strtab__clear(&r->strings);
	hindex__empty(&r->index, CLEAR_KEEP_SLOTS);
	r->n = 0;
	r->last = 0;
	r->made = 0;
	memset(r->recent, 0, sizeof(r->recent));
}

/* The id of s (ROW_NONE for NULL), as field f's (RS_*); false when
 * memory runs out. */
static bool intern(struct rows *r, int f, const char *s, uint32_t *id)
{
	uint32_t *recent = r->recent[f];
	if (!s) {
		*id = ROW_NONE;
		return true;
	}
	for (int i = 0; i < ROWS_RECENT && recent[i]; i++)
		if (!strcmp(strtab__str(&r->strings, recent[i] - 1), s)) {
			*id = recent[i] - 1;
			return true;
		}
	*id = strtab__intern(&r->strings, s, strlen(s));
	if (*id == HINDEX_NONE)
		return false;
	memmove(recent + 1, recent, (ROWS_RECENT - 1) * sizeof(*recent));
	recent[0] = *id + 1;
	return true;
}

/* k's task fields as a row of ids, the fields outside the key and a
 * program's (rows__add_to's) cleared. Derived keys are worked out from
 * the task's fields (keys.h). */
static bool base_key(struct rows *r, const struct row_key *k, struct row *w)
{
	uint32_t m = r->keys.mask;
	*w = (struct row){ .vm = ROW_NONE, .comm = ROW_NONE, .command = ROW_NONE,
			   .executable = ROW_NONE, .dso = ROW_NONE, .function = ROW_NONE,
			   .account = ROW_NONE, .cgroup = ROW_NONE, .uid = ROW_NO_UID,
			   .cpu = ROW_NO_CPU, .attr_command = ROW_NONE,
			   .attr_comm = ROW_NONE, .attr_cgroup = ROW_NONE };
	if (m & (RF_BIT(RF_PROCESS) | RF_BIT(RF_THREAD)))
		w->pid = k->pid;
	if (m & RF_BIT(RF_THREAD))
		w->tid = k->tid;
	/* a task is its id and its start: one that ended and the one the
	 * kernel gave its id to next are rows of their own */
	w->start_ns = m & RF_BIT(RF_THREAD) ? k->thread_start_ns :
		      m & RF_BIT(RF_PROCESS) ? k->proc_start_ns : 0;
	if (m & RF_BIT(RF_USER))
		w->uid = k->uid;
	for (int i = 0; i < ROW_DERIVED; i++)
		w->derived[i] = ROW_NONE;
	for (uint8_t i = 0; i < r->keys.n; i++) {
		const struct key_entry *e = key_entry(r->keys.v[i]);
		char buf[512];
		if (e->derive && !intern(r, RS_DERIVED + e->slot, e->derive(k, buf, sizeof(buf)),
				     &w->derived[e->slot]))
			return false;
	}
	return (!(m & RF_BIT(RF_VM)) || intern(r, RS_VM, k->vm, &w->vm)) &&
	       (!(m & RF_BIT(RF_COMM)) || intern(r, RS_COMM, k->comm, &w->comm)) &&
	       (!(m & RF_BIT(RF_COMMAND)) || intern(r, RS_COMMAND, k->command, &w->command)) &&
	       (!(m & RF_BIT(RF_EXECUTABLE)) || intern(r, RS_EXECUTABLE, k->executable, &w->executable)) &&
	       (!(m & RF_BIT(RF_CGROUP)) || intern(r, RS_CGROUP, k->cgroup, &w->cgroup));
}

/* A program's fields of k into w. */
static bool program_key(struct rows *r, const struct row_key *k, struct row *w)
{
	uint32_t m = r->keys.mask;
	if (m & RF_BIT(RF_CPU))
		w->cpu = k->cpu;
	if (m & RF_BIT(RF_STACK))
		w->stack = k->stack;
	/* a function is named within its file */
	bool dso = m & (RF_BIT(RF_DSO) | RF_BIT(RF_FUNCTION));
	return (!dso || intern(r, RS_DSO, k->dso, &w->dso)) &&
	       (!(m & RF_BIT(RF_FUNCTION)) || intern(r, RS_FUNCTION, k->function, &w->function)) &&
	       (!(m & RF_BIT(RF_ACCOUNT)) || intern(r, RS_ACCOUNT, k->account, &w->account));
}

/* The hash of a row's key in two parts: its task's fields, which a row
 * base's rows share (hashed once for all of a thread's stacks and
 * programs: hashing the whole key for each was a fiftieth of a profile),
 * then its program's (program_key's). */
static uint64_t task_hash(const struct row *w)
{
	uint64_t h = hash_mix((uint64_t)w->vm << 32 | w->comm);
	h = hash_mix(h ^ ((uint64_t)w->command << 32 | w->executable));
	h = hash_mix(h ^ ((uint64_t)w->cgroup << 32 | w->pid));
	h = hash_mix(h ^ ((uint64_t)w->tid << 32 ^ w->start_ns));
	h = hash_mix(h ^ (uint64_t)w->uid);
	for (int i = 0; i < ROW_DERIVED; i++)
		h = hash_mix(h ^ w->derived[i]);
	return h;
}

static uint64_t program_hash(uint64_t task, const struct row *w)
{
	uint64_t h = hash_mix(task ^ ((uint64_t)w->dso << 32 | w->function));
	h = hash_mix(h ^ ((uint64_t)w->account << 32 | (uint32_t)w->cpu));
	return hash_mix(h ^ w->stack);
}

static uint64_t key_hash(const struct row *w)
{
	return program_hash(task_hash(w), w);
}

struct key_ctx {
	const struct rows *r;
	const struct row *w;
};

static bool key_eq(const void *ctx, uint32_t id)
{
	const struct key_ctx *c = ctx;
	const struct row *a = &c->r->v[id], *b = c->w;
	return a->vm == b->vm && a->comm == b->comm && a->command == b->command &&
	       a->executable == b->executable && a->dso == b->dso &&
	       a->function == b->function && a->account == b->account &&
	       a->cgroup == b->cgroup && a->pid == b->pid && a->tid == b->tid &&
	       a->start_ns == b->start_ns &&
	       a->uid == b->uid && a->cpu == b->cpu && a->stack == b->stack &&
	       !memcmp(a->derived, b->derived, sizeof(a->derived));
}

int rows__base(struct rows *r, const struct row_key *k, const struct row_attrs *a,
	       struct row_base *b)
{
	b->attrs = a != NULL;
	b->cgroup = a && a->cgroup;
	b->attr[RA_COMMAND] = a ? a->command : NULL;
	b->attr[RA_COMM] = a ? a->comm : NULL;
	b->attr[RA_CGROUP] = a ? a->cgroup : NULL;
	for (int i = 0; i < RA_N; i++)
		b->attr_id[i] = ROW_UNSET;
	b->row = 0;
	b->hashed = false;
	return base_key(r, k, &b->w) ? 0 : -ENOMEM;
}

/* Notes b's attribute i on a row whose slot says what its contributions
 * so far agree on (first: none came yet): the slot is kept while every
 * one agrees, else ROW_NONE. b's string is interned only for a row that
 * takes it first; another compares it with the row's. False when memory
 * runs out. */
static bool note_attr(struct rows *r, struct row_base *b, int i, uint32_t *slot, bool first)
{
	static const int field[RA_N] = { RS_COMMAND, RS_COMM, RS_CGROUP };
	uint32_t *id = &b->attr_id[i];
	if (first) {
		if (*id == ROW_UNSET && !intern(r, field[i], b->attr[i], id)) {
			*id = ROW_UNSET;
			return false;
		}
		*slot = *id;
		return true;
	}
	if (*slot == ROW_NONE || *slot == *id)
		return true;	/* mixed (or none) already, or the same id */
	/* ids are unique per string: the row's equal to b's is b's id */
	if (*id == ROW_UNSET && b->attr[i] && !strcmp(strtab__str(&r->strings, *slot), b->attr[i]))
		*id = *slot;
	else
		*slot = ROW_NONE;
	return true;
}

static void add_figures(struct row_figures *to, const struct row_figures *f)
{
	to->samples += f->samples;
	to->steal_samples += f->steal_samples;
	to->cpu_ns += f->cpu_ns;
	to->steal_ns += f->steal_ns;
	to->control_ns += f->control_ns;
	to->inclusive_ns += f->inclusive_ns;
	to->wait_ns += f->wait_ns;
	to->wait_threads += f->wait_threads;
}

/* The row of key w, created on first sight: its id, or HINDEX_NONE. */
/* The row of key w (its task's fields hashed: task), added when new. */
static uint32_t row_of(struct rows *r, const struct row *w, uint64_t task)
{
	struct key_ctx ctx = { r, w };
	if (r->last && key_eq(&ctx, r->last - 1))
		return r->last - 1;
	uint64_t h = program_hash(task, w);
	uint32_t id = hindex__find(&r->index, h, key_eq, &ctx);
	if (id == HINDEX_NONE) {
		if (grow_array((void **)&r->v, &r->cap, r->n, sizeof(*r->v), 64) ||
		    hindex__insert(&r->index, h, r->n))
			return HINDEX_NONE;
		id = r->n++;
		r->v[id] = *w;
		r->v[id].seq = r->made++;
	}
	r->last = id + 1;
	return id;
}

/* b's attributes noted in row (the first it is given when it has seen
 * none); false when out of memory. */
static bool note_attrs(struct rows *r, struct row_base *b, struct row *row)
{
	if (b->attrs) {
		if (!note_attr(r, b, RA_COMMAND, &row->attr_command, !row->attr_seen) ||
		    !note_attr(r, b, RA_COMM, &row->attr_comm, !row->attr_seen))
			return false;
		row->attr_seen = true;
	}
	if (b->cgroup) {
		if (!note_attr(r, b, RA_CGROUP, &row->attr_cgroup, !row->cgroup_seen))
			return false;
		row->cgroup_seen = true;
	}
	return true;
}

int rows__add_to(struct rows *r, struct row_base *b, const struct row_key *k,
		 const struct row_figures *f)
{
	if (b->row) {
		/* the row this base made before, its attributes noted: the
		 * same attributes again change none */
		add_figures(&r->v[b->row - 1].f, f);
		return 0;
	}
	struct row w = b->w;
	if (!program_key(r, k, &w))
		return -ENOMEM;
	if (!b->hashed) {
		b->task_hash = task_hash(&b->w);
		b->hashed = true;
	}
	uint32_t id = row_of(r, &w, b->task_hash);
	if (id == HINDEX_NONE)
		return -ENOMEM;
	struct row *row = &r->v[id];
	if (!note_attrs(r, b, row))
		return -ENOMEM;
	add_figures(&row->f, f);
	/* a key without a program's fields is the base's alone: its row is
	 * the same for the rest of the thread's programs (by thread, comm,
	 * command...: a compile's thread has twenty) */
	if (!(r->keys.mask & ROW_PROGRAM_FIELDS))
		b->row = id + 1;
	return 0;
}

int rows__make(struct rows *r, struct row_base *b, const struct row_key *k,
	       const struct row_figures *f, struct row *w)
{
	*w = b->w;
	if (!program_key(r, k, w))
		return -ENOMEM;
	/* as row_of and rows__add_to make a new row */
	w->seq = r->made++;
	if (!note_attrs(r, b, w))
		return -ENOMEM;
	add_figures(&w->f, f);
	return 0;
}

void rows__make_like(struct rows *r, const struct row *like, uint32_t stack,
		     const struct row_figures *f, struct row *w)
{
	*w = *like;
	if (r->keys.mask & RF_BIT(RF_STACK))
		w->stack = stack;
	w->seq = r->made++;
	/* a base's own figures are none (base_key): the row's are f's */
	w->f = *f;
}

int rows__add(struct rows *r, const struct row_key *k, const struct row_attrs *a,
	      const struct row_figures *f)
{
	struct row_base b;
	int err = rows__base(r, k, a, &b);
	return err ? err : rows__add_to(r, &b, k, f);
}

/*
 * Rows kept in a store. A stored row is its struct row, its attributes'
 * ids replaced by their lengths (ROW_NONE: none), then their bytes: the
 * store is this process's scratch, read back by this build alone.
 */
struct row_rec {
	struct row w;
	uint32_t len[RA_N];
};

bool rows__can_store(const struct row_keys *k)
{
	uint32_t task = RF_BIT(RF_PROCESS) | RF_BIT(RF_THREAD);
	return (k->mask & RF_BIT(RF_THREAD)) && !(k->mask & ~task);
}

void rows__store(struct rows *r, const struct row_store *s)
{
	r->store = rows__can_store(&r->keys) ? s : NULL;
}

static uint32_t *attr_slot(struct row *w, int i)
{
	return i == RA_COMMAND ? &w->attr_command : i == RA_COMM ? &w->attr_comm :
	       &w->attr_cgroup;
}

/* w's fields into rec, field by field: its padding stays the zeros it
 * was given (a copy of the struct would write bytes never set). A field
 * added to struct row is added here: */
_Static_assert(sizeof(struct row) == 160 && sizeof(struct row_figures) == 64,
	       "rec_of copies every field of struct row");
static void rec_of(struct row_rec *rec, const struct row *w)
{
	memset(rec, 0, sizeof(*rec));
	struct row *o = &rec->w;
	o->vm = w->vm;
	o->comm = w->comm;
	o->command = w->command;
	o->executable = w->executable;
	o->dso = w->dso;
	o->function = w->function;
	o->account = w->account;
	o->cgroup = w->cgroup;
	o->pid = w->pid;
	o->tid = w->tid;
	o->start_ns = w->start_ns;
	o->uid = w->uid;
	o->cpu = w->cpu;
	o->stack = w->stack;
	memcpy(o->derived, w->derived, sizeof(o->derived));
	o->seq = w->seq;
	o->attr_seen = w->attr_seen;
	o->cgroup_seen = w->cgroup_seen;
	o->f.samples = w->f.samples;
	o->f.steal_samples = w->f.steal_samples;
	o->f.cpu_ns = w->f.cpu_ns;
	o->f.steal_ns = w->f.steal_ns;
	o->f.control_ns = w->f.control_ns;
	o->f.inclusive_ns = w->f.inclusive_ns;
	o->f.wait_ns = w->f.wait_ns;
	o->f.wait_threads = w->f.wait_threads;
}

/* w with attributes attr (NULL: none) into the store, as *ref. */
static int put_row(struct rows *r, const struct row *w, const char *const attr[RA_N],
		   struct row_ref *ref)
{
	struct row_rec rec;
	rec_of(&rec, w);
	size_t n = sizeof(rec);
	for (int i = 0; i < RA_N; i++) {
		rec.len[i] = attr[i] ? (uint32_t)strlen(attr[i]) : ROW_NONE;
		*attr_slot(&rec.w, i) = ROW_NONE;
		n += attr[i] ? rec.len[i] : 0;
	}
	if (grow_bytes(&r->rec, &r->rec_cap, n, 512))
		return -ENOMEM;
	char *buf = r->rec;
	memcpy(buf, &rec, sizeof(rec));
	size_t at = sizeof(rec);
	for (int i = 0; i < RA_N; i++)
		if (attr[i]) {
			memcpy(buf + at, attr[i], rec.len[i]);
			at += rec.len[i];
		}
	uint64_t off;
	int err = r->store->put(r->store->ctx, buf, n, &off);
	if (err)
		return err;
	*ref = (struct row_ref){ .off = off, .start_ns = w->start_ns, .pid = w->pid,
				 .tid = w->tid, .len = (uint32_t)n, .seq = w->seq,
				 .samples = w->f.samples, .steal_samples = w->f.steal_samples,
				 .cpu_ns = w->f.cpu_ns, .steal_ns = w->f.steal_ns };
	return 0;
}

/* The refs made since the last run into the store, as a run in their
 * tasks' order. */
static int spill(struct rows *r)
{
	int err = r->nrefs ? ref_runs__add(&r->runs, r->store, r->refs, r->nrefs,
					   refs__cmp_task, NULL) : 0;
	if (!err)
		r->nrefs = 0;
	return err;
}

/* Row id of memory into the store, as a new ref. */
static int store_row(struct rows *r, uint32_t id)
{
	const struct row *w = &r->v[id];
	const char *attr[RA_N];
	for (int i = 0; i < RA_N; i++)
		attr[i] = rows__str(r, *attr_slot((struct row *)w, i));
	if (!r->refs && !(r->refs = malloc(ref_runs__chunk(&r->runs) * sizeof(*r->refs))))
		return -ENOMEM;
	/* a full chunk goes before a ref is added: where it cannot, the
	 * row stays in memory as it was */
	int err = r->nrefs == ref_runs__chunk(&r->runs) ? spill(r) : 0;
	if (!err)
		err = put_row(r, w, attr, &r->refs[r->nrefs]);
	if (err)
		return err;
	r->nrefs++;
	return 0;
}

/* The strings of the rows in memory alone, the others' let go, and the
 * index made again (a row's hash is of its strings' ids). */
static int compact(struct rows *r)
{
	uint32_t count = r->strings.count;
	uint8_t *keep = calloc(count / 8 + 1, 1);
	uint32_t *map = malloc((count ? count : 1) * sizeof(*map));
	if (!keep || !map) {	/* the rows untouched */
		free(keep);
		free(map);
		return -ENOMEM;
	}
	/* the live rows' strings kept in place, the others' let go: a table
	 * made anew each time grew again from nothing, taking fresh pages */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < r->n; i++) {
			struct row *w = &r->v[i];
			uint32_t *ids[11 + ROW_DERIVED] = {
				&w->vm, &w->comm, &w->command, &w->executable, &w->dso,
				&w->function, &w->account, &w->cgroup, &w->attr_command,
				&w->attr_comm, &w->attr_cgroup,
			};
			for (int d = 0; d < ROW_DERIVED; d++)
				ids[11 + d] = &w->derived[d];
			for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
				if (*ids[k] == ROW_NONE)
					continue;
				if (pass)
					*ids[k] = map[*ids[k]];
				else
					keep[*ids[k] / 8] |= (uint8_t)(1u << (*ids[k] % 8));
			}
		}
		if (!pass)
			strtab__keep(&r->strings, keep, map);
	}
	free(keep);
	free(map);
	memset(r->recent, 0, sizeof(r->recent));
	/* its rows were in the index before: they fit it again */
	hindex__clear(&r->index);
	for (uint32_t i = 0; i < r->n; i++)
		(void)hindex__insert(&r->index, key_hash(&r->v[i]), i);
	r->retired = 0;
	return 0;
}

int rows__retire(struct rows *r, const struct row_key *k)
{
	if (!r->store)
		return 0;
	struct row w;
	if (!base_key(r, k, &w))
		return -ENOMEM;
	struct key_ctx ctx = { r, &w };
	uint64_t h = key_hash(&w);
	uint32_t id = hindex__find(&r->index, h, key_eq, &ctx);
	if (id == HINDEX_NONE)
		return 0;
	int err = store_row(r, id);
	if (err)
		return err;
	/* the last row takes its place: ids are dense */
	hindex__remove(&r->index, h, id);
	uint32_t last = --r->n;
	r->last = 0;
	if (id != last) {
		uint64_t hl = key_hash(&r->v[last]);
		hindex__remove(&r->index, hl, last);
		r->v[id] = r->v[last];
		if (hindex__insert(&r->index, hl, id))
			return -ENOMEM;
	}
	/* the gone rows' strings go once they are most of them */
	if (++r->retired >= 256 && r->retired >= 2 * r->n)
		return compact(r);
	return 0;
}

int rows__retire_all(struct rows *r)
{
	int err = 0;
	for (uint32_t i = 0; r->store && i < r->n && !err; i++)
		err = store_row(r, i);
	if (!err && r->store)
		err = spill(r);
	if (err)
		return err;
	free(r->refs);	/* all in runs now */
	r->refs = NULL;
	hindex__release(&r->index);
	hindex__init(&r->index);
	r->n = 0;
	r->last = 0;
	return 0;
}

/* The stored row of len bytes at the start of buf (with room for RA_N
 * bytes more) into *w and attr, its strings made NUL-terminated in place. */
static int unpack(size_t len, struct row *w, const char *attr[RA_N], char *buf)
{
	struct row_rec rec;
	if (len < sizeof(rec))
		return -EIO;
	memcpy(&rec, buf, sizeof(rec));
	*w = rec.w;
	/* the strings move up by one each for their ends: from the last */
	size_t at = len, to = len + RA_N;
	for (int i = RA_N; i-- > 0;) {
		if (rec.len[i] == ROW_NONE) {
			attr[i] = NULL;
			continue;
		}
		if (rec.len[i] > at - sizeof(rec))
			return -EIO;
		at -= rec.len[i];
		to -= rec.len[i] + 1;
		memmove(buf + to, buf + at, rec.len[i]);
		buf[to + rec.len[i]] = '\0';
		attr[i] = buf + to;
	}
	return 0;
}

int rows__ref_get(const struct rows *r, const struct row_ref *ref, struct row *w,
		  const char *attr[RA_N], char **buf, size_t *cap)
{
	int err = grow_bytes(buf, cap, ref->len + RA_N, 512);
	if (!err)
		err = r->store->get(r->store->ctx, ref->off, *buf, ref->len);
	return err ? err : unpack(ref->len, w, attr, *buf);
}

int rows__ref_unpack(const struct row_ref *ref, const char *bytes, struct row *w,
		     const char *attr[RA_N], char **buf, size_t *cap)
{
	if (grow_bytes(buf, cap, ref->len + RA_N, 512))
		return -ENOMEM;
	memcpy(*buf, bytes, ref->len);
	return unpack(ref->len, w, attr, *buf);
}

/* An attribute of two rows' contributions as note_attr leaves it: the
 * one seen alone, else kept where both name the same. */
static const char *merged_attr(const char *a, bool a_seen, const char *b, bool b_seen)
{
	if (!a_seen || !b_seen)
		return a_seen ? a : b;
	return a && b && !strcmp(a, b) ? a : NULL;
}

int rows__ref_merge(struct rows *r, struct row_ref *into, const struct row_ref *from)
{
	struct row a, b;
	const char *aa[RA_N], *ba[RA_N];
	char *abuf = NULL, *bbuf = NULL;
	size_t acap = 0, bcap = 0;
	int err = rows__ref_get(r, into, &a, aa, &abuf, &acap);
	if (!err)
		err = rows__ref_get(r, from, &b, ba, &bbuf, &bcap);
	if (!err) {
		const char *m[RA_N];
		for (int i = 0; i < RA_N; i++) {
			bool cg = i == RA_CGROUP;
			m[i] = merged_attr(aa[i], cg ? a.cgroup_seen : a.attr_seen,
					   ba[i], cg ? b.cgroup_seen : b.attr_seen);
		}
		a.seq = a.seq < b.seq ? a.seq : b.seq;
		a.attr_seen |= b.attr_seen;
		a.cgroup_seen |= b.cgroup_seen;
		add_figures(&a.f, &b.f);
		err = put_row(r, &a, m, into);
	}
	free(abuf);
	free(bbuf);
	return err;
}
