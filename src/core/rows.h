/*
 * rows: figures summed into rows by a composite key, as perf's --sort
 * composes its keys: `--by comm,function` gives one row per program name
 * and function, summed over the processes and threads it leaves out.
 *
 * A key is a list of fields (row_keys); the values of a row's fields are
 * a row_key, whose strings the rows intern in their own table, so memory
 * follows the number of distinct rows and never what was summed into
 * them. Figures come from anywhere (the streaming engine handing out a
 * thread's functions, sampling data's programs); rows do no arithmetic
 * but sums. Nothing here does I/O.
 */
#ifndef CPULEDGER_CORE_ROWS_H
#define CPULEDGER_CORE_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindex.h"
#include "keys.h"
#include "refsort.h"
#include "strtab.h"

struct row_keys {
	uint8_t v[RF_COUNT];	/* fields in the order given */
	uint8_t n;
	uint32_t mask;		/* RF_BIT of each */
};

/* "process", "thread", ... (keys.h's table). */
const char *row_field__name(enum row_field f);

/* A comma-separated list of report's keys, each once: 0, or -EINVAL with
 * *bad the offset of the field at fault. */
int row_keys__parse(struct row_keys *k, const char *list, size_t *bad);
/* The same of the keys a command takes (KEY_REPORT, KEY_BILL, ...). */
int row_keys__parse_for(struct row_keys *k, const char *list, unsigned uses, size_t *bad);
/* The list as text ("comm,function") into buf. */
void row_keys__format(const struct row_keys *k, char *buf, size_t size);
static inline bool row_keys__has(const struct row_keys *k, enum row_field f)
{
	return k->mask & RF_BIT(f);
}

/* Adds f at the end of k (unless there already). */
static inline void row_keys__add(struct row_keys *k, enum row_field f)
{
	if (!row_keys__has(k, f)) {
		k->v[k->n++] = (uint8_t)f;
		k->mask |= RF_BIT(f);
	}
}

#define ROW_NONE UINT32_MAX	/* a string not known */
#define ROW_NO_UID (-1)
#define ROW_NO_CPU (-1)

/* A row's values: strings as the caller's text (copied in), numbers as
 * they are. Fields outside the key are ignored. */
struct row_key {
	const char *vm, *comm, *command, *executable, *dso, *function, *account,
		*cgroup;	/* NULL: unknown */
	uint32_t pid, tid;
	/* when the process and the thread began (their fork, in the
	 * source's clock; 0: alive at its start): pids and tids are given
	 * again, so a process is its pid and start, a thread its tid and
	 * start */
	uint64_t proc_start_ns, thread_start_ns;
	int64_t uid;		/* ROW_NO_UID: unknown */
	int32_t cpu;		/* ROW_NO_CPU: unknown */
	uint32_t stack;		/* RF_STACK */
};	/* keys derived from these (keys.h's derive) are worked out here */

/* What a row shows beside its key, when every part of it agrees: a
 * process row's command line, a thread row's comm. */
struct row_attrs {
	const char *command, *comm;
	/* the cgroup the contribution's thread was in: kept while every
	 * contribution that names one agrees (NULL names none), so a row's
	 * throttling is its cgroup's only when it lies in one */
	const char *cgroup;
};

struct row_figures {
	uint64_t samples, steal_samples;
	uint64_t cpu_ns, steal_ns;	/* run (or labelled) time, and steal */
	uint64_t control_ns;		/* cpu_ns in control-program accounts */
	uint64_t inclusive_ns;		/* with call stacks */
	uint64_t wait_ns;		/* run-queue wait of its threads */
	uint32_t wait_threads;		/* threads whose wait is known */
};

