/*
 * table: the result of an analysis, rows by a composite key (rows.h) with
 * their figures after the method's arithmetic, sorted, and the totals.
 *
 * Rows at a coarser level sum the programs under them before the method's
 * arithmetic, so the ratio method's share is that of the row's own profile
 * (seed 001, equations 5 to 7), not a sum of per-function roundings.
 */
#ifndef CPULEDGER_CORE_TABLE_H
#define CPULEDGER_CORE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribute.h"
#include "rows.h"

/* A pid or tid at or above this is a task that had exited, shown as
 * perf shows it, -1 (Linux's pids stay below 2^22). */
#define TABLE_ID_EXITED 0x40000000u

/* A pid or tid as the reports show it: -1 for a task that had exited. */
static inline int64_t table_id(uint32_t v)
{
	return v >= TABLE_ID_EXITED ? -1 : (int64_t)v;
}

struct table_row {
	/* key fields and attributes: NULL where unknown or not shown */
	const char *vm, *comm, *command, *executable, *dso, *function, *account,
		*cgroup;
	uint32_t pid, tid;
	uint64_t start_ns;	/* its task's start (rows.h's row), 0: alive
				 * at the recording's start */
	int64_t uid;		/* ROW_NO_UID */
	int32_t cpu;		/* ROW_NO_CPU */
	const char *derived[ROW_DERIVED];	/* keys.h's derive */
	uint64_t samples, steal_samples;
	uint64_t cpu_ns, steal_ns, apparent_ns, corrected_ns;
	uint64_t control_ns;	/* cpu_ns in control-program accounts (seed
				 * 000's FIG. 3); the rest is the target's */
	uint64_t inclusive_ns;	/* with call chains: time with it on the stack */
	/* with table.cgroup_figures (rows keyed by cgroup) or
	 * table.denied_figures: the cgroup's throttled time by its own
	 * counters (a row not keyed by cgroup: of the one cgroup its threads
	 * were in), and the run-queue wait of the row's threads; each false
	 * where not known */
	bool throttled_known, wait_known;
	uint64_t throttled_ns, nr_throttled, wait_ns;
	/* with table.denied_figures: CPU the row wanted and did not get,
	 * steal_ns + wait_ns (docs/cgroups.md: the wait holds the time a
	 * quota held it off); false where either is not known */
	bool denied_known;
	uint64_t denied_ns;
	const char *in_cgroup;	/* the one cgroup of its waiting threads, or NULL */
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

/* The columns rows can be sorted by (--sort). */
enum sort_column { SORT_CPU, SORT_STEAL, SORT_STEAL_SHARE, SORT_APPARENT,
		   SORT_SAMPLES, SORT_COUNT };

struct sort_spec {
	uint8_t v[SORT_COUNT];
	uint8_t n;
};

/* "cpu,steal" ... ; 0 or -EINVAL (*bad: the offset of the column at fault). */
int sort_spec__parse(struct sort_spec *s, const char *list, size_t *bad);
const char *sort_column__name(enum sort_column c);

struct table {
	enum steal_method method;
	struct row_keys keys;
	char by[160];		/* the keys as given ("comm,function") */
	bool timestamps;
	bool inclusive;		/* rows carry inclusive_ns */
	bool steal_known;	/* false: steal and apparent time are unknown */
	bool attrs;		/* rows carry their process's command and
				 * their thread's comm (keyed by process or
				 * thread, from a recording) */
	bool cgroup_figures;	/* rows carry throttled and wait figures */
	bool denied_figures;	/* rows carry wait, throttled and denied
				 * (a recording's rows of whole threads) */
	/* a pid (or, keyed by thread, a tid) is on rows of two tasks: one
	 * that ended and the one the kernel gave its id to next. Their
	 * starts tell them apart: keys has RF_START after the task's id
	 * (not in by), and the writers show it as they show a key */
	bool reused;
	uint64_t origin_ns;	/* the recording's start, in the clock of the
				 * rows' start_ns (0: unknown), as text
				 * shows a start: seconds since it */
	uint64_t interval_ns;
	struct table_totals totals;
	struct table_row *rows;	/* largest apparent time first, or --sort;
				 * NULL when they are stored: table__row
				 * reads any row either way */
	size_t nrows;
	struct rows src;	/* owns the rows' strings */
	/* rows in a store (rows__store): their refs there too, in the
	 * rows' order, each read back by table__row, which leaves what it
	 * read in reader */
	bool stored;
	struct ref_list refs;
	struct table_reader *reader;
	enum steal_method arith;	/* the arithmetic the rows get */
};

/* How a table is made from rows. */
struct table_params {
	enum steal_method method;
	bool timestamps;
	uint64_t interval_ns;
	/* Steal was measured (live recording), not estimated from samples:
	 * the method only placed it, so ratio must not re-estimate it. */
	bool measured_steal;
	bool steal_known;
	bool inclusive;
	bool attrs;
	struct attrib_totals totals;
	uint32_t streams, programs;
};

/* A table of rows r (moved into it: r is left empty). NULL with errno
 * ENOMEM; r is then released. */
struct table *table__from_rows(struct rows *r, const struct table_params *p);

/* The table of a finished attributor (sampling data), by keys. */
struct table *table__new(const struct attributor *a, const struct row_keys *keys);

/* table__new by keys given as text ("vm,thread"); NULL with errno EINVAL
 * (not keys) or ENOMEM. */
struct table *table__new_keys(const struct attributor *a, const char *keys);

/* Sorts the rows by the columns given (largest first), then by key. */
void table__sort(struct table *t, const struct sort_spec *s);

void table__free(struct table *t);

/* Row i: in memory, or read back from the store into a row that the next
 * call replaces. A row the store fails to give back is a row of zeros,
 * and table__error says why. */
const struct table_row *table__row(const struct table *t, size_t i);
/* 0, or the -errno of the first row the store failed to give back. */
int table__error(const struct table *t);
/* Says the rows will be read once more, in order, and no more: stored
 * rows read from all over the store are then not stored again for a
 * pass after (table.c's reader); with read_ahead (a CPU to spare), the
 * next rows are read on a thread while these are written. Nothing else
 * may use the table's store until table__pass_done or table__free. */
void table__last_pass(struct table *t, bool read_ahead);
/* The last pass is over (or given up): the store is the caller's again.
 * table__sort and table__keep end it too (a pass follows them). */
void table__pass_done(struct table *t);

/* fn applied to every row: now to rows in memory, as each is read back
 * to stored ones (figures worked out from what outlives the rows, such
 * as the cgroups' counters, which ctx must then outlive). */
void table__finish_rows(struct table *t, void (*fn)(void *ctx, struct table_row *r),
			void *ctx);
/* Only the rows keep(r, ctx) says to, in their order. */
void table__keep(struct table *t, bool (*keep)(const struct table_row *r, void *ctx),
		 void *ctx);

/* A row's share of the samples; its steal's share of its apparent time. */
double table_row__steal_share(const struct table_row *r);

#endif
