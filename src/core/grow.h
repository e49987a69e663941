/*
 * grow: room for one more element in a heap array, or for more bytes in a
 * buffer, doubling it when full; a table indexed by ids, zeroed as it
 * grows, by an eighth.
 * The engine's tables are arrays indexed by 32-bit ids; this is their one
 * growth rule.
 */
#ifndef CPULEDGER_CORE_GROW_H
#define CPULEDGER_CORE_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* Makes *arr (as grow_array's) hold element index, the elements added
 * zeroed: a table indexed by ids met in any order. Past first elements it
 * grows by an eighth, not twice: each element added is zeroed, so all of
 * it is in memory at once, where a doubled array's unused half of a
 * table of a long recording's stacks was a fifth of what its report
 * grew by (bench/RESULTS.md, round 32). 0, or -ENOMEM. */
static inline int grow_array_to(void **arr, uint32_t *cap, uint32_t index,
				size_t elem, uint32_t first)
{
	if (index < *cap)
		return 0;
	if (index >= UINT32_MAX - UINT32_MAX / 8)
		return -ENOMEM;
	uint32_t old = *cap, n = old < first ? first : old + old / 8;
	if (n <= index)
		n = index + 1 + index / 8;
	void *p = realloc(*arr, (size_t)n * elem);
	if (!p)
		return -ENOMEM;
	memset((char *)p + (size_t)old * elem, 0, (size_t)(n - old) * elem);
	*arr = p;
	*cap = n;
	return 0;
}

/* Makes the byte buffer *buf (of *cap bytes) hold at least need bytes,
 * doubling from first. 0, or -ENOMEM leaving it as it was. */
static inline int grow_bytes(char **buf, size_t *cap, size_t need, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : first;
	while (c < need)
		c *= 2;
	char *p = realloc(*buf, c);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = c;
	return 0;
}

#endif
