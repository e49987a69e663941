/* ledger_bill: bills by composed keys and periods, priced, and their span;
 * retention (ledger.h). */
#include "ledger_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/kthread.h"
#include "../core/units.h"
#include "../core/banned.h"

/* Where the ledger keeps each key's value, in the order bills have
 * always grouped by (rows of equal CPU time keep their order). A period
 * is of its collection's end; an import's collection has no wall-clock
 * time: its period is unknown (NULL), not 1970-01-01. */
#define PERIOD(fmt) "CASE WHEN c.end_ns > 0 THEN strftime('" fmt "', c.end_ns / " \
	NSEC_PER_SEC_SQL ", 'unixepoch') END"
static const struct column {
	enum row_field key;
	const char *sql;
} columns[] = {
	{ RF_VM, "t.host" }, { RF_USER, "t.uid" }, { RF_COMMAND, "t.command" },
	{ RF_COMM, "coalesce(t.comm, t.command)" }, { RF_EXECUTABLE, "t.executable" },
	{ RF_ACCOUNT, "u.account" }, { RF_PROCESS, "t.pid" }, { RF_THREAD, "t.tid" },
	{ RF_HOUR, PERIOD("%Y-%m-%dT%H:00") }, { RF_DAY, PERIOD("%Y-%m-%d") },
	{ RF_MONTH, PERIOD("%Y-%m") }, { RF_CGROUP, "t.cgroup" },
	{ RF_START, "t.proc_start_ns" },
};
#define NCOLUMNS (sizeof(columns) / sizeof(*columns))

/* The keys whose values the bill's rows show (key_entry__shows). */
static uint32_t shown(const enum row_field *keys, size_t n)
{
	uint32_t m = 0;
	for (size_t i = 0; i < n; i++)
		m |= key_entry__shows(keys[i]);
	return m;
}

/* A column's expression in this ledger, NULL where not shown. */
static const char *column_sql(const struct ledger *l, const struct column *c, uint32_t shows)
{
	/* a process is its pid and start: pids are given again (its start
	 * the bill shows where two rows would otherwise look alike) */
	if (c->key == RF_START)
		return (shows & RF_BIT(RF_PROCESS)) && l->version >= 2 ? c->sql : NULL;
	if (!(shows & RF_BIT(c->key)))
		return NULL;
	/* --by comm: kernel threads (command "[comm]") by kind, as
	 * /metrics; --by thread keeps each thread's name */
	if (c->key == RF_COMM && l->version < 2)
		return "t.command";
	if (c->key == RF_COMM && !(shows & RF_BIT(RF_THREAD)))
		return "CASE WHEN t.command LIKE '[%]' AND t.comm IS NOT NULL THEN "
		       "cpuledger_kind(t.comm) ELSE coalesce(t.comm, t.command) END";
	/* before version 3 the ledger kept no cgroups: unknown */
	if (c->key == RF_CGROUP && l->version < 3)
		return "NULL";
	return c->sql;
}

/* The period the rows are billed in, or NULL. */
static const char *period_sql(uint32_t shows)
{
	for (size_t i = 0; i < NCOLUMNS; i++)
		if (key_entry(columns[i].key)->type == KEY_PERIOD &&
		    (shows & RF_BIT(columns[i].key)))
			return columns[i].sql;
	return NULL;
}

/* SELECT's key columns (every column, NULL where not shown) and GROUP
 * BY's expressions for keys. */
static void key_sql(const struct ledger *l, uint32_t shows, char *cols, size_t csize,
		    char *group, size_t gsize)
{
	size_t c = 0, g = 0;
	cols[0] = group[0] = '\0';
	for (size_t i = 0; i < NCOLUMNS; i++) {
		const char *expr = column_sql(l, &columns[i], shows);
		c += (size_t)snprintf(cols + c, csize - c, "%s, ", expr ? expr : "NULL");
		if (expr)
			g += (size_t)snprintf(group + g, gsize - g, "%s%s", g ? ", " : "", expr);
	}
	if (!g)
		snprintf(group, gsize, "1");
}

