/*
 * report: one writer per output format behind one struct of function
 * pointers, so commands pick a format by name and never by switch.
 * The formats are documented in docs/analyze.md and docs/formats.md.
 */
#ifndef CPULEDGER_REPORT_REPORT_H
#define CPULEDGER_REPORT_REPORT_H

#include <errno.h>
#include <stdio.h>

#include "../core/rows.h"
#include "../core/stacktab.h"
#include "../core/strtab.h"
#include "../core/table.h"

/* Version of the machine-readable outputs (JSON "version"). */
#define REPORT_FORMAT_VERSION 2

/* What a report of a recording shows beside the table, per CPU. */
struct report_cpu {
	uint32_t cpu;
	uint64_t steal_ns;		/* attributed to threads */
	uint64_t idle_ns;		/* the idle task's time */
	bool kernel_known;
	uint64_t kernel_steal_ns;	/* /proc/stat's growth */
	uint64_t lost;			/* records the kernel dropped */
};

/* How many samples of each event a recording held (perf script text may
 * hold several; one is imported). */
struct report_event {
	const char *name;
	uint64_t samples;
};

/* A cgroup's figures over a recording (docs/cgroups.md): what ran in it
 * (corrected) and was stolen from it, by cpuledger; what its quota held
 * off and what it used, by its own counters; what its threads waited on
 * the guest's run queues, by schedstat. Each *_known false: unknown. */
struct report_cgroup {
	const char *path;
	uint64_t cpu_ns, steal_ns;
	bool usage_known, throttled_known, wait_known;
	uint64_t usage_ns, throttled_ns, nr_throttled, wait_ns;
};

/* Time per charge account (seed 000's FIG. 3): control says it is one of
 * --control's (the control program), else the target's. */
struct report_account {
	const char *account;	/* NULL: [unknown] (no sample placed it) */
	uint64_t cpu_ns, steal_ns;
	bool control;
};

/* CPU time and steal per CPU over the recording (core/engine.h's
 * eng_series): run_ns[bucket * ncpus + cpu]; NULL arrays: none. */
struct report_series {
	uint64_t start_ns, bucket_ns;
	uint32_t nbuckets, ncpus;
	uint64_t *run_ns, *steal_ns;
};

struct report_extras {
	const char *host, *steal_source, *scope;
	/* how steal was found: "residual" (per stint, runtime excludes
	 * it), "sample-gaps" (scaled per CPU to /proc/stat where known), ""
	 * unknown; what the kernel's runtime holds (steal_accounting__name)
	 * and how that was known; the smallest steal a stint shows */
	const char *steal_method, *kernel_accounting, *accounting_source;
	uint64_t steal_resolution_ns;
	bool steal_scaled;	/* each CPU's steal is /proc/stat's */
	int steal_clock;	/* -1: the kernel counted no steal since boot */
	bool steal_known;	/* false: steal and apparent time print as
				 * unknown (empty in CSV, null in JSON), never
				 * as zero */
	uint64_t duration_ns;
	int64_t bias_ns;
	uint64_t lost, bad_records;
	uint64_t lossy_stints;		/* stints over lost records: not judged */
	uint64_t late_events;		/* came after the watermark had passed */
	uint64_t missed_switches;	/* switches the kernel did not report,
					 * inferred (core/engine.h) */
	uint64_t unmeasured_stints;	/* no runtime: not judged for steal */
	uint64_t unraised_stints;	/* left raising no runtime: judged to
					 * their last (core/engine.h) */
	uint64_t steal_over_runtime_ns;	/* gap steal past a runtime holding
					 * steal: not placed */
	uint64_t clock_samples;		/* every sample, idle too */
	const struct report_cpu *cpus;
	uint32_t ncpus;
	const struct report_event *events;
	uint32_t nevents;
	const struct report_cgroup *cgroups;	/* most CPU first */
	uint32_t ncgroups;
	const struct report_account *accounts;	/* most CPU first */
	uint32_t naccounts;
	const struct report_series *series;	/* or NULL */
	/* time per call stack: rows keyed by RF_STACK (and labels), whose
	 * stack ids are stacks of stack_frames (core/stacktab.h: frames of
	 * (function, dso, account) name ids, leaf first); NULL without stacks */
	const struct rows *stacks;
	const struct stacktab *stack_frames;
	const struct strtab *names;
	/* the writer's state that took the stacks as the threads went
	 * (report_writer's stream_new), or NULL: stacks is empty then */
	void *stream;
	/* REPORT_FOLDS_STACKS: the stacks summed by the line folded makes
	 * of each (stacks is empty then), or NULL */
	const struct report_folds *folds;
	/* text: rows shown (0: all), the terminal's width (0: no limit) */
	size_t top;
	unsigned width;
};

/* What a writer needs of the report (struct report_writer's needs). */
#define REPORT_NEEDS_STACKS	0x1u	/* the rows of call stacks (x->stacks) */
#define REPORT_NEEDS_FUNCTION	0x2u	/* rows by function: a profile */
#define REPORT_FOLDS_STACKS	0x4u	/* the stacks only, each thread's summed by
					 * program and frames as they come */
