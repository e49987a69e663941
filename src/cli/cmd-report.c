/*
 * cpuledger report: the rows and totals of a recording, keyed as perf's
 * --sort keys compose (--by), with per CPU the attributed steal beside the
 * kernel's, the records lost, the steal source and the command lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "../analysis/pipeline.h"
#include "../core/accounts.h"
#include "../format/fold.h"
#include "../format/perf_script.h"
#include "../format/lines_ahead.h"
#include "../format/script_import.h"
#include "../output/scratch.h"
#include "../report/report.h"
#include "../core/banned.h"

enum { O_INPUT = 1, O_OUTPUT, O_BY, O_METHOD, O_ACCOUNTS, O_CONTROL, O_FORMAT,
       O_FOLDED, O_SALVAGE, O_SORT, O_COMM, O_PID, O_TID, O_DSO, O_PERCENT, O_TOP,
       O_WIDE, O_NO_DEMANGLE, O_KERNEL_ACCOUNTING, O_PROC_STAT };

/* --by's help and completion: the keys of the one table (core/keys.c). */
static const char *by_help(void)
{
	static char help[640];
	snprintf(help, sizeof(help), "rows by these keys, composed as perf's --sort\n"
		 "composes them: %s\n(default thread)", cli_keys(KEY_REPORT, ", ", 53, 15));
	return help;
}

static const char *by_values(void)
{
	return cli_keys(KEY_REPORT, " ", 0, 0);
}

static const struct cli_option report_options[] = {
	{ "input", 'i', "FILE", O_INPUT, "the recording (default cpuledger.rec), or\n"
	  "perf-script:FILE, the text of perf script\n('-' for standard input; docs/import.md)" },
	{ "output", 'o', "FILE", O_OUTPUT, "write the report to FILE (default standard output)" },
	{ "by", 0, "KEY[,KEY]", O_BY, .help_fn = by_help, .values_fn = by_values },
	{ "method", 0, "METHOD", O_METHOD, "how steal is placed among functions:\n"
	  "preceding|bracketed|ratio (default preceding)", "preceding bracketed ratio" },
	{ "kernel-accounting", 0, "KIND", O_KERNEL_ACCOUNTING, "what the recorded kernel's "
	  "runtime holds:\nparavirt (excludes steal: RHEL, Fedora), plain\n(includes it: "
	  "Debian, Ubuntu, SUSE), paravirt+irq\n(excludes steal and IRQ time: RHEL), auto\n"
	  "(default: as recorded, else judged from the data;\ndocs/record.md)",
	  "auto paravirt plain paravirt+irq" },
	{ "proc-stat", 0, "START,END", O_PROC_STAT, "with -i perf-script:FILE: " PROC_STAT_HELP },
	{ "accounts", 0, "FILE", O_ACCOUNTS, "charge accounts by these rules (docs/accounts.md)\n"
	  "instead of those recorded, or the defaults" },
	{ "control", 0, "LIST", O_CONTROL, "accounts that count as system code (SYSTEM_CODE_S)\n"
	  "(comma-separated; default kernel)" },
	{ "format", 0, "FORMAT", O_FORMAT, "text|csv|json|openmetrics|pprof|folded|html\n"
	  "(default text); folded of perf-script:FILE\nas the reference collapser folds it; "
	  "html: one\nself-contained page",
	  "text csv json openmetrics pprof folded html" },
	{ "folded", 0, "OPTS", O_FOLDED, "with --format folded of perf-script:FILE:\n"
	  "pid,tid,kernel,jit,all,addrs, as the reference\ncollapser's options of those names",
	  "pid tid kernel jit all addrs" },
	{ "salvage", 0, NULL, O_SALVAGE, "report a damaged or cut-short recording up to\n"
	  "the damage (said on standard error)" },
	{ "sort", 0, "COL[,COL]", O_SORT, "rows by these, largest first: cpu, steal,\n"
	  "steal-share, apparent, samples (default apparent)",
	  "cpu steal steal-share apparent samples" },
	{ "comm", 0, "LIST", O_COMM, "only threads of these names (comma-separated)" },
	{ "pid", 0, "LIST", O_PID, "only these processes" },
	{ "tid", 0, "LIST", O_TID, "only these threads" },
	{ "dso", 0, "LIST", O_DSO, "only code of these files" },
	{ "percent-limit", 0, "PCT", O_PERCENT, "leave out rows under PCT % of the cpu time" },
	{ "top", 0, "N", O_TOP, "text: the first N rows, then one line for the rest\n"
	  "(default 50; 0 for all); CSV and JSON have every row" },
	{ "wide", 0, NULL, O_WIDE, "text: do not cut the last column to the\nterminal's width" },
	{ "no-demangle", 0, NULL, O_NO_DEMANGLE, "show C++ and Rust functions as their symbols\n"
	  "are spelt (by default demangled, as perf shows them)" },
	{ 0 },
};

