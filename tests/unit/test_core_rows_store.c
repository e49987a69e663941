/*
 * rows kept in a store (rows__store, rows__retire, table__row): a table
 * made from rows of whole threads that went to a store as their threads
 * ended is the table made from the same contributions kept in memory,
 * row by row and in the same order, under either arithmetic and any
 * sort: with threads seen again after they went (summed, their command
 * kept only where both agree), ids the kernel gave again (the start
 * made a key), attributes missing, mixed or agreed, and enough rows gone
 * that their strings are let go. Only keys of whole threads are stored;
 * a store that fails to give a row back says so (table__error).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/rows.h"
#include "core/table.h"

/* A store in memory, as the scratch file is one on disk. */
struct mem_store {
	char *buf;
	size_t len, cap;
	bool fail;
	int gets_left;		/* > 0: fails once this many gets are done */
	int gets;		/* done */
	struct row_store s;
};

static int mem_put(void *ctx, const void *p, size_t n, uint64_t *off)
{
	struct mem_store *m = ctx;
	if (m->len + n > m->cap) {
		m->cap = (m->len + n) * 2;
		m->buf = realloc(m->buf, m->cap);
		assert_non_null(m->buf);
	}
	memcpy(m->buf + m->len, p, n);
	*off = m->len;
	m->len += n;
	return 0;
}

static int mem_get(void *ctx, uint64_t off, void *p, size_t n)
{
	struct mem_store *m = ctx;
	m->gets++;
	if (m->fail || (m->gets_left > 0 && !--m->gets_left && (m->fail = true)))
		return -EIO;
	assert_true(off + n <= m->len);
	memcpy(p, m->buf + off, n);
	return 0;
}

static int mem_set(void *ctx, uint64_t off, const void *p, size_t n)
{
	struct mem_store *m = ctx;
	assert_true(off + n <= m->len);
	memcpy(m->buf + off, p, n);
	return 0;
}

static void mem_init(struct mem_store *m)
{
	memset(m, 0, sizeof(*m));
	m->s = (struct row_store){ .ctx = m, .put = mem_put, .get = mem_get, .set = mem_set };
}

static void keys_of(struct row_keys *k, const char *list)
{
	size_t bad;
	assert_int_equal(row_keys__parse(k, list, &bad), 0);
}

/* Rows by thread twice over: kept in memory (mem), and stored in ms as
 * their threads go (st). */
struct pair {
	struct mem_store ms;
	struct rows mem, st;
};

static void pair_init(struct pair *p)
{
	struct row_keys k;
	keys_of(&k, "thread");
	mem_init(&p->ms);
	rows__init(&p->mem, &k);
	rows__init(&p->st, &k);
	rows__store(&p->st, &p->ms.s);
}

/* The table of each, under method. */
static void pair_tables(struct pair *p, enum steal_method method, struct table **a,
			struct table **b)
{
	struct table_params tp = { .method = method, .steal_known = true, .attrs = true };
	*a = table__from_rows(&p->mem, &tp);
	*b = table__from_rows(&p->st, &tp);
	assert_non_null(*a);
	assert_non_null(*b);
}

static void pair_free(struct pair *p, struct table *a, struct table *b)
{
	table__free(a);
	table__free(b);
	rows__release(&p->mem);	/* moved into a table, or left */
	rows__release(&p->st);
	free(p->ms.buf);
}

static void only_whole_threads(void **state)
{
	(void)state;
	const char *yes[] = { "thread", "process,thread" };
	const char *no[] = { "comm", "process", "thread,function", "thread,comm", "thread,cpu",
			     "command,thread" };
	struct row_keys k;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		keys_of(&k, yes[i]);
		assert_true(rows__can_store(&k));
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		keys_of(&k, no[i]);
		assert_false(rows__can_store(&k));
		struct mem_store m;
		mem_init(&m);
		struct rows r;
		rows__init(&r, &k);
		rows__store(&r, &m.s);
		assert_null(r.store);	/* kept in memory */
		rows__release(&r);
	}
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state % n);
}

