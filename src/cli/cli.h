/*
 * cli: what the subcommands share. Only src/cli prints to the user or
 * exits; everything below it returns errors.
 */
#ifndef CPULEDGER_CLI_CLI_H
#define CPULEDGER_CLI_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/attribute.h"
#include "../output/outfile.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

extern const char *cli_progname;	/* "cpuledger analyze", for messages */

/*
 * Errors. The libraries below return 0 or -errno (NULL and errno for
 * pointers) and print nothing. A function of src/cli that can fail
 * returns 0, or the exit status the command ends with (EXIT_RUNTIME,
 * EXIT_USAGE), having said why: so a command passes it on as it is
 * (`if ((st = f()))` then `return st`); a command's parse that printed
 * --help returns 0 with a flag set, so the command ends with 0 without
 * going on. Kept apart, and said so where they are declared: option
 * parsers that tell "taken" from "not one of mine" (live_opts__parse:
 * 1, 0, -1) and parsers that say nothing (cli_parse_time: its caller
 * says what is wrong).
 */

/* Prints "cpuledger CMD: MSG" to stderr. */
__attribute__((format(printf, 1, 2)))
void cli_error(const char *fmt, ...);

/* Parses an option's unsigned integer value in [min, max]: 0, or
 * EXIT_USAGE having said which option is at fault. */
int cli_parse_u64(const char *opt, const char *arg, uint64_t min,
		  uint64_t max, uint64_t *out);
int cli_parse_double(const char *opt, const char *arg, double *out);
/* Seconds from min to max (at most CLI_MAX_SECONDS, so that any of them
 * in nanoseconds fits 64 bits with room to add a start time): every
 * duration, interval and wait of every command is read by this, so all
 * refuse alike; 0, or EXIT_USAGE having said which option is at fault. */
#define CLI_MAX_SECONDS 31536000.0	/* a year */
/* --duration and --interval, the same in record, run, top and agent */
#define CLI_DURATION_MIN 0.001
#define CLI_INTERVAL_MIN 0.1
#define CLI_INTERVAL_MAX 86400.0
int cli_parse_seconds(const char *opt, const char *arg, double min, double max,
		      double *out);
/* A time as nanoseconds since the epoch: @SECONDS, YYYY-MM-DD,
 * YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS (UTC), now, today or yesterday
 * (midnight UTC), or -N followed by s, min, h, d or w (so long before
 * now); false if none of these. */
bool cli_parse_time(const char *s, int64_t *out);

/* --method and --format values, shared by analyze, report and run: 0, or
 * EXIT_USAGE, having named the option at fault, on an unknown value. */
struct report_writer;
int cli_parse_method(const char *arg, enum steal_method *out);
int cli_parse_format(const char *arg, const struct report_writer **out);

/* A comma-separated list of names (--comm, --control), appended to l: 0,
 * or EXIT_USAGE having named the option at fault (an empty name), or
 * EXIT_RUNTIME having said memory ran out. */
struct cli_list {
	char **v;
	size_t n;
};
int cli_parse_list(const char *opt, const char *arg, struct cli_list *l);
void cli_list__release(struct cli_list *l);

/* A comma-separated list of process or thread ids (--pid, --tid),
 * appended to ids: 0, or EXIT_USAGE (not ids) or EXIT_RUNTIME (out of
 * memory), said, with ids emptied and freed. */
struct cli_ids {
	uint32_t *v;
	size_t n;
};
int cli_parse_ids(const char *opt, const char *arg, struct cli_ids *ids);

/* The accounts named in --control must be ones the rules (or the
 * defaults) define: 0, or EXIT_USAGE having said which is not. */
struct account_rules;
int cli_check_control(const char *const *control, size_t n,
		      const struct account_rules *rules);

/* A file a recording was asked of and is not: says where it went wrong,
 * and what the file is when it is something else cpuledger reads. */
struct rec_error;
void cli_not_a_recording(const char *path, const struct rec_error *e, bool salvage);

/*
 * Reads and parses an --accounts rules file. Returns 0, with *text (the
 * file, NUL-terminated; the caller frees it) when text is not NULL; or an
 * exit status, having printed FILE:LINE: what is wrong.
 */
struct account_rules;
int cli_load_accounts(const char *path, struct account_rules *rules,
		      char **text);

/* EXIT_USAGE, having said so, when the environment asks for what cannot
 * be (CPULEDGER_FILE_MODE not a mode); else 0. */
int cli_check_environment(void);

/* EXIT_USAGE, having said so, when out is the same file as in (or, neither
 * there yet, the same path); role names in: "the input", "the ledger". */
int outfile__not_input(const char *out, const char *in, const char *role);

/* Progress on stderr while reading a big input, only on a terminal. */
struct progress {
	bool on;
	uint64_t total;		/* bytes, 0 when unknown */
	uint64_t last_ns;
	const char *what;
};

void progress__init(struct progress *p, const char *what, int fd);
void progress__update(void *p, uint64_t bytes);	/* a progress_fn */
void progress__done(struct progress *p);

int cmd_analyze(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_workload(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_ledger(int argc, char **argv);
int cmd_bill(int argc, char **argv);
int cmd_collect(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_sched(int argc, char **argv);

#ifndef CPULEDGER_VERSION
#define CPULEDGER_VERSION "0.3.0"
#endif
/* The commit built, which the Makefile passes to main.c alone (from git,
 * or from a `git archive` tarball's COMMIT file). */
#ifndef CPULEDGER_COMMIT
#define CPULEDGER_COMMIT "unknown"
#endif

struct script_import_kernel;
/* --proc-stat START,END of import and report: two copies of the traced
 * machine's /proc/stat, read and checked into k (cli_proc_stat_free
 * frees them). 0 or an exit status, having said what is wrong. */
#define PROC_STAT_HELP "copies of the traced machine's /proc/stat from\n" \
	"before and after perf recorded: each CPU's steal\nis then the kernel's " \
	"(docs/import.md)"
int cli_proc_stat_load(const char *arg, struct script_import_kernel *k);
void cli_proc_stat_free(struct script_import_kernel *k);
/* Imports the perf script text at path ("-": standard input) into a
 * recording on out_fd, printing what it read unless quiet; k (may be
 * NULL) the kernel's steal; read_once as script_import's. 0 or an exit
 * status, having printed FILE:LINE: what is wrong. */
int cli_import_script(const char *path, int out_fd, bool quiet, bool read_once,
		      const struct script_import_kernel *k);
/* A recording to read: the file input, or perf-script:FILE (or
 * perf-script:- for standard input) imported into memory, with k as the
 * import's (may be NULL). 0 with its file descriptor in *fd, or the exit
 * status, having said why. */
int cli_open_recording(const char *input, const struct script_import_kernel *k,
		       int *fd);

#endif