static const struct cli_option *const report_tables[] = { report_options, NULL };

const struct cli_command report_command = {
	"report", "[options]",
	"Reports a recording of 'cpuledger record' (or perf's, imported): CPU time\n"
	"and the steal measured per on-CPU stint, by the keys given.",
	report_tables, NULL, false,
};

struct report_opts {
	const char *input, *output, *folded, *accounts, *proc_stat;
	const struct report_writer *writer;
	bool folded_format, by_given, wide;
	size_t top;
	struct analysis_opts a;
	struct cli_list control, comms, dsos;
	struct cli_ids pids, tids;
	bool help;	/* --help printed: nothing more to do */
};

static int set_keys(struct report_opts *o, const char *arg)
{
	size_t bad;
	if (row_keys__parse(&o->a.keys, arg, &bad)) {
		cli_error("--by: '%.*s' is not a key (%s), or is given twice",
			  (int)strcspn(arg + bad, ","), arg + bad, cli_keys(KEY_REPORT, ", ", 0, 0));
		return EXIT_USAGE;
	}
	o->by_given = true;
	return 0;
}

static int set_format(struct report_opts *o, const char *arg)
{
	if (!strcmp(arg, "folded")) {
		o->folded_format = true;
		o->writer = &report_folded;
		return 0;
	}
	return cli_parse_format(arg, &o->writer);
}

static int one_option(struct report_opts *o, int id, const char *arg)
{
	size_t bad;
	switch (id) {
	case O_INPUT: o->input = arg; return 0;
	case O_OUTPUT: o->output = arg; return 0;
	case O_BY: return set_keys(o, arg);
	case O_METHOD: return cli_parse_method(arg, &o->a.method);
	case O_KERNEL_ACCOUNTING:
		if (steal_accounting__parse(arg, &o->a.accounting)) {
			cli_error("--kernel-accounting: '%s' is not auto, paravirt, plain or "
				  "paravirt+irq", arg);
			return EXIT_USAGE;
		}
		o->a.accounting_set = true;
		return 0;
	case O_ACCOUNTS: o->accounts = arg; return 0;
	case O_PROC_STAT: o->proc_stat = arg; return 0;
	case O_CONTROL: return cli_parse_list("--control", arg, &o->control);
	case O_FORMAT: return set_format(o, arg);
	case O_FOLDED: o->folded = arg; return 0;
	case O_SALVAGE: o->a.salvage = true; return 0;
	case O_SORT:
		if (!sort_spec__parse(&o->a.sort, arg, &bad))
			return 0;
		cli_error("--sort: '%.*s' is not cpu, steal, steal-share, apparent or samples",
			  (int)strcspn(arg + bad, ","), arg + bad);
		return EXIT_USAGE;
	case O_COMM: return cli_parse_list("--comm", arg, &o->comms);
	case O_DSO: return cli_parse_list("--dso", arg, &o->dsos);
	case O_PID: return cli_parse_ids("--pid", arg, &o->pids);
	case O_TID: return cli_parse_ids("--tid", arg, &o->tids);
	case O_PERCENT:
		if (!cli_parse_double("--percent-limit", arg, &o->a.percent_limit) &&
		    o->a.percent_limit >= 0 && o->a.percent_limit <= 100)
			return 0;
		cli_error("--percent-limit: '%s' is not a share from 0 to 100", arg);
		return EXIT_USAGE;
	case O_TOP: {
		uint64_t v;
		int status = cli_parse_u64("--top", arg, 0, 100000000, &v);
		if (status)
			return status;
		o->top = (size_t)v;
		return 0;
	}
	case O_WIDE: o->wide = true; return 0;
	case O_NO_DEMANGLE: o->a.raw_names = true; return 0;
	}
	return EXIT_USAGE;
}

