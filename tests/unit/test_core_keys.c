/*
 * keys: the one table of report keys (core/keys.c) is whole: every key a
 * command takes has a name, a header, a field and a value a row gives;
 * no two keys share a spelling; each is found by its name and alias and
 * only by the commands that take it; what a bill shows for a key is
 * among the keys the ledger keeps; the lists for help wrap where asked
 * and a table's rows come out in the order of their key's values (a
 * thread's pid first, a function's file after it); a row keeps a
 * command line while its contributions agree on it, and keeps no string
 * for those that do not.
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

#include "core/keys.h"
#include "core/rows.h"
#include "core/table.h"

static void every_entry_whole(void **state)
{
	(void)state;
	struct table_row r = { .vm = "h", .comm = "c", .command = "c x", .executable = "/c",
			       .dso = "d", .function = "f", .account = "a", .cgroup = "/g",
			       .pid = 1, .tid = 2, .uid = 3, .cpu = 4 };
	struct row_key k = { .vm = r.vm, .comm = r.comm, .command = "/usr/bin/c x",
			     .executable = r.executable, .dso = r.dso, .function = r.function,
			     .account = r.account, .cgroup = r.cgroup, .pid = 1, .tid = 2,
			     .uid = 3, .cpu = 4 };
	bool slots[ROW_DERIVED] = { false };
	char buf[512];
	for (int i = 0; i < RF_COUNT; i++) {
		const struct key_entry *e = key_entry((enum row_field)i);
		assert_non_null(e->name);
		assert_non_null(e->header);
		assert_non_null(e->field);
		/* a derived key has a slot of its own, and a value */
		if (e->derive) {
			assert_true(e->slot >= 0 && e->slot < ROW_DERIVED && !slots[e->slot]);
			slots[e->slot] = true;
			assert_non_null(e->derive(&k, buf, sizeof(buf)));
			r.derived[e->slot] = e->derive(&k, buf, sizeof(buf));
		}
		/* a key of report has a value in a row, of its type */
		if (e->uses & KEY_REPORT) {
			assert_true(e->type == KEY_TEXT ? e->text && e->text(&r) :
				    e->number && e->number(&r) > 0);
			assert_true(!e->narrow || e->width || e->text);
		}
		for (int j = 0; j < i; j++) {
			const struct key_entry *o = key_entry((enum row_field)j);
			assert_string_not_equal(e->name, o->name);
			assert_true(!o->alias || strcmp(e->name, o->alias));
			assert_true(!e->alias || strcmp(e->alias, o->name));
		}
		assert_true(e->before == RF_COUNT || key_entry(e->before)->uses);
		assert_true(e->after == RF_COUNT || key_entry(e->after)->uses);
		/* what a bill shows for a key: the key itself, among keys the
		 * ledger keeps (bill's own) */
		uint32_t shows = key_entry__shows((enum row_field)i);
		assert_true(shows & RF_BIT(i));
		for (int j = 0; j < RF_COUNT; j++)
			assert_true(!(shows & RF_BIT(j)) || !(e->uses & KEY_BILL) ||
				    (key_entry((enum row_field)j)->uses & KEY_BILL));
	}
}

static void found_by_name_and_alias(void **state)
{
	(void)state;
	enum row_field f = RF_COUNT;
	bool known;
	assert_int_equal(key_entry__find("host", 4, KEY_BILL, &f, &known), 0);
	assert_int_equal(f, RF_VM);
	assert_int_equal(key_entry__find("vm", 2, KEY_REPORT, &f, &known), 0);
	assert_int_equal(f, RF_VM);
	/* known to some command, not to this one: the error can say why */
	assert_int_equal(key_entry__find("dso", 3, KEY_ANALYZE, &f, &known), -EINVAL);
	assert_true(known);
	assert_int_equal(f, RF_DSO);
	assert_int_equal(key_entry__find("month", 5, KEY_REPORT, &f, &known), -EINVAL);
	assert_true(known);
	assert_int_equal(key_entry__find("stack", 5, KEY_REPORT | KEY_BILL, &f, &known),
			 -EINVAL);
	assert_false(known);
	assert_int_equal(key_entry__find("threa", 5, KEY_REPORT, &f, &known), -EINVAL);
	assert_false(known);
	struct row_keys k;
	size_t bad;
	assert_int_equal(row_keys__parse(&k, "thread,function", &bad), 0);
	assert_int_equal(k.n, 2);
	assert_int_equal(row_keys__parse(&k, "comm,day", &bad), -EINVAL);
	assert_int_equal(bad, 5);
	assert_int_equal(row_keys__parse_for(&k, "comm,day", KEY_BILL, &bad), 0);
	assert_int_equal(row_keys__parse(&k, "comm,comm", &bad), -EINVAL);
}