static struct bill_row row_of(sqlite3_stmt *st)
{
	struct bill_row r;
	for (int f = 0; f < RF_COUNT; f++) {
		r.text[f] = NULL;
		r.number[f] = -1;
	}
	for (int i = 0; i < (int)NCOLUMNS; i++) {
		enum row_field f = columns[i].key;
		if (key_entry__is_text(key_entry(f)))
			r.text[f] = (const char *)sqlite3_column_text(st, i);
		else if (sqlite3_column_type(st, i) != SQLITE_NULL)
			r.number[f] = sqlite3_column_int64(st, i);
	}
	r.cpu_ns = sqlite3_column_int64(st, NCOLUMNS);
	r.control_ns = sqlite3_column_int64(st, NCOLUMNS + 1);
	r.steal_ns = sqlite3_column_int64(st, NCOLUMNS + 2);
	r.unknown_steal_cpu_ns = sqlite3_column_int64(st, NCOLUMNS + 3);
	r.samples = sqlite3_column_int64(st, NCOLUMNS + 4);
	r.cost = sqlite3_column_double(st, NCOLUMNS + 5);
	r.wait_known = sqlite3_column_type(st, NCOLUMNS + 6) != SQLITE_NULL;
	r.wait_ns = r.wait_known ? sqlite3_column_int64(st, NCOLUMNS + 6) : 0;
	return r;
}

/* SQL's kernel thread kinds: kthread_kind, so that the bill and
 * /metrics group kernel threads alike. */
static void kind_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	const char *comm = (const char *)sqlite3_value_text(argv[0]);
	char buf[256];
	if (!comm) {
		sqlite3_result_null(ctx);
		return;
	}
	sqlite3_result_text(ctx, kthread_kind(comm, buf, sizeof(buf)), -1,
			    SQLITE_TRANSIENT);
}

/* "u.account IN (?,...)" for the control accounts; the cost expression,
 * each account's price or the rest's (0 without one). */
static void control_and_cost_sql(const struct bill_query *q, char *in, size_t isize,
				 char *cost, size_t csize)
{
	snprintf(in, isize, "0");
	if (q->ncontrol) {
		size_t n = (size_t)snprintf(in, isize, "u.account IN (");
		for (size_t i = 0; i < q->ncontrol && n < isize - 4; i++)
			n += (size_t)snprintf(in + n, isize - n, i ? ",?" : "?");
		snprintf(in + n, isize - n, ")");
	}
	size_t n = (size_t)snprintf(cost, csize, "CASE");
	for (size_t i = 0; i < q->nprices && n < csize - 32; i++)
		if (q->prices[i].account)
			n += (size_t)snprintf(cost + n, csize - n, " WHEN u.account = ? THEN ?");
	if (n == 4)	/* no account's own price: the rest's */
		snprintf(cost, csize, "?");
	else
		snprintf(cost + n, csize - n, " ELSE ? END");
}

/* The wait's sum and its join: a task's wait counted once per collection,
 * on its usage row of the least account (its rows are one per account);
 * NULL before version 5 and by account (no one account waited). */
static void wait_sql(const struct ledger *l, uint32_t shows, const char **sum,
		     const char **join)
{
	bool none = l->version < 5 || (shows & RF_BIT(RF_ACCOUNT));
	*sum = none ? "NULL" : "sum(w.wait_ns)";
	*join = none ? "" : "LEFT JOIN waits w ON w.collection_id = u.collection_id AND "
		"w.task_id = u.task_id AND u.account = (SELECT min(u2.account) FROM usage u2 "
		"WHERE u2.collection_id = u.collection_id AND u2.task_id = u.task_id) ";
}

