/* options: see options.h. */
#include "options.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../core/keys.h"
#include "../core/banned.h"

#define MAX_OPTIONS 96

static const struct cli_option help_option = {
	"help", 'h', NULL, CLI_HELP, "show this help", NULL
};

/* Calls fn for every option of c, --help last. */
#define FOR_EACH_OPTION(c, o) \
	for (const struct cli_option *const *t_ = (c)->tables, *o = NULL; \
	     t_ && *t_; t_++) \
		for (o = *t_; o->name; o++)

static const char *help_of(const struct cli_option *o)
{
	return o->help_fn ? o->help_fn() : o->help;
}

static const char *values_of(const struct cli_option *o)
{
	return o->values_fn ? o->values_fn() : o->values;
}

const char *cli_keys(unsigned uses, const char *sep, size_t wrap, size_t first)
{
	static char buf[512];
	return key_entry__names(uses, sep, wrap, first, buf, sizeof(buf));
}

void cli_begin(void)
{
	optind = 1;
	opterr = 0;
}

/* getopt_long's tables for c, built once per call (they are small). */
static int tables(const struct cli_command *c, struct option *lo, char *so, size_t so_size)
{
	int n = 0;
	size_t k = 0;
	if (c->stops_at_command)
		so[k++] = '+';
	so[k++] = ':';	/* a missing value is told apart */
	FOR_EACH_OPTION(c, o) {
		if (n == MAX_OPTIONS - 2)
			break;
		if (o->name[0])	/* "": a letter alone (-g) */
			lo[n++] = (struct option){ o->name, o->arg ? required_argument :
						   no_argument, NULL,
						   o->letter ? o->letter : 1000 + o->id };
		if (o->letter && k + 3 < so_size) {
			so[k++] = o->letter;
			if (o->arg)
				so[k++] = ':';
		}
	}
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n] = (struct option){ 0 };
	so[k++] = 'h';
	so[k] = '\0';
	return n;
}

/* Edits from a to b: insertions, deletions, substitutions and swaps of
 * neighbours (Damerau's), as git counts them for its "did you mean". */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return (size_t)-1;
	size_t d[65][65];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

const char *cli_closest(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t bd = (size_t)-1, len = strlen(word);
	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(word, names[i]);
		if (d < bd) {
			bd = d;
			best = names[i];
		}
	}
	/* a third of the word may be wrong, at least one letter, at most 3 */
	size_t most = len / 3 < 1 ? 1 : len / 3 > 3 ? 3 : len / 3;
	return bd <= most ? best : NULL;
}

/* The option of c nearest to an unknown --word, or NULL. */
static const char *closest_option(const struct cli_command *c, const char *word)
{
	const char *names[MAX_OPTIONS + 1];
	size_t n = 0;
	char w[65];
	snprintf(w, sizeof(w), "%.*s", (int)strcspn(word + 2, "="), word + 2);
	FOR_EACH_OPTION(c, o)
		if (o->name[0] && n < MAX_OPTIONS)
			names[n++] = o->name;
	names[n++] = "help";
	return cli_closest(w, names, n);
}

static void unknown_option(const struct cli_command *c, const char *word)
{
	const char *near = strncmp(word, "--", 2) ? NULL : closest_option(c, word);
	if (near)
		cli_error("unknown option '%s'; did you mean '--%s'? (see 'cpuledger %s --help')",
			  word, near, c->name);
	else
		cli_error("unknown option '%s' (see 'cpuledger %s --help')", word, c->name);
}

int cli_next(const struct cli_command *c, int argc, char **argv, const char **arg)
{
	struct option lo[MAX_OPTIONS];
	char so[2 * MAX_OPTIONS + 4];
	tables(c, lo, so, sizeof(so));
	int prev = optind;
	int v = getopt_long(argc, argv, so, lo, NULL);
	*arg = optarg;
	if (v == -1)
		return CLI_END;
	if (v == 'h')
		return CLI_HELP;
	if (v == '?' || v == ':') {
		const char *word = prev < argc ? argv[prev] : "";
		if (v == ':')
			cli_error("option '%s' needs a value", word);
		else if (optopt && optopt < 256)
			cli_error("unknown option '-%c' (see 'cpuledger %s --help')", optopt,
				  c->name);
		else
			unknown_option(c, word);
		return CLI_BAD;
	}
	FOR_EACH_OPTION(c, o)
		if ((o->letter && v == o->letter) || v == 1000 + o->id)
			return o->id;
	return CLI_BAD;
}

