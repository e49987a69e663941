/* table: group programs into rows, apply the method, sort. See table.h. */
#include "table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const by_names[] = {
	[BY_PROCESS] = "process",
	[BY_THREAD] = "thread",
	[BY_FUNCTION] = "function",
	[BY_DSO] = "dso",
	[BY_ACCOUNT] = "account",
};

const char *group_by__name(enum group_by by)
{
	return by_names[by];
}

int group_by__parse(const char *s, enum group_by *out)
{
	for (size_t i = 0; i < sizeof(by_names) / sizeof(*by_names); i++)
		if (strcmp(s, by_names[i]) == 0) {
			*out = (enum group_by)i;
			return 0;
		}
	return -EINVAL;
}

static int cmp_u32(uint32_t a, uint32_t b)
{
	return (a > b) - (a < b);
}

static int cmp_key(const void *pa, const void *pb)
{
	const struct table_row *a = pa, *b = pb;
	int c = strcmp(a->vm, b->vm);
	if (!c)
		c = cmp_u32(a->pid, b->pid);
	if (!c)
		c = cmp_u32(a->tid, b->tid);
	if (!c && a->function && b->function)
		c = strcmp(a->function, b->function);
	if (!c && a->dso && b->dso)
		c = strcmp(a->dso, b->dso);
	if (!c && a->account && b->account)
		c = strcmp(a->account, b->account);
	return c;
}

static int cmp_apparent(const void *pa, const void *pb)
{
	const struct table_row *a = pa, *b = pb;
	if (a->apparent_ns != b->apparent_ns)
		return a->apparent_ns < b->apparent_ns ? 1 : -1;
	return cmp_key(pa, pb);
}

/* Row figures from the sums of its programs: run_ns is in cpu_ns and the
 * labelled steal in steal_ns on entry. */
static void apply_method(struct table_row *r, enum steal_method method)
{
	uint64_t run_ns = r->cpu_ns, labelled_ns = r->steal_ns;
	r->apparent_ns = run_ns + labelled_ns;
	if (method == METHOD_RATIO && r->samples + r->steal_samples) {
		/* steal = steal_samples / all samples of the profile, times the
		 * profile's apparent time, rounded down (seed 001, FIG. 12). */
		unsigned __int128 x = (unsigned __int128)r->steal_samples *
				      r->apparent_ns;
		r->steal_ns = (uint64_t)(x / (r->samples + r->steal_samples));
	}
	r->cpu_ns = r->apparent_ns - r->steal_ns;
	r->corrected_ns = r->apparent_ns - r->steal_ns;
}

/* Whether program p's account is one of the control program's. */
static bool is_control(const struct table_input *in, const struct program *p)
{
	if (p->account == NO_DSO)
		return false;
	const char *name = strtab__str(in->strings, p->account);
	for (size_t i = 0; i < in->ncontrol; i++)
		if (!strcmp(name, in->control[i]))
			return true;
	return false;
}

struct table *table__new(const struct attributor *a, enum group_by by)
{
	struct table_input in = {
		.progs = a->progs, .nprogs = a->nprogs, .strings = &a->strings,
		.totals = a->totals, .streams = a->nstreams, .method = a->method,
		.timestamps = a->timestamps, .interval_ns = a->interval_ns,
	};
	return table__build(&in, by);
}

struct table *table__build(const struct table_input *a, enum group_by by)
{
	struct table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->method = a->method;
	t->by = by;
	t->timestamps = a->timestamps;
	t->inclusive = a->inclusive && by == BY_FUNCTION;
	t->interval_ns = a->interval_ns;
	t->rows = calloc(a->nprogs ? a->nprogs : 1, sizeof(*t->rows));
	if (!t->rows) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}

	for (uint32_t i = 0; i < a->nprogs; i++) {
		const struct program *p = &a->progs[i];
		t->rows[i] = (struct table_row){
			.vm = strtab__str(a->strings, p->vm),
			.function = by == BY_FUNCTION ?
				strtab__str(a->strings, p->function) : NULL,
			.dso = (by == BY_FUNCTION || by == BY_DSO) && p->dso != NO_DSO ?
				strtab__str(a->strings, p->dso) : NULL,
			.account = by == BY_ACCOUNT && p->account != NO_DSO ?
				strtab__str(a->strings, p->account) : NULL,
			.control_ns = is_control(a, p) ? p->run_ns : 0,
			.inclusive_ns = p->inclusive_ns,
			.pid = p->pid,
			.tid = by == BY_PROCESS || by == BY_DSO || by == BY_ACCOUNT ?
				0 : p->tid,
			.samples = p->samples,
			.steal_samples = p->steal_samples,
			.cpu_ns = p->run_ns,
			.steal_ns = p->steal_ns,
		};
	}
	qsort(t->rows, a->nprogs, sizeof(*t->rows), cmp_key);

	size_t n = 0;
	for (uint32_t i = 0; i < a->nprogs; i++) {
		struct table_row *r = &t->rows[i];
		if (n && cmp_key(&t->rows[n - 1], r) == 0) {
			struct table_row *m = &t->rows[n - 1];
			m->samples += r->samples;
			m->steal_samples += r->steal_samples;
			m->cpu_ns += r->cpu_ns;
			m->steal_ns += r->steal_ns;
			m->control_ns += r->control_ns;
			m->inclusive_ns += r->inclusive_ns;
		} else {
			t->rows[n++] = *r;
		}
	}
	t->nrows = n;

	uint64_t attributed = 0;
	enum steal_method arith = a->measured_steal ? METHOD_PRECEDING : t->method;
	for (size_t i = 0; i < n; i++) {
		apply_method(&t->rows[i], arith);
		attributed += t->rows[i].steal_ns;
	}
	qsort(t->rows, n, sizeof(*t->rows), cmp_apparent);

	const struct attrib_totals *at = &a->totals;
	t->totals = (struct table_totals){
		.samples = at->samples,
		.steal_samples = at->steal_samples,
		.idle_samples = at->idle_samples,
		.run_ns = at->run_ns,
		.steal_ns = at->steal_ns,
		.idle_ns = at->idle_ns,
		.attributed_steal_ns = attributed,
		.unattributed_steal_ns = (int64_t)at->steal_ns - (int64_t)attributed,
		.streams = a->streams,
		.programs = a->nprogs,
	};
	return t;
}

void table__free(struct table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}