#define REPORT_SAMPLING		0x8u	/* also writes sampling data (analyze) */
#define REPORT_NO_ROWS		0x10u	/* reads the stacks alone: no rows kept */
#define REPORT_ROWS_ONCE	0x20u	/* reads the rows once, in order */

/* What a stack row's ids name, as a gone thread's stacks are handed to a
 * writer: the rows carry their process's command (table's attrs), the
 * names and the stacks' frames (report_extras' names and stack_frames). */
struct report_stack {
	bool attrs;
	const struct strtab *names;
	const struct stacktab *frames;
	/* the source measures no steal, and says so for good (a file): the
	 * writer needs no steal values (pipeline_opts' no_steal) */
	bool no_steal;
	/* which batch of rows the stacks come in (a gone thread's): a row's
	 * string ids name the same strings within one batch, not across */
	uint64_t batch;
	/* rows of a batch with the same like (0: not said) differ in their
	 * stack and figures alone: made like one another (a thread's rows of
	 * one account), so their labels are one another's */
	uint32_t like;
};

struct report_writer {
	const char *name;
	/* Writes t (and x, for a recording; NULL for sampling data) to out.
	 * Returns 0, -EIO when out has an error, -ENOMEM, or the error of
	 * the store its stream kept in. */
	int (*write)(FILE *out, const struct table *t,
		     const struct report_extras *x);
	unsigned needs;		/* REPORT_NEEDS_* and the like */
	const char *by;		/* its keys when --by is not given */
	/* Optional (pprof): the stacks taken as each thread goes, so that
	 * they are not held twice, as rows and as the writer's. stream_new
	 * makes a state (NULL: out of memory) before the recording is read,
	 * keeping what it makes in store (NULL: in memory; the store's error
	 * is what the writer's functions return when it fails);
	 * stream_stack is given each stack row w of st of a gone thread, in
	 * the order x->stacks would hold them (0, -ENOMEM or the store's
	 * -errno); write reads
	 * the state as x->stream; stream_free frees it (NULL: nothing). */
	void *(*stream_new)(const struct row_store *store);
	int (*stream_stack)(void *state, const struct report_stack *rs, const struct rows *st,
			    const struct row *w);
	void (*stream_free)(void *state);
};

/* The writer called name, or NULL. */
const struct report_writer *report_writer__find(const char *name);

/* "text|csv|json|...", for usage messages. */
const char *report_writer__names(void);

extern const struct report_writer report_text, report_csv, report_json,
	report_openmetrics, report_pprof, report_folded, report_html;

/* The program a stack row is of, as flame graphs name it: its command's
 * first word (the file's base name), else its [comm], else [unknown]. */
void report_stack_program(const struct rows *st, const struct row *w, char *buf,
			  size_t size);

/*
 * Stacks summed by the line folded makes of them: its program (an id in
 * progs, as report_stack_program names it) and its stack (an id in the
 * report's stack_frames). A stack's first line is kept by the stack's id
 * (12 bytes), the lines of other programs on the same stack in more,
 * chained from it (16 bytes): a long recording's distinct stacks number
 * in the hundred thousands, most of one program, and a hash index of
 * (program, stack) pairs was a megabyte of an 8-minute recording's report.
 * A line's samples past 2^32 - 1 go on in a line of their own: lines
 * that read alike are summed when written.
 */
struct report_fold_first {
	uint32_t prog;		/* + 1; 0: the stack has no line */
	uint32_t samples;
	uint32_t next;		/* its stack's next line in more, + 1 */
};

struct report_fold {
	uint32_t prog, stack;
	uint32_t samples;
	uint32_t next;
};

struct report_folds {
	struct strtab progs;
	/* by stack id, those below nfirst zeroed or set: the room past them
	 * is not touched (zeroing the doubled table was 0.4 MB of a long
	 * recording's folded report, in memory) */
	struct report_fold_first *first;
	uint32_t nfirst, first_cap;
	struct report_fold *more;
	uint32_t nmore, more_cap;
	uint32_t last_prog;	/* the program named last, + 1 (0: none) */
};

void report_folds__init(struct report_folds *f);
void report_folds__release(struct report_folds *f);
/* Adds samples to the line of prog and stack. 0 or -ENOMEM. */
int report_folds__add(struct report_folds *f, const char *prog, uint32_t stack,
		      uint64_t samples);

/*
 * Integers in decimal, exactly as printf's "%" PRIu64 and "%" PRId64
 * write them, without a printf: a printf for each number and member name
 * was a tenth of a JSON report's instructions (issue 27). report_fmt_*
 * write v into buf (REPORT_NUM_MAX bytes or more), NUL-terminated, and
 * return its length; report_put_* write it to out.
 */
#define REPORT_NUM_MAX 21	/* "-9223372036854775808", "18446744073709551615" */
size_t report_fmt_u64(char *buf, uint64_t v);
size_t report_fmt_i64(char *buf, int64_t v);

/* More than one CPU to run on: a writer's thread of its own (deflating,
 * reading rows ahead) costs, not helps, on one. */
