/*
 * The ledger: created 0600; one collection a transaction; a recording
 * added twice refused; bills sum what was added; a file that is not a
 * ledger, or of a newer schema, refused and left untouched; two writers at
 * once lose nothing.
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
#include <unistd.h>
#include <cmocka.h>

#include "ledger/ledger.h"

static char dir[] = "/tmp/cpuledger-ledger-XXXXXX";
static char path[256];
static char msg[512];

static int add_one(struct ledger *l, const char *recording, uint32_t pid,
		   const char *account, uint64_t cpu, uint64_t steal)
{
	struct collection c = { 1000, "end", 0, 86400000000000LL, "h", "b", recording, -1 };
	int err = ledger__begin(l, &c, msg, sizeof(msg));
	if (err)
		return err;
	struct task_info t = { pid, pid, 1000, "cmd", "/bin/cmd", -1, -1 };
	struct usage u = { account, cpu, steal, cpu / 1000000 };
	err = ledger__add(l, &t, &u, msg, sizeof(msg));
	if (err) {
		ledger__abort(l);
		return err;
	}
	return ledger__commit(l, msg, sizeof(msg));
}

struct sums {
	uint64_t cpu, control, steal;
	int rows;
};

static int sum(void *ctx, const struct bill_row *r)
{
	struct sums *s = ctx;
	s->cpu += r->cpu_ns;
	s->control += r->control_ns;
	s->steal += r->steal_ns;
	s->rows++;
	return 0;
}

static void create_add_bill(void **state)
{
	(void)state;
	struct ledger *l;
	snprintf(path, sizeof(path), "%s/a.db", dir);
	assert_int_equal(ledger__open(path, false, &l, msg, sizeof(msg)), -ENOENT);
	assert_int_equal(ledger__open(path, true, &l, msg, sizeof(msg)), 0);
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
	struct task_info t = { 13, 13, 0, "x", NULL, -1, -1 };
	struct usage u = { "program", 999999999, 0, 1 };
	assert_int_equal(ledger__add(l, &t, &u, msg, sizeof(msg)), 0);
	ledger__abort(l);

	const char *control[] = { "kernel" };
	struct sums s = { 0 };
	assert_int_equal(ledger__bill(l, BILL_ACCOUNT, INT64_MIN, INT64_MAX, control, 1,
				      sum, &s, msg, sizeof(msg)), 0);
	assert_int_equal(s.rows, 2);
	assert_int_equal(s.cpu, 4000000);
	assert_int_equal(s.control, 1000000);
	assert_int_equal(s.steal, 150);
	/* collections end at day 1: a window before it holds nothing */
	struct sums none = { 0 };
	assert_int_equal(ledger__bill(l, BILL_USER, 0, 86400000000000LL, control, 1,
				      sum, &none, msg, sizeof(msg)), 0);
	assert_int_equal(none.rows, 0);
	ledger__close(l);
	/* reopened, it is all there */
	assert_int_equal(ledger__open(path, false, &l, msg, sizeof(msg)), 0);
	struct sums again = { 0 };
	assert_int_equal(ledger__bill(l, BILL_USER, INT64_MIN, INT64_MAX, NULL, 0,
				      sum, &again, msg, sizeof(msg)), 0);
	assert_int_equal(again.cpu, 4000000);
	ledger__close(l);
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
	assert_int_equal(ledger__open(other, true, &l, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "is not a cpuledger ledger"));
	struct stat st;
	assert_int_equal(stat(other, &st), 0);
	assert_int_equal(st.st_size, 15);	/* untouched */

	snprintf(other, sizeof(other), "%s/other.db", dir);
	snprintf(cmd, sizeof(cmd), "sqlite3 %s 'CREATE TABLE t(x)'", other);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ledger__open(other, true, &l, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "is not a cpuledger ledger"));

	snprintf(other, sizeof(other), "%s/newer.db", dir);
	assert_int_equal(ledger__open(other, true, &l, msg, sizeof(msg)), 0);
	ledger__close(l);
	snprintf(cmd, sizeof(cmd), "sqlite3 %s 'PRAGMA user_version=99'", other);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ledger__open(other, true, &l, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "schema version 99"));
}

/* Two processes write 40 collections each at once: all 80 are there. */
static void two_writers(void **state)
{
	(void)state;
	char p[300];
	snprintf(p, sizeof(p), "%s/busy.db", dir);
	struct ledger *l;
	assert_int_equal(ledger__open(p, true, &l, msg, sizeof(msg)), 0);
	ledger__close(l);
	pid_t kids[2];
	for (int k = 0; k < 2; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			struct ledger *m;
			if (ledger__open(p, false, &m, msg, sizeof(msg)))
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
	assert_int_equal(ledger__open(p, false, &l, msg, sizeof(msg)), 0);
	struct sums s = { 0 };
	assert_int_equal(ledger__bill(l, BILL_PROCESS, INT64_MIN, INT64_MAX, NULL, 0,
				      sum, &s, msg, sizeof(msg)), 0);
	assert_int_equal(s.rows, 2);
	assert_int_equal(s.cpu, 80 * 1000);
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
		cmocka_unit_test(refuses_others),
		cmocka_unit_test(two_writers),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
