/* ring: see ring.h. */
#include "ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../core/banned.h"

int ring__init(struct ring *r, int fd, size_t data_pages)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->page_size = (size_t)sysconf(_SC_PAGESIZE);
	r->data_size = data_pages * r->page_size;
	r->base = mmap(NULL, r->page_size + r->data_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	r->scratch_size = 1 << 16;	/* perf records are under 64 KiB */
	r->scratch = malloc(r->scratch_size);
	if (!r->scratch) {
		ring__release(r);
		return -ENOMEM;
	}
	return 0;
}

void ring__release(struct ring *r)
{
	if (!r)
		return;
	if (r->base)
		munmap(r->base, r->page_size + r->data_size);
	free(r->scratch);
	r->base = NULL;
	r->scratch = NULL;
}

void ring__start(struct ring *r)
{
	struct perf_event_mmap_page *meta = r->base;
	r->head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	r->tail = r->given = meta->data_tail;
	r->at = NULL;
}

const struct perf_event_header *ring__peek(struct ring *r)
{
	if (r->at)
		return r->at;
	if (r->tail >= r->head)
		return NULL;
	uint8_t *data = (uint8_t *)r->base + r->page_size;
	size_t off = r->tail & (r->data_size - 1);
	struct perf_event_header h;
	/* the header itself may wrap */
	if (off + sizeof(h) > r->data_size) {
		size_t first = r->data_size - off;
		memcpy(&h, data + off, first);
		memcpy((uint8_t *)&h + first, data, sizeof(h) - first);
	} else {
		memcpy(&h, data + off, sizeof(h));
	}
	size_t size = h.size;
	if (size < sizeof(h) || size > r->scratch_size)
		return NULL;	/* cannot happen with a sane kernel */
	if (off + size > r->data_size) {
		size_t first = r->data_size - off;
		memcpy(r->scratch, data + off, first);
		memcpy(r->scratch + first, data, size - first);
		r->at = (const void *)r->scratch;
	} else {
		r->at = (const void *)(data + off);
	}
	return r->at;
}

void ring__pass(struct ring *r)
{
	const struct perf_event_header *h = ring__peek(r);
	if (!h)
		return;
	if (h->type == PERF_RECORD_LOST) {
		const struct { struct perf_event_header h; uint64_t id, lost; } *l =
			(const void *)h;
		r->lost += l->lost;
	}
	r->records++;
	r->tail += h->size;
	r->at = NULL;
	/* the kernel writes nothing at or past the tail, so the record at
	 * the cursor, peeked next, stays whole in the ring */
	if (r->tail - r->given >= r->data_size / 8)
		ring__finish(r);
}

void ring__finish(struct ring *r)
{
	struct perf_event_mmap_page *meta = r->base;
	__atomic_store_n(&meta->data_tail, r->tail, __ATOMIC_RELEASE);
	r->given = r->tail;
}
