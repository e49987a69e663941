/*
 * cpuledger report: the rows and totals of a recording, as analyze gives
 * them for sampling data, with per CPU the attributed steal beside the
 * kernel's, the records lost, the steal source and the command lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include "live_table.h"
#include "../core/accounts.h"
#include "../core/stint.h"
#include "../core/table.h"
#include "../format/fold.h"
#include "../format/perf_script.h"
#include "../format/live_load.h"
#include "../report/report.h"
#include "../core/banned.h"

static const char usage[] =
	"usage: cpuledger report [options]\n"
	"\n"
	"Reports a recording of 'cpuledger record': CPU time and the steal\n"
	"measured per on-CPU stint, per process, thread or function.\n"
	"\n"
	"  -i, --input FILE       the recording (default cpuledger.rec), or\n"
	"                         perf-script:FILE, the text of perf script\n"
	"                         ('-' for standard input; docs/import.md)\n"
	"  -m, --method METHOD    how steal is placed among functions:\n"
	"                         preceding|bracketed|ratio (default preceding)\n"
	"  -b, --by KEY           process|thread|function|dso|account (default thread)\n"
	"  -A, --accounts FILE    charge accounts by these rules (docs/accounts.md)\n"
	"                         instead of those recorded, or the defaults\n"
	"  -c, --control LIST     accounts that count as control program\n"
	"                         (comma-separated; default kernel)\n"
	"  -f, --format FORMAT    text|csv|json|openmetrics|pprof|folded\n"
	"                         (default text); folded of perf-script:FILE\n"
	"                         as the reference collapser folds it\n"
	"      --folded OPTS      pid,tid,kernel,jit,all,addrs: as the reference\n"
	"                         collapser's options of those names\n"
	"  -o, --output FILE      write the report to FILE (default stdout)\n"
	"      --salvage          report a damaged or cut-short recording up to\n"
	"                         the damage (said on standard error)\n"
	"  -h, --help             show this help\n";

static const struct option options[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "method", required_argument, NULL, 'm' },
	{ "by", required_argument, NULL, 'b' },
	{ "accounts", required_argument, NULL, 'A' },
	{ "control", required_argument, NULL, 'c' },
	{ "format", required_argument, NULL, 'f' },
	{ "folded", required_argument, NULL, 'F' },
	{ "output", required_argument, NULL, 'o' },
	{ "salvage", no_argument, NULL, 'S' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct report_opts {
	const char *input, *output;
	enum steal_method method;
	enum group_by by;
	const struct report_writer *writer;
	const char *accounts;
	const char *folded;	/* --folded options */
	bool folded_format;	/* --format folded */
	bool salvage;
	const char *control[16];
	size_t ncontrol;
	char control_buf[512];
};