bool report_cpus_to_spare(void);
void report_put_u64(FILE *out, uint64_t v);
void report_put_i64(FILE *out, int64_t v);

/*
 * JSON text gathered in buf (cap bytes, the caller's) in front of out,
 * written when buf is full and at json_out__flush: a JSON report's rows
 * were two dozen fwrites a row, each taking the FILE's lock (a tenth of
 * the report, written after the recording was read, on one CPU). The
 * json_put_* below are the same, written at once.
 */
struct json_out {
	FILE *f;
	char *buf;
	size_t len, cap;
};

static inline struct json_out json_out__make(FILE *out, char *buf, size_t cap)
{
	return (struct json_out){ out, buf, 0, cap };
}

void json_out__put(struct json_out *o, const void *d, size_t n);
void json_out__flush(struct json_out *o);
void json_out__string(struct json_out *o, const char *s);
void json_out__member(struct json_out *o, bool *first, const char *key);
void json_out__str_member(struct json_out *o, bool *first, const char *key, const char *v);
void json_out__num_member(struct json_out *o, bool *first, const char *key, bool known,
			  int64_t v);

/* Writes s as a JSON string, quotes included: control characters
 * escaped, bytes that are not UTF-8 replaced by U+FFFD. */
void json_put_string(FILE *out, const char *s);
/* A JSON string, or null for NULL. */
void json_put_string_or_null(FILE *out, const char *s);
/* An object's member "key": with the comma before it unless *first
 * (which it clears); then its value: a string or null, a number or
 * null where not known. */
void json_put_member(FILE *out, bool *first, const char *key);
void json_put_str_member(FILE *out, bool *first, const char *key, const char *v);
void json_put_num_member(FILE *out, bool *first, const char *key, bool known, int64_t v);
/* Writes s as a CSV field: quoted when it holds a comma, quote or line
 * break; a cell a spreadsheet would run as a formula (=, +, -, @, tab,
 * carriage return first) is prefixed with a quote so it reads as text. */
void csv_put_field(FILE *out, const char *s);

/* The length of the UTF-8 sequence at s (n bytes left), or 0 when the
 * bytes there are not one (a stray byte, an overlong form, a surrogate). */
size_t utf8_seq(const unsigned char *s, size_t n);
/* s made valid UTF-8, each invalid byte as U+FFFD: a new string (the
 * caller frees it), or NULL with errno ENOMEM. */
char *utf8_dup_clean(const char *s);

/* One label of an OpenMetrics or Prometheus sample, name="value", after a
 * comma unless *first: the value escaped (backslash, quote, newline) and
 * made UTF-8 (U+FFFD for what is not). */
void om_put_label(FILE *out, bool *first, const char *name, const char *v);

/*
 * The one place that decides what text may reach a terminal: how the
 * character at s (n >= 1 bytes left) is shown. Returns the bytes it takes
 * (>= 1) and sets *show to what stands for them, or NULL for the bytes
 * themselves. Control characters, which a terminal would act on (C0, DEL,
 * C1 U+0080-U+009F: U+009B is CSI on many terminals; and raw bytes
 * 0x80-0x9F, C1 to a terminal in an 8-bit mode), show as "?"; other bytes
 * that are not UTF-8 as U+FFFD. Text reports, bills, top, run's summary,
 * folded stacks and messages about a file's contents all go through it.
 */
size_t text_char(const unsigned char *s, size_t n, const char **show);
/* Writes s for a terminal (text_char), at most max columns (0: no
 * limit; a cut string ends in '+'), then spaces up to pad columns. One
 * column per character. Returns the columns written. */
int text_put(FILE *out, const char *s, int max, int pad);
/* s made safe for a terminal (text_char) into buf: always terminated,
 * cut at a character when it does not fit. Returns its length. */
size_t text_clean(char *buf, size_t size, const char *s);

/* text_put, but a string longer than max columns keeps its start and
 * (twice as much of) its end around "...": the end of a command line is
 * what tells two apart. (textfit.c) */
int text_put_middle(FILE *out, const char *s, int max, int pad);

/* argv as the shell would take it back: words quoted where they must be,
 * control characters and bytes that are not UTF-8 as $'\n' and $'\xHH',
 * never raw. A new string (the caller frees it), or NULL with errno. */
char *shell_quote(const char *const *argv);

/* Which keys report_keys shows after another (a function's file). */
enum report_after {
	REPORT_AFTER_NONE,
	REPORT_AFTER_UNLESS_KEY,	/* unless it is a key itself */
	REPORT_AFTER_ALWAYS,		/* even then (CSV's header says both) */
};

/* Calls fn for each key field of k that a row shows, in --by's order:
 * each key with a value in a row (not a stack's id) once, with ahead of it once the key its entry says comes
 * before it (a thread's pid) and, as after says, behind it the one its
 * entry says comes after it (with true for those two). */
void report_keys(const struct row_keys *k, enum report_after after,
		 void (*fn)(void *ctx, enum row_field f, bool with), void *ctx);

/* A uid as "1000 (alice)" when the name is known. */
const char *report_user(int64_t uid, char *buf, size_t size);

#endif
