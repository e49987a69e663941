/* refsort: see refsort.h. */
#include "refsort.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "banned.h"

#define REFS_BLOCK 64	/* refs a merge reads of a run at once: 4 KB */

struct ref_order {
	const struct row_ref *refs;
	ref_cmp cmp;
	void *ctx;
};

static int cmp_order(const void *pa, const void *pb, void *ctx)
{
	const struct ref_order *o = ctx;
	return o->cmp(&o->refs[*(const uint32_t *)pa], &o->refs[*(const uint32_t *)pb],
		      o->ctx);
}

static int cmp_ref_elems(const void *pa, const void *pb, void *ctx)
{
	const struct ref_order *o = ctx;
	return o->cmp(pa, pb, o->ctx);
}

/*
 * Ties in the order they are in (glibc's qsort merges, and is stable).
 * What is sorted is their numbers, the refs then put in that order in
 * place: a sort of the refs themselves takes a copy of them all beside
 * them. Falls back to that where even the numbers find no memory.
 */
void refs__sort(struct row_ref *refs, size_t n, ref_cmp cmp, void *ctx)
{
	struct ref_order o = { refs, cmp, ctx };
	if (n < 2)
		return;
	uint32_t *order = malloc(n * sizeof(*order));
	if (!order) {
		qsort_r(refs, n, sizeof(*refs), cmp_ref_elems, &o);
		return;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), cmp_order, &o);
	/* place i takes ref order[i]: each cycle of the permutation in turn,
	 * order[j] = j marking a place done */
	for (size_t i = 0; i < n; i++) {
		if (order[i] == i)
			continue;
		struct row_ref first = refs[i];
		size_t j = i;
		while (order[j] != i) {
			size_t k = order[j];
			refs[j] = refs[k];
			order[j] = (uint32_t)j;
			j = k;
		}
		refs[j] = first;
		order[j] = (uint32_t)j;
	}
	free(order);
}

static int cmp_num(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

int refs__cmp_task(const struct row_ref *a, const struct row_ref *b, void *ctx)
{
	(void)ctx;
	int c = cmp_num(a->pid, b->pid);
	c = c ? c : cmp_num(a->tid, b->tid);
	return c ? c : cmp_num((int64_t)a->start_ns, (int64_t)b->start_ns);
}

void ref_list__free(struct ref_list *l)
{
	free(l->at);
	memset(l, 0, sizeof(*l));
}

/* Refs [i, i + n) of l read into refs (set: written from them), a
 * chunk's part at a time. */
static int chunks_of(const struct row_store *st, const struct ref_list *l, uint64_t i, size_t n,
		     struct row_ref *refs, bool set)
{
	while (n) {
		uint64_t c = i / l->chunk, in = i % l->chunk;
		size_t take = (size_t)(l->chunk - in) < n ? (size_t)(l->chunk - in) : n;
		if (c >= l->nchunks || i + take > l->n)
			return -EINVAL;
		uint64_t off = l->at[c] + in * sizeof(*refs);
		int err = set ? st->set(st->ctx, off, refs, take * sizeof(*refs)) :
			  st->get(st->ctx, off, refs, take * sizeof(*refs));
		if (err)
			return err;
		i += take;
		n -= take;
		refs += take;
	}
	return 0;
}

int ref_list__get(const struct row_store *st, const struct ref_list *l, uint64_t i, size_t n,
		  struct row_ref *out)
{
	return chunks_of(st, l, i, n, out, false);
}

int ref_list__set(const struct row_store *st, const struct ref_list *l, uint64_t i, size_t n,
		  const struct row_ref *refs)
{
	if (!st->set)
		return -ENOTSUP;
	return chunks_of(st, l, i, n, (struct row_ref *)refs, true);
}

/* refs[0..n) (n at most a chunk) appended to l as its next chunk. */
static int put_chunk(struct ref_list *l, const struct row_store *st, const struct row_ref *refs,
		     size_t n)
{
	uint64_t off;
	int err = grow_array((void **)&l->at, &l->cap, l->nchunks, sizeof(*l->at), 16);
	if (!err)
		err = st->put(st->ctx, refs, n * sizeof(*refs), &off);
	if (err)
		return err;
	l->at[l->nchunks++] = off;
	l->n += n;
	return 0;
}

void ref_writer__init(struct ref_writer *w, const struct row_store *st, uint32_t chunk)
{
	memset(w, 0, sizeof(*w));
	w->st = st;
	w->list.chunk = chunk ? chunk : REFS_CHUNK;
}

int ref_writer__put(struct ref_writer *w, const struct row_ref *ref)
{
	if (w->error)
		return w->error;
	if (!w->buf && !(w->buf = malloc(w->list.chunk * sizeof(*w->buf))))
		return w->error = -ENOMEM;
	w->buf[w->used++] = *ref;
	if (w->used == w->list.chunk) {
		w->error = put_chunk(&w->list, w->st, w->buf, w->used);
		w->used = 0;
	}
	return w->error;
}

int ref_writer__end(struct ref_writer *w, struct ref_list *out)
{
	if (!w->error && w->used)
		w->error = put_chunk(&w->list, w->st, w->buf, w->used);
	free(w->buf);
	w->buf = NULL;
	w->used = 0;
	if (w->error) {
		ref_list__free(&w->list);
		return w->error;
	}
	*out = w->list;
	memset(&w->list, 0, sizeof(w->list));
	return 0;
}

static int writer_emit(void *ctx, const struct row_ref *ref)
{
	return ref_writer__put(ctx, ref);
}

void ref_runs__free(struct ref_runs *r)
{
	for (uint32_t i = 0; i < r->n; i++)
		ref_list__free(&r->v[i]);
	free(r->v);
	r->v = NULL;
	r->n = r->cap = 0;
}

uint32_t ref_runs__chunk(const struct ref_runs *r)
{
	return r->chunk ? r->chunk : REFS_CHUNK;
}

static int runs_push(struct ref_runs *r, struct ref_list *l)
{
	if (grow_array((void **)&r->v, &r->cap, r->n, sizeof(*r->v), 16))
		return -ENOMEM;
	r->v[r->n++] = *l;
	return 0;
}

int ref_runs__add(struct ref_runs *r, const struct row_store *st, struct row_ref *refs,
		  size_t n, ref_cmp cmp, void *ctx)
{
	refs__sort(refs, n, cmp, ctx);
	struct ref_list l = { .chunk = ref_runs__chunk(r) };
	int err = 0;
	for (size_t i = 0; i < n && !err; i += l.chunk)
		err = put_chunk(&l, st, refs + i, n - i < l.chunk ? n - i : l.chunk);
	if (!err)
		err = runs_push(r, &l);
	if (err)
		ref_list__free(&l);
	return err;
}

/* Where a merge is in one run: a block of it in memory. */
struct cursor {
	const struct ref_list *l;
	uint64_t pos;		/* of the block's first ref in the run */
	uint32_t at, len;	/* in the block */
	struct row_ref *block;
};

static int refill(const struct row_store *st, struct cursor *c)
{
	c->pos += c->len;
	c->at = 0;
	uint64_t left = c->l->n - c->pos;
	c->len = left < REFS_BLOCK ? (uint32_t)left : REFS_BLOCK;
	return c->len ? ref_list__get(st, c->l, c->pos, c->len, c->block) : 0;
}

/* Runs v[0..k) merged into emit. The fan-in is small: the smallest head
 * is found by a look at each, the first run's winning ties. */
static int merge_group(const struct row_store *st, const struct ref_list *v, uint32_t k,
		       ref_cmp cmp, void *ctx, int (*emit)(void *ectx, const struct row_ref *ref),
		       void *ectx)
{
	if (!k)
		return 0;
	struct cursor *cur = calloc(k, sizeof(*cur));
	struct row_ref *blocks = malloc((size_t)k * REFS_BLOCK * sizeof(*blocks));
	int err = cur && blocks ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < k && !err; i++) {
		cur[i] = (struct cursor){ .l = &v[i], .block = blocks + (size_t)i * REFS_BLOCK };
		err = refill(st, &cur[i]);
	}
	while (!err) {
		struct cursor *min = NULL;
		for (uint32_t i = 0; i < k; i++)
			if (cur[i].at < cur[i].len &&
			    (!min || cmp(&cur[i].block[cur[i].at], &min->block[min->at], ctx) < 0))
				min = &cur[i];
		if (!min)
			break;
		err = emit(ectx, &min->block[min->at]);
		if (!err && ++min->at == min->len)
			err = refill(st, min);
	}
	free(cur);
	free(blocks);
	return err;
}

