/*
 * cpuledger: the command table. Each subcommand lives in its own
 * cmd-NAME.c and is listed here once, with its option table (options.h),
 * from which its help and the shell completion are made.
 */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "live.h"
#include "options.h"
#include "../core/banned.h"

extern const struct cli_command record_command, report_command, run_command,
	import_command, ledger_command, bill_command, collect_command, analyze_command,
	simulate_command, workload_command, agent_command, top_command, sched_command;

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	bool records;		/* takes signals to stop and collect */
};

static const struct command commands[] = {
	{ "record", cmd_record, "record CPU time and steal live (perf_event_open)", true },
	{ "report", cmd_report, "report a recording: time and steal per thread, function...", false },
	{ "run", cmd_run, "run a command and report its time like time(1)", true },
	{ "agent", cmd_agent, "record all the time: the ledger, and /metrics for Prometheus", true },
	{ "top", cmd_top, "a live view: CPU and steal per CPU, process, thread, program", true },
	{ "import", cmd_import, "make a recording of perf script text", false },
	{ "ledger", cmd_ledger, "add recordings to the accounting ledger (SQLite)", false },
	{ "bill", cmd_bill, "CPU time, steal and corrected time from the ledger", false },
	{ "collect", cmd_collect, "ask a recorder to add a collection to its ledger now", false },
	{ "analyze", cmd_analyze, "steal-corrected CPU time from sampling data", false },
	{ "simulate", cmd_simulate, "sampling data of a simulated VM host", false },
	{ "workload", cmd_workload, "built-in programs to record", false },
	{ "sched", cmd_sched, "CPU, steal and run-queue wait per thread from the kernel's clocks (BPF)", false },
};

static const struct cli_command *const cli_commands[] = {
	&record_command, &report_command, &run_command, &import_command, &ledger_command,
	&bill_command, &collect_command, &analyze_command, &simulate_command,
	&workload_command, &agent_command, &top_command, &sched_command, NULL,
};

static void usage(FILE *f)
{
	fputs("usage: cpuledger COMMAND [options]\n\n"
	      "CPU time per process, thread and function, with the time the hypervisor\n"
	      "stole while a program held a CPU taken out and shown beside it.\n\n"
	      "commands:\n", f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\n'cpuledger COMMAND --help' describes a command's options;\n"
	      "'cpuledger completion bash|zsh|fish' prints a completion script;\n"
	      "'cpuledger -V' (--version) prints the version.\n", f);
}

#define NCOMMANDS (sizeof(commands) / sizeof(*commands))

static int finish_stdout(int status);

/* Each command's summary in cli_commands' order, for zsh and fish. */
static void summaries(const char **out)
{
	for (size_t i = 0; cli_commands[i]; i++) {
		out[i] = "";
		for (size_t k = 0; k < NCOMMANDS; k++)
			if (!strcmp(commands[k].name, cli_commands[i]->name))
				out[i] = commands[k].summary;
	}
}

/* completion bash|zsh|fish: 0, or EXIT_USAGE having said why not. */
static int completion(int argc, char **argv)
{
	const char *sum[NCOMMANDS + 1];
	summaries(sum);
	const char *shell = argc == 3 ? argv[2] : "";
	if (!strcmp(shell, "bash"))
		cli_completion_bash(stdout, cli_commands);
	else if (!strcmp(shell, "zsh"))
		cli_completion_zsh(stdout, cli_commands, sum);
	else if (!strcmp(shell, "fish"))
		cli_completion_fish(stdout, cli_commands, sum);
	else {
		fprintf(stderr, "cpuledger: completion: give one shell: bash, zsh or fish\n");
		return EXIT_USAGE;
	}
	return finish_stdout(0);
}

/* An unknown command: the nearest, if one is near (git's habit), else
 * the usage. */
static int unknown_command(const char *name)
{
	const char *names[NCOMMANDS + 3];
	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	names[NCOMMANDS] = "completion";
	names[NCOMMANDS + 1] = "help";
	names[NCOMMANDS + 2] = "version";
	const char *near = cli_closest(name, names, NCOMMANDS + 3);
	fprintf(stderr, "cpuledger: unknown command '%s'", name);
	if (near) {
		fprintf(stderr, "; did you mean '%s'? (see 'cpuledger --help')\n", near);
		return EXIT_USAGE;
	}
	fputs("\n", stderr);
	usage(stderr);
	return EXIT_USAGE;
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

/*
 * A recorder holds the signals that stop it or ask for a collection from
 * its first instruction, before main: one that arrives before its handlers
 * are in place then waits for them (live_install_signals) instead of
 * ending it. (Before this runs, while the program is loaded, nothing can
 * hold them; `cpuledger collect` waits until the signal is held.)
 */
__attribute__((constructor)) static void hold_signals_early(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "record") || !strcmp(argv[1], "run") ||
			  !strcmp(argv[1], "agent")))
		live_block_signals();
}

/* Blocks of 128 KiB and more are mapped on their own, and always: glibc
 * otherwise raises that threshold to the size of each mapped block freed,
 * after which the tables that grow by doubling (stacks, names, a report's
 * lines) are copied within the heap as they grow, their old copies left
 * resident. Mapped, they grow by mremap in place. A report of an 8-minute
 * recording peaked 0.3 MB (3 %) lower, its 1-minute one the same. */
#define MMAP_THRESHOLD (128 * 1024)

int main(int argc, char **argv)
{
	mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
		usage(stdout);
		return finish_stdout(0);
	}
	if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "version")) {
		printf("cpuledger %s (commit %s)\n", CPULEDGER_VERSION, CPULEDGER_COMMIT);
		return finish_stdout(0);
	}
	if (!strcmp(name, "completion"))
		return completion(argc, argv);
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++) {
		if (strcmp(commands[i].name, name))
			continue;
		/* a stop or collect signal before the handlers: held, not fatal */
		if (commands[i].records)
			live_block_signals();
		static char prog[64];
		snprintf(prog, sizeof(prog), "cpuledger %s", name);
		cli_progname = prog;
		outfile_set_say(cli_error);
		live_set_say(cli_error);
		live_set_accounts_loader(cli_load_accounts);
		if (cli_check_environment())
			return EXIT_USAGE;
		return finish_stdout(commands[i].fn(argc - 1, argv + 1));
	}
	return unknown_command(name);
}
