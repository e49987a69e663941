/*
 * writer: collections written to the ledger by a thread of their own, so
 * that a ledger locked by another writer (or on a full disk) never holds
 * up the draining of perf's rings. A collection that cannot be written
 * waits in memory and is retried; while the ledger stays unwritable, the
 * collections that wait are merged into one (their rows summed by task
 * and account), so memory follows the distinct rows, never how long the
 * ledger was locked. What could not be written by the end is said, and a
 * later `ledger add` of the recording adds it.
 */
#ifndef CPULEDGER_LEDGER_WRITER_H
#define CPULEDGER_LEDGER_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "ledger.h"
#include "../core/hindex.h"

/* One collection, its strings owned. */
struct batch_row {
	struct task_info t;
	struct usage u;
};

struct batch {
	struct collection c;
	struct batch_row *rows;
	uint32_t n, cap;
	struct batch *next;
	uint32_t merged;	/* collections summed into it */
	struct hindex index;	/* its rows by task and account, once merged */
	bool index_ready;
	/* after it is written: collections that ended before this go
	 * (retention); 0 none */
	int64_t retain_before_ns;
};

/* An empty collection; its strings copied. NULL with errno ENOMEM. */
struct batch *batch__new(const struct collection *c);
/* Adds a row (its strings copied; rows of one task and account are summed
 * when written). 0 or -ENOMEM. */
int batch__add(struct batch *b, const struct task_info *t, const struct usage *u);
void batch__free(struct batch *b);
/* Frees a row's strings (one taken out of a batch). */
void batch_row__release(struct batch_row *r);

/* Writes b to the ledger at path now, in one transaction. 0, or -errno
 * with msg set (-EEXIST: that collection is there already). */
int batch__write(const char *path, const struct batch *b, char *msg, size_t size);

struct ledger_writer;

struct writer_status {
	uint64_t written, failed_attempts, dropped;
	int64_t last_seq;	/* the number of the last collection written */
	char last_reason[16];
	uint32_t waiting;	/* collections in memory */
	bool failing;		/* the last attempt failed */
	char error[256];	/* its reason */
};

/* A writer thread for path; at most max_waiting collections wait before
 * they are merged. NULL with errno set. */
struct ledger_writer *ledger_writer__new(const char *path, uint32_t max_waiting);
/* Queues b (the writer's from now on). */
void ledger_writer__submit(struct ledger_writer *w, struct batch *b);
void ledger_writer__status(struct ledger_writer *w, struct writer_status *st);
/* Waits up to timeout_ms for every collection to be written; returns how
 * many were not. */
uint32_t ledger_writer__drain(struct ledger_writer *w, int timeout_ms);
/* Stops the thread (after drain); what is still waiting is freed. */
void ledger_writer__free(struct ledger_writer *w);

#endif