/* Checks what the options say together: 0, or EXIT_USAGE having said why. */
static int check(struct report_opts *o)
{
	bool script = !strncmp(o->input, "perf-script:", 12);
	if (o->folded && !(script && o->folded_format)) {
		cli_error("--folded: only with --format folded of perf-script:FILE (a recording's "
			  "own stacks are folded by --format folded alone)");
		return EXIT_USAGE;
	}
	if (o->proc_stat && (!script || o->folded_format)) {
		cli_error("--proc-stat: only with -i perf-script:FILE (a recording holds "
			  "/proc/stat itself; folded text has no steal)");
		return EXIT_USAGE;
	}
	const struct report_writer *w = o->writer;
	if ((w->needs & REPORT_NEEDS_FUNCTION) && o->by_given &&
	    !row_keys__has(&o->a.keys, RF_FUNCTION)) {
		cli_error("--format %s: a profile is of functions: give --by with function",
			  w->name);
		return EXIT_USAGE;
	}
	o->a.stacks = w->needs & REPORT_NEEDS_STACKS;
	o->a.fold_stacks = w->needs & REPORT_FOLDS_STACKS;
	o->a.no_rows = w->needs & REPORT_NO_ROWS;
	size_t bad;
	if (!o->by_given)
		row_keys__parse(&o->a.keys, w->by, &bad);
	return 0;
}

/* 0 (o->help when --help printed), or the exit status, having said why. */
static int parse_args(int argc, char **argv, struct report_opts *o)
{
	*o = (struct report_opts){ .input = "cpuledger.rec", .writer = &report_text,
				   .top = 50 };
	o->a.method = METHOD_PRECEDING;
	int id, status;
	const char *arg;
	cli_begin();
	while ((id = cli_next(&report_command, argc, argv, &arg)) != CLI_END) {
		if (id == CLI_HELP) {
			cli_usage(stdout, &report_command);
			o->help = true;
			return 0;
		}
		/* CLI_BAD: cli_next said what is wrong */
		if ((status = id == CLI_BAD ? EXIT_USAGE : one_option(o, id, arg)))
			return status;
	}
	if (optind != argc) {
		cli_error("unexpected argument '%s' (the recording is given with -i)",
			  argv[optind]);
		return EXIT_USAGE;
	}
	if (!o->control.n && (status = cli_parse_list("--control", "kernel", &o->control)))
		return status;
	o->a.control = (const char *const *)o->control.v;
	o->a.ncontrol = o->control.n;
	o->a.comms = (const char *const *)o->comms.v;
	o->a.ncomms = o->comms.n;
	o->a.dsos = (const char *const *)o->dsos.v;
	o->a.ndsos = o->dsos.n;
	o->a.pids = o->pids.v;
	o->a.npids = o->pids.n;
	o->a.tids = o->tids.v;
	o->a.ntids = o->tids.n;
	return check(o);
}

static void release_opts(struct report_opts *o)
{
	cli_list__release(&o->control);
	cli_list__release(&o->comms);
	cli_list__release(&o->dsos);
	free(o->pids.v);
	free(o->tids.v);
}