/* The same contributions into mem (kept) and st (stored as threads go). */
static void feed(struct rows *mem, struct rows *st, unsigned threads)
{
	char cmd[64];
	struct row_key pending[16];
	unsigned npending = 0;
	for (unsigned t = 0; t < threads; t++) {
		/* every 50th reuses an id with a later start; every 7th is a
		 * thread seen again after it went (its id and start again) */
		uint32_t tid = t % 50 == 49 ? 1000 + t - 49 : t % 7 == 6 ? 1000 + t - 3 : 1000 + t;
		uint64_t start = t % 50 == 49 ? 5000 + t : t % 7 == 6 ? 5000 + t - 3 : 5000 + t;
		if (t % 7 == 6 && t % 50 == 49)
			continue;
		snprintf(cmd, sizeof(cmd), "cc1 -O2 file%u.c", t % 7 == 6 && rnd(2) ? t : tid);
		struct row_key k = { .pid = tid, .tid = tid, .thread_start_ns = start,
				     .proc_start_ns = start };
		struct row_attrs a = { .command = rnd(10) ? cmd : NULL, .comm = "cc1",
				       .cgroup = rnd(3) ? "/work" : NULL };
		/* some come without attributes at all, their row's first */
		const struct row_attrs *at = t % 7 == 3 && rnd(2) ? NULL : &a;
		unsigned programs = 1 + rnd(4);
		struct row_base bm, bs;
		assert_int_equal(rows__base(mem, &k, at, &bm), 0);
		assert_int_equal(rows__base(st, &k, at, &bs), 0);
		for (unsigned p = 0; p < programs; p++) {
			struct row_figures f = { .samples = 1 + rnd(100), .steal_samples = rnd(5),
						 .cpu_ns = 1000000ull * (1 + rnd(100)),
						 .steal_ns = 1000ull * rnd(50),
						 .control_ns = rnd(2) ? 1000 : 0 };
			assert_int_equal(rows__add_to(mem, &bm, &k, &f), 0);
			assert_int_equal(rows__add_to(st, &bs, &k, &f), 0);
		}
		if (rnd(4)) {	/* its wait, as on_gone adds it */
			struct row_figures w = { .wait_ns = 100ull * rnd(1000), .wait_threads = 1 };
			assert_int_equal(rows__add(mem, &k, &a, &w), 0);
			assert_int_equal(rows__add(st, &k, &a, &w), 0);
		}
		/* threads end in another order than they began (a row not the
		 * last in memory goes); some are still alive at the end */
		pending[npending++] = k;
		while (npending > 12 || (t + 1 == threads && npending > 6)) {
			uint32_t j = rnd(npending);
			assert_int_equal(rows__retire(st, &pending[j]), 0);
			pending[j] = pending[--npending];
		}
		/* one seen again is sometimes seen a third time */
		if (t % 7 == 6 && rnd(2)) {
			snprintf(cmd, sizeof(cmd), "cc1 -O2 third%u.c", rnd(2) ? t : tid);
			struct row_figures f = { .samples = 1, .cpu_ns = 1000 };
			assert_int_equal(rows__add(mem, &k, &a, &f), 0);
			assert_int_equal(rows__add(st, &k, &a, &f), 0);
			assert_int_equal(rows__retire(st, &k), 0);
		}
	}
}

static void same_string(const char *a, const char *b)
{
	if (!a || !b)
		assert_true(a == b);
	else
		assert_string_equal(a, b);
}

static void same_tables(struct table *a, struct table *b)
{
	assert_int_equal(a->nrows, b->nrows);
	assert_int_equal(a->reused, b->reused);
	assert_string_equal(a->by, b->by);
	assert_int_equal(a->totals.attributed_steal_ns, b->totals.attributed_steal_ns);
	for (size_t i = 0; i < a->nrows; i++) {
		struct table_row x = *table__row(a, i);
		const struct table_row *y = table__row(b, i);
		assert_int_equal(x.pid, y->pid);
		assert_int_equal(x.tid, y->tid);
		assert_int_equal(x.start_ns, y->start_ns);
		assert_int_equal(x.samples, y->samples);
		assert_int_equal(x.steal_samples, y->steal_samples);
		assert_int_equal(x.cpu_ns, y->cpu_ns);
		assert_int_equal(x.steal_ns, y->steal_ns);
		assert_int_equal(x.apparent_ns, y->apparent_ns);
		assert_int_equal(x.corrected_ns, y->corrected_ns);
		assert_int_equal(x.control_ns, y->control_ns);
		assert_int_equal(x.wait_ns, y->wait_ns);
		assert_int_equal(x.wait_known, y->wait_known);
		same_string(x.command, y->command);
		same_string(x.comm, y->comm);
		same_string(x.in_cgroup, y->in_cgroup);
	}
	assert_int_equal(table__error(a), 0);
	assert_int_equal(table__error(b), 0);
}