/* One row as kept: string ids in the rows' own table. */
struct row {
	uint32_t vm, comm, command, executable, dso, function, account, cgroup;
	uint32_t pid, tid;
	uint64_t start_ns;	/* keyed by thread: its start, else by
				 * process: its start (0: alive at the
				 * start, or neither key) */
	int64_t uid;
	int32_t cpu;
	uint32_t stack;
	uint32_t derived[ROW_DERIVED];		/* keys.h's derive; ROW_NONE */
	uint32_t attr_command, attr_comm;	/* ROW_NONE: none or mixed */
	uint32_t attr_cgroup;			/* ROW_NONE: none or mixed */
	/* when it was made, counting from 0: rows of one place in the
	 * table's order keep this order, stored or not */
	uint32_t seq;
	bool attr_seen, cgroup_seen;
	struct row_figures f;
};

/* The fields whose strings a row keeps, for rows' recent[], and how
 * many of each it remembers. */
enum { ROWS_RECENT = 4 };
enum { RS_VM, RS_COMM, RS_COMMAND, RS_EXECUTABLE, RS_DSO, RS_FUNCTION, RS_ACCOUNT,
       RS_CGROUP, RS_DERIVED, RS_N = RS_DERIVED + ROW_DERIVED };

struct rows {
	struct row_keys keys;
	struct strtab strings;
	struct row *v;
	uint32_t n, cap;
	struct hindex index;
	/* each field's strings interned last, newest first, as id + 1 (0:
	 * none): a thread's rows come one after another and mostly name the
	 * same command and file, which a compare then finds without hashing;
	 * its stacks' accounts alternate between a few (program, library,
	 * kernel), which one string a field missed nearly every time (an
	 * 8-minute compile loop's pprof interned 382 582 strings with one,
	 * 134 785 with four) */
	uint32_t recent[RS_N][ROWS_RECENT];
	/* the row added to last, as id + 1 (0: none): a thread's programs
	 * mostly sum into one row (by thread, comm, command, ...), found so
	 * without hashing */
	uint32_t last;
	uint32_t made;		/* rows made so far (struct row's seq) */
	/* rows__store: the rows retired to the store, their refs the last
	 * few (refs, up to a chunk) and, sorted by task, the runs in the
	 * store before them; and how many went since the strings were last
	 * made only the live rows' */
	const struct row_store *store;
	struct row_ref *refs;
	uint32_t nrefs, retired;
	struct ref_runs runs;
	char *rec;		/* a row as stored, made here */
	size_t rec_cap;
};

/* The fields of a key that a thread's program gives (rows__add_to's k):
 * a key without them is the thread's as a whole. */
#define ROW_PROGRAM_FIELDS (RF_BIT(RF_CPU) | RF_BIT(RF_STACK) | RF_BIT(RF_DSO) | \
			    RF_BIT(RF_FUNCTION) | RF_BIT(RF_ACCOUNT))

/* A row's attributes, in row_base's attr[]. */
enum { RA_COMMAND, RA_COMM, RA_CGROUP, RA_N };
#define ROW_UNSET (UINT32_MAX - 1)	/* an attribute not interned yet */

/* A task's part of a key (every field but dso, function, account, cpu
 * and stack, derived keys included) as the rows' ids, and its
 * attributes: made once for the many rows__add_to of a thread's
 * programs, where each rows__add makes it again. */
struct row_base {
	struct row w;		/* the task's fields; the others cleared */
	/* the attributes as given (NULL: none), interned only for a row
	 * that has none yet: a row whose contributions disagree keeps no
	 * string, and a compile loop's thousands of command lines summed
	 * into a few rows (--by comm) were most of the memory a long
	 * recording's report took */
	const char *attr[RA_N];
	uint32_t attr_id[RA_N];	/* its id once interned, else ROW_UNSET */
	/* keys without a program's fields: the row it added to, as id + 1
	 * (0: none yet) */
	uint32_t row;
	bool attrs, cgroup;	/* attributes given; a cgroup among them */
	bool hashed;		/* task_hash is w's task fields' (rows.c) */
	uint64_t task_hash;
};

