/*
 * perf_regions: perf records that change a process's code regions (MMAP,
 * MMAP2, FORK, COMM with exec), applied to a region table with their
 * times. The recorder and report apply the same records in the same order,
 * so both resolve a sample to the same (dso, offset).
 */
#ifndef CPULEDGER_RESOLVE_PERF_REGIONS_H
#define CPULEDGER_RESOLVE_PERF_REGIONS_H

#include <linux/perf_event.h>

#include "../core/regions.h"

/* The time of a non-sample record from its sample_id_all trailer (TID,
 * TIME, CPU, IDENTIFIER, 8 bytes each: the sample_type cpuledger records
 * with); 0 when too short to hold one. body is the record after its
 * header, len bytes. */
uint64_t perf_trailer_time(const uint8_t *body, size_t len);

/* Applies h if it is such a record (len bytes, bounds-checked); others are
 * ignored. 0, -EINVAL for a malformed one, -ENOMEM. */
int perf_regions__apply(struct regions *t, const struct perf_event_header *h,
			size_t len);

/* Every line of a /proc/PID/maps text into pid's regions. 0 or -errno. */
int perf_regions__maps(struct regions *t, uint32_t pid, const char *text,
		       size_t len);

#endif
