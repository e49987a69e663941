/*
 * recorder_source: the live recorder as an event source (core/source.h),
 * over its public accessors, so that analysis/pipeline wires it as it
 * wires a recording read back.
 */
#include "recorder_impl.h"

#include <errno.h>
#include <stdlib.h>

#include "../format/rec_meta.h"
#include "../core/banned.h"

static struct recorder *of(struct source *src)
{
	return src->ctx;
}

static struct strtab *op_names(struct source *src)
{
	return recorder__names(of(src));
}

static void op_config(struct source *src, struct engine_config *c)
{
	recorder__config(of(src), c);
}

static int op_feed(struct source *src, struct engine *e)
{
	recorder__attach(of(src), e);
	return 0;
}

static const struct cgstats *op_cgstats(struct source *src)
{
	return recorder__cgstats(of(src));
}

/* Each CPU's /proc/stat steal since the start and its lost records, read
 * once. */
static int describe_cpus(struct recorder *r)
{
	uint32_t n = r->ncpus ? r->ncpus : 1;
	uint64_t *steal = calloc(n, sizeof(*steal)), *lost = calloc(n, sizeof(*lost));
	bool *known = calloc(n, sizeof(*known));
	struct source_cpu *cpus = realloc(r->described, n * sizeof(*cpus));
	int err = steal && lost && known && cpus ? 0 : -ENOMEM;
	if (cpus)
		r->described = cpus;
	/* as recorder__cpu: the figures even where /proc/stat could not be read */
	bool ok = !err && r->ncpus && recorder__cpus(r, steal, lost, known) == 0;
	for (uint32_t c = 0; !err && c < r->ncpus; c++) {
		bool k = ok && known[c];
		cpus[c] = (struct source_cpu){ .present = k || lost[c], .kernel_known = k || lost[c],
					       .kernel_steal_ns = steal[c], .lost = lost[c] };
	}
	free(steal);
	free(lost);
	free(known);
	return err;
}

static int op_describe(struct source *src, uint64_t end_ns, struct source_desc *d)
{
	struct recorder *r = of(src);
	const struct recorder_stats *st = recorder__stats(r);
	const struct recorder_opts *o = &r->o;
	enum rec_scope scope = o->all ? SCOPE_ALL : o->child > 0 ? SCOPE_COMMAND :
			       o->npids ? SCOPE_PIDS : SCOPE_ALL;
	if (!end_ns)
		end_ns = st->end_ns;
	*d = (struct source_desc){
		.host = recorder__host(r), .steal_source = st->steal_source,
		.accounting_source = recorder__kernel_acct(r)->source,
		.boot_id = recorder__boot_id(r),
		.steal_clock = recorder__kernel_acct(r)->steal_clock,
		.scope = rec_scope__name(scope), .steal_known = !st->task_only && recorder_bpf_steal_known(r),
		.start_ns = st->start_ns, .end_ns = end_ns,
		.realtime_start_ns = recorder__realtime_start(r),
		.duration_ns = end_ns - st->start_ns, .clock_samples = st->samples,
		.ncpus = recorder__ncpus(r),
	};
	int err = describe_cpus(r);
	d->cpus = r->described;
	return err;
}

/* No stacks of its own: its samples' stacks go to taps (recorder__tap),
 * and the engine attached gets leaf functions, no call chains. */
static const struct source_ops recorder_ops = {
	.names = op_names, .config = op_config, .feed = op_feed, .cgstats = op_cgstats,
	.describe = op_describe,
};

struct source *recorder__source(struct recorder *r)
{
	r->source = (struct source){ &recorder_ops, r, false };
	return &r->source;
}
