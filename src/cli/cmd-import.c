/*
 * cpuledger import perf-script FILE|- -o REC: the text of perf script made
 * into a recording that report, ledger add and every format read
 * (docs/import.md). The recording appears whole or not at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "cli.h"
#include "options.h"
#include "../format/script_import.h"
#include "../report/report.h"
#include "../core/banned.h"

enum { I_OUTPUT = 1 };

static const struct cli_option import_options[] = {
	{ "output", 'o', "REC", I_OUTPUT, "the recording to write (default cpuledger.rec)" },
	{ 0 },
};

static const struct cli_option *const import_tables[] = { import_options, NULL };

const struct cli_command import_command = {
	"import", "perf-script FILE|- [-o REC]",
	"Reads the text of 'perf script' (any event; with or without -g; with\n"
	"sched:sched_switch and sched:sched_stat_runtime lines, steal per\n"
	"on-CPU stint) and writes a recording for 'cpuledger report'.",
	import_tables, NULL, false,
};

int cli_import_script(const char *path, int out_fd, bool quiet)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (fd < 0) {
		cli_error("cannot open '%s': %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	struct progress p;
	progress__init(&p, "importing", fd);
	struct script_import_stats st;
	uint64_t line;
	char msg[200] = "";
	int err = script_import(fd, out_fd, progress__update, &p, &st, &line, msg,
				sizeof(msg));
	progress__done(&p);
	if (fd != STDIN_FILENO)
		close(fd);
	if (err == -EBADMSG) {
		fprintf(stderr, "%s:%llu: %s\n", path, (unsigned long long)line, msg);
		return EXIT_USAGE;
	}
	if (err) {
		cli_error("cannot import '%s': %s", path, strerror(-err));
		return EXIT_RUNTIME;
	}
	if (!st.samples && !st.switches)
		fprintf(stderr, "%s: no samples\n", path);
	if (msg[0])
		fprintf(stderr, "%s: %s\n", path, msg);
	/* the event's name is the text's: no control characters */
	char event[sizeof(st.event)];
	text_clean(event, sizeof(event), st.event[0] ? st.event : "-");
	if (st.other_samples)
		fprintf(stderr, "%s: %llu sample(s) of events other than %s counted, "
			"not imported\n", path, (unsigned long long)st.other_samples, event);
	if (st.lost_chunks)
		fprintf(stderr, "%s: perf says it lost %llu chunk(s) of samples while "
			"recording\n", path, (unsigned long long)st.lost_chunks);
	/* tracepoints there but of no use: said even when quiet */
	if (quiet && st.sched_unusable)
		fprintf(stderr, "%s: steal %s\n", path, st.steal_source);
	if (!quiet)
		fprintf(stderr, "%s: %llu %s sample(s), %llu frame(s), %llu sched_switch, "
			"%llu sched_stat_runtime; interval %llu ns (%s); steal: %s\n",
			path, (unsigned long long)st.samples, event,
			(unsigned long long)st.frames, (unsigned long long)st.switches,
			(unsigned long long)st.runtimes, (unsigned long long)st.interval_ns,
			st.interval_source, st.steal_source);
	return 0;
}

/* Here beside the import it may run, so that util.c (which every command
 * uses) does not call back into a command. */
int cli_open_recording(const char *input)
{
	if (strncmp(input, "perf-script:", 12)) {
		int fd = open(input, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			cli_error("cannot open '%s': %s", input, strerror(errno));
			return -EXIT_USAGE;
		}
		return fd;
	}
	/* the text imported into memory, read as the recording it makes */
	int fd = memfd_create("cpuledger-import", MFD_CLOEXEC);
	if (fd < 0) {
		cli_error("cannot import '%s': %s", input + 12, strerror(errno));
		return -EXIT_RUNTIME;
	}
	int status = cli_import_script(input + 12, fd, true);
	if (!status && lseek(fd, 0, SEEK_SET) < 0)
		status = EXIT_RUNTIME;
	if (status) {
		close(fd);
		return -status;
	}
	return fd;
}

int cmd_import(int argc, char **argv)
{
	const char *output = "cpuledger.rec";
	int id;
	const char *arg;
	cli_begin();
	while ((id = cli_next(&import_command, argc, argv, &arg)) != CLI_END) {
		if (id == CLI_HELP) {
			cli_usage(stdout, &import_command);
			return 0;
		}
		if (id != I_OUTPUT)
			return EXIT_USAGE;
		output = arg;
	}
	if (argc - optind != 2 || strcmp(argv[optind], "perf-script")) {
		cli_error("expected 'perf-script FILE' (or '-' for standard input)");
		return EXIT_USAGE;
	}
	if (!strcmp(output, "-")) {
		cli_error("-o: a recording is binary; name a file");
		return EXIT_USAGE;
	}
	int status = outfile__not_input(output, argv[optind + 1], "the input");
	if (status)
		return status;
	struct outfile out;
	if (outfile__open(&out, output))
		return EXIT_RUNTIME;
	status = cli_import_script(argv[optind + 1], out.fd, false);
	if (status) {
		outfile__abort(&out);
		return status;
	}
	return outfile__commit(&out) ? EXIT_RUNTIME : 0;
}
