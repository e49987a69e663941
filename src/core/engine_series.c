/*
 * engine_series: CPU time and steal per CPU over the recording's time, in
 * buckets of a second (engine.h, struct eng_series): runtime at its event's
 * time, a stint's steal at its end. A recording longer than
 * ENGINE_SERIES_MAX buckets has them merged in pairs (2 s, 4 s, ...), so
 * the series never holds more than that many.
 */
#include "engine_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"

/* Buckets twice as long: pairs merged in place. */
static void coarser(struct eng_series *s)
{
	uint32_t n = s->ncpus, half = (s->nbuckets + 1) / 2;
	for (uint32_t b = 0; b < half; b++)
		for (uint32_t c = 0; c < n; c++) {
			uint64_t r = s->run_ns[2 * b * n + c], st = s->steal_ns[2 * b * n + c];
			if (2 * b + 1 < s->nbuckets) {
				r += s->run_ns[(2 * b + 1) * n + c];
				st += s->steal_ns[(2 * b + 1) * n + c];
			}
			s->run_ns[b * n + c] = r;
			s->steal_ns[b * n + c] = st;
		}
	memset(s->run_ns + half * n, 0, (size_t)(s->nbuckets - half) * n * sizeof(uint64_t));
	memset(s->steal_ns + half * n, 0, (size_t)(s->nbuckets - half) * n * sizeof(uint64_t));
	s->nbuckets = half;
	s->bucket_ns *= 2;
}

/* Room for bucket b: 0 or -ENOMEM. */
static int reach(struct eng_series *s, uint64_t b)
{
	if (b < s->cap)
		return 0;
	uint64_t cap = s->cap ? s->cap : 64;
	while (cap <= b)
		cap *= 2;
	if (cap > ENGINE_SERIES_MAX)
		cap = ENGINE_SERIES_MAX;
	size_t n = (size_t)cap * s->ncpus;
	uint64_t *r = realloc(s->run_ns, n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->run_ns = r;
	uint64_t *st = realloc(s->steal_ns, n * sizeof(*st));
	if (!st)
		return -ENOMEM;
	s->steal_ns = st;
	size_t old = (size_t)s->cap * s->ncpus;
	memset(s->run_ns + old, 0, (n - old) * sizeof(uint64_t));
	memset(s->steal_ns + old, 0, (n - old) * sizeof(uint64_t));
	s->cap = (uint32_t)cap;
	return 0;
}

int eng_series_add(struct engine *e, uint32_t cpu, uint64_t t, uint64_t run, uint64_t steal)
{
	struct eng_series *s = &e->series;
	if (cpu >= s->ncpus || (!run && !steal))
		return 0;
	if (!s->origin_ns)
		s->origin_ns = e->c.start_ns && e->c.start_ns <= t ? e->c.start_ns : t;
	if (t < s->origin_ns)
		t = s->origin_ns;	/* before the start: its first second */
	uint64_t b = (t - s->origin_ns) / s->bucket_ns;
	while (b >= ENGINE_SERIES_MAX) {
		coarser(s);
		b = (t - s->origin_ns) / s->bucket_ns;
	}
	int err = reach(s, b);
	if (err)
		return err;
	if (b >= s->nbuckets)
		s->nbuckets = (uint32_t)b + 1;
	s->run_ns[b * s->ncpus + cpu] += run;
	s->steal_ns[b * s->ncpus + cpu] += steal;
	return 0;
}

void eng_series_take(struct engine *e, uint32_t cpu, uint64_t run)
{
	struct eng_series *s = &e->series;
	for (uint32_t b = s->nbuckets; cpu < s->ncpus && run && b-- > 0;) {
		uint64_t *v = &s->run_ns[(uint64_t)b * s->ncpus + cpu];
		uint64_t take = *v < run ? *v : run;
		*v -= take;
		run -= take;
	}
}

const struct eng_series *engine__series(const struct engine *e)
{
	return &e->series;
}
