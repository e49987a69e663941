/*
 * cpuledger record: sample a running system, some processes, or a command,
 * into a recording file (docs/recording-format.md) for `report`.
 */
#include <getopt.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "cli.h"
#include "recorder.h"
#include "../core/banned.h"

static const char usage[] =
	"usage: cpuledger record [options] [-- COMMAND [ARGS]]\n"
	"\n"
	"Samples CPU time with perf_event_open (cpu-clock), and the scheduler's\n"
	"sched_switch and sched_stat_runtime tracepoints that measure steal\n"
	"exactly, into a recording for 'cpuledger report'.\n"
	"\n"
	RECORD_USAGE
	"  -o, --output FILE      the recording (default cpuledger.rec)\n"
	"  -h, --help             show this help\n"
	"\n"
	"With a COMMAND, recording stops when it exits, and cpuledger exits with\n"
	"its status. SIGINT or SIGTERM stops recording and keeps what it holds.\n";

static const struct option options[] = {
	RECORD_LONGOPTS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	int c, status;
	record_opts__init(&o);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+" RECORD_SHORTOPTS "h", options, NULL)) != -1) {
		int r = record_opts__parse(&o, c, optarg);
		if (r < 0)
			goto usage;
		if (r > 0)
			continue;
		if (c == 'h') {
			fputs(usage, stdout);
			record_opts__release(&o);
			return 0;
		}
		fputs(usage, stderr);
		goto usage;
	}
	if (optind < argc)
		o.command = argv + optind;
	int child;
	status = record_run(&o, &child);
	record_opts__release(&o);
	if (!status && child != -1)
		status = WIFEXITED(child) ? WEXITSTATUS(child) : 128 + WTERMSIG(child);
	return status;
usage:
	record_opts__release(&o);
	return EXIT_USAGE;
}
