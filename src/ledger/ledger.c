/* ledger: see ledger.h and docs/ledger.md. */
#include "ledger_impl.h"

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

#define COLLECTIONS_V1 \
	"CREATE TABLE collections (" \
	" id INTEGER PRIMARY KEY," \
	" collected_ns INTEGER NOT NULL," \
	" reason TEXT NOT NULL," \
	" start_ns INTEGER NOT NULL," \
	" end_ns INTEGER NOT NULL," \
	" host TEXT NOT NULL," \
	" boot_id TEXT NOT NULL," \
	" recording TEXT," \
	" seq INTEGER NOT NULL DEFAULT 0," \
	" UNIQUE (recording, seq));" \
	"CREATE INDEX collections_end ON collections(end_ns);"

#define TASKS_V2(name) \
	"CREATE TABLE " name " (" \
	" id INTEGER PRIMARY KEY," \
	" host TEXT NOT NULL," \
	" boot_id TEXT NOT NULL," \
	" pid INTEGER NOT NULL," \
	" tid INTEGER NOT NULL," \
	" proc_start_ns INTEGER NOT NULL DEFAULT 0," \
	" uid INTEGER," \
	" command TEXT NOT NULL," \
	" executable TEXT," \
	" comm TEXT," \
	" start_ns INTEGER," \
	" end_ns INTEGER," \
	" UNIQUE (host, boot_id, pid, tid, proc_start_ns, command));"

#define USAGE_V2(name) \
	"CREATE TABLE " name " (" \
	" collection_id INTEGER NOT NULL REFERENCES collections(id)," \
	" task_id INTEGER NOT NULL REFERENCES tasks(id)," \
	" account TEXT NOT NULL," \
	" cpu_ns INTEGER NOT NULL," \
	" steal_ns INTEGER," \
	" samples INTEGER NOT NULL," \
	" PRIMARY KEY (collection_id, task_id, account));"

/* Version 3: a task's cgroup (docs/cgroups.md). */
#define TASKS_CGROUP "ALTER TABLE tasks ADD COLUMN cgroup TEXT;"

/* Version 4: when a collection was added to the ledger, so that one
 * whose own time is unknown (end_ns 0: an imported perf script) is kept
 * by retention for as long as one collected then (NULL: added before
 * version 4, never deleted by retention). */
#define COLLECTIONS_ADDED "ALTER TABLE collections ADD COLUMN added_ns INTEGER;" \
	"ALTER TABLE collections ADD COLUMN steal_source TEXT;"

/* Version 5: each task's run-queue wait per collection (schedstat
 * run_delay's change: issue 25, CPU denied), per task and not per account
 * (the kernel does not say which code waited); no row: unknown. */
#define WAITS \
	"CREATE TABLE waits (" \
	" collection_id INTEGER NOT NULL REFERENCES collections(id)," \
	" task_id INTEGER NOT NULL REFERENCES tasks(id)," \
	" wait_ns INTEGER NOT NULL," \
	" PRIMARY KEY (collection_id, task_id));"

static const char schema_v5[] = COLLECTIONS_V1 TASKS_V2("tasks") USAGE_V2("usage") TASKS_CGROUP
	COLLECTIONS_ADDED WAITS;

/* Version 1 to 2: steal may be NULL (unknown, never 0); tasks say their
 * process's start (pids are given again) and their comm. */
static const char migrate_v1[] =
	TASKS_V2("tasks_v2")
	"INSERT INTO tasks_v2 (id, host, boot_id, pid, tid, proc_start_ns, uid, command,"
	" executable, comm, start_ns, end_ns) SELECT id, host, boot_id, pid, tid, 0, uid,"
	" command, executable, NULL, start_ns, end_ns FROM tasks;"
	"DROP TABLE tasks;"
	"ALTER TABLE tasks_v2 RENAME TO tasks;"
	USAGE_V2("usage_v2")
	"INSERT INTO usage_v2 SELECT * FROM usage;"
	"DROP TABLE usage;"
	"ALTER TABLE usage_v2 RENAME TO usage;" TASKS_CGROUP COLLECTIONS_ADDED WAITS;

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

/* How long a writer waits for another that holds the ledger. */
static int wait_ms = 30000;

void ledger__set_wait(int ms)
{
	wait_ms = ms;
}

/*
 * Inside one transaction: tell a ledger from other files, create the
 * schema in an empty one, migrate an older one. Any number of first users
 * may do this at once: the transaction makes them take turns, and each
 * sees what the one before made.
 */