static int fold_line(void *ctx, const char *line, size_t len, const void *slot)
{
	(void)slot;
	return folder__line(ctx, line, len);
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
	/* read and cut into lines on a thread ahead, where one helps */
	struct lines_ahead_fns la = { .take = fold_line, .take_ctx = f,
				      .progress = progress__update, .progress_ctx = &p };
	if (!err)
		err = lines_ahead__run(fd, &la);
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

/* The terminal's width, when the report goes to one. */
static unsigned terminal_width(const struct report_opts *o)
{
	struct winsize ws;
	if (o->wide || (o->output && strcmp(o->output, "-")) || !isatty(STDOUT_FILENO) ||
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || ws.ws_col < 40)
		return 0;
	return ws.ws_col;
}

/* The scratch file failed (a full $TMPDIR), or err came of reading it
 * back: said so, and what it held (rows of gone threads, or a profile's
 * samples: pprof's keys hold a function, so never both). */
static void say_scratch(const struct report_opts *o, const struct scratch *sc, int err)
{
	err = scratch__error(sc) ? scratch__error(sc) : err;
	cli_error("cannot keep %s in a temporary file in %s: %s "
		  "(TMPDIR names another directory)",
		  o->a.row_store ? "the rows of gone threads" : "the profile's samples and strings",
		  scratch__dir(sc), strerror(-err));
}

static int write_report(const struct report_opts *o, struct analysis *a,
			const struct scratch *sc)
{
	a->x.top = o->top;
	a->x.width = terminal_width(o);
	struct outfile out;
	if (outfile__open(&out, o->output))
		return EXIT_RUNTIME;
	if (o->writer->needs & REPORT_ROWS_ONCE)	/* nothing reads them after */
		table__last_pass(a->table, report_cpus_to_spare());
	int err = o->writer->write(out.f, a->table, &a->x);
	table__pass_done(a->table);
	if (table__error(a->table) || (err && scratch__error(sc))) {
		say_scratch(o, sc, table__error(a->table) ? table__error(a->table) : err);
		outfile__abort(&out);
		return EXIT_RUNTIME;
	}
	if (err) {
		cli_error("cannot write the report%s%s%s: %s", o->output ? " '" : "",
			  o->output ? o->output : "", o->output ? "'" : "", strerror(-err));
		outfile__abort(&out);
		return EXIT_RUNTIME;
	}
	return outfile__commit(&out) ? EXIT_RUNTIME : 0;
}

/* What was found at the end, said on standard error. */
static void say_damage(const struct report_opts *o, struct analysis *a)
{
	struct rec_error d;
	if (a->src && rec_source__damage(a->src, &d))
		fprintf(stderr, "%s: offset %llu: %s; reported up to there (--salvage)\n",
			o->input, (unsigned long long)d.offset, d.msg);
}

static int report_recording(struct report_opts *o, int fd)
{
	struct analysis a;
	struct rec_error e = { 0 };
	const struct report_writer *w = o->writer;
	/* rows of whole threads (a day of short processes has millions), and
	 * a profile's samples, wait in a temporary file for the report, not
	 * in memory; where none can be made, in memory */
	bool rows_stored = rows__can_store(&o->a.keys);
	struct scratch *sc = w->stream_new || rows_stored ? scratch__open() : NULL;
	const struct row_store *store = sc ? scratch__store(sc) : NULL;
	o->a.row_store = rows_stored ? store : NULL;
	/* a writer that takes the stacks as the threads go holds them once */
	o->a.stack_ctx = w->stream_new ? w->stream_new(store) : NULL;
	o->a.stack_out = o->a.stack_ctx ? w->stream_stack : NULL;
	int err = w->stream_new && !o->a.stack_ctx ? -ENOMEM :
		  pipeline__report_file(&a, fd, &o->a, &e);
	int status = 0;
	if (err == -EINVAL) {
		cli_not_a_recording(o->input, &e, o->a.salvage);
		status = EXIT_USAGE;
	} else if (err && scratch__error(sc)) {
		say_scratch(o, sc, err);
		status = EXIT_RUNTIME;
	} else if (err) {
		cli_error("cannot read '%s': %s", o->input, strerror(-err));
		status = EXIT_RUNTIME;
	} else if (!(status = cli_check_control(o->a.control, o->a.ncontrol,
						rec_source__rules(a.src)))) {
		say_damage(o, &a);
		status = write_report(o, &a, sc);
	}
	if (!(w->stream_new && !o->a.stack_ctx))
		analysis__release(&a);
	if (w->stream_free)
		w->stream_free(o->a.stack_ctx);
	scratch__close(sc);
	return status;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o;
	int status = parse_args(argc, argv, &o);
	if (status || o.help) {
		release_opts(&o);
		return status;
	}
	bool script = !strncmp(o.input, "perf-script:", 12);
	struct account_rules rules = { 0 };
	status = outfile__not_input(o.output, script ? o.input + 12 : o.input, "the input");
	if (status)
		goto out;
	if (script && o.folded_format) {
		status = fold_perf_script(o.input + 12, o.folded, o.output);
		goto out;
	}
	if (o.accounts && (status = cli_load_accounts(o.accounts, &rules, NULL)))
		goto out;
	if (o.accounts)
		o.a.rules = &rules;
	struct script_import_kernel k = { 0 };
	if (o.proc_stat && (status = cli_proc_stat_load(o.proc_stat, &k)))
		goto out;
	int fd;
	status = cli_open_recording(o.input, o.proc_stat ? &k : NULL, &fd);
	cli_proc_stat_free(&k);
	if (status)
		goto out;
	status = report_recording(&o, fd);
	close(fd);
out:
	account_rules__release(&rules);
	release_opts(&o);
	return status;
}
