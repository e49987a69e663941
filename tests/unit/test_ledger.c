/*
 * The ledger: created 0600; one collection a transaction; a recording
 * added twice refused; bills sum what was added, signed, by composed keys;
 * steal that was not measured is NULL and billed as such; a file that is
 * not a ledger, or of a newer schema, refused and left untouched; a
 * symbolic link refused; any number of first users at once; readers
 * read-only; a version 1 ledger migrated; retention.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ledger/ledger.h"

static char dir[] = "/tmp/cpuledger-ledger-XXXXXX";
static char path[256];
static char msg[512];

static int add_usage(struct ledger *l, const char *recording, int64_t seq, uint32_t pid,
		     const char *account, int64_t cpu, int64_t steal, bool known)
{
	struct collection c = { 1000, "end", 0, 86400000000000LL, "h", "b", recording, seq };
	int err = ledger__begin(l, &c, msg, sizeof(msg));
	if (err)
		return err;
	struct task_info t = { .pid = pid, .tid = pid, .uid = 1000, .command = "cmd",
			       .executable = "/bin/cmd", .comm = "cmd", .start_ns = -1,
			       .end_ns = -1 };
	struct usage u = { account, cpu, steal, cpu / 1000000, known };
	err = ledger__add(l, &t, &u, msg, sizeof(msg));
	if (err) {
		ledger__abort(l);
		return err;
	}
	return ledger__commit(l, msg, sizeof(msg));
}

static int add_one(struct ledger *l, const char *recording, uint32_t pid,
		   const char *account, int64_t cpu, int64_t steal)
{
	return add_usage(l, recording, -1, pid, account, cpu, steal, true);
}

struct sums {
	int64_t cpu, control, steal, unknown;
	int rows;
};

static int sum(void *ctx, const struct bill_row *r)
{
	struct sums *s = ctx;
	s->cpu += r->cpu_ns;
	s->control += r->control_ns;
	s->steal += r->steal_ns;
	s->unknown += r->unknown_steal_cpu_ns;
	s->rows++;
	return 0;
}

static struct sums bill(struct ledger *l, enum row_field by, int64_t since, int64_t until,
			const char *control)
{
	struct sums s = { 0 };
	const char *c[] = { control };
	assert_int_equal(ledger__bill(l, &by, 1, since, until, c, control ? 1 : 0, sum, &s, msg,
				      sizeof(msg)), 0);
	return s;
}

static void create_add_bill(void **state)
{
	(void)state;
	struct ledger *l;
	snprintf(path, sizeof(path), "%s/a.db", dir);
	assert_int_equal(ledger__open(path, LEDGER_READ, &l, msg, sizeof(msg)), -ENOENT);
	assert_int_equal(ledger__open(path, LEDGER_WRITE, &l, msg, sizeof(msg)), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(add_one(l, "rec1", 10, "program", 3000000, 100), 0);
	assert_int_equal(add_one(l, "rec2", 11, "kernel", 1000000, 50), 0);
	assert_int_equal(add_one(l, "rec1", 12, "program", 5, 5), -EEXIST);
	/* numbered collections of one recording: each number once */
	struct collection live = { 1, "interval", 0, 1, "h", "b", "rec9", 0 };
	assert_int_equal(ledger__begin(l, &live, msg, sizeof(msg)), 0);
	assert_int_equal(ledger__commit(l, msg, sizeof(msg)), 0);
	live.seq = 1;
	assert_int_equal(ledger__begin(l, &live, msg, sizeof(msg)), 0);
	assert_int_equal(ledger__commit(l, msg, sizeof(msg)), 0);
	assert_int_equal(ledger__begin(l, &live, msg, sizeof(msg)), -EEXIST);
	live.seq = -1;	/* importing it now: refused */
	assert_int_equal(ledger__begin(l, &live, msg, sizeof(msg)), -EEXIST);
	/* aborted: nothing of it stays */
	struct collection c = { 1, "end", 0, 1, "h", "b", "rec3", -1 };
	assert_int_equal(ledger__begin(l, &c, msg, sizeof(msg)), 0);
	struct task_info t = { .pid = 13, .tid = 13, .command = "x", .start_ns = -1, .end_ns = -1 };
	struct usage u = { "program", 999999999, 0, 1, true };
	assert_int_equal(ledger__add(l, &t, &u, msg, sizeof(msg)), 0);
	ledger__abort(l);

	struct sums s = bill(l, RF_ACCOUNT, INT64_MIN, INT64_MAX, "kernel");
	assert_int_equal(s.rows, 2);
	assert_int_equal(s.cpu, 4000000);
	assert_int_equal(s.control, 1000000);
	assert_int_equal(s.steal, 150);
	/* collections end at day 1: a window before it holds nothing */
	assert_int_equal(bill(l, RF_USER, 0, 86400000000000LL, "kernel").rows, 0);
	ledger__close(l);
	/* reopened to read, it is all there */
	assert_int_equal(ledger__open(path, LEDGER_READ, &l, msg, sizeof(msg)), 0);
	assert_int_equal(bill(l, RF_USER, INT64_MIN, INT64_MAX, NULL).cpu, 4000000);
	ledger__close(l);
}

