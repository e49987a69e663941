/*
 * ledger_write: a recording's usage into a ledger. A collector writes a
 * recording's collections one after another, each holding what accrued
 * since the one before: it keeps the cumulative usage it last wrote and
 * writes the difference, so the collections of a recording always add up
 * to its final analysis, the one `report` shows.
 */
#ifndef CPULEDGER_CLI_LEDGER_WRITE_H
#define CPULEDGER_CLI_LEDGER_WRITE_H

#include <stdbool.h>

#include "../core/hindex.h"
#include "../core/strtab.h"
#include "../format/live_load.h"

struct collector {
	const char *path;	/* the ledger */
	int64_t seq;		/* the next collection's number; -1: an import */
	int64_t last_ns;	/* end of the previous collection (realtime) */
	struct strtab accounts;
	struct cumulative *v;	/* what was written so far, per thread and account */
	uint32_t n, cap;
	struct hindex index;
};

void collector__init(struct collector *c, const char *path, bool import);
void collector__release(struct collector *c);

/*
 * Writes one collection of r (everything recorded so far) with this
 * reason: end, interval, request or import. Returns 0 or an exit status,
 * having said what went wrong (an import of a recording already in the
 * ledger: EXIT_USAGE).
 */
int collector__collect(struct collector *c, const struct loaded_recording *r,
		       const char *reason);

/* An import: one collection of the whole recording r. */
int ledger_write_recording(const char *path, const struct loaded_recording *r,
			   const char *reason);

#endif
