/*
 * rec_meta: the META items of a recording (docs/recording-format.md):
 * key=value lines, one META at the start and one at the end. The keys are
 * declared here once, for the writers (record, import) and every reader.
 */
#ifndef CPULEDGER_FORMAT_REC_META_H
#define CPULEDGER_FORMAT_REC_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../resolve/perf_decode.h"
#include "../core/engine.h"
#include "../core/source.h"

/* Where steal comes from, as a recording says (steal_source=). */
enum rec_steal_source {
	SRC_TRACEPOINTS,	/* "tracepoints": per stint */
	SRC_SAMPLE_GAPS,	/* "sample-gaps": /proc/stat over sample gaps */
	SRC_UNKNOWN,		/* "unknown (reason)" */
	SRC_BPF,		/* "bpf (what it reads)": REC_CLOCK items,
				 * the kernel's own clocks per thread */
};

/* Whose processes a recording describes (scope=). */
enum rec_scope { SCOPE_ALL, SCOPE_PIDS, SCOPE_COMMAND };

const char *rec_scope__name(enum rec_scope s);

enum rec_meta_key {
	MK_PHASE, MK_SOURCE, MK_HOST, MK_KERNEL, MK_BOOT_ID, MK_HZ, MK_INTERVAL_NS,
	MK_INTERVAL_SOURCE, MK_CLK_TCK, MK_CALLCHAIN, MK_STEAL_SOURCE, MK_SCOPE,
	MK_PID, MK_CHILD, MK_CPU, MK_SAMPLE_TYPE, MK_ID, MK_TP, MK_TIME_NS,
	MK_REALTIME_NS, MK_EVENT, MK_EVENTS, MK_ORDERED, MK_ROOT_UID,
	MK_KERNEL_ACCOUNTING, MK_ACCOUNTING_SOURCE, MK_STEAL_CLOCK, MK_CPU_CLOCK,
	MK_COUNT
};

/* "phase", "host", ...: the text of each key (a prefix for the keys
 * with a part after a dot: sample_type.clock, id.switch, events.NAME). */
const char *rec_meta_key__name(enum rec_meta_key k);

struct rec_meta {
	uint32_t version;		/* of the file */
	bool imported;			/* source=perf-script */
	bool ordered;			/* items in time order (imports) */
	char host[256], kernel[128], boot_id[64];
	char event[64];			/* imported: the event */
	uint64_t start_ns, end_ns;	/* CLOCK_MONOTONIC, as events */
	int64_t realtime_start_ns, realtime_end_ns;	/* 0: unknown */
	char steal_source[192];
	enum rec_steal_source source;
	bool steal_known;		/* source says steal is measured: not
					 * SRC_UNKNOWN, and with SRC_BPF not
					 * "bpf (steal: unknown ..." */
	/* what the kernel's runtime holds (auto: not known), and how that
	 * was known (btf, config, cmdline, option) */
	enum steal_accounting accounting;
	char accounting_source[64];
	int steal_clock;		/* 1 the kernel counts steal, -1 it
					 * counted none since boot, 0 unknown */
	bool cpu_clock;			/* cpu_clock=steal: REC_CPUCLOCK items
					 * give each CPU's steal */
	enum rec_scope scope;
	uint32_t scope_pids[64];	/* pid= and child= */
	uint32_t nscope;
	uint64_t interval_ns, clk_tck;
	bool callchain;
	uint32_t ncpus;			/* highest CPU + 1 */
	struct pd_layout layout;	/* version 1: to read its perf records */
	struct source_event events[16];
	uint32_t nevents;
	bool have_start;
};

/* Reads a META item's text into m (start or end phase). 0, or -EINVAL
 * with msg set (msg_size bytes): a malformed line, or a start without
 * what every reader needs. */
int rec_meta__parse(struct rec_meta *m, const char *text, size_t len,
		    char *msg, size_t msg_size);
void rec_meta__release(struct rec_meta *m);

#endif
