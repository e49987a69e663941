/* ledger_write: collections written one transaction each (ledger.h). */
#include "ledger_impl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../collect/clock.h"
#include "../core/banned.h"

/* Whether the recording has that collection (seq < 0: any). */
static int has_collection(struct ledger *l, const struct collection *c, char *msg, size_t size)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(l->db, c->seq < 0 ?
			       "SELECT id FROM collections WHERE recording = ?" :
			       "SELECT id FROM collections WHERE recording = ? AND seq = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_bind_text(st, 1, c->recording, -1, SQLITE_STATIC);
	if (c->seq >= 0)
		sqlite3_bind_int64(st, 2, c->seq);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW) {
		snprintf(msg, size, c->seq < 0 ? "this recording is in the ledger already "
			 "(ledger add adds what of it is not)" :
			 "collection %lld of this recording is in the ledger already",
			 (long long)c->seq);
		return -EEXIST;
	}
	return rc == SQLITE_DONE ? 0 : ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
}

int ledger__begin(struct ledger *l, const struct collection *c, char *msg,
		  size_t size)
{
	int e = ledger_exec(l, "BEGIN IMMEDIATE", msg, size);
	if (e)
		return e;
	if (c->recording && (e = has_collection(l, c, msg, size))) {
		ledger__abort(l);
		return e;
	}
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(l->db, "INSERT INTO collections (collected_ns, reason, "
			       "start_ns, end_ns, host, boot_id, recording, seq, added_ns, "
			       "steal_source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &st,
			       NULL) != SQLITE_OK)
		goto sql_error;
	if (c->steal_source)
		sqlite3_bind_text(st, 10, c->steal_source, -1, SQLITE_STATIC);
	/* the wall clock now: retention's time for a collection whose own
	 * is unknown */
	sqlite3_bind_int64(st, 9, clock_real_ns());
	sqlite3_bind_int64(st, 1, c->collected_ns);
	sqlite3_bind_text(st, 2, c->reason, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, c->start_ns);
	sqlite3_bind_int64(st, 4, c->end_ns);
	sqlite3_bind_text(st, 5, c->host, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, c->boot_id, -1, SQLITE_STATIC);
	if (c->recording)
		sqlite3_bind_text(st, 7, c->recording, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 8, c->seq < 0 ? 0 : c->seq);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto sql_error;
	sqlite3_finalize(st);
	l->collection = sqlite3_last_insert_rowid(l->db);
	l->host = c->host;
	l->boot_id = c->boot_id;
	return 0;
sql_error:
	e = ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_finalize(st);
	ledger__abort(l);
	return e;
}

/* stmt, prepared on first use and reset for each later one. */
static sqlite3_stmt *statement(struct ledger *l, sqlite3_stmt **stmt, const char *sql)
{
	if (*stmt) {
		sqlite3_reset(*stmt);
		sqlite3_clear_bindings(*stmt);
		return *stmt;
	}
	if (sqlite3_prepare_v3(l->db, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, NULL) != SQLITE_OK)
		*stmt = NULL;
	return *stmt;
}

/* The task, once per (host, boot, pid, tid, process start, command); its
 * span grows. Its id, or -1 with msg set. */
static int64_t task_id(struct ledger *l, const struct task_info *t, char *msg, size_t size)
{
	sqlite3_stmt *st = statement(l, &l->task,
		"INSERT INTO tasks (host, boot_id, pid, tid, proc_start_ns, uid, command, "
		"executable, comm, start_ns, end_ns, cgroup) "
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
		"ON CONFLICT (host, boot_id, pid, tid, proc_start_ns, command) DO UPDATE SET "
		"uid = coalesce(excluded.uid, uid), "
		"executable = coalesce(excluded.executable, executable), "
		"comm = coalesce(excluded.comm, comm), "
		"cgroup = coalesce(excluded.cgroup, cgroup), "
		"start_ns = min(coalesce(start_ns, excluded.start_ns), "
		"coalesce(excluded.start_ns, start_ns)), "
		"end_ns = max(coalesce(end_ns, excluded.end_ns), "
		"coalesce(excluded.end_ns, end_ns)) RETURNING id");
	if (!st) {
		ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
		return -1;
	}
	sqlite3_bind_text(st, 1, l->host, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, l->boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, t->pid);
	sqlite3_bind_int64(st, 4, t->tid);
	sqlite3_bind_int64(st, 5, t->proc_start_ns);
	if (t->uid >= 0)
		sqlite3_bind_int64(st, 6, t->uid);
	sqlite3_bind_text(st, 7, t->command ? t->command : "", -1, SQLITE_STATIC);
	if (t->executable)
		sqlite3_bind_text(st, 8, t->executable, -1, SQLITE_STATIC);
	if (t->comm)
		sqlite3_bind_text(st, 9, t->comm, -1, SQLITE_STATIC);
	if (t->start_ns >= 0)
		sqlite3_bind_int64(st, 10, t->start_ns);
	if (t->end_ns >= 0)
		sqlite3_bind_int64(st, 11, t->end_ns);
	if (t->cgroup)
		sqlite3_bind_text(st, 12, t->cgroup, -1, SQLITE_STATIC);
	int64_t id = -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	else
		ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_reset(st);
	return id;
}

