/*
 * options: each command declares its options once, in a table (as git's
 * parse-options does), and the table drives the parsing (getopt_long),
 * the --help text, and the bash completion (`cpuledger completion bash`);
 * a test checks the man page against the same table. So two commands
 * never disagree on an option, and help never forgets one.
 */
#ifndef CPULEDGER_CLI_OPTIONS_H
#define CPULEDGER_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

struct cli_option {
	const char *name;	/* the long name; NULL ends a table */
	char letter;		/* the short letter, or 0 */
	const char *arg;	/* its value's name ("FILE"), or NULL: a flag */
	int id;			/* what cli_next() returns for it */
	const char *help;	/* lines joined by '\n' */
	const char *values;	/* for completion: the values it takes,
				 * space-separated, or NULL */
	/* Or both made when asked, from a table kept elsewhere (--by's
	 * keys, core/keys.c): NULL, or a string that stays valid. */
	const char *(*help_fn)(void);
	const char *(*values_fn)(void);
};

/* The options of several commands share these, spliced in by pointer. */
struct cli_command {
	const char *name;		/* "report" */
	const char *synopsis;		/* after "usage: cpuledger NAME " */
	const char *description;	/* what it does: a paragraph */
	const struct cli_option *const *tables;	/* NULL-terminated */
	const char *footer;		/* after the options, or NULL */
	bool stops_at_command;		/* "-- COMMAND": options end at the
					 * first word that is not one */
};

/* What cli_next() returns beside ids. */
#define CLI_END 0
#define CLI_HELP (-1)	/* --help: the caller prints usage and exits 0 */
#define CLI_BAD (-2)	/* said on stderr already: exit 2 */

/*
 * The next option of argv (from optind): its id with *arg its value, CLI_END
 * when the options are over (optind at the first other word), CLI_HELP, or
 * CLI_BAD for an unknown option or a missing value. Start with optind = 1
 * (cli_begin does it).
 */
int cli_next(const struct cli_command *c, int argc, char **argv, const char **arg);
void cli_begin(void);

/* The usage text: synopsis, description, every option with its help. */
void cli_usage(FILE *f, const struct cli_command *c);

/* Completion scripts for COMMANDS (a null-terminated table), to F: bash,
 * zsh (_arguments) and fish (complete), all from the same tables; zsh and
 * fish show each command's one-line summary beside it (summaries[i]). */
void cli_completion_bash(FILE *f, const struct cli_command *const *commands);
void cli_completion_zsh(FILE *f, const struct cli_command *const *commands,
			const char *const *summaries);
void cli_completion_fish(FILE *f, const struct cli_command *const *commands,
			 const char *const *summaries);

/* The names of the --by keys that uses takes (core/keys.h's KEY_REPORT,
 * ...), for help, completion and errors: key_entry__names into a buffer
 * of its own, valid until the next call. */
const char *cli_keys(unsigned uses, const char *sep, size_t wrap, size_t first);

/* Of names, the one nearest word by edit distance (git's "did you
 * mean"), or NULL when none is near enough to be a typo of it. */
const char *cli_closest(const char *word, const char *const *names, size_t n);

#endif