static void names_wrap(void **state)
{
	(void)state;
	char buf[256];
	assert_string_equal(key_entry__names(KEY_ANALYZE, "|", 0, 0, buf, sizeof(buf)),
			    "process|thread|function");
	/* a line broken before the name that would pass the width, the
	 * separator's space given up for the break */
	key_entry__names(KEY_REPORT, ", ", 30, 10, buf, sizeof(buf));
	char *nl = strchr(buf, '\n');
	assert_non_null(nl);
	assert_true(nl - buf + 10 <= 30);
	assert_int_equal(nl[-1], ',');
	for (char *p = nl + 1, *q; (q = strchr(p, '\n')); p = q + 1)
		assert_true(q - p <= 30);
}

static void rows_in_key_order(void **state)
{
	(void)state;
	/* by thread: pid, then tid; by function: name, then file */
	struct table t = { 0 };
	struct table_row rows[] = {
		{ .pid = 2, .tid = 1, .function = "b", .dso = "y" },
		{ .pid = 1, .tid = 9, .function = "b", .dso = "x" },
		{ .pid = 1, .tid = 3, .function = "a", .dso = "z" },
	};
	size_t bad;
	row_keys__parse(&t.keys, "thread", &bad);
	t.rows = rows;
	t.nrows = 3;
	struct sort_spec none = { .n = 0 };
	table__sort(&t, &none);
	assert_int_equal(rows[0].tid, 3);
	assert_int_equal(rows[1].tid, 9);
	assert_int_equal(rows[2].pid, 2);
	row_keys__parse(&t.keys, "function", &bad);
	table__sort(&t, &none);
	assert_string_equal(rows[0].function, "a");
	assert_string_equal(rows[1].dso, "x");
	assert_string_equal(rows[2].dso, "y");
}

/* --by program: the command's first word without its directory, else a
 * kernel thread's [comm]; rows of one program whatever their arguments */
static void program_derived(void **state)
{
	(void)state;
	struct row_keys keys;
	size_t bad;
	assert_int_equal(row_keys__parse(&keys, "program", &bad), 0);
	struct rows r;
	rows__init(&r, &keys);
	struct row_figures f = { .samples = 1 };
	struct row_key a = { .command = "/usr/bin/python3 a.py", .comm = "x", .pid = 1 };
	struct row_key b = { .command = "python3 -m b", .comm = "y", .pid = 2 };
	struct row_key c = { .comm = "kworker/0:1", .pid = 3 };
	struct row_key d = { .pid = 4 };
	assert_int_equal(rows__add(&r, &a, NULL, &f), 0);
	assert_int_equal(rows__add(&r, &b, NULL, &f), 0);
	assert_int_equal(rows__add(&r, &c, NULL, &f), 0);
	assert_int_equal(rows__add(&r, &d, NULL, &f), 0);
	assert_int_equal(r.n, 3);
	assert_string_equal(rows__str(&r, r.v[0].derived[0]), "python3");
	assert_int_equal(r.v[0].f.samples, 2);
	assert_string_equal(rows__str(&r, r.v[1].derived[0]), "[kworker/0:1]");
	assert_null(rows__str(&r, r.v[2].derived[0]));
	rows__release(&r);
}

/* A row's command line and comm are shown while its contributions agree
 * on them: many command lines summed into one comm's row leave it none,
 * and only the first is kept as a string (a compile loop's thousands of
 * command lines were most of a --by comm report's memory). */
