/* rec_source: see rec_source.h; the items are docs/recording-format.md. */
#include "rec_source_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../format/procstat.h"
#include "../core/grow.h"
#include "../resolve/resolve.h"
#include "../core/banned.h"

int rec_source_fail(struct rec_error *err, uint64_t offset, const char *msg)
{
	err->offset = offset;
	snprintf(err->msg, sizeof(err->msg), "%s", msg);
	return -EINVAL;
}

/* Looks up a function a version 1 recording stored. */
int rec_source_stored_lookup(void *ctx, const char *dso, uint64_t offset, struct sym_hit *out)
{
	struct rec_source *s = ctx;
	uint32_t before = s->syms_names.count;
	uint32_t d = strtab__intern(&s->syms_names, dso, strlen(dso));
	if (d == HINDEX_NONE || d >= before)
		return -ENOENT;	/* a file with no function stored */
	uint32_t lo = 0, hi = s->nsyms;	/* the first past (d, offset) */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const struct stored_sym *m = &s->syms[mid];
		if (m->dso < d || (m->dso == d && m->start <= offset))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || s->syms[lo - 1].dso != d || offset >= s->syms[lo - 1].end)
		return -ENOENT;
	const struct stored_sym *m = &s->syms[lo - 1];
	*out = (struct sym_hit){ strtab__str(&s->syms_names, m->name), m->start, m->end };
	return 0;
}

static int cmp_sym(const void *pa, const void *pb)
{
	const struct stored_sym *a = pa, *b = pb;
	if (a->dso != b->dso)
		return a->dso < b->dso ? -1 : 1;
	return (a->start > b->start) - (a->start < b->start);
}

/* SYMBOL: u64 start, u64 end, u32 dso length, u32 0, dso, name. */
static int stored_symbol(struct rec_source *s, const uint8_t *d, uint32_t len)
{
	struct { uint64_t start, end; uint32_t dso_len, zero; } h;
	if (len < sizeof(h))
		return 0;
	memcpy(&h, d, sizeof(h));
	if (h.dso_len > len - sizeof(h) || h.end <= h.start)
		return 0;
	const char *text = (const char *)d + sizeof(h);
	uint32_t dso = strtab__intern(&s->syms_names, text, h.dso_len);
	uint32_t name = strtab__intern(&s->syms_names, text + h.dso_len,
				       len - sizeof(h) - h.dso_len);
	if (dso == HINDEX_NONE || name == HINDEX_NONE ||
	    grow_array((void **)&s->syms, &s->syms_cap, s->nsyms, sizeof(*s->syms), 1024))
		return -ENOMEM;
	s->syms[s->nsyms++] = (struct stored_sym){ dso, name, h.start, h.end };
	return 0;
}

/* Version 1 stored its functions at its end: read them first. */
static int read_stored_symbols(struct rec_source *s, struct rec_error *err)
{
	int e;
	for (;;) {
		uint32_t type, len;
		const uint8_t *d;
		e = rec_reader__next(s->rd, &type, &d, &len, err);
		if (e <= 0)
			break;
		if (type == REC_SYMBOL && (e = stored_symbol(s, d, len)))
			break;
	}
	if (e < 0)
		return e;
	if (s->nsyms)
		qsort(s->syms, s->nsyms, sizeof(*s->syms), cmp_sym);
	rec_reader__free(s->rd);
	s->rd = NULL;
	if (lseek(s->fd, 0, SEEK_SET) < 0)
		return -errno;
	s->rd = rec_reader__new(s->fd, err);
	if (!s->rd)
		return -errno;
	if (s->o.salvage)
		rec_reader__set_salvage(s->rd);
	uint32_t type, len;
	const uint8_t *d;
	e = rec_reader__next(s->rd, &type, &d, &len, err);	/* the META again */
	return e < 0 ? e : 0;
}

static int alloc_cpus(struct rec_source *s)
{
	uint32_t n = s->meta.ncpus;
	s->cpus = calloc(n, sizeof(*s->cpus));
	s->steal0 = calloc(n, sizeof(uint64_t));
	s->steal1 = calloc(n, sizeof(uint64_t));
	s->last_time = calloc(n, sizeof(uint64_t));
	s->seen0 = calloc(n, 1);
	s->seen1 = calloc(n, 1);
	return s->cpus && s->steal0 && s->steal1 && s->last_time && s->seen0 && s->seen1 ?
	       0 : -ENOMEM;
}

