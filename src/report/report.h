/*
 * report: one writer per output format behind one struct of function
 * pointers, so commands pick a format by name and never by switch.
 * The formats are documented in docs/analyze.md.
 */
#ifndef CPULEDGER_REPORT_REPORT_H
#define CPULEDGER_REPORT_REPORT_H

#include <errno.h>
#include <stdio.h>

#include "../core/stacks.h"
#include "../core/table.h"

/* Version of the machine-readable outputs (JSON "version"). */
#define REPORT_FORMAT_VERSION 1

/* What a report of a live recording shows beside the table. */
struct report_cpu {
	uint32_t cpu;
	uint64_t steal_ns;		/* attributed to threads */
	bool kernel_known;
	uint64_t kernel_steal_ns;	/* /proc/stat's growth */
	uint64_t lost;			/* records the kernel dropped */
};

struct report_extras {
	const char *host, *steal_source, *scope;
	bool steal_known;	/* false: steal and apparent time print as
				 * unknown (null in JSON), never as zero */
	uint64_t duration_ns;
	int64_t bias_ns;
	uint64_t lost, bad_records;
	uint64_t lossy_stints;		/* stints over lost records: not measured */
	uint64_t clock_samples;		/* every cpu-clock sample, idle too */
	const struct report_cpu *cpus;
	uint32_t ncpus;
	const struct stack_set *stacks;	/* time per call stack, or NULL */
};

struct report_writer {
	const char *name;
	/* Writes t (and x, for a live recording; NULL otherwise) to out.
	 * Returns 0, or -EIO when out has an error. */
	int (*write)(FILE *out, const struct table *t,
		     const struct report_extras *x);
};

/* The writer called name, or NULL. */
const struct report_writer *report_writer__find(const char *name);

/* "text|csv|json", for usage messages. */
const char *report_writer__names(void);

extern const struct report_writer report_text, report_csv, report_json,
	report_openmetrics, report_pprof, report_folded;

/* The processes a table has rows of (those out of a report's scope have
 * none) with their command lines, sorted by pid for report_process_of();
 * NULL when out of memory. For writers that go by stacks, not rows. */
struct report_process {
	uint32_t pid;
	const char *command;
};
struct report_process *report_processes(const struct table *t);
const struct report_process *report_process_of(const struct report_process *v,
					       const struct table *t, uint32_t pid);

/* Writes s as a JSON string, quotes included. */
void json_put_string(FILE *out, const char *s);
/* Writes s as a CSV field, quoted when it holds a comma or quote. */
void csv_put_field(FILE *out, const char *s);

#endif
