/*
 * cgstats: what a cgroup's own counters and the scheduler's run-queue
 * waits say over a recording, beside the engine's figures: each cgroup's
 * usage and throttling read at the start and the end (so a change is the
 * end less the start; a group made meanwhile started at 0), and each
 * thread's schedstat run_delay at the start and the end (a thread born
 * meanwhile waited 0 before). Filled by the reader of a recording or the
 * live recorder; read by the analysis. Memory follows the cgroups and the
 * threads alive at either end, never the events.
 */
#ifndef CPULEDGER_CORE_CGSTATS_H
#define CPULEDGER_CORE_CGSTATS_H

#include <stdbool.h>
#include <stdint.h>

#include "hindex.h"

/* A cgroup's counters at one time (collect/cgroup.h reads them). */
struct cg_counters {
	bool usage_known, throttled_known;
	uint64_t usage_ns;		/* CPU time its tasks ran */
	uint64_t throttled_ns;		/* time its quota held it off */
	uint64_t nr_throttled;		/* periods it was throttled in */
};

struct cg_entry {
	uint32_t name;			/* its path, a string id */
	bool seen[2];			/* read at the start, the end */
	struct cg_counters c[2];
};

struct cg_wait {
	uint32_t pid, tid;
	bool seen[2];
	bool final;			/* its last figure is in: it exited */
	bool grown;			/* counted as it went (cgstats__wait_grow) */
	uint64_t ns[2];
};

struct cg_thread_id {
	uint32_t pid, tid;
};

struct cgstats {
	struct cg_entry *groups;
	uint32_t ngroups, groups_cap;
	struct hindex group_index;
	struct cg_wait *waits;
	uint32_t nwaits, waits_cap;
	struct hindex wait_index;
	bool have_waits[2];		/* a snapshot of each end was taken */
	/* exited threads the engine has handed out, forgotten at the next
	 * cgstats__wait_sweep */
	struct cg_thread_id *handed;
	uint32_t nhanded, handed_cap;
};

void cgstats__init(struct cgstats *s);
void cgstats__release(struct cgstats *s);

/* phase 0: the start, 1: the end. 0 or -ENOMEM. */
int cgstats__counters(struct cgstats *s, int phase, uint32_t name,
		      const struct cg_counters *c);
int cgstats__wait(struct cgstats *s, int phase, uint32_t pid, uint32_t tid, uint64_t ns);
/* A source that reads waits as they grow (the BPF collector's, from each
 * thread's first sight): thread tid waited ns more, to the end's figure,
 * so that a thread gone before the end has its wait when it is handed
 * out. 0 or -ENOMEM. */
int cgstats__wait_grow(struct cgstats *s, uint32_t pid, uint32_t tid, uint64_t ns);

/*
 * Memory that follows the live threads, for a source that grows waits
 * over a long recording (the BPF collector's): thread tid's last figure
 * is in (it exited: cgstats__wait_final); the engine hands the thread
 * out to every sink, and the analysis and the ledger's collector ask for
 * its wait then (cgstats__wait_handed: from an engine sink added after
 * theirs or before, the order changes nothing); the source's next
 * cgstats__wait_sweep, between two of its reads and so never while a
 * sink may still ask, forgets it, fn (may be NULL) told of each. A
 * thread handed out before its last figure came stays until the end (the
 * engine hands it out again when that figure comes). 0 or -ENOMEM.
 */
int cgstats__wait_final(struct cgstats *s, uint32_t pid, uint32_t tid);
int cgstats__wait_handed(struct cgstats *s, uint32_t pid, uint32_t tid);
void cgstats__wait_sweep(struct cgstats *s, void (*fn)(void *ctx, uint32_t pid, uint32_t tid),
			 void *ctx);
/* Forgets thread tid's waits now (no consumer will ask). */
void cgstats__wait_forget(struct cgstats *s, uint32_t pid, uint32_t tid);

/* Call once per phase whose waits were all given (even none). */
void cgstats__waits_taken(struct cgstats *s, int phase);

/* Over the recording: the cgroup's change (false: not read at the end, so
 * not known); a group not read at the start was made during it. */
bool cgstats__change(const struct cgstats *s, uint32_t name, struct cg_counters *out);
/* Whether thread tid's wait is counted as it goes (a collector's, to its
 * last switch: an exited thread's figure is its whole wait), not read at
 * the ends (where an exited thread is read at best as a zombie, if it is
 * not reaped yet: by chance). */
bool cgstats__wait_counted(const struct cgstats *s, uint32_t pid, uint32_t tid);
/* Thread tid's wait over the recording: false when it was not alive at
 * the end (its last figure went with it). */
bool cgstats__thread_wait(const struct cgstats *s, uint32_t pid, uint32_t tid, uint64_t *ns);

/* A live thread's run-queue wait since the start: its figure now, through
 * read (the live consumers' read_wait hook), less its figure at the start
 * (none where it was not alive then, or its id was given again since: a
 * figure below the start's; s NULL: none). 0, or read's error (not
 * read: gone, no schedstat). */
int cgstats__wait_since_start(const struct cgstats *s,
			      int (*read)(void *ctx, uint32_t pid, uint32_t tid, uint64_t *ns),
			      void *ctx, uint32_t pid, uint32_t tid, uint64_t *ns);

#endif
