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

int ring__read(struct ring *r, ring_record_fn fn, void *ctx)
{
	struct perf_event_mmap_page *meta = r->base;
	uint8_t *data = (uint8_t *)r->base + r->page_size;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	uint64_t mask = r->data_size - 1;
	int err = 0;

	while (tail < head) {
		const struct perf_event_header *h =
			(const void *)(data + (tail & mask));
		struct perf_event_header copy;
		size_t off = tail & mask;
		/* The header itself may wrap. */
		if (off + sizeof(copy) > r->data_size) {
			size_t first = r->data_size - off;
			memcpy(&copy, data + off, first);
			memcpy((uint8_t *)&copy + first, data, sizeof(copy) - first);
			h = &copy;
		}
		size_t size = h->size;
		if (size < sizeof(*h) || size > r->scratch_size)
			break;	/* cannot happen with a sane kernel */
		if (off + size > r->data_size) {
			size_t first = r->data_size - off;
			memcpy(r->scratch, data + off, first);
			memcpy(r->scratch + first, data, size - first);
			h = (const void *)r->scratch;
		} else {
			h = (const void *)(data + off);
		}
		if (h->type == PERF_RECORD_LOST) {
			const struct { struct perf_event_header h; uint64_t id, lost; } *l =
				(const void *)h;
			r->lost += l->lost;
		}
		err = fn(ctx, h);
		if (err)
			break;
		r->records++;
		tail += size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return err;
}