static void attrs_while_agreed(void **state)
{
	(void)state;
	struct row_keys keys;
	size_t bad;
	assert_int_equal(row_keys__parse(&keys, "comm", &bad), 0);
	struct rows r;
	rows__init(&r, &keys);
	struct row_figures f = { .samples = 1 };
	struct row_key k = { .comm = "cc1", .pid = 1 };
	struct row_attrs same = { .command = "cc1 -O2 a.c", .comm = "cc1" };
	/* a copy: agreement is by the string, not the pointer */
	char again[] = "cc1 -O2 a.c";
	struct row_attrs same2 = { .command = again, .comm = "cc1" };
	assert_int_equal(rows__add(&r, &k, &same, &f), 0);
	assert_int_equal(rows__add(&r, &k, &same2, &f), 0);
	assert_int_equal(r.n, 1);
	assert_string_equal(rows__str(&r, r.v[0].attr_command), "cc1 -O2 a.c");
	assert_string_equal(rows__str(&r, r.v[0].attr_comm), "cc1");
	uint32_t strings = r.strings.count;
	char cmd[64];
	for (int i = 0; i < 1000; i++) {
		snprintf(cmd, sizeof(cmd), "cc1 -O2 file%d.c", i);
		struct row_attrs other = { .command = cmd, .comm = "cc1" };
		k.pid = 2 + (uint32_t)i;
		assert_int_equal(rows__add(&r, &k, &other, &f), 0);
	}
	assert_int_equal(r.n, 1);
	assert_int_equal(r.v[0].f.samples, 1002);
	assert_null(rows__str(&r, r.v[0].attr_command));	/* mixed */
	assert_string_equal(rows__str(&r, r.v[0].attr_comm), "cc1");	/* agreed */
	assert_int_equal(r.strings.count, strings);	/* none of them kept */
	/* one without a command mixes a row that had one */
	struct row_key k2 = { .comm = "sh", .pid = 9 };
	struct row_attrs sh = { .command = "sh -c x", .comm = "sh" };
	struct row_attrs none = { .comm = "sh" };
	assert_int_equal(rows__add(&r, &k2, &sh, &f), 0);
	assert_int_equal(rows__add(&r, &k2, &none, &f), 0);
	assert_int_equal(r.n, 2);
	assert_null(rows__str(&r, r.v[1].attr_command));
	assert_string_equal(rows__str(&r, r.v[1].attr_comm), "sh");
	rows__release(&r);
}

/* A thread's programs, added through one base: one row when the key has
 * no program's field (the base's row found once), a row each when it
 * has (comm,function). */
static void base_rows(void **state)
{
	(void)state;
	const char *lists[] = { "comm", "comm,function" };
	for (int l = 0; l < 2; l++) {
		struct row_keys keys;
		size_t bad;
		assert_int_equal(row_keys__parse(&keys, lists[l], &bad), 0);
		struct rows r;
		rows__init(&r, &keys);
		struct row_key k = { .comm = "cc1", .pid = 1, .dso = "cc1" };
		struct row_attrs at = { .command = "cc1 a.c", .comm = "cc1" };
		struct row_base b;
		assert_int_equal(rows__base(&r, &k, &at, &b), 0);
		const char *fns[] = { "parse", "lex", "parse", "emit" };
		for (int i = 0; i < 4; i++) {
			struct row_figures f = { .samples = 1u << i, .cpu_ns = 10 };
			k.function = fns[i];
			assert_int_equal(rows__add_to(&r, &b, &k, &f), 0);
		}
		/* another thread's, into the first row: its command differs */
		struct row_key k2 = { .comm = "cc1", .pid = 2, .dso = "cc1", .function = "parse" };
		struct row_attrs at2 = { .command = "cc1 b.c", .comm = "cc1" };
		struct row_figures f2 = { .samples = 16, .cpu_ns = 10 };
		assert_int_equal(rows__add(&r, &k2, &at2, &f2), 0);
		if (l == 0) {
			assert_int_equal(r.n, 1);
			assert_int_equal(r.v[0].f.samples, 31);
			assert_int_equal(r.v[0].f.cpu_ns, 50);
		} else {
			assert_int_equal(r.n, 3);	/* parse, lex, emit */
			assert_string_equal(rows__str(&r, r.v[0].function), "parse");
			assert_int_equal(r.v[0].f.samples, 1 + 4 + 16);
			assert_int_equal(r.v[1].f.samples, 2);
			assert_int_equal(r.v[2].f.samples, 8);
			/* the rows thread 2 did not add to keep thread 1's command */
			assert_string_equal(rows__str(&r, r.v[1].attr_command), "cc1 a.c");
		}
		assert_null(rows__str(&r, r.v[0].attr_command));	/* mixed */
		rows__release(&r);
	}
}

