/*
 * ledger: seed 000's accounting information file, made durable: a SQLite
 * database of collections, tasks, and per task and account the CPU time,
 * steal and samples that accrued (docs/ledger.md). The only place that
 * includes sqlite3.h.
 *
 * A collection is written in one transaction, so no reader ever sees half
 * of one; several writers may share a ledger (WAL, a busy timeout).
 */
#ifndef CPULEDGER_LEDGER_LEDGER_H
#define CPULEDGER_LEDGER_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LEDGER_SCHEMA_VERSION 1

struct ledger;

/*
 * Opens path, creating it (mode 0600) with the current schema when it does
 * not exist, migrating an older one. Returns 0, or -errno with msg set:
 * EINVAL for a file that is not a cpuledger ledger or has a newer schema
 * (it is left untouched), EACCES, EIO...
 */
int ledger__open(const char *path, bool create, struct ledger **out,
		 char *msg, size_t size);
void ledger__close(struct ledger *l);

/* How long ledgers opened from now on wait for another writer to let go
 * before giving up (ms; default 30 s). */
void ledger__set_wait(int ms);

/* What a collection covers. Times are nanoseconds since the Unix epoch. */
struct collection {
	int64_t collected_ns;
	const char *reason;	/* end, interval, request, import */
	int64_t start_ns, end_ns;
	const char *host, *boot_id;
	const char *recording;	/* identity of the recording, or NULL */
	int64_t seq;		/* its number in the recording (0, 1, ...); -1
				 * for an import, refused if any of the
				 * recording is in the ledger already */
};

struct task_info {
	uint32_t pid, tid;
	int64_t uid;		/* -1 unknown */
	const char *command, *executable;
	int64_t start_ns, end_ns;	/* -1 unknown */
};

/* Usage accrued in one collection. Signed: a collection holds the change
 * since the previous one of its recording, which may correct an earlier
 * estimate down (docs/ledger.md). */
struct usage {
	const char *account;
	int64_t cpu_ns, steal_ns, samples;
};

/*
 * Writing one collection: begin (takes the write lock, waiting for other
 * writers), add tasks and usage, commit; abort undoes it all. begin returns
 * -EEXIST when that collection (see seq) is already there.
 * All return 0 or -errno with msg set.
 */
int ledger__begin(struct ledger *l, const struct collection *c, char *msg,
		  size_t size);
int ledger__add(struct ledger *l, const struct task_info *t,
		const struct usage *u, char *msg, size_t size);
int ledger__commit(struct ledger *l, char *msg, size_t size);
void ledger__abort(struct ledger *l);

enum bill_by { BILL_USER, BILL_COMMAND, BILL_ACCOUNT, BILL_PROCESS, BILL_DAY };

/* "user", "command", "account", "process", "day"; 0 or -EINVAL. */
int bill_by__parse(const char *s, enum bill_by *out);
const char *bill_by__name(enum bill_by by);

struct bill_row {
	const char *key;	/* valid during the callback */
	uint64_t cpu_ns, control_ns, steal_ns, samples;
};

/*
 * Sums usage of collections whose end lies in [since_ns, until_ns), by
 * key, largest cpu first; accounts named in control count as control
 * program. Calls fn per row. 0 or -errno with msg set.
 */
int ledger__bill(struct ledger *l, enum bill_by by, int64_t since_ns,
		 int64_t until_ns, const char *const *control, size_t ncontrol,
		 int (*fn)(void *ctx, const struct bill_row *row), void *ctx,
		 char *msg, size_t size);

#endif
