/*
 * table: the result of an analysis, rows per process, thread or function,
 * with the totals. Built from an attributor after attributor__finish().
 *
 * Rows at a coarser level sum the programs under them before the method's
 * arithmetic, so the ratio method's share is that of the row's own profile
 * (seed 001, equations 5 to 7), not a sum of per-function roundings.
 */
#ifndef CPULEDGER_CORE_TABLE_H
#define CPULEDGER_CORE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "attribute.h"

enum group_by { BY_PROCESS, BY_THREAD, BY_FUNCTION, BY_DSO, BY_ACCOUNT };

/* "process", "thread", "function", "dso", "account"; parse returns 0 or
 * -EINVAL. */
const char *group_by__name(enum group_by by);
int group_by__parse(const char *s, enum group_by *out);

struct table_row {
	const char *vm;		/* owned by the attributor's strings */
	const char *function;	/* NULL unless grouped by function */
	uint32_t pid, tid;	/* tid is 0 when grouped by process */
	uint64_t samples, steal_samples;
	uint64_t cpu_ns, steal_ns, apparent_ns, corrected_ns;
	const char *command;	/* the process's command line, or NULL;
				 * set by whoever knows it (live reports) */
	const char *dso;	/* by function or dso, where programs have one */
	const char *account;	/* by account */
	uint64_t control_ns;	/* cpu_ns in control-program accounts (seed
				 * 000's FIG. 3); the rest is the target's */
	uint64_t inclusive_ns;	/* with call chains: time with it on the stack */
};

struct table_totals {
	uint64_t samples, steal_samples, idle_samples;
	uint64_t run_ns, steal_ns, idle_ns;
	uint64_t attributed_steal_ns;
	/* steal_ns - attributed_steal_ns. Only the ratio method, with
	 * timestamps, can charge a profile more steal than was labelled to it,
	 * so this can be negative there; it is never clamped, to keep
	 * attributed + unattributed = steal exact. */
	int64_t unattributed_steal_ns;
	uint32_t streams, programs;
};

struct table {
	enum steal_method method;
	enum group_by by;
	bool timestamps;
	bool inclusive;		/* rows carry inclusive_ns */
	uint64_t interval_ns;
	struct table_totals totals;
	struct table_row *rows;	/* by apparent_ns, largest first */
	size_t nrows;
};

/* What a table is built from: programs with their sums, and totals. */
struct table_input {
	const struct program *progs;
	uint32_t nprogs;
	const struct strtab *strings;
	struct attrib_totals totals;
	uint32_t streams;
	enum steal_method method;
	bool timestamps;
	uint64_t interval_ns;
	/* Steal was measured (live recording), not estimated from samples:
	 * the method only placed it, so ratio must not re-estimate it. */
	bool measured_steal;
	/* Accounts that count as control program (names; may be none). */
	const char *const *control;
	size_t ncontrol;
	bool inclusive;		/* programs carry inclusive time */
};

/*
 * Builds the table. Returns NULL with errno ENOMEM. The rows borrow strings
 * from in->strings: free the table (table__free) before them.
 */
struct table *table__build(const struct table_input *in, enum group_by by);

/* table__build() of a finished attributor. */
struct table *table__new(const struct attributor *a, enum group_by by);
void table__free(struct table *t);

#endif
