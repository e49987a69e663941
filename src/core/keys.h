/*
 * keys: one descriptor per report key, as perf's sort entries are (a
 * name, a header, a way to compare and to show): `--by NAME` in every
 * command, the columns and labels every writer of report/ gives it, the
 * order of rows (table.c), bill (its parser, its writers, the ledger's
 * column of each key) and analyze's parser, help, completion and error
 * messages all read this one table. A new key is one entry in
 * keys.c (and its value where rows are summed), never a case added to
 * each writer.
 *
 * The key's id is its index (enum row_field), so rows keep keys as
 * small numbers and writers look an entry up with key_entry().
 */
#ifndef CPULEDGER_CORE_KEYS_H
#define CPULEDGER_CORE_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct row_key;
struct table_row;

/* Keys whose value is worked out from a row's others (keys.c's derive),
 * at most this many: each its own slot in a row. */
#define ROW_DERIVED 2

enum row_field {
	RF_VM,		/* the host (or VM of sampling data) */
	RF_PROCESS,	/* pid */
	RF_THREAD,	/* pid and tid */
	RF_COMM,	/* the thread's name, as perf's comm */
	RF_COMMAND,	/* the process's whole command line */
	RF_EXECUTABLE,	/* the process's executable file */
	RF_USER,	/* the process's uid */
	RF_DSO,		/* the code region's file */
	RF_FUNCTION,	/* the function, within its dso */
	RF_ACCOUNT,	/* the charge account */
	RF_CPU,		/* the CPU it ran on */
	RF_CGROUP,	/* the task's cgroup */
	RF_PROGRAM,	/* the program, as flame graphs name it */
	RF_HOUR,	/* bill's periods: rows per hour, day, month of */
	RF_DAY,		/* the ledger's collections (no report row has */
	RF_MONTH,	/* one) */
	RF_STACK,	/* a call stack (the source's id): not a --by key;
			 * rows of stacks for pprof and folded */
	RF_START,	/* when the row's task began: not a --by key; a
			 * table's key after its pid or tid when one is on
			 * rows of two tasks (table.h) */
	RF_COUNT
};

#define RF_BIT(f) (1u << (f))

/* What a key's value is. */
enum key_type {
	KEY_TEXT,	/* a string; NULL when not known */
	KEY_TASK,	/* a pid or tid, shown -1 for a task that had exited
			 * (table_id) */
	KEY_NUMBER,	/* a number; negative when not known */
	KEY_UID,	/* a user id: a number in data, a name for people */
	KEY_PERIOD,	/* a period of the ledger's collections (bill) */
	KEY_START,	/* a task's start in the source's clock (ns), -1
			 * for one alive when it began: text shows seconds
			 * since the recording began (table.origin_ns) */
};

/* The commands that take a key in --by. */
#define KEY_REPORT	0x1u	/* report (and run's, agent's, top's tables) */
#define KEY_BILL	0x2u	/* bill: kept in the ledger */
#define KEY_ANALYZE	0x4u	/* analyze: in sampling data */

/* What a key needs of the data. */
#define KEY_NEEDS_CODE	0x1u	/* code regions, which sampling data has not */

struct key_entry {
	const char *name;	/* --by NAME in every command */
	const char *alias;	/* a spelling also taken (the ledger's and
				 * bill's "host" for vm), or NULL */
	const char *header;	/* text's column title */
	const char *field;	/* its JSON member, CSV column, label */
	const char *label;	/* the label of a recording's rows
				 * (OpenMetrics, pprof), when not field */
	const char *unknown;	/* what a label says for no value, or NULL:
				 * no label */
	enum key_type type;
	unsigned uses;		/* KEY_REPORT | KEY_BILL | KEY_ANALYZE */
	unsigned needs;		/* KEY_NEEDS_* */
	bool narrow;		/* text: left of the figures (a short value),
				 * else a column right of them */
	int width;		/* text: a narrow column's width (0: as wide
				 * as its values) */
	bool location;		/* pprof: said by a sample's location, not a
				 * label */
	/* Another key shown (and compared) with this one where it is not
	 * a key itself: before it (a thread's pid), after it (a function's
	 * file); RF_COUNT for none. */
	enum row_field before, after;
	/* The row's value: text for KEY_TEXT, number for the others. */
	const char *(*text)(const struct table_row *r);
	int64_t (*number)(const struct table_row *r);
	/* The value as people know it (a cgroup's name for its path), in
	 * buf; NULL: the value itself. */
	const char *(*display)(const struct table_row *r, char *buf, size_t size);
	/* A key worked out from the values of the others where rows are
	 * summed (rows.c), kept in the row's derived[slot]: its text from
	 * k, in buf or k's own strings, NULL when not known. It may read
	 * only a task's fields, not dso, function, account, cpu or stack:
	 * it is worked out once per thread (rows__base). NULL: a value the
	 * source gives (struct row_key). */
	const char *(*derive)(const struct row_key *k, char *buf, size_t size);
	int slot;
	/* bill: the keys whose values its rows show for this one, as
	 * RF_BIT()s, in the table's order: a process is its host, pid and
	 * command line, as a ledger holds many hosts and gives pids again
	 * (0: its own value alone; key_entry__shows). */
	uint32_t bill_shows;
};

/* Whether a key's value is text (a period's too), else a number. */
static inline bool key_entry__is_text(const struct key_entry *e)
{
	return e->type == KEY_TEXT || e->type == KEY_PERIOD;
}

/* Its name in a recording's rows and the ledger's (host for vm): the
 * labels of OpenMetrics and pprof, bill's CSV columns and JSON members. */
static inline const char *key_entry__label(const struct key_entry *e)
{
	return e->label ? e->label : e->field;
}

/* The entry of key f (f < RF_COUNT). */
const struct key_entry *key_entry(enum row_field f);

/* The keys whose values a bill's rows show for key f (its bill_shows,
 * or f alone), as RF_BIT()s. */
uint32_t key_entry__shows(enum row_field f);

/* The key called s[0..len) (its name or alias) that one of uses takes:
 * 0, or -EINVAL when there is none. *known (known may be NULL) says
 * whether some command takes the name; if so, *out is its key even when
 * uses does not take it (so the error can say why). */
int key_entry__find(const char *s, size_t len, unsigned uses, enum row_field *out,
		    bool *known);

/* The names of the keys of uses, in the table's order, joined by sep
 * ("vm process ..." or "vm, process, ..."), in buf; a line is broken
 * before a name that would take it past wrap columns (0: never), the
 * first line counting first columns already used. Returns buf. */
const char *key_entry__names(unsigned uses, const char *sep, size_t wrap, size_t first,
			     char *buf, size_t size);

#endif
