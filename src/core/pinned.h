/*
 * pinned: room that never moves as it fills. A table read by one thread
 * while another appends to it cannot be realloc'd: its arrays are given
 * address space enough for the most they may hold, up front (mmap,
 * MAP_NORESERVE), and take memory only as they are written.
 */
#ifndef CPULEDGER_CORE_PINNED_H
#define CPULEDGER_CORE_PINNED_H

#include <stddef.h>

/* bytes of address space, zeroed when first touched; NULL when the
 * system gives none (an address-space limit, strict overcommit). */
void *pinned__reserve(size_t bytes);
void pinned__release(void *p, size_t bytes);

#endif