static void option_help(FILE *f, const struct cli_option *o)
{
	char left[64];
	int n = !o->name[0] ? snprintf(left, sizeof(left), "  -%c", o->letter) :
		o->letter ? snprintf(left, sizeof(left), "  -%c, --%s", o->letter, o->name) :
			    snprintf(left, sizeof(left), "      --%s", o->name);
	if (o->arg && n > 0 && (size_t)n < sizeof(left))
		snprintf(left + n, sizeof(left) - (size_t)n, " %s", o->arg);
	const char *h = help_of(o);
	size_t len = strcspn(h, "\n");
	if (strlen(left) < 25)
		fprintf(f, "%-25s%.*s\n", left, (int)len, h);
	else
		fprintf(f, "%s\n%25s%.*s\n", left, "", (int)len, h);
	for (h += len; *h == '\n'; h += len) {
		h++;
		len = strcspn(h, "\n");
		fprintf(f, "%25s%.*s\n", "", (int)len, h);
	}
}

void cli_usage(FILE *f, const struct cli_command *c)
{
	fprintf(f, "usage: cpuledger %s %s\n\n%s\n\n", c->name, c->synopsis, c->description);
	FOR_EACH_OPTION(c, o)
		option_help(f, o);
	option_help(f, &help_option);
	if (c->footer)
		fprintf(f, "\n%s", c->footer);
}

/* Whether an option's value is a file's path (FILE, PATH, REC). */
static bool names_path(const char *arg)
{
	return strstr(arg, "FILE") || strstr(arg, "PATH") || strstr(arg, "REC");
}

/* One command's case in the completion script. */
static void complete_command(FILE *f, const struct cli_command *c)
{
	fprintf(f, "\t%s)\n\t\topts=\"--help", c->name);
	FOR_EACH_OPTION(c, o) {
		if (o->name[0])
			fprintf(f, " --%s", o->name);
		if (o->letter)
			fprintf(f, " -%c", o->letter);
	}
	fputs("\"\n\t\tcase $prev in\n", f);
	FOR_EACH_OPTION(c, o) {
		if (!o->arg)
			continue;
		if (o->name[0])
			fprintf(f, "\t\t--%s%s", o->name, o->letter ? "|" : "");
		else
			fputs("\t\t", f);
		if (o->letter)
			fprintf(f, "-%c", o->letter);
		if (values_of(o))
			fprintf(f, ") COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;\n",
				values_of(o));
		else if (names_path(o->arg))
			fputs(") COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", f);
		else	/* a number, a list, a time: nothing to offer */
			fputs(") COMPREPLY=(); return ;;\n", f);
	}
	fputs("\t\tesac ;;\n", f);
}