static void bind_query(sqlite3_stmt *st, const struct bill_query *q)
{
	int p = 1;
	double rest = 0;
	for (size_t i = 0; i < q->ncontrol; i++)
		sqlite3_bind_text(st, p++, q->control[i], -1, SQLITE_STATIC);
	for (size_t i = 0; i < q->nprices; i++) {
		if (!q->prices[i].account) {
			rest = q->prices[i].per_cpu_hour;
			continue;
		}
		sqlite3_bind_text(st, p++, q->prices[i].account, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, p++, q->prices[i].per_cpu_hour);
	}
	sqlite3_bind_double(st, p++, rest);
	sqlite3_bind_int64(st, p++, q->since_ns);
	sqlite3_bind_int64(st, p++, q->until_ns);
}

int ledger__bill_query(struct ledger *l, const struct bill_query *q,
		       int (*fn)(void *ctx, const struct bill_row *row), void *ctx,
		       char *msg, size_t size)
{
	char in[1024], cost[4096], cols[1536], group[768], order[1024], sql[12288];
	if (q->ncontrol > 64 || q->nprices > 64)
		return ledger_fail(msg, size, "ledger: too many accounts in one bill");
	control_and_cost_sql(q, in, sizeof(in), cost, sizeof(cost));
	uint32_t shows = shown(q->keys, q->nkeys);
	key_sql(l, shows, cols, sizeof(cols), group, sizeof(group));
	const char *period = period_sql(shows), *wsum, *wjoin;
	wait_sql(l, shows, &wsum, &wjoin);
	snprintf(order, sizeof(order), "%s%s%d DESC, %s", period ? period : "",
		 period ? ", " : "", (int)NCOLUMNS + 1, group);
	snprintf(sql, sizeof(sql),
		 "SELECT %s sum(u.cpu_ns), sum(CASE WHEN %s THEN u.cpu_ns ELSE 0 END), "
		 "coalesce(sum(u.steal_ns), 0), "
		 "sum(CASE WHEN u.steal_ns IS NULL THEN u.cpu_ns ELSE 0 END), sum(u.samples), "
		 "coalesce(sum(u.cpu_ns * (%s)), 0) / 3.6e12, %s "
		 "FROM usage u JOIN collections c ON c.id = u.collection_id "
		 "JOIN tasks t ON t.id = u.task_id %sWHERE c.end_ns >= ? AND c.end_ns < ? "
		 "GROUP BY %s ORDER BY %s", cols, in, cost, wsum, wjoin, group, order);
	sqlite3_create_function(l->db, "cpuledger_kind", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
				NULL, kind_fn, NULL, NULL);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, sql, -1, &st, NULL) != SQLITE_OK)
		return ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	bind_query(st, q);
	int rc, e = 0;
	while (!e && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct bill_row r = row_of(st);
		e = fn(ctx, &r);
	}
	if (!e && rc != SQLITE_DONE)
		e = ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_finalize(st);
	return e;
}

int ledger__bill(struct ledger *l, const enum row_field *keys, size_t nkeys,
		 int64_t since_ns, int64_t until_ns, const char *const *control,
		 size_t ncontrol, int (*fn)(void *ctx, const struct bill_row *row),
		 void *ctx, char *msg, size_t size)
{
	struct bill_query q = { keys, nkeys, since_ns, until_ns, control, ncontrol, NULL, 0 };
	return ledger__bill_query(l, &q, fn, ctx, msg, size);
}

static int span_hosts(struct ledger *l, int64_t since_ns, int64_t until_ns,
		      struct bill_span *out, char *msg, size_t size)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "SELECT DISTINCT host FROM collections "
			       "WHERE end_ns >= ? AND end_ns < ? ORDER BY host", -1, &st,
			       NULL) != SQLITE_OK)
		return ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_bind_int64(st, 1, since_ns);
	sqlite3_bind_int64(st, 2, until_ns);
	int rc, e = 0;
	while (!e && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		char **h = realloc(out->hosts, (out->nhosts + 1) * sizeof(*h));
		if (!h || !(h[out->nhosts] = strdup((const char *)sqlite3_column_text(st, 0)))) {
			if (h)
				out->hosts = h;
			e = ledger_fail(msg, size, "out of memory");
			break;
		}
		out->hosts = h;
		out->nhosts++;
	}
	if (!e && rc != SQLITE_DONE)
		e = ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_finalize(st);
	return e;
}

