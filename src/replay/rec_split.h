/*
 * rec_split: events made on a thread of their own, put in time order
 * there (the reorder queue, reorder.h, kept in the engine's place), and
 * processed by the engine on the caller's thread (rec_source_feed.c
 * reads a recording's items so: bench/RESULTS.md, round 18). The queue
 * was the engine's, on the caller's thread, for reports that name no
 * stacks, while reading was the heavier share (round 22); since a
 * sample's addresses are apart (recording version 4) it is not, and a
 * JSON report by thread of 8 minutes of a compile loop took 0.90 of the
 * time with the queue here (round 27).
 *
 * The events, in order, pass as ops in batches of 128 KB, four of them
 * passed round between the threads; the caller's thread does each op in
 * turn. Besides events, the reading thread may put notes: bytes of its
 * own that the caller's thread hands back to the client (what must be
 * done where the engine is, between the events before and after).
 */
#ifndef CPULEDGER_REPLAY_REC_SPLIT_H
#define CPULEDGER_REPLAY_REC_SPLIT_H

#include <stdint.h>

#include "../core/engine.h"
#include "../format/recording.h"

struct rec_split;

struct rec_split_client {
	void *ctx;
	/* On the reading thread: every item, making events (rec_split__push,
	 * __advance) and notes. 0 at the end, else its error. */
	int (*read)(void *ctx, struct rec_error *err);
	/* On the caller's thread: a note, in its place among the events. */
	int (*note)(void *ctx, uint32_t kind, const uint8_t *d, uint32_t len);
	/* On the caller's thread, after each event or note. */
	void (*after)(void *ctx);
	/* On the reading thread, when too many events wait: the time every
	 * stream has been read up to (UINT64_MAX: none). */
	uint64_t (*streams_read)(void *ctx);
};

/* For a recording of ncpus CPUs; NULL when out of memory. */
struct rec_split *rec_split__new(uint32_t ncpus, const struct rec_split_client *c);
void rec_split__free(struct rec_split *sp);

/*
 * Runs the reading thread and processes what it gives in e until its
 * end; 1 when no thread can be made (nothing read then). Else the first
 * error in the items' order: e's (a processing error stops the reading)
 * or the reading's, *err then what it said.
 */
int rec_split__run(struct rec_split *sp, struct engine *e, struct rec_error *err);

/* On the reading thread, as engine__push then engine__advance(then)
 * (UINT64_MAX: not) would do to an engine: ev queued (its strings the
 * queue's, even on failure), those due handed on; too many queued
 * (REC_MAX_QUEUED), those up to the client's streams_read, then the
 * oldest, go: the same events in the same order as the engine's queue. */
int rec_split__push(struct rec_split *sp, struct eng_event *ev, uint64_t then);
int rec_split__advance(struct rec_split *sp, uint64_t watermark);
int rec_split__note(struct rec_split *sp, uint32_t kind, const void *d, uint32_t len);

#endif
