/*
 * report/pprof_runs: a profile's runs of packed samples deflated as they
 * are sealed, each a raw deflate segment of its own (byte-aligned, with
 * no look-back before it: FULL_FLUSH), so that the profile's gzip stream
 * takes them as they are when it is written. Where there is a CPU to
 * spare, a thread deflates a run while the next one is packed: the
 * deflating was a tenth of a long recording's profile, at its end.
 */
#ifndef CPULEDGER_REPORT_PPROF_RUNS_H
#define CPULEDGER_REPORT_PPROF_RUNS_H
#include <stddef.h>
#include <stdint.h>

struct run_deflater;

/* A run deflated: its bytes (the deflater's, until a run is given
 * again), and the CRC-32 (as gzip's) and length of what it holds. */
struct deflated_run {
	uint8_t *z;
	size_t zlen, len;
	uint32_t crc;
};

/* A deflater, with a thread of its own when this process may run on
 * more than one CPU; NULL out of memory. */
struct run_deflater *run_deflater__new(void);
/* Waits for the run given last and frees the deflater. */
void run_deflater__free(struct run_deflater *d);
/* Gives len bytes of *buf to be deflated (the run given before taken
 * first: run_deflater__take); *buf and *cap become a buffer given back,
 * empty. 0, or -EBUSY when the run before was not taken. */
int run_deflater__give(struct run_deflater *d, uint8_t **buf, size_t *cap, size_t len);
/* The run given last, deflated, once done: 1, or 0 when none was given
 * since the last take, or -ENOMEM. */
int run_deflater__take(struct run_deflater *d, struct deflated_run *out);
/* A segment of zlen bytes inflated into buf, len bytes: 0, or -EINVAL
 * when it does not hold them. */
int run_inflate(const uint8_t *z, size_t zlen, uint8_t *buf, size_t len);

#endif
