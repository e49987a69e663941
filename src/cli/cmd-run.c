/*
 * cpuledger run: record a command and print, like time -v, how it ended,
 * its elapsed, user and sys time and maximum RSS (the kernel's, from
 * wait4), then cpuledger's own figures each once (cpu, the corrected
 * time; steal; apparent) and its busiest threads. The figures come from
 * the engine as it recorded: nothing is read back.
 */
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "live.h"
#include "../report/report.h"
#include "../core/units.h"
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
	"Runs COMMAND while recording, then prints on standard error, as time -v\n"
	"does, how it ended, its elapsed, user and sys time and maximum RSS; then\n"
	"the CPU time it really ran (the corrected time), the steal the hypervisor\n"
	"took while it held a CPU, the apparent time (cpu + steal), and its busiest\n"
	"threads. Exits with the command's status (128 + N when signal N killed it).",
	run_tables, NULL, true,
};

static double s_(uint64_t ns)
{
	return (double)ns / NSEC_PER_SEC;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* How the command ended, as the shell would say it. */
static void print_end(int status)
{
	if (WIFEXITED(status)) {
		fprintf(stderr, "  exited with %d\n", WEXITSTATUS(status));
	} else if (WIFSIGNALED(status)) {
		const char *name = sigabbrev_np(WTERMSIG(status));
		if (name)
			fprintf(stderr, "  killed by SIG%s", name);
		else
			fprintf(stderr, "  killed by signal %d", WTERMSIG(status));
		fputs(WCOREDUMP(status) ? " (core dumped)\n" : "\n", stderr);
	}
}

/* The command line as typed, at most 200 columns, cut in its middle. */
static void print_command(char **command)
{
	char *q = shell_quote((const char *const *)command);
	fputs("\ncpuledger run: ", stderr);
	text_put_middle(stderr, q ? q : command[0], 200, 0);
	putc('\n', stderr);
	free(q);
}

/* time(1)'s figures, from the kernel's accounting of the command (wait4). */
static void print_rusage(const struct rusage *ru)
{
	fprintf(stderr, "  user       %10.3f s   in its own code (the kernel's count)\n",
		tv_s(ru->ru_utime));
	fprintf(stderr, "  sys        %10.3f s   in the kernel on its behalf\n",
		tv_s(ru->ru_stime));
	fprintf(stderr, "  max RSS    %10.1f MiB largest resident memory of it or a child\n",
		(double)ru->ru_maxrss / 1024);
}

static void print_threads(const struct table *t, bool known)
{
	if (!t->nrows)
		return;
	fprintf(stderr, "  busiest threads:\n  %8s %8s %10s %10s %10s  %s\n", "PID", "TID",
		"CPU_S", "STEAL_S", "APPARENT_S", "COMMAND");
	for (size_t i = 0; i < t->nrows && i < 5; i++) {
		const struct table_row *w = table__row(t, i);
		char st[32] = "unknown", ap[32] = "unknown";
		if (known) {
			snprintf(st, sizeof(st), "%.3f", s_(w->steal_ns));
			snprintf(ap, sizeof(ap), "%.3f", s_(w->apparent_ns));
		}
		fprintf(stderr, "  %8u %8u %10.3f %10s %10s  ", w->pid, w->tid,
			s_(w->cpu_ns), st, ap);
		text_put_middle(stderr, w->command ? w->command : "", 60, 0);
		putc('\n', stderr);
	}
}

/* Each figure once: cpu is the corrected time, apparent adds the steal. */
static void print_summary(const struct analysis *a, char **command,
			  const struct live_result *res)
{
	const struct table *t = a->table;
	uint64_t cpu = t->totals.run_ns, steal = t->totals.steal_ns;
	bool known = a->x.steal_known;
	print_command(command);
	if (res->child_status != -1)
		print_end(res->child_status);
	fprintf(stderr, "  elapsed    %10.3f s\n", s_(a->x.duration_ns));
	if (res->child_status != -1)
		print_rusage(&res->child_usage);
	fprintf(stderr, "  cpu        %10.3f s   what it really ran, steal taken out "
		"(the corrected time)\n", s_(cpu));
	if (known) {
		fprintf(stderr, "  steal      %10.3f s   taken by the hypervisor while it held a "
			"CPU (%.2f %% of apparent)\n", s_(steal),
			cpu + steal ? 100.0 * (double)steal / (double)(cpu + steal) : 0);
		fprintf(stderr, "  apparent   %10.3f s   cpu + steal: what a profiler would "
			"charge\n", s_(cpu + steal));
	} else {
		fprintf(stderr, "  steal         unknown   not measured (%s)\n",
			a->x.steal_source);
		fprintf(stderr, "  apparent      unknown\n");
	}
	const struct report_extras *x = &a->x;
	bool how = x->steal_method && *x->steal_method;
	bool acct = how && x->kernel_accounting && *x->kernel_accounting;
	fprintf(stderr, "  steal source: %s%s%s%s%s%s%s%s; %llu records lost\n", x->steal_source,
		how ? ", " : "", how ? (!strcmp(x->steal_method, "kernel-clock") ?
					"read from the kernel's clocks" :
					strcmp(x->steal_method, "residual") ?
					"sample gaps" : "the residual of each stint") : "",
		acct ? " (" : "", acct ? x->kernel_accounting : "", acct ? ": " : "",
		acct ? steal_accounting__describe_name(x->kernel_accounting) : "",
		acct ? ")" : "", (unsigned long long)x->lost);
	print_threads(t, known);
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
	if (live_opts__source_env(&o))
		goto out;
	cli_begin();
	while ((id = cli_next(&run_command, argc, argv, &arg)) != CLI_END) {
		if (id == CLI_HELP) {
			cli_usage(stdout, &run_command);
			status = 0;
			goto out;
		}
		if (id == R_METHOD) {
			if (cli_parse_method(arg, &o.a.method))
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
		print_summary(&res.a, o.command, &res);
	status = live_result__status(&res, status);
	live_result__release(&res);
out:
	live_opts__release(&o);
	return status;
}
