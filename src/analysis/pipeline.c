/* pipeline: a source wired to the engine and its consumers. See pipeline.h. */
#include "pipeline.h"

#include <errno.h>
#include <string.h>

#include "../replay/rec_source.h"

#include "../core/banned.h"

int pipeline__init(struct pipeline *p, struct source *src, const struct pipeline_opts *o)
{
	memset(p, 0, sizeof(*p));
	p->src = src;
	p->o = *o;
	p->a = o->analysis;
	struct engine_config c;
	src->ops->config(src, &c);
	/* --method and --kernel-accounting given once, in the analysis's
	 * options, and taking effect in the engine alone: the table says
	 * them from the engine's configuration (analysis__build) */
	const struct analysis_opts *ao = o->analysis_opts;
	c.method = ao ? ao->method : METHOD_PRECEDING;
	if (ao && ao->accounting_set)
		c.accounting = ao->accounting;
	if (o->start_ns)
		c.start_ns = o->start_ns;
	if (p->a) {
		struct stacktab *stacks = src->ops->stacks ? src->ops->stacks(src) : NULL;
		int err = analysis__init(p->a, o->analysis_opts, src->ops->names(src), stacks,
					 c.unknown_fn, c.vm);
		if (err)
			return err;
		p->a->cg = src->ops->cgstats ? src->ops->cgstats(src) : NULL;
		p->a->have_stacks = src->callchain;
		p->a->no_steal = o->no_steal;
	}
	/* each consumer a sink of its own: the table here, the collector
	 * once it is set up */
	p->engine = engine__new(&c, NULL);
	if (!p->engine)
		return -ENOMEM;
	int err = 0;
	if (p->a) {
		struct engine_sink s = analysis__sink(p->a);
		err = engine__add_sink(p->engine, &s);
	}
	for (uint32_t i = 0; i < o->npids && !c.scope_all && !err; i++)
		err = engine__scope(p->engine, o->pids[i]);
	/* the caller's, needed no more */
	p->o.analysis_opts = NULL;
	p->o.pids = NULL;
	return err;
}

int pipeline__collector(struct pipeline *p)
{
	if (!p->o.collect || p->collecting)
		return 0;
	struct source_desc d;
	int err = p->src->ops->describe(p->src, 0, &d);
	if (!err)
		err = collector__init(&p->coll, p->src->ops->names(p->src), d.host, d.boot_id,
				      d.start_ns, d.realtime_start_ns, d.steal_known);
	p->collecting = !err;
	if (!err) {
		struct engine_sink s = collector__sink(&p->coll);
		err = engine__add_sink(p->engine, &s);
	}
	return err;
}

int pipeline__feed(struct pipeline *p)
{
	return p->src->ops->feed(p->src, p->engine);
}

int pipeline__finish(struct pipeline *p, uint64_t end_ns)
{
	struct source_desc d = { .end_ns = end_ns };
	int err = end_ns ? 0 : p->src->ops->describe(p->src, 0, &d);
	return err ? err : engine__finish(p->engine, d.end_ns);
}

int pipeline__build(struct pipeline *p, uint64_t end_ns)
{
	if (!p->a)
		return 0;
	struct source_desc d;
	int err = p->src->ops->describe(p->src, end_ns, &d);
	if (err)
		return err;
	if (p->o.start_ns) {
		/* a window: the whole recording's figures are not its own */
		d.duration_ns = d.end_ns - p->o.start_ns;
		d.cpus = NULL;
		d.ncpus = 0;
		d.clock_samples = 0;
	}
	return analysis__build(p->a, p->engine, &d);
}

int pipeline__run(struct pipeline *p, struct source *src, const struct pipeline_opts *o)
{
	int err = pipeline__init(p, src, o);
	if (!err)
		err = pipeline__collector(p);
	if (!err)
		err = pipeline__feed(p);
	if (!err)
		err = pipeline__finish(p, 0);
	return err ? err : pipeline__build(p, 0);
}

void pipeline__release(struct pipeline *p)
{
	engine__free(p->engine);
	if (p->collecting)
		collector__release(&p->coll);
	memset(p, 0, sizeof(*p));
}

int pipeline__report_file(struct analysis *a, int fd, const struct analysis_opts *o,
			  struct rec_error *err)
{
	memset(a, 0, sizeof(*a));
	/* call stacks cost a lookup a sample: only when something uses them */
	struct rec_source_opts so = { .rules = o->rules, .salvage = o->salvage,
				      .stacks = o->stacks || row_keys__has(&o->keys, RF_FUNCTION),
				      .raw_names = o->raw_names, .waits_once = true };
	/* read apart where the report's half is the heavier: stacks, rows
	 * of whole threads kept in a temporary file. Rows by comm are
	 * light, and reading them apart was slower (0.22 s where 0.21:
	 * bench/RESULTS.md, round 18) */
	so.split = so.stacks || row_keys__has(&o->keys, RF_THREAD) ||
		   row_keys__has(&o->keys, RF_PROCESS);
	struct rec_source *src = rec_source__open(fd, &so, err);
	if (!src)
		return -errno;
	struct pipeline_opts po = { .analysis = a, .analysis_opts = o,
				    .no_steal = !rec_source__meta(src)->steal_known };
	struct pipeline p;
	int r = pipeline__run(&p, rec_source__source(src, err), &po);
	a->src = src;		/* analysis__init cleared a: kept from here */
	/* the table and extras are made: their names are the source's, and
	 * the engine's tasks, programs, stacks and stints (4-5 MB of a long
	 * recording's report) go before the report is written */
	pipeline__release(&p);
	return r;
}