/* Every field of two rows alike (their padding aside). */
static bool same_row(const struct row *a, const struct row *b)
{
	return a->vm == b->vm && a->comm == b->comm && a->command == b->command &&
	       a->executable == b->executable && a->dso == b->dso &&
	       a->function == b->function && a->account == b->account &&
	       a->cgroup == b->cgroup && a->pid == b->pid && a->tid == b->tid &&
	       a->start_ns == b->start_ns && a->uid == b->uid && a->cpu == b->cpu &&
	       a->stack == b->stack && !memcmp(a->derived, b->derived, sizeof(a->derived)) &&
	       a->attr_command == b->attr_command && a->attr_comm == b->attr_comm &&
	       a->attr_cgroup == b->attr_cgroup && a->seq == b->seq &&
	       a->attr_seen == b->attr_seen && a->cgroup_seen == b->cgroup_seen &&
	       a->f.samples == b->f.samples && a->f.steal_samples == b->f.steal_samples &&
	       a->f.cpu_ns == b->f.cpu_ns && a->f.steal_ns == b->f.steal_ns &&
	       a->f.control_ns == b->f.control_ns && a->f.inclusive_ns == b->f.inclusive_ns &&
	       a->f.wait_ns == b->f.wait_ns && a->f.wait_threads == b->f.wait_threads;
}

/* rows__make_like of a row rows__make made is the row rows__make makes
 * of the same base and account with another stack and figures, seq
 * and all, and the row made after it is too: stack rows keyed by
 * thread, by comm and CPU, by process and cgroup. */
static void made_like(void **state)
{
	(void)state;
	const char *lists[] = { "thread,account", "comm,cpu", "process,account,cgroup" };
	for (int l = 0; l < 3; l++) {
		struct row_keys keys;
		size_t bad;
		assert_int_equal(row_keys__parse(&keys, lists[l], &bad), 0);
		keys.v[keys.n++] = RF_STACK;	/* as analysis keys its stack rows */
		keys.mask |= RF_BIT(RF_STACK);
		for (int pass = 0; pass < 2; pass++) {
			struct rows r;
			rows__init(&r, &keys);
			struct row_key k = { .comm = "cc1", .pid = 7, .tid = 8, .cpu = 1,
					     .cgroup = "/a", .account = "program", .stack = 3 };
			struct row_attrs at = { .command = "cc1 a.c", .comm = "cc1", .cgroup = "/a" };
			struct row_base b;
			assert_int_equal(rows__base(&r, &k, &at, &b), 0);
			struct row_figures f = { .samples = 2, .cpu_ns = 20, .steal_ns = 1 };
			struct row first, again;
			assert_int_equal(rows__make(&r, &b, &k, &f, &first), 0);
			struct row_figures g = { .samples = 5, .cpu_ns = 50 };
			k.stack = 9;
			if (pass)
				rows__make_like(&r, &first, 9, &g, &again);
			else
				assert_int_equal(rows__make(&r, &b, &k, &g, &again), 0);
			/* and a row made after it, of another account */
			struct row after;
			k.account = "kernel";
			assert_int_equal(rows__make(&r, &b, &k, &g, &after), 0);
			/* the other pass's rows, kept apart */
			static struct row other[3][2];
			if (!pass) {
				other[l][0] = again;
				other[l][1] = after;
			} else {
				assert_true(same_row(&again, &other[l][0]));
				assert_true(same_row(&after, &other[l][1]));
			}
			rows__release(&r);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_entry_whole),
		cmocka_unit_test(found_by_name_and_alias),
		cmocka_unit_test(names_wrap),
		cmocka_unit_test(rows_in_key_order),
		cmocka_unit_test(program_derived),
		cmocka_unit_test(attrs_while_agreed),
		cmocka_unit_test(base_rows),
		cmocka_unit_test(made_like),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
