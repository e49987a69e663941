/*
 * cpuledger run: record a command and print, like time(1), its elapsed,
 * cpu, steal, apparent and corrected time, and its busiest threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "live_table.h"
#include "recorder.h"
#include "../format/live_load.h"
#include "../core/banned.h"

static const char usage[] =
	"usage: cpuledger run [options] -- COMMAND [ARGS]\n"
	"\n"
	"Runs COMMAND while recording, then prints on standard error its elapsed\n"
	"time, the CPU time it really ran, the steal the hypervisor took while it\n"
	"held a CPU, the apparent (cpu + steal) and corrected time, and its busiest\n"
	"threads. Exits with the command's status.\n"
	"\n"
	RECORD_USAGE
	"  -o, --output FILE      keep the recording in FILE (default: not kept)\n"
	"  -m, --method METHOD    preceding|bracketed|ratio (default preceding)\n"
	"  -h, --help             show this help\n";

static const struct option options[] = {
	RECORD_LONGOPTS,
	{ "method", required_argument, NULL, 'm' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static double s_(uint64_t ns)
{
	return (double)ns / 1e9;
}

static void print_summary(const struct loaded_recording *r, const struct table *t,
			  char **command)
{
	uint64_t cpu = 0, steal = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		cpu += t->rows[i].cpu_ns;
		steal += t->rows[i].steal_ns;
	}
	uint64_t elapsed = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
	bool known = r->steal_known;
	fprintf(stderr, "\ncpuledger run:");
	for (char **a = command; *a; a++)
		fprintf(stderr, " %s", *a);
	fprintf(stderr, "\n  elapsed    %10.3f s\n", s_(elapsed));
	fprintf(stderr, "  cpu        %10.3f s   what it really ran\n", s_(cpu));
	if (known) {
		fprintf(stderr, "  steal      %10.3f s   taken by the hypervisor while it held a CPU (%.2f %%)\n",
			s_(steal), cpu + steal ? 100.0 * (double)steal / (double)(cpu + steal) : 0);
		fprintf(stderr, "  apparent   %10.3f s   what a profiler would charge\n", s_(cpu + steal));
		fprintf(stderr, "  corrected  %10.3f s\n", s_(cpu));
	} else {
		fprintf(stderr, "  steal      unknown\n");
	}
	fprintf(stderr, "  steal source: %s; %llu records lost\n", r->steal_source,
		(unsigned long long)r->lost);
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
		fprintf(stderr, "  %8u %8u %10.3f %10s %10s  %.60s\n", w->pid, w->tid,
			s_(w->cpu_ns), st, ap, w->command ? w->command : "");
	}
}

int cmd_run(int argc, char **argv)
{
	struct record_opts o;
	enum steal_method method = METHOD_PRECEDING;
	char tmp[] = "/tmp/cpuledger-run-XXXXXX";
	bool keep = false;
	int c, status = EXIT_USAGE;
	record_opts__init(&o);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+" RECORD_SHORTOPTS "m:h", options, NULL)) != -1) {
		int r = record_opts__parse(&o, c, optarg);
		if (r < 0)
			goto out;
		if (r > 0) {
			keep |= c == 'o';
			continue;
		}
		if (c == 'm') {
			if (!cli_parse_method(optarg, &method))
				goto out;
		} else if (c == 'h') {
			fputs(usage, stdout);
			status = 0;
			goto out;
		} else {
			fputs(usage, stderr);
			goto out;
		}
	}
	if (optind >= argc) {
		cli_error("no command given: cpuledger run [options] -- COMMAND");
		goto out;
	}
	o.command = argv + optind;
	if (!keep) {
		int fd = mkstemp(tmp);
		if (fd < 0) {
			cli_error("cannot create a temporary recording: %s", strerror(errno));
			status = EXIT_RUNTIME;
			goto out;
		}
		close(fd);
		o.output = tmp;
	}
	o.quiet = true;
	int child;
	status = record_run(&o, &child);
	if (status)
		goto out_unlink;

	struct loaded_recording r;
	int err = record_load(&o, method, &r);
	if (err) {
		status = err;
	} else {
		struct program *kept = NULL;
		static const char *const control[] = { "kernel" };
		struct table *t = live_table(&r, BY_THREAD, control, 1, &kept);
		if (t)
			print_summary(&r, t, o.command);
		table__free(t);
		free(kept);
		status = WIFEXITED(child) ? WEXITSTATUS(child) : 128 + WTERMSIG(child);
	}
	loaded_recording__release(&r);
out_unlink:
	if (!keep)
		unlink(tmp);
out:
	record_opts__release(&o);
	return status;
}
