/*
 * cpuledger: the command table. Each subcommand lives in its own
 * cmd-NAME.c and is listed here once.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "../core/banned.h"

#ifndef CPULEDGER_VERSION
#define CPULEDGER_VERSION "0.1.0"
#endif

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "record", cmd_record, "record CPU time and steal live (perf_event_open)" },
	{ "report", cmd_report, "report a recording: time and steal per thread" },
	{ "run", cmd_run, "run a command and report its time like time(1)" },
	{ "import", cmd_import, "make a recording of perf script text" },
	{ "ledger", cmd_ledger, "add recordings to the accounting ledger (SQLite)" },
	{ "bill", cmd_bill, "CPU time, steal and corrected time from the ledger" },
	{ "collect", cmd_collect, "ask a recorder to add a collection to its ledger now" },
	{ "analyze", cmd_analyze, "steal-corrected CPU time from sampling data" },
	{ "simulate", cmd_simulate, "sampling data of a simulated VM host" },
	{ "workload", cmd_workload, "built-in programs to record" },
};

static void usage(FILE *f)
{
	fputs("usage: cpuledger COMMAND [options]\n\ncommands:\n", f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\n'cpuledger COMMAND --help' describes a command's options.\n", f);
}

/* A full disk must not pass for success: check stdout before exiting. */
static int finish_stdout(int status)
{
	if (fflush(stdout) || ferror(stdout)) {
		perror("cpuledger: cannot write standard output");
		return status ? status : EXIT_RUNTIME;
	}
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "-h") || !strcmp(name, "--help") ||
	    !strcmp(name, "help")) {
		usage(stdout);
		return finish_stdout(0);
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("cpuledger %s\n", CPULEDGER_VERSION);
		return finish_stdout(0);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++) {
		if (strcmp(commands[i].name, name))
			continue;
		static char prog[64];
		snprintf(prog, sizeof(prog), "cpuledger %s", name);
		cli_progname = prog;
		return finish_stdout(commands[i].fn(argc - 1, argv + 1));
	}
	fprintf(stderr, "cpuledger: unknown command '%s'\n", name);
	usage(stderr);
	return EXIT_USAGE;
}
