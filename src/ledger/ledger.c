/* ledger: see ledger.h and docs/ledger.md. */
#include "ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/banned.h"

/* PRAGMA application_id: "CPLG", so a ledger is told from other SQLite
 * files before anything is written to them. */
#define LEDGER_APP_ID 0x43504c47

struct ledger {
	sqlite3 *db;
	sqlite3_stmt *task, *usage;	/* prepared once, reused per row */
	int64_t collection;	/* the open collection's id, or 0 */
	const char *host, *boot_id;
};

static const char schema_v1[] =
	"CREATE TABLE collections ("
	" id INTEGER PRIMARY KEY,"
	" collected_ns INTEGER NOT NULL,"
	" reason TEXT NOT NULL,"
	" start_ns INTEGER NOT NULL,"
	" end_ns INTEGER NOT NULL,"
	" host TEXT NOT NULL,"
	" boot_id TEXT NOT NULL,"
	" recording TEXT,"
	" seq INTEGER NOT NULL DEFAULT 0,"
	" UNIQUE (recording, seq));"
	"CREATE INDEX collections_end ON collections(end_ns);"
	"CREATE TABLE tasks ("
	" id INTEGER PRIMARY KEY,"
	" host TEXT NOT NULL,"
	" boot_id TEXT NOT NULL,"
	" pid INTEGER NOT NULL,"
	" tid INTEGER NOT NULL,"
	" uid INTEGER,"
	" command TEXT NOT NULL,"
	" executable TEXT,"
	" start_ns INTEGER,"
	" end_ns INTEGER,"
	" UNIQUE (host, boot_id, pid, tid, command));"
	"CREATE TABLE usage ("
	" collection_id INTEGER NOT NULL REFERENCES collections(id),"
	" task_id INTEGER NOT NULL REFERENCES tasks(id),"
	" account TEXT NOT NULL,"
	" cpu_ns INTEGER NOT NULL,"
	" steal_ns INTEGER NOT NULL,"
	" samples INTEGER NOT NULL,"
	" PRIMARY KEY (collection_id, task_id, account));";

__attribute__((format(printf, 3, 4)))
static int fail(char *msg, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, size, fmt, ap);
	va_end(ap);
	return -EIO;
}

static int64_t pragma_int(sqlite3 *db, const char *sql, int *rc)
{
	sqlite3_stmt *st;
	int64_t v = 0;
	*rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (*rc == SQLITE_OK) {
		*rc = sqlite3_step(st);
		if (*rc == SQLITE_ROW) {
			v = sqlite3_column_int64(st, 0);
			*rc = SQLITE_OK;
		}
		sqlite3_finalize(st);
	}
	return v;
}

/* Migrations from each older version to the next; version 1 is the first. */
static int migrate(sqlite3 *db, int64_t from, char *msg, size_t size)
{
	char *err = NULL;
	if (from == 0) {
		char sql[sizeof(schema_v1) + 128];
		snprintf(sql, sizeof(sql), "BEGIN IMMEDIATE;%sPRAGMA application_id=%d;"
			 "PRAGMA user_version=%d;COMMIT;", schema_v1, LEDGER_APP_ID,
			 LEDGER_SCHEMA_VERSION);
		if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
			int e = fail(msg, size, "cannot create the ledger's tables: %s", err);
			sqlite3_free(err);
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			return e;
		}
	}
	return 0;
}

/* How long a writer waits for another that holds the ledger. */
static int wait_ms = 30000;

void ledger__set_wait(int ms)
{
	wait_ms = ms;
}

int ledger__open(const char *path, bool create, struct ledger **out,
		 char *msg, size_t size)
{
	struct stat st;
	bool exists = stat(path, &st) == 0;
	*out = NULL;
	if (!exists && !create) {
		snprintf(msg, size, "no ledger '%s'", path);
		return -ENOENT;
	}
	/* Every use writes (a collection, or the WAL index of a read): a
	 * ledger that cannot be written is said to be so, not taken for
	 * something else */
	if (exists && access(path, W_OK) != 0) {
		int e = -errno;
		snprintf(msg, size, "cannot write ledger '%s': %s", path, strerror(errno));
		return e;
	}
	if (!exists) {
		/* 0600: who used how much CPU is nobody else's business */
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST) {
			int e = -errno;
			snprintf(msg, size, "cannot create ledger '%s': %s", path, strerror(errno));
			return e;
		}
		if (fd >= 0)
			close(fd);
	}
	struct ledger *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	if (sqlite3_open_v2(path, &l->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		int e = fail(msg, size, "cannot open ledger '%s': %s", path,
			     l->db ? sqlite3_errmsg(l->db) : "out of memory");
		ledger__close(l);
		return e;
	}
	sqlite3_busy_timeout(l->db, wait_ms);

	/* Tell a ledger from other files before writing anything. */
	int rc;
	int64_t app = pragma_int(l->db, "PRAGMA application_id", &rc);
	int64_t version = rc == SQLITE_OK ? pragma_int(l->db, "PRAGMA user_version", &rc) : 0;
	int64_t tables = rc == SQLITE_OK ?
		pragma_int(l->db, "SELECT count(*) FROM sqlite_master", &rc) : 0;
	if (rc != SQLITE_OK) {
		snprintf(msg, size, "'%s' is not a cpuledger ledger (%s)", path,
			 sqlite3_errmsg(l->db));
		ledger__close(l);
		return -EINVAL;
	}
	if (app != LEDGER_APP_ID && (app != 0 || tables != 0)) {
		snprintf(msg, size, "'%s' is not a cpuledger ledger", path);
		ledger__close(l);
		return -EINVAL;
	}
	if (version > LEDGER_SCHEMA_VERSION) {
		snprintf(msg, size, "ledger '%s' has schema version %lld; this cpuledger knows up to %d",
			 path, (long long)version, LEDGER_SCHEMA_VERSION);
		ledger__close(l);
		return -EINVAL;
	}
	char *err = NULL;
	if (sqlite3_exec(l->db, "PRAGMA journal_mode=WAL;PRAGMA foreign_keys=ON;",
			 NULL, NULL, &err) != SQLITE_OK) {
		int e = fail(msg, size, "cannot set up ledger '%s': %s", path, err);
		sqlite3_free(err);
		ledger__close(l);
		return e;
	}
	int e = migrate(l->db, app == LEDGER_APP_ID ? version : 0, msg, size);
	if (e) {
		ledger__close(l);
		return e;
	}
	*out = l;
	return 0;
}