static void stored_as_kept(void **state)
{
	(void)state;
	const enum steal_method methods[] = { METHOD_PRECEDING, METHOD_RATIO };
	const struct sort_spec sorts[] = { { { SORT_APPARENT }, 1 },
					   { { SORT_SAMPLES, SORT_STEAL }, 2 },
					   { { SORT_STEAL_SHARE }, 1 } };
	for (int m = 0; m < 2; m++) {
		for (int s = 0; s < 6; s++) {
			struct pair pr;
			pair_init(&pr);
			assert_non_null(pr.st.store);
			if (s >= 3) {
				/* refs in runs of 7, merged 3 at a time: five passes */
				pr.st.runs.chunk = 7;
				pr.st.runs.fanin = 3;
			}
			feed(&pr.mem, &pr.st, 3000);
			/* the gone threads' rows, their refs and strings left memory */
			assert_true(pr.st.n < 20);
			assert_true(pr.st.strings.count < 1000);
			uint64_t stored = pr.st.nrefs;
			for (uint32_t i = 0; i < pr.st.runs.n; i++)
				stored += pr.st.runs.v[i].n;
			assert_true(stored > 2500);
			assert_true(pr.st.nrefs <= ref_runs__chunk(&pr.st.runs));
			assert_true(pr.st.runs.n > 2500 / ref_runs__chunk(&pr.st.runs) - 1);
			struct table *a, *b;
			pair_tables(&pr, methods[m], &a, &b);
			assert_null(b->rows);
			assert_true(a->reused);	/* ids given again */
			table__sort(a, &sorts[s % 3]);
			table__sort(b, &sorts[s % 3]);
			same_tables(a, b);
			/* a thread seen again is one row: fewer rows than threads */
			assert_true(a->nrows < 3000);
			pair_free(&pr, a, b);
		}
	}
}

static bool over_5ms(const struct table_row *r, void *ctx)
{
	(void)ctx;
	return r->cpu_ns >= 50000000;
}

static bool even_tid(const struct table_row *r, void *ctx)
{
	(void)ctx;
	return r->tid % 2 == 0;
}

static void widen(void *ctx, struct table_row *r)
{
	(void)ctx;
	r->denied_known = true;
	r->denied_ns = r->steal_ns + r->wait_ns;
}

/* table__keep and table__finish_rows do to stored rows what they do to
 * rows in memory. */
static void kept_and_finished(void **state)
{
	(void)state;
	struct pair pr;
	pair_init(&pr);
	feed(&pr.mem, &pr.st, 400);
	struct table *a, *b;
	pair_tables(&pr, METHOD_PRECEDING, &a, &b);
	size_t all = a->nrows;
	table__keep(a, over_5ms, NULL);
	table__keep(b, over_5ms, NULL);
	assert_true(a->nrows < all && a->nrows > 0);
	table__finish_rows(a, widen, NULL);
	table__finish_rows(b, widen, NULL);
	same_tables(a, b);
	/* rows read, then some from the middle dropped and the rest sorted
	 * anew: what is read after is the rows now at each place */
	table__keep(a, even_tid, NULL);
	table__keep(b, even_tid, NULL);
	same_tables(a, b);
	const struct sort_spec by_samples = { { SORT_SAMPLES }, 1 };
	table__sort(a, &by_samples);
	table__sort(b, &by_samples);
	same_tables(a, b);
	for (size_t i = 0; i < b->nrows; i++) {
		assert_true(table__row(b, i)->cpu_ns >= 50000000);
		assert_true(table__row(b, i)->denied_known);
	}
	pair_free(&pr, a, b);
}

/* A store that fails to give rows back: a row of zeros, and the table
 * says why. */
static void store_failing(void **state)
{
	(void)state;
	struct pair pr;
	pair_init(&pr);
	feed(&pr.mem, &pr.st, 100);
	struct table *a, *b;
	pair_tables(&pr, METHOD_PRECEDING, &a, &b);
	pr.ms.fail = true;
	const struct table_row *r = table__row(b, 0);
	assert_int_equal(r->samples, 0);
	assert_null(r->command);
	assert_int_equal(table__error(b), -EIO);
	/* read again, once the store gives rows back: the row as it is */
	pr.ms.fail = false;
	assert_true(table__row(b, 0)->samples > 0);
	pair_free(&pr, a, b);
}

