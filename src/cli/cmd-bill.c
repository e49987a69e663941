/*
 * cpuledger bill: seed 000's editing means. Sums the ledger's collections
 * by keys composed as report's are (user, comm, command, account, process,
 * day...): per row the target and control program's CPU time and their
 * total (CPU_S, the corrected time, as report names it), the steal, and
 * the apparent time a naive profiler would have charged. Steal that was
 * not measured is not summed as zero: a row says how much of its CPU time
 * had its steal measured (docs/ledger.md). The ledger is opened read-only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "../ledger/ledger.h"
#include "../report/report.h"
#include "../core/banned.h"

enum { B_LEDGER = 1, B_BY, B_SINCE, B_UNTIL, B_CONTROL, B_FORMAT, B_OUTPUT };

static const struct cli_option bill_options[] = {
	{ "ledger", 0, "PATH", B_LEDGER, "the ledger (default ./cpuledger.db)" },
	{ "by", 0, "KEY[,KEY]", B_BY, "rows by these keys: host, user, comm, command,\n"
	  "executable, account, process, thread, day, cgroup\n(default comm)",
	  "host user comm command executable account process thread day cgroup" },
	{ "since", 0, "T", B_SINCE, "collections ending at or after T" },
	{ "until", 0, "T", B_UNTIL, "collections ending before T (T: YYYY-MM-DD,\n"
	  "YYYY-MM-DDTHH:MM[:SS] in UTC, or @SECONDS)" },
	{ "control", 0, "LIST", B_CONTROL, "accounts that count as control program\n"
	  "(comma-separated; default kernel)" },
	{ "format", 0, "FORMAT", B_FORMAT, "text|csv|json (default text)", "text csv json" },
	{ "output", 'o', "FILE", B_OUTPUT, "write the bill to FILE (default standard output)" },
	{ 0 },
};

static const struct cli_option *const bill_tables[] = { bill_options, NULL };

const struct cli_command bill_command = {
	"bill", "[options]",
	"Sums the ledger's CPU time, steal and corrected time by the keys given.",
	bill_tables, NULL, false,
};

/* A row kept: its key's values copied. */
struct kept {
	struct bill_row r;
	char *s[7];	/* host, command, comm, executable, account, day, cgroup */
};

struct bill {
	enum bill_key keys[BK_COUNT];
	size_t nkeys;
	struct kept *rows;
	size_t n, cap;
	struct bill_row total;
};

static int keep(void *ctx, const struct bill_row *row)
{
	struct bill *b = ctx;
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct kept *r = realloc(b->rows, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		b->rows = r;
		b->cap = cap;
	}
	struct kept *k = &b->rows[b->n++];
	k->r = *row;
	const char **src[7] = { &k->r.host, &k->r.command, &k->r.comm, &k->r.executable,
				&k->r.account, &k->r.day, &k->r.cgroup };
	for (int i = 0; i < 7; i++) {
		k->s[i] = *src[i] ? strdup(*src[i]) : NULL;
		if (*src[i] && !k->s[i])
			return -ENOMEM;
		*src[i] = k->s[i];
	}
	b->total.cpu_ns += row->cpu_ns;
	b->total.control_ns += row->control_ns;
	b->total.steal_ns += row->steal_ns;
	b->total.unknown_steal_cpu_ns += row->unknown_steal_cpu_ns;
	b->total.samples += row->samples;
	return 0;
}

static double s_(int64_t ns)
{
	return (double)ns / 1e9;
}

/* A key's value as text, for text and CSV. */
static const char *key_text(enum bill_key k, const struct bill_row *r, char *buf, size_t n)
{
	switch (k) {
	case BK_HOST: return r->host ? r->host : "?";
	case BK_USER: return report_user(r->uid, buf, n);
	case BK_COMMAND: return r->command ? r->command : "?";
	case BK_COMM: return r->comm ? r->comm : "?";
	case BK_EXECUTABLE: return r->executable ? r->executable : "?";
	case BK_ACCOUNT: return r->account ? r->account : "?";
	case BK_DAY: return r->day ? r->day : "unknown";
	case BK_CGROUP: return r->cgroup ? r->cgroup : "unknown";
	case BK_PROCESS:
		snprintf(buf, n, "%s %lld %s", r->host ? r->host : "?", (long long)r->pid,
			 r->command ? r->command : "");
		return buf;
	case BK_THREAD:
		snprintf(buf, n, "%s %lld/%lld %s", r->host ? r->host : "?", (long long)r->pid,
			 (long long)r->tid, r->comm ? r->comm : "");
		return buf;
	default: return "?";
	}
}