void cli_completion_bash(FILE *f, const struct cli_command *const *commands)
{
	fputs("# bash completion for cpuledger, made by `cpuledger completion bash`\n"
	      "# from the commands' option tables.\n"
	      "_cpuledger() {\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} opts\n"
	      "\tif [ \"$COMP_CWORD\" = 1 ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"", f);
	for (size_t i = 0; commands[i]; i++)
		fprintf(f, "%s%s", i ? " " : "", commands[i]->name);
	fputs("\" -- \"$cur\"))\n\t\treturn\n\tfi\n\tcase ${COMP_WORDS[1]} in\n", f);
	for (size_t i = 0; commands[i]; i++)
		complete_command(f, commands[i]);
	fputs("\t*) opts=\"--help\" ;;\n\tesac\n"
	      "\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n}\n"
	      "complete -o default -F _cpuledger cpuledger\n", f);
}

/* A help text on one line, for zsh and fish: f gets it with each byte of
 * quote_bytes backslashed, and a single quote closed and reopened as the
 * shell needs (sq). */
static void put_help(FILE *f, const char *s, const char *quote_bytes, const char *sq)
{
	for (; *s; s++) {
		if (*s == '\n')
			putc(' ', f);
		else if (*s == '\'')
			fputs(sq, f);
		else if (strchr(quote_bytes, *s))
			fprintf(f, "\\%c", *s);
		else
			putc(*s, f);
	}
}

/* One option as _arguments spells it: -x, --long or both, its help, and
 * its value (the values it takes, a file, or anything). */
static void zsh_option(FILE *f, const struct cli_option *o)
{
	fputs(" \\\n\t\t\t", f);
	if (o->name[0] && o->letter)
		fprintf(f, "'(-%c --%s)'{-%c,--%s}'", o->letter, o->name, o->letter, o->name);
	else if (o->name[0])
		fprintf(f, "'--%s", o->name);
	else
		fprintf(f, "'-%c", o->letter);
	putc('[', f);
	put_help(f, help_of(o), "[]\\", "'\\''");
	putc(']', f);
	if (o->arg) {
		fputs(":", f);
		put_help(f, o->arg, ":\\", "'\\''");
		if (values_of(o))
			fprintf(f, ":(%s)", values_of(o));
		else
			fputs(names_path(o->arg) ? ":_files" : ": ", f);
	}
	putc('\'', f);
}

void cli_completion_zsh(FILE *f, const struct cli_command *const *commands,
			const char *const *summaries)
{
	fputs("#compdef cpuledger\n"
	      "# zsh completion for cpuledger, made by `cpuledger completion zsh`\n"
	      "# from the commands' option tables.\n"
	      "_cpuledger() {\n\tlocal -a cmds\n\tcmds=(\n", f);
	for (size_t i = 0; commands[i]; i++) {
		fprintf(f, "\t\t'%s:", commands[i]->name);
		put_help(f, summaries[i], ":\\", "'\\''");
		fputs("'\n", f);
	}
	fputs("\t\t'completion:print a completion script\\: bash, zsh or fish'\n\t)\n"
	      "\tif (( CURRENT == 2 )); then\n"
	      "\t\t_describe -t commands 'cpuledger command' cmds\n\t\treturn\n\tfi\n"
	      "\tlocal cmd=${words[2]}\n\tshift words\n\t(( CURRENT-- ))\n"
	      "\tcase $cmd in\n", f);
	for (size_t i = 0; commands[i]; i++) {
		const struct cli_command *c = commands[i];
		fprintf(f, "\t(%s)\n\t\t_arguments -s", c->name);
		FOR_EACH_OPTION(c, o)
			zsh_option(f, o);
		zsh_option(f, &help_option);
		if (c->stops_at_command)
			fputs(" \\\n\t\t\t'*::command:_normal'", f);
		fputs(" ;;\n", f);
	}
	fputs("\t(completion) _values shell bash zsh fish ;;\n\tesac\n}\n"
	      "if [ \"$funcstack[1]\" = _cpuledger ]; then\n\t_cpuledger \"$@\"\nelse\n"
	      "\tcompdef _cpuledger cpuledger\nfi\n", f);
}

/* One option as fish's complete spells it, for command c. */
static void fish_option(FILE *f, const struct cli_command *c, const struct cli_option *o)
{
	fprintf(f, "complete -c cpuledger -n '__fish_seen_subcommand_from %s'", c->name);
	if (o->name[0])
		fprintf(f, " -l %s", o->name);
	if (o->letter)
		fprintf(f, " -s %c", o->letter);
	if (o->arg && values_of(o))
		fprintf(f, " -x -a '%s'", values_of(o));
	else if (o->arg)
		fputs(names_path(o->arg) ? " -r -F" : " -x", f);
	fputs(" -d '", f);
	put_help(f, help_of(o), "\\", "\\'");
	fputs("'\n", f);
}

void cli_completion_fish(FILE *f, const struct cli_command *const *commands,
			 const char *const *summaries)
{
	fputs("# fish completion for cpuledger, made by `cpuledger completion fish`\n"
	      "# from the commands' option tables.\n"
	      "complete -c cpuledger -f\n", f);
	for (size_t i = 0; commands[i]; i++) {
		fprintf(f, "complete -c cpuledger -n __fish_use_subcommand -a %s -d '",
			commands[i]->name);
		put_help(f, summaries[i], "\\", "\\'");
		fputs("'\n", f);
	}
	fputs("complete -c cpuledger -n __fish_use_subcommand -a completion "
	      "-d 'print a completion script: bash, zsh or fish'\n"
	      "complete -c cpuledger -n '__fish_seen_subcommand_from completion' "
	      "-x -a 'bash zsh fish'\n", f);
	for (size_t i = 0; commands[i]; i++) {
		FOR_EACH_OPTION(commands[i], o)
			fish_option(f, commands[i], o);
		fish_option(f, commands[i], &help_option);
	}
}
