/*
 * cpuledger analyze: steal-corrected execution time from sampling data
 * recorded elsewhere (docs/sampling-data.md), by seed 001's methods.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "../core/attribute.h"
#include "../core/table.h"
#include "../format/sampling_csv.h"
#include "../report/report.h"
#include "../core/banned.h"

enum { A_METHOD = 1, A_BY, A_PERIOD, A_TIMESTAMPS, A_FORMAT, A_OUTPUT };

/* --by's help and completion: sampling data's keys in the one table
 * (core/keys.c). */
static const char *by_help(void)
{
	static char help[640];
	snprintf(help, sizeof(help), "%s (default thread)", cli_keys(KEY_ANALYZE, "|", 0, 0));
	return help;
}

static const char *by_values(void)
{
	return cli_keys(KEY_ANALYZE, " ", 0, 0);
}

static const struct cli_option analyze_options[] = {
	{ "method", 0, "METHOD", A_METHOD, "preceding|bracketed|ratio (default preceding)",
	  "preceding bracketed ratio" },
	{ "by", 0, "KEY", A_BY, .help_fn = by_help, .values_fn = by_values },
	{ "period-ns", 0, "N", A_PERIOD, "the sampling period in ns: what one sample stands\n"
	  "for (default 1000000)" },
	{ "timestamps", 0, NULL, A_TIMESTAMPS, "a sample lasts until the next of its stream" },
	{ "format", 0, "FORMAT", A_FORMAT, "text|csv|json (default text)", "text csv json" },
	{ "output", 'o', "FILE", A_OUTPUT, "write the report to FILE (default standard output)" },
	{ 0 },
};

static const struct cli_option *const analyze_tables[] = { analyze_options, NULL };

const struct cli_command analyze_command = {
	"analyze", "[options] FILE",
	"Reads sampling data (CSV: vm,vcpu,time_ns,pid,tid,function,state; FILE -\n"
	"is standard input) and reports CPU time with the hypervisor's steal taken\n"
	"out, per process, thread or function (--method: how steal samples are\n"
	"charged to the programs around them).",
	analyze_tables, NULL, false,
};

struct analyze_opts {
	enum steal_method method;
	enum row_field by;	/* process, thread or function */
	uint64_t interval_ns;
	bool timestamps;
	const struct report_writer *writer;
	const char *output;
	const char *input;
	bool help;	/* --help printed: nothing more to do */
};

static int set_by(struct analyze_opts *o, const char *arg)
{
	bool known;
	if (!key_entry__find(arg, strlen(arg), KEY_ANALYZE, &o->by, &known))
		return 0;
	const char *keys = cli_keys(KEY_ANALYZE, ", ", 0, 0);
	if (known && (key_entry(o->by)->needs & KEY_NEEDS_CODE))
		cli_error("--by: sampling data has no code regions: %s", keys);
	else
		cli_error("--by: unknown key '%s' (%s)", arg, keys);
	return EXIT_USAGE;
}

static int one_option(struct analyze_opts *o, int id, const char *arg)
{
	switch (id) {
	case A_METHOD: return cli_parse_method(arg, &o->method);
	case A_BY: return set_by(o, arg);
	case A_PERIOD:
		return cli_parse_u64("--period-ns", arg, 1, UINT64_MAX / 4, &o->interval_ns);
	case A_TIMESTAMPS: o->timestamps = true; return 0;
	case A_FORMAT:
		if (cli_parse_format(arg, &o->writer))
			return EXIT_USAGE;
		if (!(o->writer->needs & REPORT_SAMPLING)) {
			cli_error("--format: sampling data is reported as text, csv or json, not %s",
				  arg);
			return EXIT_USAGE;
		}
		return 0;
	case A_OUTPUT: o->output = arg; return 0;
	}
	return EXIT_USAGE;
}

/* 0 (o->help when --help printed), or EXIT_USAGE having said why. */
static int parse_args(int argc, char **argv, struct analyze_opts *o)
{
	int id, status;
	const char *arg;
	*o = (struct analyze_opts){ METHOD_PRECEDING, RF_THREAD, 1000000, false,
				    &report_text, NULL, NULL, false };
	cli_begin();
	while ((id = cli_next(&analyze_command, argc, argv, &arg)) != CLI_END) {
		if (id == CLI_HELP) {
			cli_usage(stdout, &analyze_command);
			o->help = true;
			return 0;
		}
		/* CLI_BAD: cli_next said what is wrong */
		if ((status = id == CLI_BAD ? EXIT_USAGE : one_option(o, id, arg)))
			return status;
	}
	if (argc - optind != 1) {
		cli_error(argc == optind ? "no input FILE given (- for standard input)"
					 : "only one input FILE is read");
		return EXIT_USAGE;
	}
	o->input = argv[optind];
	return 0;
}

/* Reads the whole input into a. Returns 0 or an exit status. */
static int read_input(const struct analyze_opts *o, struct attributor *a)
{
	bool is_stdin = strcmp(o->input, "-") == 0;
	const char *name = is_stdin ? "<stdin>" : o->input;
	int fd = is_stdin ? STDIN_FILENO : open(o->input, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cli_error("cannot open '%s': %s", o->input, strerror(errno));
		return errno == ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	struct sampling_reader *r = sampling_reader__new(a);
	if (!r) {
		cli_error("out of memory");
		if (!is_stdin)
			close(fd);
		return EXIT_RUNTIME;
	}
	struct progress p;
	progress__init(&p, "reading", fd);
	int err = sampling_csv__read_fd(r, fd, progress__update, &p);
	progress__done(&p);
	int status = 0;
	if (err == -EINVAL) {
		const struct input_error *e = sampling_reader__error(r);
		fprintf(stderr, "%s:%llu: %s\n", name,
			(unsigned long long)e->line, e->msg);
		status = EXIT_USAGE;
	} else if (err) {
		cli_error("cannot read '%s': %s", name, strerror(-err));
		status = EXIT_RUNTIME;
	}
	sampling_reader__free(r);
	if (!is_stdin)
		close(fd);
	return status;
}

int cmd_analyze(int argc, char **argv)
{
	struct analyze_opts o;
	int status = parse_args(argc, argv, &o);
	if (status || o.help)
		return status;

	struct attributor a;
	attributor__init(&a, o.method, o.interval_ns, o.timestamps);
	status = read_input(&o, &a);
	if (status)
		goto out_release;
	attributor__finish(&a);

	/* sampling data's rows: each VM's processes, threads, functions
	 * (a function's within its thread, the program it is charged in) */
	struct row_keys keys = { .n = 0 };
	row_keys__add(&keys, RF_VM);
	if (o.by == RF_FUNCTION)
		row_keys__add(&keys, RF_THREAD);
	row_keys__add(&keys, o.by);
	struct table *t = table__new(&a, &keys);
	if (t)
		snprintf(t->by, sizeof(t->by), "%s", key_entry(o.by)->name);
	if (!t) {
		cli_error("out of memory");
		status = EXIT_RUNTIME;
		goto out_release;
	}
	struct outfile out;
	if ((status = outfile__not_input(o.output, o.input, "the input")))
		goto out_free_table;
	if (outfile__open(&out, o.output)) {
		status = EXIT_RUNTIME;
		goto out_free_table;
	}
	o.writer->write(out.f, t, NULL);
	if (outfile__commit(&out))
		status = EXIT_RUNTIME;
out_free_table:
	table__free(t);
out_release:
	attributor__release(&a);
	return status;
}
