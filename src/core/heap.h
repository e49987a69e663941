/*
 * heap: a binary min-heap's two moves over an array, written once for any
 * element type. HEAP_DEFINE(name, type, before) defines
 *   static void name##_up(type *h, uint32_t i)    after h[i] was appended
 *   static void name##_down(type *h, uint32_t n, uint32_t i)
 *                                                 after h[i] was replaced
 * where before(a, b) (pointers to type) says a comes out first. The engine
 * keeps two: events without a CPU's ring, and the rings' heads.
 */
#ifndef CPULEDGER_CORE_HEAP_H
#define CPULEDGER_CORE_HEAP_H

#include <stdint.h>

#define HEAP_DEFINE(name, type, before)						\
static void name##_up(type *h, uint32_t i)					\
{										\
	while (i && before(&h[i], &h[(i - 1) / 2])) {				\
		type x = h[i];							\
		h[i] = h[(i - 1) / 2];						\
		h[(i - 1) / 2] = x;						\
		i = (i - 1) / 2;						\
	}									\
}										\
										\
static void name##_down(type *h, uint32_t n, uint32_t i)			\
{										\
	for (;;) {								\
		uint32_t l = 2 * i + 1, m = i;					\
		if (l < n && before(&h[l], &h[m]))				\
			m = l;							\
		if (l + 1 < n && before(&h[l + 1], &h[m]))			\
			m = l + 1;						\
		if (m == i)							\
			return;							\
		type x = h[i];							\
		h[i] = h[m];							\
		h[m] = x;							\
		i = m;								\
	}									\
}

#endif