void ledger__close(struct ledger *l)
{
	if (!l)
		return;
	sqlite3_finalize(l->task);
	sqlite3_finalize(l->usage);
	sqlite3_close(l->db);
	free(l);
}

static int exec(struct ledger *l, const char *sql, char *msg, size_t size)
{
	char *err = NULL;
	if (sqlite3_exec(l->db, sql, NULL, NULL, &err) == SQLITE_OK)
		return 0;
	int e = fail(msg, size, "ledger: %s", err ? err : sqlite3_errmsg(l->db));
	sqlite3_free(err);
	return e;
}

int ledger__begin(struct ledger *l, const struct collection *c, char *msg,
		  size_t size)
{
	int e = exec(l, "BEGIN IMMEDIATE", msg, size);
	if (e)
		return e;
	sqlite3_stmt *st = NULL;
	if (c->recording) {
		/* an import is refused if any of the recording is in; a live
		 * collection only if its number is */
		if (sqlite3_prepare_v2(l->db, c->seq < 0 ?
				       "SELECT id FROM collections WHERE recording = ?" :
				       "SELECT id FROM collections WHERE recording = ? AND seq = ?",
				       -1, &st, NULL) != SQLITE_OK)
			goto sql_error;
		sqlite3_bind_text(st, 1, c->recording, -1, SQLITE_STATIC);
		if (c->seq >= 0)
			sqlite3_bind_int64(st, 2, c->seq);
		int rc = sqlite3_step(st);
		sqlite3_finalize(st);
		st = NULL;
		if (rc == SQLITE_ROW) {
			ledger__abort(l);
			snprintf(msg, size, "this recording is in the ledger already");
			return -EEXIST;
		}
	}
	if (sqlite3_prepare_v2(l->db, "INSERT INTO collections (collected_ns, reason, "
			       "start_ns, end_ns, host, boot_id, recording, seq) "
			       "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		goto sql_error;
	sqlite3_bind_int64(st, 8, c->seq < 0 ? 0 : c->seq);
	sqlite3_bind_int64(st, 1, c->collected_ns);
	sqlite3_bind_text(st, 2, c->reason, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, c->start_ns);
	sqlite3_bind_int64(st, 4, c->end_ns);
	sqlite3_bind_text(st, 5, c->host, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, c->boot_id, -1, SQLITE_STATIC);
	if (c->recording)
		sqlite3_bind_text(st, 7, c->recording, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto sql_error;
	sqlite3_finalize(st);
	l->collection = sqlite3_last_insert_rowid(l->db);
	l->host = c->host;
	l->boot_id = c->boot_id;
	return 0;
sql_error:
	e = fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
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

int ledger__add(struct ledger *l, const struct task_info *t,
		const struct usage *u, char *msg, size_t size)
{
	/* the task, once per (host, boot, pid, tid, command); its span grows */
	sqlite3_stmt *st = statement(l, &l->task,
			       "INSERT INTO tasks (host, boot_id, pid, tid, uid, command, "
			       "executable, start_ns, end_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
			       "ON CONFLICT (host, boot_id, pid, tid, command) DO UPDATE SET "
			       "uid = coalesce(excluded.uid, uid), "
			       "executable = coalesce(excluded.executable, executable), "
			       "start_ns = min(coalesce(start_ns, excluded.start_ns), "
			       "coalesce(excluded.start_ns, start_ns)), "
			       "end_ns = max(coalesce(end_ns, excluded.end_ns), "
			       "coalesce(excluded.end_ns, end_ns)) RETURNING id");
	if (!st)
		goto sql_error;
	sqlite3_bind_text(st, 1, l->host, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, l->boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, t->pid);
	sqlite3_bind_int64(st, 4, t->tid);
	if (t->uid >= 0)
		sqlite3_bind_int64(st, 5, t->uid);
	sqlite3_bind_text(st, 6, t->command ? t->command : "", -1, SQLITE_STATIC);
	if (t->executable)
		sqlite3_bind_text(st, 7, t->executable, -1, SQLITE_STATIC);
	if (t->start_ns >= 0)
		sqlite3_bind_int64(st, 8, t->start_ns);
	if (t->end_ns >= 0)
		sqlite3_bind_int64(st, 9, t->end_ns);
	if (sqlite3_step(st) != SQLITE_ROW)
		goto sql_error;
	int64_t task = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	st = statement(l, &l->usage,
		       "INSERT INTO usage (collection_id, task_id, account, cpu_ns, "
		       "steal_ns, samples) VALUES (?, ?, ?, ?, ?, ?) "
		       "ON CONFLICT DO UPDATE SET cpu_ns = cpu_ns + excluded.cpu_ns, "
		       "steal_ns = steal_ns + excluded.steal_ns, "
		       "samples = samples + excluded.samples");
	if (!st)
		goto sql_error;
	sqlite3_bind_int64(st, 1, l->collection);
	sqlite3_bind_int64(st, 2, task);
	sqlite3_bind_text(st, 3, u->account, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, u->cpu_ns);
	sqlite3_bind_int64(st, 5, u->steal_ns);
	sqlite3_bind_int64(st, 6, u->samples);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto sql_error;
	sqlite3_reset(st);
	return 0;
sql_error:;
	int e = fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	if (st)
		sqlite3_reset(st);
	return e;
}

int ledger__commit(struct ledger *l, char *msg, size_t size)
{
	int e = exec(l, "COMMIT", msg, size);
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

static const char *const bill_names[] = {
	[BILL_USER] = "user", [BILL_COMMAND] = "command", [BILL_ACCOUNT] = "account",
	[BILL_PROCESS] = "process", [BILL_DAY] = "day",
};

int bill_by__parse(const char *s, enum bill_by *out)
{
	for (size_t i = 0; i < sizeof(bill_names) / sizeof(*bill_names); i++)
		if (!strcmp(s, bill_names[i])) {
			*out = (enum bill_by)i;
			return 0;
		}
	return -EINVAL;
}

const char *bill_by__name(enum bill_by by)
{
	return bill_names[by];
}

int ledger__bill(struct ledger *l, enum bill_by by, int64_t since_ns,
		 int64_t until_ns, const char *const *control, size_t ncontrol,
		 int (*fn)(void *ctx, const struct bill_row *row), void *ctx,
		 char *msg, size_t size)
{
	static const char *const keys[] = {
		[BILL_USER] = "coalesce(CAST(t.uid AS TEXT), '?')",
		[BILL_COMMAND] = "t.command",
		[BILL_ACCOUNT] = "u.account",
		[BILL_PROCESS] = "t.host || ' ' || t.pid || ' ' || t.command",
		[BILL_DAY] = "date(c.end_ns / 1000000000, 'unixepoch')",
	};
	char in[1024] = "0";
	if (ncontrol) {
		size_t n = (size_t)snprintf(in, sizeof(in), "u.account IN (");
		for (size_t i = 0; i < ncontrol && n < sizeof(in) - 4; i++)
			n += (size_t)snprintf(in + n, sizeof(in) - n, i ? ",?" : "?");
		snprintf(in + n, sizeof(in) - n, ")");
	}
	char sql[2048];
	snprintf(sql, sizeof(sql),
		 "SELECT %s AS k, sum(u.cpu_ns), sum(CASE WHEN %s THEN u.cpu_ns ELSE 0 END), "
		 "sum(u.steal_ns), sum(u.samples) FROM usage u "
		 "JOIN collections c ON c.id = u.collection_id "
		 "JOIN tasks t ON t.id = u.task_id "
		 "WHERE c.end_ns >= ? AND c.end_ns < ? "
		 "GROUP BY k ORDER BY 2 DESC, k", keys[by], in);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, sql, -1, &st, NULL) != SQLITE_OK)
		return fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	int p = 1;
	for (size_t i = 0; i < ncontrol; i++)
		sqlite3_bind_text(st, p++, control[i], -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, p++, since_ns);
	sqlite3_bind_int64(st, p++, until_ns);
	int rc, e = 0;
	while (!e && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct bill_row r = {
			.key = (const char *)sqlite3_column_text(st, 0),
			.cpu_ns = (uint64_t)sqlite3_column_int64(st, 1),
			.control_ns = (uint64_t)sqlite3_column_int64(st, 2),
			.steal_ns = (uint64_t)sqlite3_column_int64(st, 3),
			.samples = (uint64_t)sqlite3_column_int64(st, 4),
		};
		if (!r.key)
			r.key = "";
		e = fn(ctx, &r);
	}
	if (!e && rc != SQLITE_DONE)
		e = fail(msg, size, "ledger: %s", sqlite3_errmsg(l->db));
	sqlite3_finalize(st);
	return e;
}