/* A row's steal (or apparent time, cpu + steal, with cpu given): its
 * sum, "unknown" when none of its CPU time had its steal measured, marked
 * '*' when only some had. */
static void steal_text(const struct bill_row *r, int64_t plus, char *buf, size_t n)
{
	if (r->unknown_steal_cpu_ns >= r->cpu_ns && r->cpu_ns > 0)
		snprintf(buf, n, "unknown");
	else if (r->unknown_steal_cpu_ns)
		snprintf(buf, n, "%.3f*", s_(plus + r->steal_ns));
	else
		snprintf(buf, n, "%.3f", s_(plus + r->steal_ns));
}

static void text_row(FILE *f, const struct bill *b, const struct bill_row *r, int w,
		     const char *label)
{
	char key[1024] = "", part[600], steal[32], apparent[32];
	size_t len = 0;
	for (size_t i = 0; label == NULL && i < b->nkeys && len < sizeof(key); i++)
		len += (size_t)snprintf(key + len, sizeof(key) - len, "%s%s", i ? "  " : "",
					key_text(b->keys[i], r, part, sizeof(part)));
	steal_text(r, 0, steal, sizeof(steal));
	steal_text(r, r->cpu_ns, apparent, sizeof(apparent));
	text_put(f, label ? label : key, w, w);
	fprintf(f, " %12.3f %12.3f %12.3f %12s %12s %10" PRId64 "\n",
		s_(r->cpu_ns - r->control_ns), s_(r->control_ns),
		s_(r->cpu_ns), steal, apparent, r->samples);
}

static void write_text(FILE *f, const struct bill *b, const char *by, const char *path)
{
	fprintf(f, "Bill of ledger '%s' by %s\n\n", path, by);
	int w = 40;
	fprintf(f, "%-*s %12s %12s %12s %12s %12s %10s\n", w, "KEY", "TARGET_S", "CONTROL_S",
		"CPU_S", "STEAL_S", "APPARENT_S", "SAMPLES");
	for (size_t i = 0; i < b->n; i++)
		text_row(f, b, &b->rows[i].r, w, NULL);
	text_row(f, b, &b->total, w, "total");
	fputs("\nCPU_S is CPU time really run (the corrected time); APPARENT_S adds the steal.\n", f);
	const struct bill_row *t = &b->total;
	if (t->unknown_steal_cpu_ns)
		fprintf(f, "Steal was measured for %.1f%% of the CPU time: the rest was recorded "
			"without the means to (unknown, not 0); * marks rows where it is partly "
			"so, and their STEAL_S sums only what was measured.\n",
			t->cpu_ns ? 100.0 * (double)(t->cpu_ns - t->unknown_steal_cpu_ns) /
				    (double)t->cpu_ns : 0.0);
}


/* CSV: one field per value (a process is its host, pid and command). */
static void csv_keys(FILE *f, const struct bill *b, const struct bill_row *r, bool header)
{
	for (size_t i = 0; i < b->nkeys; i++) {
		char buf[64];
		if (i)
			putc(',', f);
		switch (b->keys[i]) {
		case BK_PROCESS:
		case BK_THREAD:
			if (header) {
				fputs(b->keys[i] == BK_THREAD ? "host,pid,tid,comm" : "host,pid,command", f);
				break;
			}
			csv_put_field(f, r->host ? r->host : "");
			fprintf(f, ",%lld,", (long long)r->pid);
			if (b->keys[i] == BK_THREAD)
				fprintf(f, "%lld,", (long long)r->tid);
			csv_put_field(f, b->keys[i] == BK_THREAD ? (r->comm ? r->comm : "") :
				      r->command ? r->command : "");
			break;
		case BK_USER:
			if (header)
				fputs("uid", f);
			else if (r->uid >= 0)
				fprintf(f, "%lld", (long long)r->uid);
			break;
		case BK_DAY:	/* unknown (an import's): empty */
			if (header)
				fputs("day", f);
			else if (r->day)
				csv_put_field(f, r->day);
			break;
		case BK_CGROUP:	/* unknown (an older ledger's): empty */
			if (header)
				fputs("cgroup", f);
			else if (r->cgroup)
				csv_put_field(f, r->cgroup);
			break;
		default:
			if (header)
				fputs(bill_key__name(b->keys[i]), f);
			else
				csv_put_field(f, key_text(b->keys[i], r, buf, sizeof(buf)));
		}
	}
}

