/*
 * perf_map: functions of just-in-time compiled code, from the
 * /tmp/perf-PID.map files that JITs write for perf (Java agents, Node's
 * --perf-basic-prof, .NET, LuaJIT): lines of "START SIZE NAME", addresses
 * in hex. A process's file is read on its first lookup and again when it
 * has changed (JITs append), while the process lives; where two entries
 * overlap, the later line wins (code is compiled again over old code).
 *
 * /tmp is anybody's: a file is read only as perf reads it, when it is a
 * regular file (opened without following a symbolic link, checked by
 * fstat after the open), owned by root or by the process's effective
 * user (from /proc/PID/status, so only while the process lives), and no
 * larger than max_file_bytes. A process's file is looked at again at most once
 * every recheck_ns, and all files together are read at most at
 * PERF_MAP_RATE bytes a second (a bucket of one second's worth), so a
 * user rewriting maps costs the reader a bounded share of a CPU.
 */
#ifndef CPULEDGER_SYMBOLS_PERF_MAP_H
#define CPULEDGER_SYMBOLS_PERF_MAP_H

#include <stdint.h>

#include "../core/hindex.h"
#include "../core/strtab.h"
#include "../core/units.h"

#define PERF_MAP_MAX_BYTES (64u << 20)	/* a larger map is not read */
#define PERF_MAP_RECHECK_NS NSEC_PER_SEC	/* a file looked at again */
#define PERF_MAP_RATE (64u << 20)	/* bytes of maps read a second */

struct perf_maps {
	char root[256];
	struct perf_map *v;	/* by pid, through index */
	uint32_t n, cap;
	uint32_t *free_slots;	/* of processes gone, for new ones */
	uint32_t nfree, free_cap;
	struct hindex index;
	/* what a map file may cost (set by init; tests change them) */
	uint64_t max_file_bytes, recheck_ns, rate;
	uint64_t (*clock_ns)(void);	/* monotonic */
	uint64_t budget, budget_ns;	/* bytes that may be read now, as of */
	uint64_t refused;	/* files not read: link, not regular, owner, size */
	/* what the tables hold; over max_bytes (0: no bound) the least
	 * recently used tables go (read again when next needed) */
	size_t max_bytes, bytes;
	uint64_t entries, evicted, tick;
};

struct jit_func {
	uint64_t start, end;
	const char *name;	/* the map's own, until it is read again */
};

void perf_maps__init(struct perf_maps *m, const char *root);
void perf_maps__release(struct perf_maps *m);
/* The function of pid at addr, from its map file; NULL when none. Its
 * name is the table's: valid until the next call. */
const struct jit_func *perf_maps__find(struct perf_maps *m, uint32_t pid, uint64_t addr);
/* pid has gone: its table goes. */
void perf_maps__forget(struct perf_maps *m, uint32_t pid);

#endif
