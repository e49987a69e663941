/*
 * cpuledger run: record a command and print, like time(1), its elapsed,
 * cpu, steal, apparent and corrected time, and its busiest threads. The
 * figures come from the engine as it recorded: nothing is read back.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "live.h"
#include "../core/banned.h"

enum { R_METHOD = 100 };

static const struct cli_option run_options[] = {
	{ "method", 0, "METHOD", R_METHOD, "preceding|bracketed|ratio (default preceding)",
	  "preceding bracketed ratio" },
	{ 0 },
};

static const struct cli_option *const run_tables[] = { live_record_options, run_options,
						       NULL };

const struct cli_command run_command = {
	"run", "[options] -- COMMAND [ARGS]",
	"Runs COMMAND while recording, then prints on standard error its elapsed\n"
	"time, the CPU time it really ran, the steal the hypervisor took while it\n"
	"held a CPU, the apparent (cpu + steal) and corrected time, and its busiest\n"
	"threads. Exits with the command's status.",
	run_tables, NULL, true,
};

static double s_(uint64_t ns)
{
	return (double)ns / 1e9;
}

static void print_summary(const struct analysis *a, char **command)
{
	const struct table *t = a->table;
	uint64_t cpu = t->totals.run_ns, steal = t->totals.steal_ns;
	bool known = a->x.steal_known;
	fprintf(stderr, "\ncpuledger run:");
	for (char **c = command; *c; c++)
		fprintf(stderr, " %s", *c);
	fprintf(stderr, "\n  elapsed    %10.3f s\n", s_(a->x.duration_ns));
	fprintf(stderr, "  cpu        %10.3f s   what it really ran\n", s_(cpu));
	if (known) {
		fprintf(stderr, "  steal      %10.3f s   taken by the hypervisor while it held a CPU (%.2f %%)\n",
			s_(steal), cpu + steal ? 100.0 * (double)steal / (double)(cpu + steal) : 0);
		fprintf(stderr, "  apparent   %10.3f s   what a profiler would charge\n", s_(cpu + steal));
		fprintf(stderr, "  corrected  %10.3f s\n", s_(cpu));
	} else {
		fprintf(stderr, "  steal      unknown\n");
	}
	fprintf(stderr, "  steal source: %s; %llu records lost\n", a->x.steal_source,
		(unsigned long long)a->x.lost);
	if (!t->nrows)
		return;
	fprintf(stderr, "  busiest threads:\n  %8s %8s %10s %10s %10s  %s\n", "PID", "TID",
		"CPU_S", "STEAL_S", "APPARENT_S", "COMMAND");
	for (size_t i = 0; i < t->nrows && i < 5; i++) {
		const struct table_row *w = &t->rows[i];
		char st[32] = "unknown", ap[32] = "unknown";
		if (known) {
			snprintf(st, sizeof(st), "%.3f", s_(w->steal_ns));
			snprintf(ap, sizeof(ap), "%.3f", s_(w->apparent_ns));
		}
		fprintf(stderr, "  %8u %8u %10.3f %10s %10s  ", w->pid, w->tid,
			s_(w->cpu_ns), st, ap);
		text_put(stderr, w->command ? w->command : "", 60, 0);
		putc('\n', stderr);
	}
}

int cmd_run(int argc, char **argv)
{
	struct live_opts o;
	int id, status = EXIT_USAGE;
	const char *arg;
	live_opts__init(&o);
	static const char *const control[] = { "kernel" };
	size_t bad;
	row_keys__parse(&o.a.keys, "thread", &bad);
	o.a.control = control;
	o.a.ncontrol = 1;
	cli_begin();
	while ((id = cli_next(&run_command, argc, argv, &arg)) != CLI_END) {
		if (id == CLI_HELP) {
			cli_usage(stdout, &run_command);
			status = 0;
			goto out;
		}
		if (id == R_METHOD) {
			if (!cli_parse_method(arg, &o.a.method))
				goto out;
			continue;
		}
		if (id == CLI_BAD || live_opts__parse(&o, id, arg) <= 0)
			goto out;
	}
	if (optind >= argc) {
		cli_error("no command given: cpuledger run [options] -- COMMAND");
		goto out;
	}
	o.command = argv + optind;
	o.quiet = true;
	o.analyse = true;
	struct live_result res;
	status = live_run(&o, &res);
	if (!status && res.analysed)
		print_summary(&res.a, o.command);
	if (!status && res.child_status != -1)
		status = WIFEXITED(res.child_status) ? WEXITSTATUS(res.child_status) :
			 128 + WTERMSIG(res.child_status);
	live_result__release(&res);
out:
	live_opts__release(&o);
	return status;
}
