/*
 * ledger: seed 000's accounting information file, made durable: a SQLite
 * database of collections, tasks, and per task and account the CPU time,
 * steal and samples that accrued (docs/ledger.md). The only place that
 * includes sqlite3.h.
 *
 * A collection is written in one transaction, so no reader ever sees half
 * of one; several writers may share a ledger (WAL, a busy timeout), and
 * any number of first users may create it at once: the schema is made and
 * checked inside one transaction. Readers (bills) open it read-only.
 */
#ifndef CPULEDGER_LEDGER_LEDGER_H
#define CPULEDGER_LEDGER_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/keys.h"

#define LEDGER_SCHEMA_VERSION 5

struct ledger;

enum ledger_mode {
	LEDGER_READ,	/* read-only: it must exist and be a ledger */
	LEDGER_WRITE,	/* created (0600) when missing, migrated when older */
};

/*
 * Opens path; never through a symbolic link. Returns 0, or -errno with msg
 * set: ENOENT (none, for LEDGER_READ), EINVAL for a file that is not a
 * cpuledger ledger or has a newer schema (it is left untouched), ELOOP
 * for a symbolic link, EACCES, EBUSY (locked past the wait), EIO...
 */
int ledger__open(const char *path, enum ledger_mode mode, struct ledger **out,
		 char *msg, size_t size);
void ledger__close(struct ledger *l);

/* How long ledgers opened from now on wait for another writer to let go
 * before giving up (ms; default 30 s). */
void ledger__set_wait(int ms);

/* The mode ledgers created from now on get (default 0600). */
void ledger__set_file_mode(unsigned mode);

/* What a collection covers. Times are nanoseconds since the Unix epoch. */
struct collection {
	int64_t collected_ns;
	const char *reason;	/* end, interval, request, import, complete */
	int64_t start_ns, end_ns;
	const char *host, *boot_id;
	const char *recording;	/* identity of the recording, or NULL */
	int64_t seq;		/* its number in the recording (0, 1, ...); -1
				 * for an import, refused if any of the
				 * recording is in the ledger already */
	const char *steal_source;	/* how steal was found (docs/ledger.md),
					 * or NULL */
};

struct task_info {
	uint32_t pid, tid;
	int64_t uid;		/* -1 unknown */
	const char *command, *executable, *comm;	/* NULL unknown */
	const char *cgroup;	/* its latest cgroup's path; NULL unknown */
	int64_t start_ns, end_ns;	/* first and last seen; -1 unknown */
	int64_t proc_start_ns;	/* the process's start: with pid, who it
				 * is (pids are given again); 0 unknown */
};

/* Usage accrued in one collection. Signed: a collection holds the change
 * since the previous one of its recording, which may correct an earlier
 * estimate down (docs/ledger.md). */
struct usage {
	const char *account;
	int64_t cpu_ns, steal_ns, samples;
	bool steal_known;	/* false: steal is NULL in the ledger */
	/* The task's run-queue wait in the collection (schedstat run_delay's
	 * change), kept per task, not per account: given on one of the
	 * task's usage rows, the others wait_known false (summed when given
	 * twice). false: unknown, no wait row (docs/ledger.md). */
	int64_t wait_ns;
	bool wait_known;
};

/*
 * Writing one collection: begin (takes the write lock, waiting for other
 * writers), add tasks and usage, commit; abort undoes it all. begin returns
 * -EEXIST when that collection (see seq) is already there, -EBUSY when the
 * lock was not had within the wait. All return 0 or -errno with msg set.
 */
int ledger__begin(struct ledger *l, const struct collection *c, char *msg,
		  size_t size);
int ledger__add(struct ledger *l, const struct task_info *t,
		const struct usage *u, char *msg, size_t size);
int ledger__commit(struct ledger *l, char *msg, size_t size);
void ledger__abort(struct ledger *l);

/* What a recording already has in the ledger: its next collection number
 * (0 when none), and per (pid, tid, proc_start, command, account) the sums so
 * far, for completing it (ledger add). fn is called per task and account. */