static void write_csv(FILE *f, const struct bill *b)
{
	csv_keys(f, b, NULL, true);
	fputs(",target_ns,control_ns,cpu_ns,steal_ns,apparent_ns,unknown_steal_cpu_ns,samples\n", f);
	for (size_t i = 0; i < b->n; i++) {
		const struct bill_row *r = &b->rows[i].r;
		bool known = r->unknown_steal_cpu_ns < r->cpu_ns || !r->cpu_ns;
		csv_keys(f, b, r, false);
		fprintf(f, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",", r->cpu_ns - r->control_ns,
			r->control_ns, r->cpu_ns);
		if (known)
			fprintf(f, "%" PRId64 ",%" PRId64, r->steal_ns, r->cpu_ns + r->steal_ns);
		else
			putc(',', f);
		fprintf(f, ",%" PRId64 ",%" PRId64 "\n", r->unknown_steal_cpu_ns, r->samples);
	}
}

/* A JSON member, the first of an object without its comma. */
static void member(FILE *f, bool *first, const char *k)
{
	fprintf(f, "%s\"%s\":", *first ? "" : ",", k);
	*first = false;
}

static void json_str(FILE *f, bool *first, const char *k, const char *v)
{
	member(f, first, k);
	json_put_string_or_null(f, v);
}

static void json_num(FILE *f, bool *first, const char *k, bool known, int64_t v)
{
	member(f, first, k);
	if (known)
		fprintf(f, "%" PRId64, v);
	else
		fputs("null", f);
}

static void json_keys(FILE *f, bool *first, const struct bill *b, const struct bill_row *r)
{
	for (size_t i = 0; i < b->nkeys; i++) {
		switch (b->keys[i]) {
		case BK_HOST: json_str(f, first, "host", r->host); break;
		case BK_USER: json_num(f, first, "uid", r->uid >= 0, r->uid); break;
		case BK_COMMAND: json_str(f, first, "command", r->command); break;
		case BK_COMM: json_str(f, first, "comm", r->comm); break;
		case BK_EXECUTABLE: json_str(f, first, "executable", r->executable); break;
		case BK_ACCOUNT: json_str(f, first, "account", r->account); break;
		case BK_DAY: json_str(f, first, "day", r->day); break;
		case BK_CGROUP: json_str(f, first, "cgroup", r->cgroup); break;
		case BK_PROCESS:
		case BK_THREAD:
			json_str(f, first, "host", r->host);
			json_num(f, first, "pid", true, r->pid);
			if (b->keys[i] == BK_THREAD) {
				json_num(f, first, "tid", true, r->tid);
				json_str(f, first, "comm", r->comm);
			} else {
				json_str(f, first, "command", r->command);
			}
			break;
		default: break;
		}
	}
}

static void json_figures(FILE *f, bool *first, const struct bill_row *r)
{
	bool known = r->unknown_steal_cpu_ns < r->cpu_ns || !r->cpu_ns;
	json_num(f, first, "target_ns", true, r->cpu_ns - r->control_ns);
	json_num(f, first, "control_ns", true, r->control_ns);
	json_num(f, first, "cpu_ns", true, r->cpu_ns);
	json_num(f, first, "steal_ns", known, r->steal_ns);
	json_num(f, first, "apparent_ns", known, r->cpu_ns + r->steal_ns);
	json_num(f, first, "unknown_steal_cpu_ns", true, r->unknown_steal_cpu_ns);
	json_num(f, first, "samples", true, r->samples);
	putc('}', f);
}

static void write_json(FILE *f, const struct bill *b, const char *by)
{
	fprintf(f, "{\"version\":2,\"by\":");
	json_put_string(f, by);
	fputs(",\"rows\":[", f);
	for (size_t i = 0; i < b->n; i++) {
		bool first = true;
		fputs(i ? ",\n{" : "\n{", f);
		json_keys(f, &first, b, &b->rows[i].r);
		json_figures(f, &first, &b->rows[i].r);
	}
	fputs("],\"totals\":{", f);
	bool first = true;
	json_figures(f, &first, &b->total);
	fputs("}\n", f);
}

struct bill_opts {
	const char *path, *output, *format;
	char by[160];
	int64_t since, until;
	struct cli_list control;
};

