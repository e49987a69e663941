/*
 * sched_forget: takes exited threads' entries out of the collector's
 * threads map (sched_clock.c) without ever taking a new thread's. The map
 * is keyed by thread id, and an id is given again as soon as its thread
 * is reaped: between the read that found an entry exited and its delete,
 * a new thread may have taken the id (the BPF programs then replace the
 * dead entry with its own). A delete by id would take the new thread's
 * entry and its first figures with it. So each entry is taken out with
 * its value (BPF_MAP_LOOKUP_AND_DELETE_ELEM, one step under the map's
 * lock) and compared with the exited one read (its birth stamp): a new
 * thread's is put back (BPF_NOEXIST), and handed to the caller to count
 * with the read in any case; where the new thread made another entry in
 * the meantime, what it held is in the one handed over, and the other
 * counts from there (another birth stamp: sched_delta starts it again).
 *
 * The map is reached through ops, so that the logic is tested without a
 * kernel (tests/unit/test_sched_forget.c).
 */
#ifndef CPULEDGER_BPF_SCHED_FORGET_H
#define CPULEDGER_BPF_SCHED_FORGET_H

#include <stddef.h>
#include <stdint.h>

#include "sched_clock_abi.h"

struct sched_forget_ops {
	void *ctx;
	/* key tid's entry out of the map, its value into *v, in one step:
	 * 0, -ENOENT (none), or -errno (-EINVAL, -ENOTSUP: the kernel
	 * cannot; nothing was taken) */
	int (*take)(void *ctx, uint32_t tid, struct sc_thread *v);
	/* the entry back, unless the id has one again: 0, -EEXIST, -errno */
	int (*put_back)(void *ctx, uint32_t tid, const struct sc_thread *v);
};

/*
 * Takes out the entries of the n exited threads (tids[i], read as
 * gone[i]); a new thread's entry found under one of the ids goes into
 * kept_tids and kept (room for n), *nkept of them. 0, or the first
 * error of take other than -ENOENT (the entries from that one on are
 * left: -EINVAL or -ENOTSUP say the caller must delete another way).
 */
int sched_forget__exited(const struct sched_forget_ops *ops, const uint32_t *tids,
			 const struct sc_thread *gone, size_t n, uint32_t *kept_tids,
			 struct sc_thread *kept, size_t *nkept, size_t *done);

#endif