/* The task's wait in the open collection, summed with what it has. */
static int add_wait(struct ledger *l, int64_t task, int64_t wait_ns, char *msg, size_t size)
{
	sqlite3_stmt *st = statement(l, &l->wait,
		"INSERT INTO waits (collection_id, task_id, wait_ns) VALUES (?, ?, ?) "
		"ON CONFLICT DO UPDATE SET wait_ns = wait_ns + excluded.wait_ns");
	if (!st)
		return ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_bind_int64(st, 1, l->collection);
	sqlite3_bind_int64(st, 2, task);
	sqlite3_bind_int64(st, 3, wait_ns);
	int e = sqlite3_step(st) == SQLITE_DONE ? 0 :
		ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_reset(st);
	return e;
}

int ledger__add(struct ledger *l, const struct task_info *t,
		const struct usage *u, char *msg, size_t size)
{
	int64_t task = task_id(l, t, msg, size);
	if (task < 0)
		return -EIO;
	/* an unknown steal stays unknown when summed with a known one */
	sqlite3_stmt *st = statement(l, &l->usage,
		"INSERT INTO usage (collection_id, task_id, account, cpu_ns, "
		"steal_ns, samples) VALUES (?, ?, ?, ?, ?, ?) "
		"ON CONFLICT DO UPDATE SET cpu_ns = cpu_ns + excluded.cpu_ns, "
		"steal_ns = steal_ns + excluded.steal_ns, "
		"samples = samples + excluded.samples");
	if (!st)
		return ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_bind_int64(st, 1, l->collection);
	sqlite3_bind_int64(st, 2, task);
	sqlite3_bind_text(st, 3, u->account, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, u->cpu_ns);
	if (u->steal_known)
		sqlite3_bind_int64(st, 5, u->steal_ns);
	sqlite3_bind_int64(st, 6, u->samples);
	int e = sqlite3_step(st) == SQLITE_DONE ? 0 :
		ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_reset(st);
	return e || !u->wait_known ? e : add_wait(l, task, u->wait_ns, msg, size);
}

int ledger__commit(struct ledger *l, char *msg, size_t size)
{
	int e = ledger_exec(l, "COMMIT", msg, size);
	if (e)
		ledger__abort(l);
	l->collection = 0;
	return e;
}

void ledger__abort(struct ledger *l)
{
	sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
	l->collection = 0;
}

int ledger__recording(struct ledger *l, const char *recording, int64_t *next_seq,
		      int (*fn)(void *ctx, const struct ledger_sum *s), void *ctx,
		      char *msg, size_t size)
{
	sqlite3_stmt *st;
	int rc;
	*next_seq = 0;
	if (sqlite3_prepare_v2(l->db, "SELECT coalesce(max(seq) + 1, 0), count(*) FROM "
			       "collections WHERE recording = ?", -1, &st, NULL) != SQLITE_OK)
		return ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_bind_text(st, 1, recording, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		*next_seq = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(l->db,
			       "SELECT t.pid, t.tid, t.proc_start_ns, t.command, u.account, "
			       "sum(u.cpu_ns), sum(u.steal_ns), sum(u.samples) FROM usage u "
			       "JOIN collections c ON c.id = u.collection_id "
			       "JOIN tasks t ON t.id = u.task_id WHERE c.recording = ? "
			       "GROUP BY t.id, u.account", -1, &st, NULL) != SQLITE_OK)
		return ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_bind_text(st, 1, recording, -1, SQLITE_STATIC);
	int e = 0;
	while (!e && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ledger_sum s = {
			.pid = (uint32_t)sqlite3_column_int64(st, 0),
			.tid = (uint32_t)sqlite3_column_int64(st, 1),
			.proc_start_ns = sqlite3_column_int64(st, 2),
			.command = (const char *)sqlite3_column_text(st, 3),
			.account = (const char *)sqlite3_column_text(st, 4),
			.cpu_ns = sqlite3_column_int64(st, 5),
			.steal_ns = sqlite3_column_int64(st, 6),
			.samples = sqlite3_column_int64(st, 7),
		};
		e = fn(ctx, &s);
	}
	if (!e && rc != SQLITE_DONE)
		e = ledger_fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_finalize(st);
	return e;
}