static int check_and_make(struct ledger *l, const char *path, int how, char *msg,
			  size_t size)
{
	bool write = how == 2;
	int rc;
	int64_t app = pragma_int(l->db, "PRAGMA application_id", &rc);
	int64_t version = rc == SQLITE_OK ? pragma_int(l->db, "PRAGMA user_version", &rc) : 0;
	int64_t tables = rc == SQLITE_OK ?
		pragma_int(l->db, "SELECT count(*) FROM sqlite_master", &rc) : 0;
	if (rc != SQLITE_OK) {
		if (ledger_busy(rc)) {
			ledger_fail(msg, size, "ledger '%s' is locked", path);
			return -EBUSY;
		}
		if ((rc & 0xff) != SQLITE_NOTADB) {
			ledger_fail(msg, size, "cannot open ledger '%s': %s", path,
				    sqlite3_errmsg(l->db));
			return -EIO;
		}
		snprintf(msg, size, "'%s' is not a cpuledger ledger (%s)", path,
			 sqlite3_errmsg(l->db));
		return -EINVAL;
	}
	if (app != LEDGER_APP_ID && (app != 0 || tables != 0)) {
		snprintf(msg, size, "'%s' is not a cpuledger ledger", path);
		return -EINVAL;
	}
	if (version > LEDGER_SCHEMA_VERSION) {
		snprintf(msg, size, "ledger '%s' has schema version %lld; this cpuledger knows up to %d",
			 path, (long long)version, LEDGER_SCHEMA_VERSION);
		return -EINVAL;
	}
	l->version = app == LEDGER_APP_ID ? version : 0;
	if (how == 1)	/* a probe, before anything is written */
		return 0;
	if (!write) {
		if (!l->version) {
			snprintf(msg, size, "'%s' is an empty ledger", path);
			return -ENOENT;
		}
		return 0;
	}
	const char *sql = !l->version ? schema_v5 : l->version == 1 ? migrate_v1 :
			  l->version == 2 ? TASKS_CGROUP COLLECTIONS_ADDED WAITS :
			  l->version == 3 ? COLLECTIONS_ADDED WAITS :
			  l->version == 4 ? WAITS : NULL;
	int e = sql ? ledger_exec(l, sql, msg, size) : 0;
	if (!e && sql) {
		char v[96];
		snprintf(v, sizeof(v), "PRAGMA application_id=%d;PRAGMA user_version=%d;",
			 LEDGER_APP_ID, LEDGER_SCHEMA_VERSION);
		e = ledger_exec(l, v, msg, size);
		l->version = LEDGER_SCHEMA_VERSION;
	}
	return e;
}

static unsigned file_mode = 0600;

void ledger__set_file_mode(unsigned mode)
{
	file_mode = mode & 0777;
}

/* The file itself: refused when a symbolic link; created 0600 for a
 * writer when missing. */
static int check_file(const char *path, enum ledger_mode mode, char *msg, size_t size)
{
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode)) {
			snprintf(msg, size, "ledger '%s' is a symbolic link: refused", path);
			return -ELOOP;
		}
		return 0;
	}
	if (errno != ENOENT || mode == LEDGER_READ) {
		int e = -errno;
		snprintf(msg, size, e == -ENOENT ? "no ledger '%s'" : "cannot open ledger '%s': %s",
			 path, strerror(-e));
		return e;
	}
	/* 0600: who used how much CPU is nobody else's business */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		      (mode_t)file_mode);
	if (fd < 0 && errno != EEXIST) {
		int e = -errno;
		snprintf(msg, size, "cannot create ledger '%s': %s", path, strerror(errno));
		return e;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

/* A writer needs the file and its directory (SQLite's -wal and -shm go
 * beside it) writable: said plainly, before SQLite says less. */
static int writable(const char *path, char *msg, size_t size)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = '\0';	/* "/x": the root */
	else if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	if (access(path, W_OK) && errno != ENOENT) {
		int e = -errno;
		snprintf(msg, size, "cannot write ledger '%s': %s", path, strerror(errno));
		return e;
	}
	if (access(dir, W_OK)) {
		int e = -errno;
		snprintf(msg, size, "cannot write ledger '%s': its directory: %s", path,
			 strerror(errno));
		return e;
	}
	return 0;
}

