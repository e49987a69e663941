/*
 * collector: seed 000's collection means, from the engine's state. A
 * collection holds what accrued since the one before, per thread and
 * account: for a thread still alive, its cumulative figures now minus
 * what was last collected; for one that has gone since, its last figures
 * minus that. So a recording's collections always sum to its final
 * analysis, the one `report` shows, and nothing is read back from the
 * recording file. Memory follows the live threads (a gone thread leaves
 * once collected).
 */
#ifndef CPULEDGER_ANALYSIS_COLLECTOR_H
#define CPULEDGER_ANALYSIS_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/cgstats.h"
#include "../core/engine.h"
#include "../core/hindex.h"
#include "../core/strtab.h"
#include "../ledger/writer.h"
#include "tracker.h"

struct collector {
	const struct strtab *names;	/* the engine's */
	char host[256], boot_id[64], recording[400];
	int64_t seq;		/* the next collection's number */
	int64_t last_end_ns;	/* end of the previous collection (realtime) */
	int64_t realtime_shift;	/* realtime - CLOCK_MONOTONIC */
	bool steal_known;
	bool scope_all;
	struct coll_entry *v;	/* live threads' accounts */
	uint32_t n, cap;
	struct hindex index;
	struct tracker collected;	/* each entry's figures as last collected */
	struct batch *gone;	/* gone threads' last rows, for the next one */
	struct strtab accounts;
	uint32_t epoch;		/* a new one per collection and per gone thread */
	/* run-queue wait (the ledger's waits): read_wait gives a thread's
	 * schedstat run_delay now (0, or -errno when it cannot be read: the
	 * wait stays unknown), wait_start each thread's when the recording
	 * started (a thread not in it was born since). Set after init;
	 * read_wait NULL: waits unknown. */
	int (*read_wait)(void *ctx, uint32_t pid, uint32_t tid, uint64_t *ns);
	void *wait_ctx;
	const struct cgstats *wait_start;
	struct tracker waited;	/* each thread's wait as last collected */
};

/* recording: "host boot_id start" (docs/ledger.md); start_ns the
 * recording's realtime start. 0 or -ENOMEM. */
int collector__init(struct collector *c, const struct strtab *names, const char *host,
		    const char *boot_id, uint64_t mono_start, int64_t realtime_start,
		    bool steal_known);
void collector__release(struct collector *c);

/* As the engine's sink: a gone thread's last figures (live ones come
 * through collector__collect). */
int collector__program(struct collector *c, const struct engine *e,
		       const struct eng_thread *t, const struct eng_figures *f, bool final);

/* As the engine's sink, after a gone thread's last figures. */
int collector__thread_gone(struct collector *c, const struct engine *e,
			   const struct eng_thread *t);
/* The two above as a sink, for engine__add_sink. */
struct engine_sink collector__sink(struct collector *c);

/* A collection of what accrued since the last one, now: a new batch (the
 * caller's), or NULL with errno ENOMEM. reason: interval, request, end. */
struct batch *collector__collect(struct collector *c, struct engine *e, const char *reason,
				 int64_t now_realtime);

#endif
