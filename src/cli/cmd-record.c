/*
 * cpuledger record: sample a running system, some processes, or a command,
 * into a recording file (docs/recording-format.md) for `report`, and with
 * --ledger into the ledger as it goes.
 */
#include <stdlib.h>

#include "cli.h"
#include "live.h"
#include "../core/banned.h"

static const struct cli_option *const record_tables[] = { live_record_options, NULL };

const struct cli_command record_command = {
	"record", "[options] [-- COMMAND [ARGS]]",
	"Samples CPU time with perf_event_open (cpu-clock), and the scheduler's\n"
	"sched_switch and sched_stat_runtime tracepoints that measure steal\n"
	"exactly, into a recording for 'cpuledger report'.",
	record_tables,
	"With a COMMAND, recording stops when it exits, and cpuledger exits with\n"
	"its status (127 when it cannot be run; no recording is then written).\n"
	"SIGINT, SIGTERM, SIGHUP or SIGPIPE stops recording and keeps what it\n"
	"holds. The recording is written as FILE.part and renamed when whole;\n"
	"a second recorder into the same FILE is refused while one runs.\n",
	true,
};

int cmd_record(int argc, char **argv)
{
	struct live_opts o;
	int id, status = EXIT_USAGE;
	const char *arg;
	live_opts__init(&o);
	o.output = "cpuledger.rec";
	if (live_opts__source_env(&o))
		goto out;
	cli_begin();
	while ((id = cli_next(&record_command, argc, argv, &arg)) != CLI_END) {
		if (id == CLI_HELP) {
			cli_usage(stdout, &record_command);
			status = 0;
			goto out;
		}
		if (id == CLI_BAD || live_opts__parse(&o, id, arg) <= 0)
			goto out;
	}
	if (optind < argc)
		o.command = argv + optind;
	struct live_result res;
	status = live_run(&o, &res);
	status = live_result__status(&res, status);
	live_result__release(&res);
out:
	live_opts__release(&o);
	return status;
}