/* Unknown steal is NULL, summed as unknown, never as 0; negative rows
 * (a later collection correcting one before) sum signed. */
static void unknown_and_negative(void **state)
{
	(void)state;
	struct ledger *l;
	char p[300];
	snprintf(p, sizeof(p), "%s/u.db", dir);
	assert_int_equal(ledger__open(p, LEDGER_WRITE, &l, msg, sizeof(msg)), 0);
	assert_int_equal(add_usage(l, "r", 0, 20, "program", 5000000, 0, false), 0);
	assert_int_equal(add_usage(l, "r", 1, 21, "program", 2000000, 700, true), 0);
	assert_int_equal(add_usage(l, "r", 2, 21, "program", -500000, -900, true), 0);
	struct sums s = bill(l, RF_COMM, INT64_MIN, INT64_MAX, NULL);
	assert_int_equal(s.cpu, 6500000);
	assert_int_equal(s.steal, -200);	/* signed, not 18446744073709551416 */
	assert_int_equal(s.unknown, 5000000);
	ledger__close(l);
	char cmd[400], out[64];
	snprintf(cmd, sizeof(cmd), "sqlite3 %s 'SELECT count(*) FROM usage WHERE steal_ns IS NULL'", p);
	FILE *f = popen(cmd, "r");
	assert_non_null(fgets(out, sizeof(out), f));
	pclose(f);
	assert_string_equal(out, "1\n");
}

static void refuses_others(void **state)
{
	(void)state;
	struct ledger *l;
	char other[300], cmd[700];
	snprintf(other, sizeof(other), "%s/notes.txt", dir);
	FILE *f = fopen(other, "w");
	fputs("not a database\n", f);
	fclose(f);
	assert_int_equal(ledger__open(other, LEDGER_WRITE, &l, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "is not a cpuledger ledger"));
	struct stat st;
	assert_int_equal(stat(other, &st), 0);
	assert_int_equal(st.st_size, 15);	/* untouched */

	snprintf(other, sizeof(other), "%s/other.db", dir);
	snprintf(cmd, sizeof(cmd), "sqlite3 %s 'CREATE TABLE t(x)'", other);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ledger__open(other, LEDGER_WRITE, &l, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "is not a cpuledger ledger"));

	snprintf(other, sizeof(other), "%s/newer.db", dir);
	assert_int_equal(ledger__open(other, LEDGER_WRITE, &l, msg, sizeof(msg)), 0);
	ledger__close(l);
	snprintf(cmd, sizeof(cmd), "sqlite3 %s 'PRAGMA user_version=99'", other);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ledger__open(other, LEDGER_WRITE, &l, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "schema version 99"));
}

/* A link planted at the path (to an empty file, or to nothing) is not
 * followed: the target stays as it was. */
static void refuses_links(void **state)
{
	(void)state;
	struct ledger *l;
	char target[300], link_path[300];
	snprintf(target, sizeof(target), "%s/precious", dir);
	snprintf(link_path, sizeof(link_path), "%s/link.db", dir);
	FILE *f = fopen(target, "w");
	fclose(f);
	assert_int_equal(symlink(target, link_path), 0);
	assert_int_equal(ledger__open(link_path, LEDGER_WRITE, &l, msg, sizeof(msg)), -ELOOP);
	struct stat st;
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_size, 0);
	unlink(target);	/* dangling now */
	assert_int_equal(ledger__open(link_path, LEDGER_WRITE, &l, msg, sizeof(msg)), -ELOOP);
	assert_int_equal(stat(target, &st), -1);
}