int ref_runs__merge(struct ref_runs *r, const struct row_store *st, ref_cmp cmp, void *ctx,
		    int (*emit)(void *ectx, const struct row_ref *ref), void *ectx)
{
	uint32_t fanin = r->fanin >= 2 ? r->fanin : REFS_FANIN;
	int err = 0;
	/* passes of fanin runs at a time into one, until fanin are left: a
	 * group's runs are neighbours, so ties keep the runs' order */
	while (!err && r->n > fanin) {
		struct ref_runs next = { .chunk = r->chunk, .fanin = r->fanin };
		for (uint32_t g = 0; g < r->n && !err; g += fanin) {
			uint32_t k = r->n - g < fanin ? r->n - g : fanin;
			struct ref_writer w;
			struct ref_list out;
			ref_writer__init(&w, st, ref_runs__chunk(r));
			err = merge_group(st, r->v + g, k, cmp, ctx, writer_emit, &w);
			int end = ref_writer__end(&w, &out);
			err = err ? err : end;
			if (!err && (err = runs_push(&next, &out)))
				ref_list__free(&out);
		}
		ref_runs__free(r);
		*r = next;
	}
	if (!err)
		err = merge_group(st, r->v, r->n, cmp, ctx, emit, ectx);
	ref_runs__free(r);
	return err;
}

int ref_list__sort(struct ref_list *l, const struct row_store *st, uint32_t fanin, ref_cmp cmp,
		   void *ctx)
{
	if (l->n < 2)
		return 0;
	struct ref_runs runs = { .chunk = l->chunk, .fanin = fanin };
	struct row_ref *buf = malloc(l->chunk * sizeof(*buf));
	int err = buf ? 0 : -ENOMEM;
	for (uint64_t i = 0; i < l->n && !err; i += l->chunk) {
		size_t n = l->n - i < l->chunk ? (size_t)(l->n - i) : l->chunk;
		err = ref_list__get(st, l, i, n, buf);
		if (!err)
			err = ref_runs__add(&runs, st, buf, n, cmp, ctx);
	}
	free(buf);
	struct ref_list out;
	if (!err && runs.n == 1) {
		out = runs.v[0];	/* one chunk: sorted as it went */
		runs.n = 0;
	} else if (!err) {
		struct ref_writer w;
		ref_writer__init(&w, st, l->chunk);
		err = ref_runs__merge(&runs, st, cmp, ctx, writer_emit, &w);
		int end = ref_writer__end(&w, &out);
		err = err ? err : end;
	}
	ref_runs__free(&runs);
	if (err)
		return err;
	ref_list__free(l);
	*l = out;
	return 0;
}