static int open_meta(struct rec_source *s, struct rec_error *err)
{
	uint32_t type, len;
	const uint8_t *d;
	int e = rec_reader__next(s->rd, &type, &d, &len, err);
	if (e < 0)
		return e;
	if (e == 0 || type != REC_META)
		return rec_source_fail(err, 16, "the recording does not start with its metadata");
	s->meta.version = rec_reader__version(s->rd);
	e = rec_meta__parse(&s->meta, (const char *)d, len, err->msg, sizeof(err->msg));
	if (e == -EINVAL)
		err->offset = 16;
	if (!e && !s->meta.have_start)
		e = rec_source_fail(err, 16, "the recording does not start with its metadata");
	return e ? e : alloc_cpus(s);
}

struct rec_source *rec_source__open(int fd, const struct rec_source_opts *o,
				    struct rec_error *err)
{
	struct rec_source *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	memset(err, 0, sizeof(*err));
	s->fd = fd;
	s->o = *o;
	s->last_cpu = -1;
	strtab__init(&s->names);
	cgstats__init(&s->cg);
	stacktab__init(&s->stacks);
	strtab__init(&s->syms_names);
	int e = -ENOMEM;
	s->rd = rec_reader__new(fd, err);
	if (!s->rd) {
		e = -errno;
		goto fail;
	}
	if (o->salvage)
		rec_reader__set_salvage(s->rd);
	e = open_meta(s, err);
	if (!e && s->meta.version == 1 && !s->meta.imported)
		e = read_stored_symbols(s, err);
	s->unknown = strtab__intern(&s->names, "[unknown]", 9);
	if (!e && s->unknown == HINDEX_NONE)
		e = -ENOMEM;
	if (!e)
		return s;
fail:
	rec_source__free(s);
	errno = -e;
	return NULL;
}

void rec_source__free(struct rec_source *s)
{
	if (!s)
		return;
	rec_reader__free(s->rd);
	rec_meta__release(&s->meta);
	resolver__free(s->res);
	account_rules__release(&s->stored_rules);
	strtab__release(&s->names);
	cgstats__release(&s->cg);
	stacktab__release(&s->stacks);
	strtab__release(&s->syms_names);
	free(s->syms);
	free(s->name_map);
	free(s->fstacks);
	free(s->file_frames);
	free(s->cpus);
	free(s->steal0);
	free(s->steal1);
	free(s->last_time);
	free(s->seen0);
	free(s->seen1);
	free(s->forget);
	free(s);
}

const struct rec_meta *rec_source__meta(const struct rec_source *s)
{
	return &s->meta;
}

struct strtab *rec_source__names(struct rec_source *s)
{
	return &s->names;
}

struct stacktab *rec_source__stacks(struct rec_source *s)
{
	return &s->stacks;
}

void rec_source__config(struct rec_source *s, struct engine_config *c)
{
	const struct rec_meta *m = &s->meta;
	const char *host = m->host[0] ? m->host : "localhost";
	*c = (struct engine_config){
		.interval_ns = m->interval_ns, .ncpus = m->ncpus,
		.vm = strtab__intern(&s->names, host, strlen(host)),
		.unknown_fn = s->unknown, .scope_all = m->scope == SCOPE_ALL,
		.start_ns = m->start_ns, .accounting = m->accounting,
		.scale_to_kernel = m->steal_clock > 0,
		.kernel_tick_ns = NSEC_PER_SEC / m->clk_tck,	/* checked nonzero */
		.mode = m->source == SRC_TRACEPOINTS ? STEAL_STINTS :
			m->source == SRC_SAMPLE_GAPS ? STEAL_GAPS :
			m->source == SRC_BPF ? STEAL_GIVEN : STEAL_UNKNOWN,
	};
	if (c->mode == STEAL_GIVEN) {
		c->exit_grace_ns = ENGINE_CLOCK_GRACE_NS;
		c->cpu_clocks = m->cpu_clock && m->steal_known;
	}
	c->keep_all = c->mode == STEAL_GAPS;	/* its steal is shared at the end */
}

const struct account_rules *rec_source__rules(const struct rec_source *s)
{
	return s->o.rules ? s->o.rules : s->have_stored_rules ? &s->stored_rules : NULL;
}

const struct source_cpu *rec_source__cpus(const struct rec_source *s)
{
	return s->cpus;
}

uint64_t rec_source__bad_records(const struct rec_source *s)
{
	return s->bad_records;
}

uint64_t rec_source__samples(const struct rec_source *s)
{
	return s->samples;
}

const struct cgstats *rec_source__cgstats(const struct rec_source *s)
{
	return &s->cg;
}

bool rec_source__damage(const struct rec_source *s, struct rec_error *err)
{
	if (s->damaged)
		*err = s->damage;
	return s->damaged;
}

uint32_t rec_source__events(const struct rec_source *s, const struct source_event **out)
{
	*out = s->events;
	return s->nevents;
}