static int open_db(struct ledger *l, const char *path, enum ledger_mode mode, char *msg,
		   size_t size)
{
	int flags = (mode == LEDGER_READ ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
		    SQLITE_OPEN_NOFOLLOW;
	if (mode == LEDGER_WRITE) {
		int e = writable(path, msg, size);
		if (e)
			return e;
	}
	int rc = sqlite3_open_v2(path, &l->db, flags, NULL);
	if (rc != SQLITE_OK) {
		int e = (rc & 0xff) == SQLITE_CANTOPEN && access(path, mode == LEDGER_READ ?
								   R_OK : W_OK) ? -EACCES : -EIO;
		ledger_fail(msg, size, "cannot %s ledger '%s': %s", mode == LEDGER_READ ? "read" : "write",
		     path, l->db ? sqlite3_errmsg(l->db) : "out of memory");
		return e;
	}
	sqlite3_busy_timeout(l->db, wait_ms);
	return 0;
}

/*
 * PRAGMA journal_mode=WAL reads the file's header, then writes it: a
 * reader turning writer, which SQLite does not wait for (its busy handler
 * is skipped there, as waiting could deadlock). First users that meet
 * here get SQLITE_BUSY at once; they take turns by trying again until the
 * writer's wait runs out.
 */
static int use_wal(struct ledger *l, char *msg, size_t size)
{
	int waited = 0;
	for (;;) {
		int e = ledger_exec(l, "PRAGMA journal_mode=WAL", msg, size);
		if (e != -EBUSY || waited >= wait_ms)
			return e;
		int nap = waited < 100 ? 2 : 20;
		sqlite3_sleep(nap);
		waited += nap;
	}
}

/* In one transaction: how 0 reads, 1 probes (what the file is, before
 * anything is written to it), 2 creates or migrates. */
static int checked(struct ledger *l, const char *path, int how, char *msg, size_t size)
{
	int e = ledger_exec(l, how == 2 ? "BEGIN IMMEDIATE" : "BEGIN", msg, size);
	if (e)
		return e;
	e = check_and_make(l, path, how, msg, size);
	if (e)
		sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
	else
		e = ledger_exec(l, "COMMIT", msg, size);
	return e;
}

/* A reader that may not make the -shm beside a WAL ledger (a read-only
 * file system, a directory not its own) reads the file as it is. */
static int reopen_immutable(struct ledger *l, const char *path, char *msg, size_t size)
{
	char uri[8400] = "file:";
	size_t n = 5;
	for (const char *p = path; *p && n + 4 < sizeof(uri); p++)
		n += (size_t)(strchr("?#%", *p) ? snprintf(uri + n, sizeof(uri) - n, "%%%02X",
							     (unsigned char)*p) :
			      snprintf(uri + n, sizeof(uri) - n, "%c", *p));
	snprintf(uri + n, sizeof(uri) - n, "?immutable=1");
	sqlite3_close(l->db);
	l->db = NULL;
	if (sqlite3_open_v2(uri, &l->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
			    SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK)
		return ledger_fail(msg, size, "cannot read ledger '%s': %s", path,
				   l->db ? sqlite3_errmsg(l->db) : "out of memory");
	return checked(l, path, 0, msg, size);
}

int ledger__open(const char *path, enum ledger_mode mode, struct ledger **out,
		 char *msg, size_t size)
{
	*out = NULL;
	int e = check_file(path, mode, msg, size);
	if (e)
		return e;
	struct ledger *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	e = open_db(l, path, mode, msg, size);
	bool write = mode == LEDGER_WRITE;
	if (!e && !write && (e = checked(l, path, 0, msg, size)) == -EIO)
		e = reopen_immutable(l, path, msg, size);
	if (!write)
		goto out;
	if (!e && write)
		e = checked(l, path, 1, msg, size);
	/* WAL: readers never wait for a writer, and a writer only for the
	 * writer before it */
	if (!e && write)
		e = use_wal(l, msg, size);
	/* a migration drops tables that others refer to: keys checked after */
	if (!e && write)
		e = ledger_exec(l, "PRAGMA foreign_keys=OFF", msg, size);
	if (!e)
		e = checked(l, path, write ? 2 : 0, msg, size);
	if (!e && write)
		e = ledger_exec(l, "PRAGMA foreign_keys=ON", msg, size);
out:
	if (e == -EBUSY)
		snprintf(msg, size, "ledger '%s' is locked by another writer (waited %d s)",
			 path, wait_ms / 1000);
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
	sqlite3_finalize(l->wait);
	sqlite3_close(l->db);
	free(l);
}


__attribute__((format(printf, 3, 4)))
int ledger_fail(char *msg, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, size, fmt, ap);
	va_end(ap);
	return -EIO;
}

bool ledger_busy(int rc)
{
	return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}

int ledger_exec(struct ledger *l, const char *sql, char *msg, size_t size)
{
	char *err = NULL;
	int rc = sqlite3_exec(l->db, sql, NULL, NULL, &err);
	if (rc == SQLITE_OK)
		return 0;
	int e = ledger_fail(msg, size, "ledger: %s", err ? err : sqlite3_errmsg(l->db));
	sqlite3_free(err);
	return ledger_busy(rc) ? -EBUSY : e;
}

