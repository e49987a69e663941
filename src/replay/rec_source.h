/*
 * rec_source: a recording read as a stream of engine events
 * (core/engine.h), item by item, in memory bounded by what the engine and
 * the names hold, never by the file's length.
 *
 * A version 2 recording holds what the recorder decoded as it drained its
 * rings (samples with their functions named, scheduler events, task
 * events, loss windows) and ROUND items that give the engine its
 * watermark. A version 1 recording holds the perf records themselves:
 * they are decoded (perf_decode.h) and resolved (resolve.h) here, with the
 * functions it stored at its end (read first, in a pass of their own), and
 * its rounds are told from the CPU numbers (the recorder drained rings in
 * CPU order). perf script imports are in time order already.
 *
 * Accounts come from the rules given, else the rules stored in the
 * recording, else the defaults (docs/accounts.md).
 */
#ifndef CPULEDGER_REPLAY_REC_SOURCE_H
#define CPULEDGER_REPLAY_REC_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "../format/rec_meta.h"
#include "../format/recording.h"
#include "../core/accounts.h"
#include "../core/cgstats.h"
#include "../core/engine.h"
#include "../core/source.h"
#include "../core/strtab.h"

struct rec_source_opts {
	const struct account_rules *rules;	/* NULL: stored, or defaults */
	bool stacks;		/* call stacks as ids in the stacks table */
	bool salvage;		/* a damaged file ends at its damage */
	bool raw_names;		/* functions as stored: not demangled */
	/* a thread's wait is asked for once, when the engine hands the
	 * thread out (report; ledger add asks after the end): a thread gone
	 * has its wait forgotten then, so that memory follows the live
	 * threads, not every thread the recording saw */
	bool waits_once;
	/* with a second CPU, a live recording's items read and made events
	 * on a thread of their own, the engine fed on the caller's
	 * (rec_split.h): where the report's own work is the heavier half */
	bool split;
};

/* Limits on what a file can make a reader hold (docs/robustness.md). */
#define REC_MAX_NAMES (1u << 24)	/* distinct names */
#define REC_MAX_NAME_BYTES (1u << 30)	/* their bytes in all */
#define REC_MAX_FRAMES 4096		/* frames of one sample */
/* frames of every REC_STACK, one at least each (at most 72 MB held):
 * beyond the most a writer writes (REC_WRITER_STACK_BYTES, 12 bytes a
 * frame and one a stack) */
#define REC_MAX_STACK_FRAMES (1u << 21)
/* events waiting for a round mark: past this, each CPU's stream (in time
 * order in the file) is taken as read up to its latest event, and then the
 * oldest are processed (what comes later and older is counted late): about
 * 50 MB */
#define REC_MAX_QUEUED (1u << 19)

struct rec_source;

/* Reads fd's header and first META. NULL with errno set; EINVAL: not a
 * recording or damaged there (err says where and what). */
struct rec_source *rec_source__open(int fd, const struct rec_source_opts *o,
				    struct rec_error *err);
void rec_source__free(struct rec_source *s);

const struct rec_meta *rec_source__meta(const struct rec_source *s);
/* Names of functions, files, accounts, comms: the engine's string ids. */
struct strtab *rec_source__names(struct rec_source *s);
/* Each stack: (function, dso, account) name ids, leaf first. */
struct stacktab *rec_source__stacks(struct rec_source *s);

/* The account rules in force: those given, else those the recording
 * stored (once read), else NULL (the defaults). */
const struct account_rules *rec_source__rules(const struct rec_source *s);

/* The engine's configuration for this recording (the method, and any
 * --kernel-accounting, are the caller's to set: analysis/pipeline). */
void rec_source__config(struct rec_source *s, struct engine_config *c);

/* s as an event source (core/source.h), valid while s is; its feed says
 * where damage is in *err. */
struct source *rec_source__source(struct rec_source *s, struct rec_error *err);

/*
 * Feeds every event of the file to e (made with rec_source__config),
 * advancing it as the file allows; it is not finished. 0; -EINVAL for
 * damage (err says where; with salvage, damage ends the file instead and
 * rec_source__damage says where); -ENOMEM; -errno; or the engine's error.
 */
int rec_source__feed(struct rec_source *s, struct engine *e, struct rec_error *err);

const struct source_cpu *rec_source__cpus(const struct rec_source *s);
uint64_t rec_source__bad_records(const struct rec_source *s);
uint64_t rec_source__samples(const struct rec_source *s);	/* every sample, idle too */
/* Samples per event (the imported one, the scheduler's, the others). */
uint32_t rec_source__events(const struct rec_source *s, const struct source_event **out);
bool rec_source__damage(const struct rec_source *s, struct rec_error *err);
/* The cgroups' counters and the threads' waits the file holds. */
const struct cgstats *rec_source__cgstats(const struct rec_source *s);

#endif
