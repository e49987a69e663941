/* report/pprof_zstream: see pprof_zstream.h. */
#include "pprof_zstream.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "../core/banned.h"

/* Where the states go: far from where Linux puts a process's heap,
 * libraries and stacks (below 0x5500'0000'0000 and near 0x7fff'ffff'ffff
 * on x86-64, whatever the randomisation), 1 MiB apart, so each has its own
 * bits 16 to 47. */
#define ZSTREAM_BASE ((uintptr_t)0x3e0000000000ull)
#define ZSTREAM_STEP ((uintptr_t)1 << 20)
#define ZSTREAMS 16

static size_t map_size(void)
{
	return (sizeof(struct isal_zstream) + 4095) & ~(size_t)4095;
}

static void *slot_address(unsigned i)
{
	return (void *)(ZSTREAM_BASE + i * ZSTREAM_STEP);
}

struct isal_zstream *pprof_zstream__new(void)
{
	for (unsigned i = 0; i < ZSTREAMS; i++) {
		void *want = slot_address(i);
		/* the kernel maps it only where nothing is (EEXIST else): two
		 * threads never get the same one */
		void *p = mmap(want, map_size(), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == want)
			return p;	/* zeroed, as anonymous memory is */
		if (p != MAP_FAILED)
			munmap(p, map_size());	/* a kernel before 4.17: a hint */
	}
	return calloc(1, sizeof(struct isal_zstream));
}

bool pprof_zstream__fixed(const struct isal_zstream *s)
{
	uintptr_t a = (uintptr_t)s;
	return a >= ZSTREAM_BASE && a < ZSTREAM_BASE + ZSTREAMS * ZSTREAM_STEP &&
	       (a - ZSTREAM_BASE) % ZSTREAM_STEP == 0;
}

void pprof_zstream__free(struct isal_zstream *s)
{
	if (!s)
		return;
	if (pprof_zstream__fixed(s))
		munmap(s, map_size());	/* its bytes gone with it */
	else
		free(s);
}
