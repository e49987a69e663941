/* perf_decode: see perf_decode.h. Layouts from linux/perf_event.h. */
#include "perf_decode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "../core/grow.h"
#include "perf_regions.h"
#include "../core/banned.h"

int pd_layout__add_id(struct pd_layout *l, uint64_t id, enum pd_event ev)
{
	if (grow_array((void **)&l->ids, &l->ids_cap, l->nids, sizeof(*l->ids), 16))
		return -ENOMEM;
	l->ids[l->nids].id = id;
	l->ids[l->nids++].event = ev;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

void pd_layout__ready(struct pd_layout *l)
{
	if (l->nids)
		qsort(l->ids, l->nids, sizeof(*l->ids), cmp_id);
}

void pd_layout__release(struct pd_layout *l)
{
	free(l->ids);
	l->ids = NULL;
	l->nids = l->ids_cap = 0;
}

static int event_of(const struct pd_layout *l, uint64_t id)
{
	uint32_t lo = 0, hi = l->nids;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (l->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->nids && l->ids[lo].id == id ? (int)l->ids[lo].event : -1;
}

#define TAKE(dst, n) do { \
		if ((size_t)(end - p) < (n)) \
			return -EINVAL; \
		memcpy((dst), p, (n)); \
		p += (n); \
	} while (0)

struct raw {
	const uint8_t *data;
	uint32_t size;
};

/* A PERF_RECORD_SAMPLE body of the given sample_type, in the ABI's order. */
static int parse_sample(const uint8_t *p, const uint8_t *end, uint64_t type,
			struct perf_ev *s, struct raw *raw)
{
	uint32_t pair[2];
	uint64_t id;
	if (type & PERF_SAMPLE_IDENTIFIER)
		TAKE(&id, 8);
	if (type & PERF_SAMPLE_IP)
		TAKE(&s->ip, 8);
	if (type & PERF_SAMPLE_TID) {
		TAKE(pair, 8);
		s->pid = pair[0];
		s->tid = pair[1];
	}
	if (type & PERF_SAMPLE_TIME)
		TAKE(&s->time, 8);
	if (type & PERF_SAMPLE_CPU)
		TAKE(pair, 8);
	if (type & PERF_SAMPLE_PERIOD)
		TAKE(&s->period, 8);
	if (type & PERF_SAMPLE_CALLCHAIN) {
		TAKE(&s->nr, 8);
		if (s->nr > (uint64_t)(end - p) / 8)
			return -EINVAL;
		s->chain = p;
		p += s->nr * 8;
	}
	if (type & PERF_SAMPLE_RAW) {
		TAKE(&raw->size, 4);
		if (raw->size > (size_t)(end - p))
			return -EINVAL;
		raw->data = p;
		p += raw->size;
	}
	/* nothing cpuledger asks for lies between RAW and CGROUP */
	if (type & PERF_SAMPLE_CGROUP)
		TAKE(&s->cgroup, 8);
	return 0;
}

static int raw_field(const struct raw *r, struct pd_field f, uint64_t *out)
{
	if (!r->data || f.offset > r->size || f.size > r->size - f.offset ||
	    (f.size != 4 && f.size != 8))
		return -EINVAL;
	if (f.size == 4) {
		uint32_t v;
		memcpy(&v, r->data + f.offset, 4);
		*out = v;
	} else {
		memcpy(out, r->data + f.offset, 8);
	}
	return 0;
}

static int decode_sample(const struct pd_layout *l, const struct perf_event_header *h,
			 const uint8_t *body, const uint8_t *end, struct perf_ev *o)
{
	uint64_t id, a, b;
	struct raw raw = { 0 };
	if (end - body < 8)
		return -EINVAL;
	memcpy(&id, body, 8);
	int ev = event_of(l, id);
	if (ev < 0 || parse_sample(body, end, l->sample_type[ev], o, &raw))
		return -EINVAL;
	if (ev == PE_CLOCK) {
		o->kind = PD_SAMPLE;
		o->kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
		return 0;
	}
	struct pd_field fa = ev == PE_SWITCH ? l->prev_pid : l->rt_pid;
	struct pd_field fb = ev == PE_SWITCH ? l->next_pid : l->rt_runtime;
	if (raw_field(&raw, fa, &a) || raw_field(&raw, fb, &b))
		return -EINVAL;
	o->kind = ev == PE_SWITCH ? PD_SWITCH : PD_RUNTIME;
	o->a = (uint32_t)a;
	if (ev == PE_SWITCH)
		o->b = (uint32_t)b;
	else
		o->value = b;
	return 0;
}

uint64_t perf_record_time(const struct pd_layout *l, const void *rec, size_t len)
{
	struct perf_event_header h;
	uint64_t id, t = 0;
	if (len < sizeof(h) + 8)
		return 0;
	memcpy(&h, rec, sizeof(h));
	const uint8_t *body = (const uint8_t *)rec + sizeof(h);
	if (h.type != PERF_RECORD_SAMPLE)
		return perf_trailer_time(body, len - sizeof(h));
	memcpy(&id, body, 8);
	int ev = event_of(l, id);
	if (ev < 0)
		return 0;
	uint64_t type = l->sample_type[ev];
	size_t at = 8 * (!!(type & PERF_SAMPLE_IDENTIFIER) + !!(type & PERF_SAMPLE_IP) +
			 !!(type & PERF_SAMPLE_TID));
	if ((type & PERF_SAMPLE_TIME) && len - sizeof(h) >= at + 8)
		memcpy(&t, body + at, 8);
	return t;
}

int perf_decode(const struct pd_layout *l, const void *rec, size_t len,
		struct perf_ev *o)
{
	struct perf_event_header h;
	memset(o, 0, sizeof(*o));
	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, rec, sizeof(h));
	if (h.size != len || len < sizeof(h))
		return -EINVAL;
	const uint8_t *body = (const uint8_t *)rec + sizeof(h), *end = (const uint8_t *)rec + len;
	size_t blen = len - sizeof(h);
	uint32_t ids[4];
	if (h.type == PERF_RECORD_SAMPLE)
		return decode_sample(l, &h, body, end, o);
	o->time = perf_trailer_time(body, blen);
	switch (h.type) {
	case PERF_RECORD_COMM:	/* pid, tid, comm[] */
		if (blen < 8 + 32)
			return -EINVAL;
		memcpy(ids, body, 8);
		o->kind = PD_COMM;
		o->pid = ids[0];
		o->tid = ids[1];
		o->name = (const char *)body + 8;
		o->name_len = strnlen(o->name, blen - 8 - 32);
		o->exec = h.misc & PERF_RECORD_MISC_COMM_EXEC;
		return 0;
	case PERF_RECORD_FORK:	/* pid, ppid, tid, ptid, time */
	case PERF_RECORD_EXIT:
		if (blen < 16 + 32)
			return -EINVAL;
		memcpy(ids, body, 16);
		o->kind = h.type == PERF_RECORD_FORK ? PD_FORK : PD_EXIT;
		o->pid = ids[0];
		o->ppid = ids[1];
		o->tid = ids[2];
		o->ptid = ids[3];
		return 0;
	case PERF_RECORD_LOST:	/* id, lost */
		if (blen < 16)
			return -EINVAL;
		memcpy(&o->value, body + 8, 8);
		o->kind = PD_LOST;
		return 0;
	case PERF_RECORD_CGROUP:	/* id, path[] */
		if (blen < 8 + 8 + 32)
			return -EINVAL;
		memcpy(&o->value, body, 8);
		o->kind = PD_CGROUP;
		o->name = (const char *)body + 8;
		o->name_len = strnlen(o->name, blen - 8 - 32);
		return 0;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		o->kind = PD_MMAP;
		return 0;
	default:
		o->kind = PD_OTHER;
		return 0;
	}
}

uint32_t perf_chain_frames(const struct perf_ev *s, uint64_t *ips, bool *kernel,
			   uint32_t max)
{
	uint32_t n = 0;
	bool kmode = s->kernel;
	for (uint64_t i = 0; i < s->nr && n < max; i++) {
		uint64_t ip;
		memcpy(&ip, s->chain + 8 * i, 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			kmode = ip == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		ips[n] = ip;
		kernel[n++] = kmode;
	}
	return n;
}
