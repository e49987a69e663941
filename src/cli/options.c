/* options: see options.h. */
#include "options.h"

#include <getopt.h>
#include <string.h>

#include "cli.h"
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
			cli_error("unknown option '%s' (see 'cpuledger %s --help')", word,
				  c->name);
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
	const char *h = o->help;
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
		if (o->values)
			fprintf(f, ") COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;\n",
				o->values);
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