static int parse_by(struct bill *b, struct bill_opts *o, const char *arg)
{
	b->nkeys = 0;
	snprintf(o->by, sizeof(o->by), "%s", arg);
	for (const char *p = arg;;) {
		size_t len = strcspn(p, ",");
		enum bill_key k;
		if (bill_key__parse(p, len, &k) || b->nkeys == BK_COUNT) {
			cli_error("--by: '%.*s' is not a key (host, user, comm, command, executable, "
				  "account, process, thread, day, cgroup)", (int)len, p);
			return -1;
		}
		b->keys[b->nkeys++] = k;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static int one_option(struct bill *b, struct bill_opts *o, int id, const char *arg)
{
	switch (id) {
	case B_LEDGER: o->path = arg; return 0;
	case B_OUTPUT: o->output = arg; return 0;
	case B_BY: return parse_by(b, o, arg);
	case B_CONTROL: return cli_parse_list("--control", arg, &o->control);
	case B_SINCE:
	case B_UNTIL:
		if (cli_parse_time(arg, id == B_SINCE ? &o->since : &o->until))
			return 0;
		cli_error("%s: '%s' is not YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] or @SECONDS",
			  id == B_SINCE ? "--since" : "--until", arg);
		return -1;
	case B_FORMAT:
		if (strcmp(arg, "text") && strcmp(arg, "csv") && strcmp(arg, "json")) {
			cli_error("--format: unknown format '%s' (text|csv|json)", arg);
			return -1;
		}
		o->format = arg;
		return 0;
	}
	return -1;
}

static int parse(int argc, char **argv, struct bill *b, struct bill_opts *o)
{
	int id;
	const char *arg;
	cli_begin();
	while ((id = cli_next(&bill_command, argc, argv, &arg)) != CLI_END) {
		if (id == CLI_HELP) {
			cli_usage(stdout, &bill_command);
			return 1;
		}
		if (id == CLI_BAD || one_option(b, o, id, arg))
			return -1;
	}
	if (optind != argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (!b->nkeys && parse_by(b, o, "comm"))
		return -1;
	return !o->control.n && cli_parse_list("--control", "kernel", &o->control) ? -1 : 0;
}

static int write_bill(const struct bill *b, const struct bill_opts *o)
{
	struct outfile out;
	if (outfile__open(&out, o->output))
		return EXIT_RUNTIME;
	if (!strcmp(o->format, "json"))
		write_json(out.f, b, o->by);
	else if (!strcmp(o->format, "csv"))
		write_csv(out.f, b);
	else
		write_text(out.f, b, o->by, o->path);
	return outfile__commit(&out) ? EXIT_RUNTIME : 0;
}

int cmd_bill(int argc, char **argv)
{
	struct bill b = { 0 };
	struct bill_opts o = { .path = "cpuledger.db", .format = "text", .since = INT64_MIN,
			       .until = INT64_MAX };
	int r = parse(argc, argv, &b, &o), status = 0;
	if (r) {
		cli_list__release(&o.control);
		return r > 0 ? 0 : EXIT_USAGE;
	}
	if ((status = outfile__not_input(o.output, o.path, "the ledger"))) {
		cli_list__release(&o.control);
		return status;
	}
	char msg[512];
	struct ledger *l;
	int err = ledger__open(o.path, LEDGER_READ, &l, msg, sizeof(msg));
	if (err) {
		cli_error("%s", msg);
		cli_list__release(&o.control);
		return err == -EINVAL || err == -ENOENT || err == -ELOOP ? EXIT_USAGE : EXIT_RUNTIME;
	}
	err = ledger__bill(l, b.keys, b.nkeys, o.since, o.until,
			   (const char *const *)o.control.v, o.control.n, keep, &b, msg, sizeof(msg));
	if (!err)
		err = ledger__check_accounts(l, (const char *const *)o.control.v, o.control.n,
					     msg, sizeof(msg));
	ledger__close(l);
	if (err) {
		cli_error("%s", err == -ENOMEM ? "out of memory" : msg);
		status = err == -ENOENT ? EXIT_USAGE : EXIT_RUNTIME;
	} else {
		status = write_bill(&b, &o);
	}
	for (size_t i = 0; i < b.n; i++)
		for (int k = 0; k < 7; k++)
			free(b.rows[i].s[k]);
	free(b.rows);
	cli_list__release(&o.control);
	return status;
}
