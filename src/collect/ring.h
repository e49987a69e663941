/*
 * ring: one perf_event mmap ring buffer, read as the kernel's ABI asks:
 * data_head with acquire semantics, records that wrap the end copied into
 * a scratch buffer, data_tail written (release) only after the records are
 * consumed. PERF_RECORD_LOST records are counted.
 */
#ifndef CPULEDGER_COLLECT_RING_H
#define CPULEDGER_COLLECT_RING_H

#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

struct ring {
	int fd;			/* the event that owns the mapping */
	void *base;		/* the metadata page, then the data pages */
	size_t data_size;	/* a power of two */
	size_t page_size;
	uint8_t *scratch;	/* a wrapped record, made whole */
	size_t scratch_size;
	uint64_t lost;		/* records the kernel dropped (PERF_RECORD_LOST) */
	uint64_t records;
	/* a read under way (ring__start to ring__finish) */
	uint64_t head, tail;	/* the kernel's head when it began; the cursor */
	uint64_t given;		/* the tail the kernel was last told */
	const struct perf_event_header *at;	/* the record at the cursor */
};

/* Maps data_pages (a power of two) pages of fd's ring. 0 or -errno. */
int ring__init(struct ring *r, int fd, size_t data_pages);
void ring__release(struct ring *r);

/* Reading a ring a record at a time, so that a reader can take the
 * rings' records in the order of their times: ring__start takes the kernel's
 * head once; ring__peek gives the record at the cursor (made whole if it
 * wraps the end; valid until ring__pass), NULL when the records the head
 * covered are all passed; ring__pass moves past it, and gives the space
 * passed back to the kernel every eighth of the ring (a merge of several
 * rings holds each for the whole read); ring__finish gives the rest. */
void ring__start(struct ring *r);
const struct perf_event_header *ring__peek(struct ring *r);
void ring__pass(struct ring *r);
void ring__finish(struct ring *r);

#endif
