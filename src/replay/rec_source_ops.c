/*
 * rec_source_ops: a recording read back as an event source
 * (core/source.h): the operations over rec_source's accessors, so that
 * analysis/pipeline wires a file as it wires the live recorder.
 */
#include "rec_source_impl.h"

#include "../core/banned.h"

static struct rec_source *of(struct source *src)
{
	return src->ctx;
}

static struct strtab *op_names(struct source *src)
{
	return rec_source__names(of(src));
}

static struct stacktab *op_stacks(struct source *src)
{
	return rec_source__stacks(of(src));
}

static void op_config(struct source *src, struct engine_config *c)
{
	rec_source__config(of(src), c);
}

static int op_feed(struct source *src, struct engine *e)
{
	return rec_source__feed(of(src), e, of(src)->source_err);
}

static const struct cgstats *op_cgstats(struct source *src)
{
	return rec_source__cgstats(of(src));
}

/* What the file says; end_ns is the file's own end whatever is asked. */
static int op_describe(struct source *src, uint64_t end_ns, struct source_desc *d)
{
	(void)end_ns;
	struct rec_source *s = of(src);
	const struct rec_meta *m = rec_source__meta(s);
	*d = (struct source_desc){
		.host = m->host[0] ? m->host : "unknown", .steal_source = m->steal_source,
		.accounting_source = m->accounting_source, .boot_id = m->boot_id,
		.steal_clock = m->steal_clock, .scope = rec_scope__name(m->scope),
		.steal_known = m->steal_known,
		.start_ns = m->start_ns, .end_ns = m->end_ns,
		.realtime_start_ns = m->realtime_start_ns, .realtime_end_ns = m->realtime_end_ns,
		.duration_ns = m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0,
		.clock_samples = rec_source__samples(s),
		.bad_records = rec_source__bad_records(s), .cpus = rec_source__cpus(s),
		.ncpus = m->ncpus,
	};
	d->nevents = rec_source__events(s, &d->events);
	return 0;
}

static const struct source_ops rec_source_ops = {
	.names = op_names, .stacks = op_stacks, .config = op_config, .feed = op_feed,
	.cgstats = op_cgstats, .describe = op_describe,
};

struct source *rec_source__source(struct rec_source *s, struct rec_error *err)
{
	s->source = (struct source){ &rec_source_ops, s, rec_source__meta(s)->callchain };
	s->source_err = err;
	return &s->source;
}