/* Rows read back out of the order they were stored in, past a window
 * of rows read at once, as writers and text's two passes do: by a store
 * that can write over what it holds (a window read from all over is
 * stored again, its refs set to the copy) and by one that cannot. */
static void read_in_any_order(void **state)
{
	(void)state;
	for (int can_set = 0; can_set < 2; can_set++) {
		struct pair pr;
		pair_init(&pr);
		if (!can_set)
			pr.ms.s.set = NULL;
		feed(&pr.mem, &pr.st, 12000);	/* a few windows of rows */
		struct table *a, *b;
		pair_tables(&pr, METHOD_PRECEDING, &a, &b);
		assert_true(pr.ms.len > 3 * 512 * 1024);
		same_tables(a, b);
		size_t stored = pr.ms.len;
		for (size_t n = 0; n < 2000; n++) {
			size_t i = rnd((uint32_t)a->nrows);
			assert_int_equal(table__row(a, i)->cpu_ns, table__row(b, i)->cpu_ns);
			same_string(table__row(a, i)->command, table__row(b, i)->command);
		}
		same_tables(a, b);
		/* windows stored again only where their refs could follow */
		assert_true(can_set ? pr.ms.len > stored : pr.ms.len == stored);
		pair_free(&pr, a, b);
	}
}

/* Rows the table's order finds equal (tasks that had exited, shown as
 * -1, with the same figures) keep the order they were made in, stored
 * or not, though they went to the store in another. */
static void equal_rows_in_the_order_made(void **state)
{
	(void)state;
	struct pair pr;
	pair_init(&pr);
	static const char *comms[] = { "a", "b", "c", "d", "e", "f" };
	struct row_key keys[6];
	for (int i = 0; i < 6; i++) {
		keys[i] = (struct row_key){ .pid = UINT32_MAX, .tid = UINT32_MAX,
					    .thread_start_ns = 100 + 10 * (uint64_t)(5 - i) };
		struct row_attrs a = { .comm = comms[i] };
		struct row_figures f = { .samples = 1, .cpu_ns = 1000 };
		assert_int_equal(rows__add(&pr.mem, &keys[i], &a, &f), 0);
		assert_int_equal(rows__add(&pr.st, &keys[i], &a, &f), 0);
	}
	static const int gone[] = { 3, 0, 5, 1 };	/* 2 and 4 alive at the end */
	for (int i = 0; i < 4; i++)
		assert_int_equal(rows__retire(&pr.st, &keys[gone[i]]), 0);
	struct table *a, *b;
	pair_tables(&pr, METHOD_PRECEDING, &a, &b);
	same_tables(a, b);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(table__row(b, i)->comm, comms[i]);
	pair_free(&pr, a, b);
}

/* No row, and one: a table all the same (each a sort of its own). */
static void none_and_one(void **state)
{
	(void)state;
	for (uint32_t threads = 0; threads < 3; threads++) {
		struct pair pr;
		pair_init(&pr);
		for (uint32_t t = 0; t < threads; t++) {
			struct row_key key = { .pid = 7 + t, .tid = 7 + t };
			struct row_attrs a = { .command = "sh -c x", .comm = "sh" };
			struct row_figures f = { .samples = 2, .cpu_ns = 5000 };
			assert_int_equal(rows__add(&pr.mem, &key, &a, &f), 0);
			assert_int_equal(rows__add(&pr.st, &key, &a, &f), 0);
			if (t == 0)	/* the second alive at the end */
				assert_int_equal(rows__retire(&pr.st, &key), 0);
		}
		struct table *a, *b;
		pair_tables(&pr, METHOD_PRECEDING, &a, &b);
		assert_int_equal(b->nrows, threads);
		same_tables(a, b);
		table__keep(b, even_tid, NULL);
		table__keep(a, even_tid, NULL);
		same_tables(a, b);
		pair_free(&pr, a, b);
	}
}

/* A command line longer than the rows read at once (the kernel allows
 * 2 MB of arguments): its row read alone, whole. */