static void first_users_of(int round)
{
	char p[300];
	snprintf(p, sizeof(p), "%s/first-%d.db", dir, round);
	pid_t kids[6];
	for (int k = 0; k < 6; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			struct ledger *m;
			char rec[32];
			snprintf(rec, sizeof(rec), "first-%d", k);
			if (ledger__open(p, LEDGER_WRITE, &m, msg, sizeof(msg))) {
				fprintf(stderr, "open %d: %s\n", k, msg);
				_exit(1);
			}
			if (add_one(m, rec, (uint32_t)(200 + k), "program", 1000, 1)) {
				fprintf(stderr, "add %d: %s\n", k, msg);
				_exit(2);
			}
			ledger__close(m);
			_exit(0);
		}
	}
	for (int k = 0; k < 6; k++) {
		int st;
		assert_int_equal(waitpid(kids[k], &st, 0), kids[k]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	struct ledger *l;
	assert_int_equal(ledger__open(p, LEDGER_READ, &l, msg, sizeof(msg)), 0);
	assert_int_equal(bill(l, RF_PROCESS, INT64_MIN, INT64_MAX, NULL).rows, 6);
	ledger__close(l);
}

/* Six processes open a ledger that does not exist yet, all at once, and
 * each adds a collection: every one of them succeeds. Twenty ledgers, as
 * the first users of one meet in a few microseconds (turning the file to
 * WAL once failed for one of them in about 1 start in 30). */
static void first_users_at_once(void **state)
{
	(void)state;
	for (int round = 0; round < 20; round++)
		first_users_of(round);
}

/* Two processes write 40 collections each at once: all 80 are there. */
static void two_writers(void **state)
{
	(void)state;
	char p[300];
	snprintf(p, sizeof(p), "%s/busy.db", dir);
	struct ledger *l;
	assert_int_equal(ledger__open(p, LEDGER_WRITE, &l, msg, sizeof(msg)), 0);
	ledger__close(l);
	pid_t kids[2];
	for (int k = 0; k < 2; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			struct ledger *m;
			if (ledger__open(p, LEDGER_WRITE, &m, msg, sizeof(msg)))
				_exit(1);
			for (int i = 0; i < 40; i++) {
				char rec[32];
				snprintf(rec, sizeof(rec), "w%d-%d", k, i);
				if (add_one(m, rec, (uint32_t)(100 + k), "program", 1000, 1))
					_exit(2);
			}
			ledger__close(m);
			_exit(0);
		}
	}
	for (int k = 0; k < 2; k++) {
		int st;
		assert_int_equal(waitpid(kids[k], &st, 0), kids[k]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	assert_int_equal(ledger__open(p, LEDGER_READ, &l, msg, sizeof(msg)), 0);
	struct sums s = bill(l, RF_PROCESS, INT64_MIN, INT64_MAX, NULL);
	assert_int_equal(s.rows, 2);
	assert_int_equal(s.cpu, 80 * 1000);
	ledger__close(l);
}

/* A version 1 ledger (as cpuledger 0.1 made it) is read as it is, and
 * migrated when written: nothing in it is lost. */
static void migrates_v1(void **state)
{
	(void)state;
	char p[300], cmd[2048];
	snprintf(p, sizeof(p), "%s/v1.db", dir);
	snprintf(cmd, sizeof(cmd), "sqlite3 %s \"CREATE TABLE collections (id INTEGER PRIMARY KEY,"
		 " collected_ns INTEGER NOT NULL, reason TEXT NOT NULL, start_ns INTEGER NOT NULL,"
		 " end_ns INTEGER NOT NULL, host TEXT NOT NULL, boot_id TEXT NOT NULL, recording TEXT,"
		 " seq INTEGER NOT NULL DEFAULT 0, UNIQUE (recording, seq));"
		 " CREATE TABLE tasks (id INTEGER PRIMARY KEY, host TEXT NOT NULL, boot_id TEXT NOT NULL,"
		 " pid INTEGER NOT NULL, tid INTEGER NOT NULL, uid INTEGER, command TEXT NOT NULL,"
		 " executable TEXT, start_ns INTEGER, end_ns INTEGER,"
		 " UNIQUE (host, boot_id, pid, tid, command));"
		 " CREATE TABLE usage (collection_id INTEGER NOT NULL REFERENCES collections(id),"
		 " task_id INTEGER NOT NULL REFERENCES tasks(id), account TEXT NOT NULL,"
		 " cpu_ns INTEGER NOT NULL, steal_ns INTEGER NOT NULL, samples INTEGER NOT NULL,"
		 " PRIMARY KEY (collection_id, task_id, account));"
		 " INSERT INTO collections VALUES (1, 5, 'end', 0, 10, 'h', 'b', 'old', 0);"
		 " INSERT INTO tasks VALUES (1, 'h', 'b', 7, 7, 0, 'old cmd', NULL, 1, 2);"
		 " INSERT INTO usage VALUES (1, 1, 'program', 42000, 7, 3);"
		 " PRAGMA application_id=1129335879; PRAGMA user_version=1;\"", p);
	assert_int_equal(system(cmd), 0);
	struct ledger *l;
	assert_int_equal(ledger__open(p, LEDGER_READ, &l, msg, sizeof(msg)), 0);
	struct sums s = bill(l, RF_COMM, INT64_MIN, INT64_MAX, NULL);
	assert_int_equal(s.cpu, 42000);
	ledger__close(l);
	assert_int_equal(ledger__open(p, LEDGER_WRITE, &l, msg, sizeof(msg)), 0);
	assert_int_equal(add_one(l, "new", 8, "program", 1000, 1), 0);
	s = bill(l, RF_COMM, INT64_MIN, INT64_MAX, NULL);
	assert_int_equal(s.cpu, 43000);
	assert_int_equal(s.steal, 8);
	ledger__close(l);
}

/* Collections that ended before the limit go, with what only they used. */
static void retention(void **state)
{
	(void)state;
	char p[300];
	snprintf(p, sizeof(p), "%s/ret.db", dir);
	struct ledger *l;
	assert_int_equal(ledger__open(p, LEDGER_WRITE, &l, msg, sizeof(msg)), 0);
	struct collection old = { 1, "interval", 0, 100, "h", "b", "R", 0 };
	struct collection new = { 1, "interval", 100, 200, "h", "b", "R", 1 };
	struct task_info t = { .pid = 1, .tid = 1, .command = "a", .start_ns = -1, .end_ns = -1 };
	struct usage u = { "program", 10, 1, 1, true };
	assert_int_equal(ledger__begin(l, &old, msg, sizeof(msg)), 0);
	assert_int_equal(ledger__add(l, &t, &u, msg, sizeof(msg)), 0);
	assert_int_equal(ledger__commit(l, msg, sizeof(msg)), 0);
	assert_int_equal(ledger__begin(l, &new, msg, sizeof(msg)), 0);
	assert_int_equal(ledger__add(l, &t, &u, msg, sizeof(msg)), 0);
	assert_int_equal(ledger__commit(l, msg, sizeof(msg)), 0);
	assert_int_equal(ledger__retain(l, 150, msg, sizeof(msg)), 1);
	assert_int_equal(bill(l, RF_COMM, INT64_MIN, INT64_MAX, NULL).cpu, 10);
	ledger__close(l);
}

/* A collection whose end is unknown (an imported perf script: end_ns 0)
 * goes by when it was added, and is kept when that is unknown too (added
 * before schema version 4); retention at any limit before today keeps it. */
static void retention_of_imports(void **state)
{
	(void)state;
	char p[300], cmd[512];
	snprintf(p, sizeof(p), "%s/ret_import.db", dir);
	struct ledger *l;
	assert_int_equal(ledger__open(p, LEDGER_WRITE, &l, msg, sizeof(msg)), 0);
	struct collection imp = { 0, "import", 0, 0, "h", "b", "I", -1 };
	struct collection old = { 1, "interval", 0, 100, "h", "b", "R", 0 };
	struct task_info t = { .pid = 1, .tid = 1, .command = "a", .start_ns = -1, .end_ns = -1 };
	struct usage u = { "program", 10, 1, 1, true };
	const struct collection *cs[] = { &imp, &old, &imp };
	for (int i = 0; i < 3; i++) {
		struct collection c = *cs[i];
		if (i == 2)
			c.recording = "J";
		assert_int_equal(ledger__begin(l, &c, msg, sizeof(msg)), 0);
		assert_int_equal(ledger__add(l, &t, &u, msg, sizeof(msg)), 0);
		assert_int_equal(ledger__commit(l, msg, sizeof(msg)), 0);
	}
	/* 90 days before a day ago: the collection that ended at 100 ns goes,
	 * the imports added just now stay */
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t day_ago = (int64_t)(now.tv_sec - 86400) * 1000000000;
	assert_int_equal(ledger__retain(l, day_ago, msg, sizeof(msg)), 1);
	assert_int_equal(bill(l, RF_COMM, INT64_MIN, INT64_MAX, NULL).cpu, 20);
	ledger__close(l);
	/* one added before version 4 (its added time unknown) is never
	 * deleted by retention; the other, by its added time, is */
	snprintf(cmd, sizeof(cmd), "sqlite3 %s \"UPDATE collections SET added_ns = NULL "
		 "WHERE recording = 'I'\"", p);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ledger__open(p, LEDGER_WRITE, &l, msg, sizeof(msg)), 0);
	assert_int_equal(ledger__retain(l, INT64_MAX, msg, sizeof(msg)), 1);
	assert_int_equal(bill(l, RF_COMM, INT64_MIN, INT64_MAX, NULL).cpu, 10);
	ledger__close(l);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(create_add_bill),
		cmocka_unit_test(unknown_and_negative),
		cmocka_unit_test(refuses_others),
		cmocka_unit_test(refuses_links),
		cmocka_unit_test(first_users_at_once),
		cmocka_unit_test(two_writers),
		cmocka_unit_test(migrates_v1),
		cmocka_unit_test(retention),
		cmocka_unit_test(retention_of_imports),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
