/*
 * grow: room for one more element in a heap array, or for more bytes in a
 * buffer, doubling it when full.
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
 * zeroed: a table indexed by ids met in any order. 0, or -ENOMEM. */
static inline int grow_array_to(void **arr, uint32_t *cap, uint32_t index,
				size_t elem, uint32_t first)
{
	while (index >= *cap) {
		uint32_t old = *cap;
		if (grow_array(arr, cap, old, elem, first))
			return -ENOMEM;
		memset((char *)*arr + (size_t)old * elem, 0, (size_t)(*cap - old) * elem);
	}
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