static void row_larger_than_a_window(void **state)
{
	(void)state;
	struct row_keys k;
	keys_of(&k, "thread");
	struct mem_store ms;
	mem_init(&ms);
	struct rows st;
	rows__init(&st, &k);
	rows__store(&st, &ms.s);
	size_t big = 600 * 1024;
	char *cmd = malloc(big + 1);
	assert_non_null(cmd);
	memset(cmd, 'x', big);
	cmd[big] = '\0';
	for (uint32_t t = 0; t < 3; t++) {
		struct row_key key = { .pid = 10 + t, .tid = 10 + t };
		struct row_attrs a = { .command = t == 1 ? cmd : "sh", .comm = "sh" };
		struct row_figures f = { .samples = 1, .cpu_ns = 1000 * (3 - t) };
		assert_int_equal(rows__add(&st, &key, &a, &f), 0);
		assert_int_equal(rows__retire(&st, &key), 0);
	}
	struct table_params p = { .method = METHOD_PRECEDING, .steal_known = true,
				  .attrs = true };
	struct table *b = table__from_rows(&st, &p);
	assert_non_null(b);
	for (size_t i = 0; i < 3; i++) {
		const struct table_row *r = table__row(b, i);
		assert_int_equal(r->tid, 10 + i);
		assert_int_equal(strlen(r->command), i == 1 ? big : 2);
	}
	assert_int_equal(table__error(b), 0);
	table__free(b);
	free(cmd);
	free(ms.buf);
}

/* A last pass (table__last_pass) reads each next window on a thread of
 * the reader's while the rows of this one are taken: 3 000 threads' rows,
 * three windows and more, the same rows in order with and without the
 * thread; asked out of order (the window read ahead not the one asked
 * for), the same rows; sorted after (the pass ended) and read in a last
 * pass again, the same; and a store that fails on the thread fails the
 * table (zero rows, table__error), every row still given. */
static void last_pass_read_ahead(void **state)
{
	(void)state;
	for (int ahead = 0; ahead < 2; ahead++) {
		struct pair pr;
		pair_init(&pr);
		feed(&pr.mem, &pr.st, 3000);
		struct table *a, *b;
		pair_tables(&pr, METHOD_PRECEDING, &a, &b);
		assert_true(b->nrows > 2048);
		table__last_pass(b, ahead);
		int before = pr.ms.gets;
		same_tables(a, b);
		int pass = pr.ms.gets - before;	/* the same for the pair below */
		size_t order[] = { 0, 5, b->nrows - 1, 1500, 1501, 3, 2047, 2048, 1024 };
		for (size_t k = 0; k < sizeof(order) / sizeof(*order); k++) {
			size_t i = order[k];
			struct table_row x = *table__row(a, i);
			const struct table_row *y = table__row(b, i);
			assert_int_equal(x.tid, y->tid);
			assert_int_equal(x.cpu_ns, y->cpu_ns);
			same_string(x.command, y->command);
		}
		/* a sort ends the pass (the thread stopped, the store sorted
		 * in); a last pass after it reads ahead again */
		const struct sort_spec by_samples = { { SORT_SAMPLES }, 1 };
		table__sort(a, &by_samples);
		table__sort(b, &by_samples);
		same_tables(a, b);
		table__last_pass(b, ahead);
		same_tables(a, b);
		table__pass_done(b);
		pair_free(&pr, a, b);

		pair_init(&pr);
		feed(&pr.mem, &pr.st, 3000);
		pair_tables(&pr, METHOD_PRECEDING, &a, &b);
		table__last_pass(b, ahead);
		pr.ms.gets_left = pass / 2;	/* past the first window */
		size_t zero = 0;
		for (size_t i = 0; i < b->nrows; i++)
			zero += !table__row(b, i)->samples;
		assert_int_equal(table__error(b), -EIO);
		print_message("ahead %d: %zu of %zu rows zero\n", ahead, zero, b->nrows);
		assert_true(zero > 0 && zero < b->nrows);
		pair_free(&pr, a, b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(only_whole_threads),
		cmocka_unit_test(stored_as_kept),
		cmocka_unit_test(kept_and_finished),
		cmocka_unit_test(store_failing),
		cmocka_unit_test(read_in_any_order),
		cmocka_unit_test(row_larger_than_a_window),
		cmocka_unit_test(equal_rows_in_the_order_made),
		cmocka_unit_test(none_and_one),
		cmocka_unit_test(last_pass_read_ahead),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