/* Splits a comma-separated --control list into o->control. */
static bool parse_control(struct report_opts *o, const char *arg)
{
	snprintf(o->control_buf, sizeof(o->control_buf), "%s", arg);
	o->ncontrol = 0;
	char *save = NULL;
	for (char *t = strtok_r(o->control_buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (o->ncontrol == 16) {
			cli_error("--control: at most 16 accounts");
			return false;
		}
		o->control[o->ncontrol++] = t;
	}
	if (!o->ncontrol) {
		cli_error("--control: '%s' names no account", arg);
		return false;
	}
	return true;
}

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	int c;
	bool by_given = false;
	*o = (struct report_opts){ .input = "cpuledger.rec", .method = METHOD_PRECEDING,
				   .by = BY_THREAD, .writer = &report_text,
				   .control = { "kernel" }, .ncontrol = 1 };
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:m:b:A:c:f:F:o:h", options, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->input = optarg;
			break;
		case 'm':
			if (!cli_parse_method(optarg, &o->method))
				return -EINVAL;
			break;
		case 'b':
			if (!cli_parse_by(optarg, &o->by))
				return -EINVAL;
			by_given = true;
			break;
		case 'f':
			if (!strcmp(optarg, "folded")) {
				o->folded_format = true;
				break;
			}
			if (!cli_parse_format(optarg, &o->writer))
				return -EINVAL;
			break;
		case 'F':
			o->folded = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'S':
			o->salvage = true;
			break;
		case 'A':
			o->accounts = optarg;
			break;
		case 'c':
			if (!parse_control(o, optarg))
				return -EINVAL;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			fputs(usage, stderr);
			return -EINVAL;
		}
	}
	/* counters are per process and account unless asked otherwise */
	if (o->writer == &report_openmetrics && !by_given)
		o->by = BY_ACCOUNT;
	/* a profile's samples are at functions */
	if (o->writer == &report_pprof) {
		if (by_given && o->by != BY_FUNCTION) {
			cli_error("--format pprof: a profile is by function, not --by %s",
				  group_by__name(o->by));
			return -EINVAL;
		}
		o->by = BY_FUNCTION;
	}
	if (optind != argc) {
		cli_error("unexpected argument '%s' (the recording is given with -i)",
			  argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static int feed_folder(void *ctx, const char *buf, size_t n)
{
	return folder__feed(ctx, buf, n);
}

/* report -i perf-script:FILE --format folded: perf script text folded
 * for the flame-graph tools (docs/folded.md). */
static int fold_perf_script(const char *path, const char *list, const char *output)
{
	struct fold_options fo = { 0 };
	if (list && fold_options__parse(&fo, list)) {
		cli_error("--folded: '%s' is not a list of pid, tid, kernel, jit, all, addrs", list);
		return EXIT_USAGE;
	}
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (fd < 0) {
		cli_error("cannot open '%s': %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	struct folder *f = folder__new(&fo);
	int err = f ? 0 : -ENOMEM, status = 0;
	struct progress p;
	progress__init(&p, "folding", fd);
	if (!err)
		err = read_chunks(fd, feed_folder, f, progress__update, &p);
	progress__done(&p);
	if (fd != STDIN_FILENO)
		close(fd);
	if (!err)
		err = folder__finish(f);
	if (err == -EBADMSG) {
		fprintf(stderr, "%s:%llu: not a perf script line: no sample header, "
			"frame, comment or known perf noise\n", path,
			(unsigned long long)folder__lineno(f));
		status = EXIT_USAGE;
	} else if (err) {
		cli_error("cannot read '%s': %s", path, strerror(-err));
		status = EXIT_RUNTIME;
	} else {
		struct outfile out;
		if (outfile__open(&out, output) || folder__write(f, out.f) ||
		    outfile__commit(&out))
			status = EXIT_RUNTIME;
		uint64_t unended, lost;
		folder__losses(f, &unended, &lost);
		if (unended)
			fprintf(stderr, "%s: %llu sample(s) not ended by a blank line, "
				"not folded\n", path, (unsigned long long)unended);
		if (lost)
			fprintf(stderr, "%s: perf says it lost %llu chunk(s) of samples "
				"while recording\n", path, (unsigned long long)lost);
	}
	folder__free(f);
	return status;
}

/* perf script text imported into an anonymous recording: its fd, -1 with
 * errno, or minus an exit status (the message printed). */
static int open_imported(const char *path)
{
	int fd = memfd_create("cpuledger-import", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	int status = cli_import_script(path, fd, true);
	if (!status && lseek(fd, 0, SEEK_SET) < 0)
		status = EXIT_RUNTIME;
	if (status) {
		close(fd);
		return -status;
	}
	return fd;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o;
	int err = parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? 0 : EXIT_USAGE;
	bool script = !strncmp(o.input, "perf-script:", 12);
	if (script && o.folded_format)
		return fold_perf_script(o.input + 12, o.folded, o.output);
	if (o.folded_format)	/* a recording's own stacks */
		o.writer = &report_folded;

	struct account_rules rules = { 0 };
	if (o.accounts) {
		int st = cli_load_accounts(o.accounts, &rules, NULL);
		if (st)
			return st;
	}
	int fd = script ? open_imported(o.input + 12) :
		 open(o.input, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (fd == -1)
			cli_error("cannot open '%s': %s", o.input, strerror(errno));
		account_rules__release(&rules);
		return fd == -1 ? EXIT_USAGE : -fd;
	}
	struct loaded_recording r;
	struct rec_error e;
	int status = 0;
	err = recording__load_with(fd, o.method, o.accounts ? &rules : NULL,
				   (o.writer == &report_pprof || o.writer == &report_folded ?
				    LOAD_STACKS : 0) |
				   (o.salvage ? LOAD_SALVAGE : 0), &r, &e);
	close(fd);
	if (err == -EINVAL) {
		fprintf(stderr, "%s: offset %llu: %s%s\n", o.input,
			(unsigned long long)e.offset, e.msg, o.salvage ? "" :
			" (--salvage reports what comes before it)");
		status = EXIT_USAGE;
		goto out;
	}
	if (err) {
		cli_error("cannot read '%s': %s", o.input, strerror(-err));
		status = EXIT_RUNTIME;
		goto out;
	}
	if (r.damaged)
		fprintf(stderr, "%s: offset %llu: %s; reported up to there (--salvage)\n",
			o.input, (unsigned long long)r.damage.offset, r.damage.msg);

	struct program *kept = NULL;
	struct table *t = live_table(&r, o.by, o.control, o.ncontrol, &kept);
	struct report_cpu *cpus = calloc(r.ncpus ? r.ncpus : 1, sizeof(*cpus));
	if (!t || !cpus) {
		cli_error("out of memory");
		status = EXIT_RUNTIME;
		goto out_free;
	}
	uint32_t n = 0;
	for (uint32_t c = 0; c < r.ncpus; c++) {
		if (!r.cpus[c].present)
			continue;
		cpus[n++] = (struct report_cpu){
			.cpu = c, .steal_ns = r.live.cpus[c].steal_ns,
			.kernel_known = r.cpus[c].kernel_known,
			.kernel_steal_ns = r.cpus[c].kernel_steal_ns,
			.lost = r.cpus[c].lost,
		};
	}
	struct report_extras x = {
		.host = r.host, .steal_source = r.steal_source, .scope = r.scope,
		.steal_known = r.steal_known,
		.duration_ns = r.end_ns > r.start_ns ? r.end_ns - r.start_ns : 0,
		.bias_ns = r.live.bias_ns, .lost = r.lost,
		.lossy_stints = r.live.lossy_stints,
		.bad_records = r.bad_records, .cpus = cpus, .ncpus = n,
		.clock_samples = r.samples,
		.stacks = r.has_stacks ? &r.stacks : NULL,
	};
	struct outfile out;
	if (outfile__open(&out, o.output)) {
		status = EXIT_RUNTIME;
		goto out_free;
	}
	err = o.writer->write(out.f, t, &x);
	if (err) {
		cli_error("cannot write the report: %s", strerror(-err));
		outfile__abort(&out);
		status = EXIT_RUNTIME;
	} else if (outfile__commit(&out)) {
		status = EXIT_RUNTIME;
	}
out_free:
	free(cpus);
	table__free(t);
	free(kept);
out:
	loaded_recording__release(&r);
	account_rules__release(&rules);
	return status;
}
