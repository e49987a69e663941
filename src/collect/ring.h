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
};

/* Maps data_pages (a power of two) pages of fd's ring. 0 or -errno. */
int ring__init(struct ring *r, int fd, size_t data_pages);
void ring__release(struct ring *r);

/* Called for each record; returns 0 to go on, or an error to stop (the
 * record is then not consumed). */
typedef int (*ring_record_fn)(void *ctx, const struct perf_event_header *h);

/* Hands every record now in the ring to fn, then frees their space.
 * Returns 0 or fn's error. */
int ring__read(struct ring *r, ring_record_fn fn, void *ctx);

#endif