struct ledger_sum {
	uint32_t pid, tid;
	int64_t proc_start_ns;
	const char *command, *account;
	int64_t cpu_ns, steal_ns, samples;
};
int ledger__recording(struct ledger *l, const char *recording, int64_t *next_seq,
		      int (*fn)(void *ctx, const struct ledger_sum *s), void *ctx,
		      char *msg, size_t size);

/* A bill sums by keys of the one key table (core/keys.h) that bill
 * takes (KEY_BILL), composed. */
struct bill_row {
	/* the values of the keys' fields (key_entry__shows: a process's
	 * host, pid and command), by key, valid during the callback: text
	 * for a text or period key, NULL unknown or not shown; a number for
	 * the others, -1 unknown or not shown. A period is UTC, of the
	 * collection's end: "2026-11-30T08:00", "2026-11-30", "2026-11".
	 * Wherever a process is shown, number[RF_START] is its start (the
	 * tasks' proc_start_ns: 0 alive when its recording began), which
	 * the rows are by too: a pid is given again. */
	const char *text[RF_COUNT];
	int64_t number[RF_COUNT];
	int64_t cpu_ns, control_ns, samples;
	int64_t steal_ns;	/* of the usage whose steal is known */
	int64_t unknown_steal_cpu_ns;	/* cpu of usage whose steal is not */
	/* run-queue wait of the row's tasks where known (schema 5); false
	 * when none of them had it, or when billed by account (a task's wait
	 * is not any one account's) */
	int64_t wait_ns;
	bool wait_known;
	double cost;		/* cpu-hours at their account's price; 0 unpriced */
};

/* A price per CPU-hour: of an account, or (account NULL) of the rest. */
struct bill_price {
	const char *account;
	double per_cpu_hour;
};

/* What a bill asks (ledger__bill_query). */
struct bill_query {
	const enum row_field *keys;	/* at most one of hour, day, month */
	size_t nkeys;
	int64_t since_ns, until_ns;	/* collections ending in [since, until) */
	const char *const *control;	/* accounts of the control program */
	size_t ncontrol;
	const struct bill_price *prices;	/* may be none: cost 0 */
	size_t nprices;
};

/*
 * The bill's rows, as ledger__bill, with each row's cost; with a period
 * key, rows by period first (oldest first), then largest cpu first.
 * --by comm groups kernel threads by kind (kworker/0:2-events: kworker)
 * as /metrics does (kthread_kind).
 */
int ledger__bill_query(struct ledger *l, const struct bill_query *q,
		       int (*fn)(void *ctx, const struct bill_row *row), void *ctx,
		       char *msg, size_t size);

/* What the collections of a bill cover. */
struct bill_span {
	int64_t first_ns, last_ns;	/* earliest start, latest end; 0 none */
	int64_t collections;
	int64_t undated;	/* of them, imports of unknown time */
	char **hosts;		/* sorted, each once */
	size_t nhosts;
};

/* The span of the collections ending in [since, until): 0 or -errno with
 * msg set. Release with bill_span__release (also after a failure). */
int ledger__bill_span(struct ledger *l, int64_t since_ns, int64_t until_ns,
		      struct bill_span *out, char *msg, size_t size);
void bill_span__release(struct bill_span *s);

/*
 * Sums usage of collections whose end lies in [since_ns, until_ns), by
 * the keys, largest cpu first; accounts named in control count as control
 * program. Calls fn per row. 0 or -errno with msg set.
 */
int ledger__bill(struct ledger *l, const enum row_field *keys, size_t nkeys,
		 int64_t since_ns, int64_t until_ns, const char *const *control,
		 size_t ncontrol, int (*fn)(void *ctx, const struct bill_row *row),
		 void *ctx, char *msg, size_t size);

/* Each of the accounts named must be in the ledger's usage or one of the
 * defaults (kernel, program, library): 0, or -ENOENT with msg naming one
 * that is not. */
int ledger__check_accounts(struct ledger *l, const char *const *names, size_t n,
			   char *msg, size_t size);

/* Deletes collections that ended before before_ns, and what only they
 * used; one whose end is unknown (0: an import without its day) goes when
 * it was added to the ledger before before_ns, never when that is not
 * known (added before schema version 4). Returns how many went (>= 0) or
 * -errno with msg set. */
int64_t ledger__retain(struct ledger *l, int64_t before_ns, char *msg, size_t size);

#endif