void rows__init(struct rows *r, const struct row_keys *keys);
void rows__release(struct rows *r);
/* Empties r of its rows and strings as rows__release then rows__init
 * with its keys would, keeping its memory up to 256 rows (rows.c):
 * the stack rows of one gone thread after another (a compile loop's
 * 35 000) were each made in fresh memory, their strings interned into
 * an empty table. Not for rows kept in a store. */
void rows__clear(struct rows *r);

/* Adds f to the row of key k (created on first sight), noting its
 * attributes a (may be NULL). 0 or -ENOMEM. */
int rows__add(struct rows *r, const struct row_key *k, const struct row_attrs *a,
	      const struct row_figures *f);

/* k's task fields and a (may be NULL) as b, for rows__add_to until r is
 * released or a's strings are freed, whichever comes first: 0 or
 * -ENOMEM. */
int rows__base(struct rows *r, const struct row_key *k, const struct row_attrs *a,
	       struct row_base *b);
/* As rows__add of b's key with k's dso, function, account, cpu and stack
 * (its other fields are not read). 0 or -ENOMEM. */
int rows__add_to(struct rows *r, struct row_base *b, const struct row_key *k,
		 const struct row_figures *f);

/* The row rows__add_to would make of b's key with k's dso, function,
 * account, cpu and stack in a table without it, with figures f, into *w:
 * its strings interned in r, its seq the next, but the row not kept (no
 * index, no copy): for rows known to be apart and handed on as they are
 * made. 0 or -ENOMEM. */
int rows__make(struct rows *r, struct row_base *b, const struct row_key *k,
	       const struct row_figures *f, struct row *w);
/* The row rows__make would make again of like's base and key with stack
 * and figures f (like made by rows__make of r): its strings are like's,
 * its seq the next. A thread's stacks name a few accounts, and each was
 * interned and its attributes noted again for every stack (a ninth of
 * the engine's thread in a pprof of a compile loop). */
void rows__make_like(struct rows *r, const struct row *like, uint32_t stack,
		     const struct row_figures *f, struct row *w);

/* Whether rows of keys k can be kept in a store: rows of whole threads
 * (the thread's, and its process's, ids), complete once it is gone. */
bool rows__can_store(const struct row_keys *k);

/* Rows of gone threads go to s from here on (rows__retire): memory then
 * follows the threads alive, not those seen. */
void rows__store(struct rows *r, const struct row_store *s);

/* The row of k's thread, which is gone: into the store (a ref), out of
 * memory. A thread seen again later makes a row again, which the table
 * sums with this one (rows__ref_merge). The last row in memory takes
 * its id, and the rows' strings may be made anew: a row_base made
 * before (rows__base) is not to be used after. 0, or -ENOMEM or the
 * store's -errno. */
int rows__retire(struct rows *r, const struct row_key *k);

/* Every row still in memory into the store, as the table is made: every
 * ref then in a run (r->runs). */
int rows__retire_all(struct rows *r);

/* A stored row back: its fields in *w (string ids ROW_NONE), its
 * attributes (NULL: none) pointing into *buf, which grows to hold them.
 * 0, or -ENOMEM or the store's -errno. */
int rows__ref_get(const struct rows *r, const struct row_ref *ref, struct row *w,
		  const char *attr[RA_N], char **buf, size_t *cap);

/* The same of a stored row's bytes read already (ref->len at bytes). */
int rows__ref_unpack(const struct row_ref *ref, const char *bytes, struct row *w,
		     const char *attr[RA_N], char **buf, size_t *cap);

/* Two stored rows of one key summed, as if one row had had the
 * contributions of both (attributes kept where they agree), stored anew
 * as *into. 0, or -ENOMEM or the store's -errno. */
int rows__ref_merge(struct rows *r, struct row_ref *into, const struct row_ref *from);

/* The string of a row's id, or NULL for ROW_NONE. */
static inline const char *rows__str(const struct rows *r, uint32_t id)
{
	return id == ROW_NONE ? NULL : strtab__str(&r->strings, id);
}

#endif
