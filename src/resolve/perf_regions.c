/* perf_regions: see perf_regions.h. Layouts from linux/perf_event.h. */
#include "perf_regions.h"

#include <errno.h>
#include <string.h>

#include "../core/banned.h"

uint64_t perf_trailer_time(const uint8_t *body, size_t len)
{
	uint64_t t = 0;
	if (len >= 32)
		memcpy(&t, body + len - 24, 8);
	return t;
}

int perf_regions__apply(struct regions *t, const struct perf_event_header *h,
			size_t len)
{
	const uint8_t *b = (const uint8_t *)(h + 1);
	size_t blen = len - sizeof(*h);
	uint32_t ids[4];
	uint64_t v[3];
	size_t name_at;

	switch (h->type) {
	case PERF_RECORD_MMAP:	/* pid, tid, addr, len, pgoff, filename */
	case PERF_RECORD_MMAP2:	/* ... 24 bytes of ids, prot, flags, filename */
		name_at = h->type == PERF_RECORD_MMAP ? 32 : 64;
		if (blen <= name_at)
			return -EINVAL;
		memcpy(ids, b, 8);
		memcpy(v, b + 8, 24);
		if (ids[0] == UINT32_MAX)
			return 0;	/* the kernel's own: kallsyms covers it */
		return regions__map(t, ids[0], v[0], v[1], v[2],
				    (const char *)b + name_at,
				    strnlen((const char *)b + name_at, blen - name_at),
				    perf_trailer_time(b, blen));
	case PERF_RECORD_FORK:	/* pid, ppid, tid, ptid: a process if pid != ppid */
		if (blen < 16)
			return -EINVAL;
		memcpy(ids, b, 16);
		return ids[0] != ids[1] ?
		       regions__fork(t, ids[0], ids[1], perf_trailer_time(b, blen)) : 0;
	case PERF_RECORD_COMM:
		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC))
			return 0;
		if (blen < 4)
			return -EINVAL;
		memcpy(ids, b, 4);
		return regions__exec(t, ids[0], perf_trailer_time(b, blen));
	default:
		return 0;
	}
}

int perf_regions__maps(struct regions *t, uint32_t pid, const char *text,
		       size_t len)
{
	const char *p = text, *e = text + len;
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(e - p);
		if (n) {
			int err = regions__maps_line(t, pid, p, n);
			if (err)
				return err;
		}
		p += n + 1;
	}
	return 0;
}
