/*
 * perf: the events of a live recording, one ring per CPU.
 *
 * Per CPU: cpu-clock sampling at a fixed period (IP, TID, TIME, CPU,
 * PERIOD, and CALLCHAIN with -g), which also carries COMM, FORK, EXIT and
 * MMAP2 records; and the tracepoints sched:sched_switch and
 * sched:sched_stat_runtime, whose output is redirected into the same ring.
 * Every event samples PERF_SAMPLE_IDENTIFIER, so a record says which event
 * wrote it, and all use CLOCK_MONOTONIC, so their times compare with the
 * recorder's own clock.
 */
#ifndef CPULEDGER_COLLECT_PERF_H
#define CPULEDGER_COLLECT_PERF_H

#include <stdbool.h>
#include <stdint.h>

#include "ring.h"

/* Where a tracepoint field sits in the RAW data of a sample. */
struct tp_field {
	uint32_t offset, size;
};

struct tp_formats {
	uint64_t switch_config, runtime_config;	/* tracepoint ids */
	struct tp_field prev_pid, next_pid;	/* sched_switch */
	struct tp_field rt_pid, rt_runtime;	/* sched_stat_runtime */
};

/* Reads the two tracepoints' ids and field offsets from tracefs under root
 * ("/" normally), mounting tracefs at /sys/kernel/tracing first when it is
 * not (root only). 0, or -ENOENT when tracefs or a field is missing. */
int tp_formats__load(struct tp_formats *f, const char *root);

struct perf_options {
	uint32_t hz;		/* cpu-clock samples per second */
	bool callchain;
	bool tracepoints;	/* sched_switch and sched_stat_runtime too */
	size_t ring_pages;	/* data pages per CPU ring, a power of two */
	bool cgroup;		/* samples carry the task's cgroup id, and
				 * new cgroups are told (Linux 5.7+) */
	int task;		/* 0: system-wide; else only this process and
				 * its descendants, user space only (what an
				 * unprivileged user may record) */
};

enum perf_event_kind { EV_CLOCK, EV_SWITCH, EV_RUNTIME, EV_KINDS };

struct perf_cpu {
	int cpu;
	int fd[EV_KINDS];	/* -1 where not opened */
	uint64_t id[EV_KINDS];	/* the kernel's event ids */
	struct ring ring;
};

struct perf_session {
	struct perf_cpu *cpus;
	int ncpus;
	struct ring_next *next;	/* perf_session__read's merge of the rings */
	struct perf_options opts;
};

/*
 * Opens the events on every online CPU (system-wide: needs CAP_PERFMON or
 * perf_event_paranoid <= 0) and maps the rings; events start disabled.
 * 0 or -errno (EACCES/EPERM: not allowed; ENOENT: no such tracepoint).
 */
int perf_session__open(struct perf_session *s, const struct perf_options *o,
		       const struct tp_formats *tp);
int perf_session__enable(struct perf_session *s);
int perf_session__disable(struct perf_session *s);

/* Called with each record of each CPU's ring. */
typedef int (*perf_record_fn)(void *ctx, int cpu,
			      const struct perf_event_header *h);

/* A record's time (0 where it has none), for the order of the rings. */
typedef uint64_t (*perf_time_fn)(void *ctx, const struct perf_event_header *h);

/* Reads every ring once: the records each held when the read began, in
 * the order of their times across the rings (a ring's own records in the
 * ring's order: the merge weighs each ring's next). 0 or fn's error (the
 * record it failed stays in its ring). */
int perf_session__read(struct perf_session *s, perf_record_fn fn, perf_time_fn time_of,
		       void *ctx);

/* Blocks until some ring has data or timeout_ms passes (or a signal). */
void perf_session__wait(struct perf_session *s, int timeout_ms);

uint64_t perf_session__lost(const struct perf_session *s, int cpu_index);
void perf_session__release(struct perf_session *s);

/* The sample_type every event uses, for readers of the records. */
uint64_t perf_session__sample_type(const struct perf_options *o, enum perf_event_kind k);

#endif