int ledger__bill_span(struct ledger *l, int64_t since_ns, int64_t until_ns,
		      struct bill_span *out, char *msg, size_t size)
{
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "SELECT coalesce(min(CASE WHEN end_ns > 0 THEN start_ns END), 0), "
			       "coalesce(max(end_ns), 0), count(*), "
			       "coalesce(sum(end_ns <= 0), 0) FROM collections "
			       "WHERE end_ns >= ? AND end_ns < ?", -1, &st, NULL) != SQLITE_OK)
		return ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_bind_int64(st, 1, since_ns);
	sqlite3_bind_int64(st, 2, until_ns);
	int e = 0;
	if (sqlite3_step(st) == SQLITE_ROW) {
		out->first_ns = sqlite3_column_int64(st, 0);
		out->last_ns = sqlite3_column_int64(st, 1);
		out->collections = sqlite3_column_int64(st, 2);
		out->undated = sqlite3_column_int64(st, 3);
	} else {
		e = ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	}
	sqlite3_finalize(st);
	return e ? e : span_hosts(l, since_ns, until_ns, out, msg, size);
}

void bill_span__release(struct bill_span *s)
{
	for (size_t i = 0; i < s->nhosts; i++)
		free(s->hosts[i]);
	free(s->hosts);
	memset(s, 0, sizeof(*s));
}

/* A collection goes by its own end; one whose end is unknown (0: an
 * imported perf script without the day) by when it was added, and never
 * when that is unknown too (added before schema version 4). */
#define RETAIN_WHERE "((end_ns > 0 AND end_ns < %lld) OR " \
	"(end_ns <= 0 AND added_ns IS NOT NULL AND added_ns < %lld))"

int64_t ledger__retain(struct ledger *l, int64_t before_ns, char *msg, size_t size)
{
	char sql[768];
	int e = ledger_exec(l, "BEGIN IMMEDIATE", msg, size);
	if (e)
		return e;
	snprintf(sql, sizeof(sql),
		 "DELETE FROM usage WHERE collection_id IN "
		 "(SELECT id FROM collections WHERE " RETAIN_WHERE ");"
		 "DELETE FROM waits WHERE collection_id IN "
		 "(SELECT id FROM collections WHERE " RETAIN_WHERE ");"
		 "DELETE FROM collections WHERE " RETAIN_WHERE ";", (long long)before_ns,
		 (long long)before_ns, (long long)before_ns, (long long)before_ns,
		 (long long)before_ns, (long long)before_ns);
	e = ledger_exec(l, sql, msg, size);
	int64_t gone = e ? 0 : sqlite3_changes(l->db);
	if (!e)
		e = ledger_exec(l, "DELETE FROM tasks WHERE id NOT IN (SELECT task_id FROM usage);",
				msg, size);
	if (!e)
		e = ledger_exec(l, "COMMIT", msg, size);
	else
		sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
	return e ? e : gone;
}

int ledger__check_accounts(struct ledger *l, const char *const *names, size_t n,
			   char *msg, size_t size)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "SELECT 1 FROM usage WHERE account = ? LIMIT 1", -1, &st,
			       NULL) != SQLITE_OK)
		return ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	int e = 0;
	for (size_t i = 0; i < n && !e; i++) {
		if (!strcmp(names[i], "kernel") || !strcmp(names[i], "program") ||
		    !strcmp(names[i], "library"))
			continue;
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, names[i], -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_ROW) {
			snprintf(msg, size, "--control: no account '%s' in the ledger (nor a default: "
				 "kernel, program, library)", names[i]);
			e = -ENOENT;
		}
	}
	sqlite3_finalize(st);
	return e;
}
