/*
 * grow: room for one more element in a heap array, doubling it when full.
 * The engine's tables are arrays indexed by 32-bit ids; this is their one
 * growth rule.
 */
#ifndef CPULEDGER_CORE_GROW_H
#define CPULEDGER_CORE_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Makes *arr (with *cap elements of elem bytes, used of them taken) hold
 * one more, starting at first elements. 0, or -ENOMEM leaving it as it was. */
static inline int grow_array(void **arr, uint32_t *cap, uint32_t used,
			     size_t elem, uint32_t first)
{
	if (used < *cap)
		return 0;
	if (*cap >= UINT32_MAX / 2)
		return -ENOMEM;
	uint32_t n = *cap ? *cap * 2 : first;
	void *p = realloc(*arr, (size_t)n * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

#endif
