/* pinned: see pinned.h. */
#include "pinned.h"

#include <sys/mman.h>

#include "banned.h"

void *pinned__reserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void pinned__release(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}
