/*
 * pipeline: an event source (core/source.h) wired to the engine and the
 * engine to its consumers, once for every command: a table for reports
 * (analysis.h: report, run, the agent's profiles), collections for the
 * ledger (collector.h: record and run --ledger, ledger add, the agent),
 * each a sink of the engine's (the agent's /metrics and top's screen add
 * their own to p->engine, engine__add_sink). Where the
 * commands differ they differ by these options, not by a wiring of their
 * own.
 *
 * The order, for a file: pipeline__init, pipeline__collector (with
 * collections), pipeline__feed (every event), pipeline__finish,
 * pipeline__build; all of them as pipeline__run. For a live source: pipeline__init and pipeline__feed
 * (the engine attached) before the source starts, pipeline__collector
 * once it has (its start known), pipeline__finish and pipeline__build
 * at its end.
 */
#ifndef CPULEDGER_ANALYSIS_PIPELINE_H
#define CPULEDGER_ANALYSIS_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"
#include "collector.h"
#include "../core/engine.h"
#include "../core/source.h"

struct pipeline_opts {
	/* a table of the figures; NULL: none. The analysis is the caller's
	 * (set up here, released with analysis__release). */
	struct analysis *analysis;
	/* its options; their --method (where the engine places steal) and
	 * --kernel-accounting (over what the source says) are the engine's,
	 * with or without a table (NULL: preceding, as the source says) */
	const struct analysis_opts *analysis_opts;
	bool collect;			/* collections for the ledger */
	/* the engine's scope where the source is not system-wide */
	const uint32_t *pids;
	uint32_t npids;
	/* a window of a live source from start_ns (the agent's profiles): its
	 * duration from there, without the whole recording's per-CPU figures
	 * and sample counts; 0: the source from its start */
	uint64_t start_ns;
	/* the source says it measures no steal, and cannot come to (a
	 * file's META): its stacks are handed on without steal values */
	bool no_steal;
};

struct pipeline {
	struct source *src;
	struct engine *engine;		/* the pipeline's, unless taken */
	struct analysis *a;		/* o.analysis */
	struct collector coll;
	bool collecting;		/* coll set up */
	struct pipeline_opts o;
};

/* The engine configured from the source, its consumers set up. 0 or
 * -errno; release p with pipeline__release in every case. */
int pipeline__init(struct pipeline *p, struct source *src, const struct pipeline_opts *o);
/* With o.collect: the collector, from what the source says of its start.
 * 0 or -ENOMEM. */
int pipeline__collector(struct pipeline *p);
/* The source feeds the engine (a file: all of it; live: from now on). */
int pipeline__feed(struct pipeline *p);
/* The engine to end_ns (0: the source's end). 0, -errno or a
 * consumer's error. */
int pipeline__finish(struct pipeline *p, uint64_t end_ns);
/* With o.analysis, after pipeline__finish (and a last collection): the
 * table built, the source described as ending at end_ns (0: its own
 * end). 0 or -ENOMEM. */
int pipeline__build(struct pipeline *p, uint64_t end_ns);
/* A file from its first event to its last: the steps above. */
int pipeline__run(struct pipeline *p, struct source *src, const struct pipeline_opts *o);
/*
 * report's whole pipeline for a recording on fd: opens it, runs the
 * engine, builds a's table (a->src and a->engine are a's, for
 * analysis__release). 0; -EINVAL with err set for damage (or what is not
 * a recording); -errno. Release a with analysis__release() in every case.
 */
int pipeline__report_file(struct analysis *a, int fd, const struct analysis_opts *o,
			  struct rec_error *err);

/* Frees the engine (unless taken: p->engine set NULL) and the collector;
 * the analysis is the caller's. */
void pipeline__release(struct pipeline *p);

#endif
