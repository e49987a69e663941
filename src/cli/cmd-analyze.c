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
#include "../core/attribute.h"
#include "../core/table.h"
#include "../format/sampling_csv.h"
#include "../report/report.h"
#include "../core/banned.h"

static const char usage[] =
	"usage: cpuledger analyze [options] FILE\n"
	"\n"
	"Reads sampling data (CSV: vm,vcpu,time_ns,pid,tid,function,state; FILE -\n"
	"is standard input) and reports CPU time with the hypervisor's steal taken\n"
	"out, per process, thread or function.\n"
	"\n"
	"  -m, --method METHOD    preceding|bracketed|ratio (default preceding)\n"
	"  -b, --by KEY           process|thread|function (default thread)\n"
	"  -I, --interval-ns N    sampling interval in ns (default 1000000)\n"
	"  -t, --timestamps       a sample lasts until the next of its stream\n"
	"  -f, --format FORMAT    text|csv|json (default text)\n"
	"  -o, --output FILE      write the report to FILE (default stdout)\n"
	"  -h, --help             show this help\n";

static const struct option options[] = {
	{ "method", required_argument, NULL, 'm' },
	{ "by", required_argument, NULL, 'b' },
	{ "interval-ns", required_argument, NULL, 'I' },
	{ "timestamps", no_argument, NULL, 't' },
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct analyze_opts {
	enum steal_method method;
	enum group_by by;
	uint64_t interval_ns;
	bool timestamps;
	const struct report_writer *writer;
	const char *output;
	const char *input;
};

static int parse_args(int argc, char **argv, struct analyze_opts *o)
{
	int c;
	*o = (struct analyze_opts){ METHOD_PRECEDING, BY_THREAD, 1000000, false,
				    &report_text, NULL, NULL };
	optind = 1;
	while ((c = getopt_long(argc, argv, "m:b:I:tf:o:h", options, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!cli_parse_method(optarg, &o->method))
				return -EINVAL;
			break;
		case 'b':
			if (!cli_parse_by(optarg, &o->by))
				return -EINVAL;
			if (o->by == BY_DSO || o->by == BY_ACCOUNT) {
				cli_error("--by: sampling data has no code regions: process, thread or function");
				return -EINVAL;
			}
			break;
		case 'I':
			if (!cli_parse_u64("--interval-ns", optarg, 1,
					   UINT64_MAX / 4, &o->interval_ns))
				return -EINVAL;
			break;
		case 't':
			o->timestamps = true;
			break;
		case 'f':
			if (!cli_parse_format(optarg, &o->writer))
				return -EINVAL;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			fputs(usage, stderr);
			return -EINVAL;
		}
	}
	if (argc - optind != 1) {
		cli_error(argc == optind ? "no input FILE given (- for stdin)"
					 : "only one input FILE is read");
		fputs(usage, stderr);
		return -EINVAL;
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
	int err = parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? 0 : EXIT_USAGE;

	struct attributor a;
	attributor__init(&a, o.method, o.interval_ns, o.timestamps);
	int status = read_input(&o, &a);
	if (status)
		goto out_release;
	attributor__finish(&a);

	struct table *t = table__new(&a, o.by);
	if (!t) {
		cli_error("out of memory");
		status = EXIT_RUNTIME;
		goto out_release;
	}
	struct outfile out;
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
