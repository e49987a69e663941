/*
 * perf_map: functions of just-in-time compiled code, from the
 * /tmp/perf-PID.map files that JITs write for perf (Java agents, Node's
 * --perf-basic-prof, .NET, LuaJIT): lines of "START SIZE NAME", addresses
 * in hex. A process's file is read on its first lookup and again when it
 * has grown (JITs append), while the process lives; where two entries
 * overlap, the later line wins (code is compiled again over old code).
 */
#ifndef CPULEDGER_SYMBOLS_PERF_MAP_H
#define CPULEDGER_SYMBOLS_PERF_MAP_H

#include <stdint.h>

#include "../core/hindex.h"
#include "../core/strtab.h"

struct perf_maps {
	char root[256];
	struct perf_map *v;	/* by pid, through index */
	uint32_t n, cap;
	uint32_t *free_slots;	/* of processes gone, for new ones */
	uint32_t nfree, free_cap;
	struct hindex index;
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
