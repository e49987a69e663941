/*
 * ledger_impl: the ledger's state and helpers, shared by ledger.c (open,
 * schema, migration), ledger_write.c (collections) and ledger_bill.c
 * (bills, retention). The only files that include sqlite3.h.
 */
#ifndef CPULEDGER_LEDGER_LEDGER_IMPL_H
#define CPULEDGER_LEDGER_LEDGER_IMPL_H

#include <sqlite3.h>

#include "ledger.h"

struct ledger {
	sqlite3 *db;
	sqlite3_stmt *task, *usage, *wait;	/* prepared once, reused per row */
	int64_t collection;	/* the open collection's id, or 0 */
	int64_t version;	/* of its schema (a reader may see an older one) */
	const char *host, *boot_id;
};

/* Sets msg (printf-style) and returns -EIO. */
__attribute__((format(printf, 3, 4)))
int ledger_fail(char *msg, size_t size, const char *fmt, ...);
/* Another connection holds the database. */
bool ledger_busy(int rc);
/* Runs sql: 0, -EBUSY, or -EIO with msg set. */
int ledger_exec(struct ledger *l, const char *sql, char *msg, size_t size);

#endif
