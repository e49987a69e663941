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
#include "../format/procstat.h"
#include "../format/script_import.h"
#include "../report/report.h"
#include "../core/banned.h"

enum { I_OUTPUT = 1, I_PROC_STAT };

static const struct cli_option import_options[] = {
	{ "output", 'o', "REC", I_OUTPUT, "the recording to write (default cpuledger.rec)" },
	{ "proc-stat", 0, "START,END", I_PROC_STAT, PROC_STAT_HELP },
	{ 0 },
};

static const struct cli_option *const import_tables[] = { import_options, NULL };

const struct cli_command import_command = {
	"import", "perf-script FILE|- [-o REC] [--proc-stat START,END]",
	"Reads the text of 'perf script' (any event; with or without -g; with\n"
	"sched:sched_switch and sched:sched_stat_runtime lines, steal per\n"
	"on-CPU stint) and writes a recording for 'cpuledger report'.",
	import_tables, NULL, false,
};

/* A copy of /proc/stat is small: more is not one. */
#define PROC_STAT_MAX (1u << 20)

static char *read_proc_stat(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cli_error("--proc-stat: cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	char *text = malloc(PROC_STAT_MAX + 1);
	size_t n = 0;
	ssize_t r = 1;
	while (text && n <= PROC_STAT_MAX && r > 0) {
		r = read(fd, text + n, PROC_STAT_MAX + 1 - n);
		if (r < 0 && errno == EINTR)
			r = 1;
		else if (r > 0)
			n += (size_t)r;
	}
	int e = errno;
	close(fd);
	if (!text || r < 0 || n > PROC_STAT_MAX) {
		cli_error("--proc-stat: '%s': %s", path, !text ? strerror(ENOMEM) : r < 0 ?
			  strerror(e) : "larger than 1 MiB: not a copy of /proc/stat");
		free(text);
		return NULL;
	}
	text[n] = '\0';
	return text;
}

/* Each "cpuN" line holds the eight figures up to steal; at least one. */
static bool check_proc_stat(const char *path, char *text)
{
	uint64_t line = 0, cpus = 0;
	for (char *p = text; p; ) {
		char *nl = strchr(p, '\n');
		line++;
		if (nl)
			*nl = '\0';
		struct procstat_cpu c;
		int found = procstat_times(p, &c, 0);
		if (nl)
			*nl = '\n';
		if (found < 0) {
			fprintf(stderr, "%s:%llu: a cpuN line without the eight figures up to "
				"steal: not a copy of /proc/stat\n", path, (unsigned long long)line);
			return false;
		}
		cpus += (uint64_t)found;
		p = nl ? nl + 1 : NULL;
	}
	if (!cpus)
		fprintf(stderr, "%s:1: no cpuN line: not a copy of /proc/stat\n", path);
	return cpus > 0;
}

/* Steal never goes down within one boot: END is after START. */
static bool check_proc_stat_order(const char *start, const char *end,
				  const struct script_import_kernel *k)
{
	enum { N = 4096 };
	struct procstat_cpu *c = calloc(2 * N, sizeof(*c));
	bool ok = c != NULL;
	if (c && procstat_times(k->procstat[0], c, N) >= 0 &&
	    procstat_times(k->procstat[1], c + N, N) >= 0)
		for (uint32_t i = 0; i < N && ok; i++)
			if (c[i].seen && c[N + i].seen && c[N + i].steal < c[i].steal) {
				cli_error("--proc-stat: cpu%u's steal went down from '%s' to "
					  "'%s': not one boot, or START and END swapped", i,
					  start, end);
				ok = false;
			}
	free(c);
	return ok;
}

int cli_proc_stat_load(const char *arg, struct script_import_kernel *k)
{
	*k = (struct script_import_kernel){ 0 };
	const char *comma = strchr(arg, ',');
	if (!comma || comma == arg || !comma[1] || strchr(comma + 1, ',')) {
		cli_error("--proc-stat: '%s' is not START,END (two copies of /proc/stat)", arg);
		return EXIT_USAGE;
	}
	char *start = strndup(arg, (size_t)(comma - arg));
	const char *end = comma + 1;
	char *text[2] = { start ? read_proc_stat(start) : NULL, NULL };
	if (text[0])
		text[1] = read_proc_stat(end);
	bool ok = text[0] && text[1] && check_proc_stat(start, text[0]) &&
		  check_proc_stat(end, text[1]);
	k->procstat[0] = text[0];
	k->procstat[1] = text[1];
	ok = ok && check_proc_stat_order(start, end, k);
	free(start);
	if (!ok) {
		cli_proc_stat_free(k);
		return EXIT_USAGE;
	}
	return 0;
}

void cli_proc_stat_free(struct script_import_kernel *k)
{
	free((char *)k->procstat[0]);
	free((char *)k->procstat[1]);
	*k = (struct script_import_kernel){ 0 };
}

int cli_import_script(const char *path, int out_fd, bool quiet, bool read_once,
		      const struct script_import_kernel *k)
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
	int err = script_import(fd, out_fd, read_once, progress__update, &p, k, &st, &line, msg,
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
int cli_open_recording(const char *input, const struct script_import_kernel *k,
		       int *fd_out)
{
	if (strncmp(input, "perf-script:", 12)) {
		int fd = open(input, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			cli_error("cannot open '%s': %s", input, strerror(errno));
			return EXIT_USAGE;
		}
		*fd_out = fd;
		return 0;
	}
	/* the text imported into memory, read as the recording it makes */
	int fd = memfd_create("cpuledger-import", MFD_CLOEXEC);
	if (fd < 0) {
		cli_error("cannot import '%s': %s", input + 12, strerror(errno));
		return EXIT_RUNTIME;
	}
	int status = cli_import_script(input + 12, fd, true, true, k);
	if (!status && lseek(fd, 0, SEEK_SET) < 0)
		status = EXIT_RUNTIME;
	if (status) {
		close(fd);
		return status;
	}
	*fd_out = fd;
	return 0;
}

int cmd_import(int argc, char **argv)
{
	const char *output = "cpuledger.rec", *proc_stat = NULL;
	int id;
	const char *arg;
	cli_begin();
	while ((id = cli_next(&import_command, argc, argv, &arg)) != CLI_END) {
		if (id == CLI_HELP) {
			cli_usage(stdout, &import_command);
			return 0;
		}
		if (id == I_OUTPUT)
			output = arg;
		else if (id == I_PROC_STAT)
			proc_stat = arg;
		else
			return EXIT_USAGE;
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
	struct script_import_kernel k = { 0 };
	if (proc_stat && (status = cli_proc_stat_load(proc_stat, &k)))
		return status;
	struct outfile out;
	if (outfile__open(&out, output)) {
		cli_proc_stat_free(&k);
		return EXIT_RUNTIME;
	}
	status = cli_import_script(argv[optind + 1], out.fd, false, false,
				   proc_stat ? &k : NULL);
	cli_proc_stat_free(&k);
	if (status) {
		outfile__abort(&out);
		return status;
	}
	return outfile__commit(&out) ? EXIT_RUNTIME : 0;
}
