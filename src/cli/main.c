/*
 * cpuledger: the command table. Each subcommand lives in its own
 * cmd-NAME.c and is listed here once, with its option table (options.h),
 * from which its help and the shell completion are made.
 */
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
	      "'cpuledger completion bash' prints a bash completion script.\n", f);
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

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
		usage(stdout);
		return finish_stdout(0);
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("cpuledger %s (commit %s)\n", CPULEDGER_VERSION, CPULEDGER_COMMIT);
		return finish_stdout(0);
	}
	if (!strcmp(name, "completion") && argc == 3 && !strcmp(argv[2], "bash")) {
		cli_completion_bash(stdout, cli_commands);
		return finish_stdout(0);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++) {
		if (strcmp(commands[i].name, name))
			continue;
		/* a stop or collect signal before the handlers: held, not fatal */
		if (commands[i].records)
			live_block_signals();
		static char prog[64];
		snprintf(prog, sizeof(prog), "cpuledger %s", name);
		cli_progname = prog;
		if (cli_check_environment())
			return EXIT_USAGE;
		return finish_stdout(commands[i].fn(argc - 1, argv + 1));
	}
	fprintf(stderr, "cpuledger: unknown command '%s'\n", name);
	usage(stderr);
	return EXIT_USAGE;
}
