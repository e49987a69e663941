/*
 * tracker: "what changed since I last looked", in one place, for the
 * engine's consumers that show figures as they accrue: the ledger's
 * collections (collector.c), /metrics (metrics.c) and top (topview.c).
 * The engine hands out cumulative figures (engine__walk) and a thread's
 * last ones when it is gone; each consumer keys what it follows its own
 * way (a thread and account, a thread, a tid) and asks the tracker for
 * the change since its previous look at that key. The tracker keeps the
 * figures of each key's last look, nothing else: memory follows the keys
 * not yet forgotten (a consumer forgets a thread once it is gone).
 */
#ifndef CPULEDGER_ANALYSIS_TRACKER_H
#define CPULEDGER_ANALYSIS_TRACKER_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/hindex.h"

/* Who the figures are of, as the consumer names it: up to three numbers. */
struct track_key {
	uint64_t a, b, c;
};

struct track_figs {
	int64_t cpu_ns, steal_ns, samples;
};

struct track_entry;

struct tracker {
	struct track_entry *v;
	uint32_t n, cap, free;
	struct hindex index;
};

void tracker__init(struct tracker *tr);
void tracker__release(struct tracker *tr);

enum track_mode {
	/* the change, signed: a share that fell gives back (collections) */
	TRACK_EXACT,
	/* counters that never go down: a fall gives 0 and is not taken
	 * back when the figures rise again (the last look keeps the
	 * highest figures seen) */
	TRACK_COUNTER,
};

/* The change in k's figures since its last look (a key not seen: since
 * nothing), into *delta; now becomes the last look. 0 or -ENOMEM. */
int tracker__look(struct tracker *tr, const struct track_key *k, const struct track_figs *now,
		  enum track_mode mode, struct track_figs *delta);

/* k's last look, or zeros for a key not seen. */
struct track_figs tracker__last(const struct tracker *tr, const struct track_key *k);

/* k is gone: its last look too. */
void tracker__forget(struct tracker *tr, const struct track_key *k);

#endif
