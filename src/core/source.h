/*
 * source: where an engine's events come from, as one interface (a struct
 * of operations, as report.h's writers are): the live recorder
 * (record/recorder), a recording read back (source/rec_source, which a
 * perf script import becomes once imported) and, in time, the BPF
 * collector. What consumes the events (analysis/pipeline) asks a source
 * only through these operations, so a new source is one more table of
 * them, never one more wiring of engine, analysis and collector.
 *
 * A source owns what its operations return; it lives as long as the
 * engine fed by it does (the engine's figures name its strings).
 */
#ifndef CPULEDGER_CORE_SOURCE_H
#define CPULEDGER_CORE_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "cgstats.h"
#include "engine.h"
#include "stacktab.h"
#include "strtab.h"

/* Per CPU, what a source knows beside the events. */
struct source_cpu {
	bool present;
	bool kernel_known;	/* /proc/stat at both ends */
	uint64_t kernel_steal_ns;
	uint64_t lost;		/* records the kernel dropped */
};

/* An event and how many samples of it a source held. */
struct source_event {
	char name[64];
	uint64_t samples;
};

/* What the reports and the ledger say beside the engine's figures. The
 * strings and arrays are the source's. */
struct source_desc {
	const char *host, *steal_source;
	const char *accounting_source;	/* btf, config, ... (NULL: none) */
	const char *boot_id;
	int steal_clock;		/* -1: the kernel counted none since boot */
	const char *scope;		/* "all", "pids", "command" */
	bool steal_known;
	uint64_t start_ns, end_ns;	/* CLOCK_MONOTONIC, as the events */
	int64_t realtime_start_ns, realtime_end_ns;	/* 0: unknown */
	uint64_t duration_ns, clock_samples, bad_records;
	const struct source_cpu *cpus;	/* ncpus of them, or NULL */
	uint32_t ncpus;
	const struct source_event *events;
	uint32_t nevents;
};

struct source;

struct source_ops {
	/* The names the events' string ids refer to (functions, files,
	 * comms); the source adds to them as it goes. */
	struct strtab *(*names)(struct source *s);
	/* Call stacks as frames of name ids, leaf first; NULL: the source
	 * keeps none (or hands them to taps of its own). */
	struct stacktab *(*stacks)(struct source *s);
	/* The engine's configuration for what this source holds; the
	 * method and any --kernel-accounting are the caller's to set. */
	void (*config)(struct source *s, struct engine_config *c);
	/* Feeds e: a file's every event before it returns (e not finished),
	 * a live source's from now on as it is polled. 0, -errno, or the
	 * engine's error. */
	int (*feed)(struct source *s, struct engine *e);
	/* The cgroups' counters and the threads' waits, or NULL. */
	const struct cgstats *(*cgstats)(struct source *s);
	/* Fills *d for a recording that ends at end_ns (0: where the source
	 * says it ended). 0 or -ENOMEM. */
	int (*describe)(struct source *s, uint64_t end_ns, struct source_desc *d);
};

struct source {
	const struct source_ops *ops;
	void *ctx;		/* the implementation's own */
	/* the stacks its samples carry are whole call chains, so the
	 * analysis can tell a function's inclusive time */
	bool callchain;
};

#endif
