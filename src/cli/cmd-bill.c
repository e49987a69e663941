/*
 * cpuledger bill: seed 000's editing means, as the people who pay read a
 * bill. Sums the ledger's collections by keys composed as report's are
 * (user, comm, command, account, process, day...), per hour, day or month
 * if asked: per row the target and control program's CPU time and their
 * total (CPU_S, the corrected time, as report names it; CPU_H in hours),
 * the steal, the apparent time a naive profiler would have charged and,
 * with --price, the cost. Every format says the period billed and the
 * hosts. Steal that was not measured is not summed as zero: a row says
 * how much of its CPU time had its steal measured (docs/ledger.md). The
 * ledger is opened read-only.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "options.h"
#include "../ledger/ledger.h"
#include "../report/report.h"
#include "../core/units.h"
#include "../core/banned.h"

enum { B_LEDGER = 1, B_BY, B_SINCE, B_UNTIL, B_CONTROL, B_FORMAT, B_OUTPUT, B_PER, B_PRICE };

/* --by's help and completion: the ledger's keys in the one table
 * (core/keys.c), vm also spelt host as the ledger spells it. */
static const char *by_help(void)
{
	static char help[640];
	snprintf(help, sizeof(help), "rows by these keys (default comm): %s\n"
		 "(one period at most; host is vm)", cli_keys(KEY_BILL, ", ", 50, 35));
	return help;
}

static const char *by_values(void)
{
	return cli_keys(KEY_BILL, " ", 0, 0);
}

static const struct cli_option bill_options[] = {
	{ "ledger", 0, "PATH", B_LEDGER, "the ledger (default ./cpuledger.db)" },
	{ "by", 0, "KEY[,KEY]", B_BY, .help_fn = by_help, .values_fn = by_values },
	{ "per", 0, "PERIOD", B_PER, "hour|day|month: rows per period (oldest first),\n"
	  "then by the --by keys", "hour day month" },
	{ "since", 0, "T", B_SINCE, "collections ending at or after T" },
	{ "until", 0, "T", B_UNTIL, "collections ending before T (T: YYYY-MM-DD,\n"
	  "YYYY-MM-DDTHH:MM[:SS] in UTC, @SECONDS, now, today,\n"
	  "yesterday (midnight UTC), or -N{s,min,h,d,w} ago)" },
	{ "control", 0, "LIST", B_CONTROL, "accounts that count as system code (SYSTEM_CODE_S)\n"
	  "(comma-separated; default kernel)" },
	{ "price", 0, "[ACCOUNT=]P", B_PRICE, "P per CPU-hour: a COST column and total; with\n"
	  "ACCOUNT=, that account's price (repeat it; accounts\n"
	  "without a price cost nothing unless P alone is given)" },
	{ "format", 0, "FORMAT", B_FORMAT, "text|csv|json (default text)", "text csv json" },
	{ "output", 'o', "FILE", B_OUTPUT, "write the bill to FILE (default standard output)" },
	{ 0 },
};

static const struct cli_option *const bill_tables[] = { bill_options, NULL };

const struct cli_command bill_command = {
	"bill", "[options]",
	"Sums the ledger's CPU time (in seconds and CPU-hours), steal and apparent\n"
	"time by the keys given, per period if asked, priced with --price; says the\n"
	"period billed and the hosts in every format.",
	bill_tables, NULL, false,
};

/* A row kept: its key's values copied. */
struct kept {
	struct bill_row r;
	char *s[RF_COUNT];
};

struct bill {
	enum row_field keys[RF_COUNT];
	size_t nkeys;
	/* two rows show one process (its host, pid, command) and are of
	 * two, one pid given to both: each row says its start too */
	bool starts;
	/* the values the keys show, in order (fields_of): CSV's columns,
	 * JSON's members */
	enum row_field fields[RF_COUNT * RF_COUNT];
	size_t nfields;
	struct kept *rows;
	size_t n, cap;
	struct bill_row total;
	struct bill_span span;
	int64_t since, until;	/* as asked: INT64_MIN, INT64_MAX when not */
	const struct bill_price *prices;
	size_t nprices;
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
	for (int i = 0; i < RF_COUNT; i++) {
		k->s[i] = row->text[i] ? strdup(row->text[i]) : NULL;
		if (row->text[i] && !k->s[i])
			return -ENOMEM;
		k->r.text[i] = k->s[i];
	}
	b->total.cpu_ns += row->cpu_ns;
	b->total.control_ns += row->control_ns;
	b->total.steal_ns += row->steal_ns;
	b->total.unknown_steal_cpu_ns += row->unknown_steal_cpu_ns;
	b->total.samples += row->samples;
	b->total.cost += row->cost;
	b->total.wait_ns += row->wait_known ? row->wait_ns : 0;
	b->total.wait_known |= row->wait_known;
	return 0;
}

static double s_(int64_t ns)
{
	return (double)ns / NSEC_PER_SEC;
}

static double hours(int64_t ns)
{
	return (double)ns / 3.6e12;
}

/* A time as ISO 8601 in UTC ("2026-11-30T08:12:03Z"), or text's
 * "2026-11-30 08:12:03 UTC". */
static const char *utc(int64_t ns, bool iso, char *buf, size_t n)
{
	time_t t = (time_t)(ns / NSEC_PER_SEC - (ns % NSEC_PER_SEC < 0));
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, n, iso ? "%Y-%m-%dT%H:%M:%SZ" :
					    "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, n, "@%lld", (long long)(ns / NSEC_PER_SEC));
	return buf;
}

/* The period billed: what --since and --until asked, else the span of
 * the collections in it; false for an end that is neither. */
static bool period_start(const struct bill *b, int64_t *ns)
{
	*ns = b->since != INT64_MIN ? b->since : b->span.first_ns;
	return b->since != INT64_MIN || b->span.first_ns > 0;
}

static bool period_end(const struct bill *b, int64_t *ns)
{
	*ns = b->until != INT64_MAX ? b->until : b->span.last_ns;
	return b->until != INT64_MAX || b->span.last_ns > 0;
}

/* One value as text: "unknown" when the ledger does not know it (a
 * user: '?'). */
static const char *value_text(enum row_field f, const struct bill_row *r, char *buf, size_t n)
{
	const struct key_entry *e = key_entry(f);
	if (key_entry__is_text(e))
		return r->text[f] ? r->text[f] : "unknown";
	if (e->type == KEY_UID)
		return report_user(r->number[f], buf, n);
	snprintf(buf, n, "%lld", (long long)r->number[f]);
	return buf;
}

/* A key's value as text: the values it shows (a process's host, pid and
 * command) joined by spaces, a thread's id after its process's with a
 * slash; with starts, after the task's id when known, "(from S s after
 * boot)", its start. */
static const char *key_text(enum row_field k, const struct bill_row *r, bool starts,
			    char *buf, size_t n)
{
	uint32_t shows = key_entry__shows(k);
	if (shows == RF_BIT(k))
		return value_text(k, r, buf, n);
	enum row_field last = shows & RF_BIT(RF_THREAD) ? RF_THREAD : RF_PROCESS;
	size_t used = 0;
	enum key_type prev = KEY_TEXT;
	bool any = false;
	buf[0] = '\0';
	for (int f = 0; f < RF_COUNT && used < n; f++) {
		if (!(shows & RF_BIT(f)))
			continue;
		char v[64];
		enum key_type type = key_entry((enum row_field)f)->type;
		used += (size_t)snprintf(buf + used, n - used, "%s%s",
					 !any ? "" :
					 type == KEY_TASK && prev == KEY_TASK ? "/" : " ",
					 value_text((enum row_field)f, r, v, sizeof(v)));
		if (starts && f == (int)last && r->number[RF_START] > 0 && used < n)
			used += (size_t)snprintf(buf + used, n - used, " (from %.2f s after boot)",
						 s_(r->number[RF_START]));
		prev = type;
		any = true;
	}
	return buf;
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

/* A row's keys joined by two spaces, whole (a new string), or NULL. */
static char *row_key(const struct bill *b, const struct bill_row *r)
{
	char *buf = NULL, part[8192];
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		return NULL;
	for (size_t i = 0; i < b->nkeys; i++)
		fprintf(f, "%s%s", i ? "  " : "", key_text(b->keys[i], r, b->starts, part, sizeof(part)));
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Columns a key takes in text (one per character, as text_put counts). */
static int key_cols(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* The key column: as wide as the widest key, 24 to 60 columns; a longer
 * one is cut in its middle (its end tells commands apart). */
static int key_width(const struct bill *b)
{
	int w = 24;
	for (size_t i = 0; i < b->n && w < 60; i++) {
		char *k = row_key(b, &b->rows[i].r);
		int c = k ? key_cols(k) : 0;
		w = c > w ? c : w;
		free(k);
	}
	return w < 60 ? w : 60;
}

/* The keys in w columns: when they do not fit, the longest is cut in its
 * middle (a period or a host beside a command line stays whole). */
static void text_keys(FILE *f, const struct bill *b, const struct bill_row *r, int w)
{
	char parts[RF_COUNT][8192];
	const char *v[RF_COUNT];
	int cols = 2 * ((int)b->nkeys - 1), longest = 0;
	for (size_t i = 0; i < b->nkeys; i++) {
		v[i] = key_text(b->keys[i], r, b->starts, parts[i], sizeof(parts[i]));
		cols += key_cols(v[i]);
		if (key_cols(v[i]) > key_cols(v[longest]))
			longest = (int)i;
	}
	int excess = cols > w ? cols - w : 0, done = 0;
	for (size_t i = 0; i < b->nkeys; i++) {
		int len = key_cols(v[i]), max = len - excess < 8 ? 8 : len - excess;
		done += fprintf(f, "%s", i ? "  " : "");
		done += excess && (int)i == longest ? text_put_middle(f, v[i], max, 0) :
			text_put(f, v[i], 0, 0);
	}
	for (; done < w; done++)
		putc(' ', f);
}

/* WAIT_S and DENIED_S (steal + wait): "unknown" where the row's wait
 * is, DENIED_S too where its steal is. */
static void text_wait(FILE *f, const struct bill_row *r, const char *steal)
{
	char w[32] = "unknown", d[32] = "unknown";
	if (r->wait_known) {
		snprintf(w, sizeof(w), "%.3f", s_(r->wait_ns));
		if (strcmp(steal, "unknown"))
			snprintf(d, sizeof(d), "%.3f%s", s_(r->steal_ns + r->wait_ns),
				 strchr(steal, '*') ? "*" : "");
	}
	fprintf(f, " %12s %12s", w, d);
}

static void text_row(FILE *f, const struct bill *b, const struct bill_row *r, int w,
		     const char *label)
{
	char steal[32], apparent[32];
	steal_text(r, 0, steal, sizeof(steal));
	steal_text(r, r->cpu_ns, apparent, sizeof(apparent));
	if (label)
		text_put(f, label, w, w);
	else
		text_keys(f, b, r, w);
	fprintf(f, " %12.3f %13.3f %12.3f %10.4f %12s %12s %10" PRId64, s_(r->cpu_ns - r->control_ns),
		s_(r->control_ns), s_(r->cpu_ns), hours(r->cpu_ns), steal, apparent, r->samples);
	if (b->nprices)
		fprintf(f, " %12.4f", r->cost);
	if (b->total.wait_known)
		text_wait(f, r, steal);
	putc('\n', f);
}

/* The prices, as the footer and the JSON say them. */
static void text_prices(FILE *f, const struct bill *b)
{
	const char *rest = "nothing";
	char buf[64];
	fputs("COST is CPU_H times the price per CPU-hour of the account that ran it: ", f);
	for (size_t i = 0; i < b->nprices; i++) {
		if (!b->prices[i].account) {
			snprintf(buf, sizeof(buf), "%g", b->prices[i].per_cpu_hour);
			rest = buf;
			continue;
		}
		text_put(f, b->prices[i].account, 40, 0);
		fprintf(f, " %g, ", b->prices[i].per_cpu_hour);
	}
	fprintf(f, "any other %s.\n", rest);
}

/* Period, collections and hosts: what the bill covers. */
static void text_header(FILE *f, const struct bill *b, const char *by, const char *path)
{
	char t1[64], t2[64];
	int64_t start, end;
	bool s = period_start(b, &start), e = period_end(b, &end);
	fputs("Bill of ledger '", f);
	text_put(f, path, 0, 0);
	fprintf(f, "' by %s\nperiod    %s to %s%s\n", by, s ? utc(start, false, t1, sizeof(t1)) :
		"the first collection", e ? utc(end, false, t2, sizeof(t2)) : "the last",
		b->since == INT64_MIN && b->until == INT64_MAX ? " (its collections)" : "");
	fprintf(f, "covers    %lld collection%s", (long long)b->span.collections,
		b->span.collections == 1 ? "" : "s");
	if (b->span.undated)
		fprintf(f, " (%lld imported, of unknown time)", (long long)b->span.undated);
	/* an import names no host: the ledger keeps "unknown", said here in
	 * words, not as a host's name */
	size_t known = 0, shown = 0;
	for (size_t i = 0; i < b->span.nhosts; i++)
		known += *b->span.hosts[i] && strcmp(b->span.hosts[i], "unknown");
	for (size_t i = 0; i < b->span.nhosts; i++) {
		if (!*b->span.hosts[i] || !strcmp(b->span.hosts[i], "unknown"))
			continue;
		fputs(shown++ ? ", " : known > 1 ? " on hosts " : " on host ", f);
		text_put(f, b->span.hosts[i], 64, 0);
	}
	if (known < b->span.nhosts)
		fputs(known ? " and a host not recorded" : ", host not recorded", f);
	fputs("\n\n", f);
}

static void write_text(FILE *f, const struct bill *b, const char *by, const char *path)
{
	text_header(f, b, by, path);
	int w = key_width(b);
	fprintf(f, "%-*s %12s %13s %12s %10s %12s %12s %10s", w, "KEY", "OWN_CODE_S", "SYSTEM_CODE_S",
		"CPU_S", "CPU_H", "STEAL_S", "APPARENT_S", "SAMPLES");
	fputs(b->nprices ? "         COST" : "", f);
	fputs(b->total.wait_known ? "       WAIT_S     DENIED_S\n" : "\n", f);
	for (size_t i = 0; i < b->n; i++)
		text_row(f, b, &b->rows[i].r, w, NULL);
	text_row(f, b, &b->total, w, "total");
	fputs("\nCPU_S is CPU time really run (the corrected time), CPU_H the same in hours; "
	      "APPARENT_S adds the steal;\nOWN_CODE_S + SYSTEM_CODE_S = CPU_S (system code: the "
	      "kernel, or --control's accounts).\n", f);
	if (b->nprices)
		text_prices(f, b);
	if (b->total.wait_known)
		fputs("WAIT_S is time its threads waited on a run queue (schedstat run_delay, "
		      "cgroup throttling included),\nDENIED_S = STEAL_S + WAIT_S: CPU wanted "
		      "and not had; unknown where not recorded.\n", f);
	const struct bill_row *t = &b->total;
	if (t->unknown_steal_cpu_ns)
		fprintf(f, "Steal was measured for %.1f%% of the CPU time: the rest was recorded "
			"without the means to (unknown, not 0); * marks rows where it is partly "
			"so, and their STEAL_S sums only what was measured.\n",
			t->cpu_ns ? 100.0 * (double)(t->cpu_ns - t->unknown_steal_cpu_ns) /
				    (double)t->cpu_ns : 0.0);
}

/* Whether a number a key shows is known: a task's id always (-1: it had
 * exited), a start where it is one (0: alive when recording began). */
static bool number_known(const struct key_entry *e, int64_t v)
{
	return e->type == KEY_TASK || (e->type == KEY_START ? v > 0 : v >= 0);
}

/* CSV: a field per value a key shows (a process: its host, pid and
 * command), named as the ledger names it (host for vm); a value not
 * known is empty. The header when r is NULL. */
static void csv_keys(FILE *f, const struct bill *b, const struct bill_row *r)
{
	for (size_t i = 0; i < b->nfields; i++) {
		enum row_field k = b->fields[i];
		const struct key_entry *e = key_entry(k);
		if (i)
			putc(',', f);
		if (!r)
			fputs(key_entry__label(e), f);
		else if (key_entry__is_text(e))
			csv_put_field(f, r->text[k] ? r->text[k] : "");
		else if (number_known(e, r->number[k]))
			fprintf(f, "%lld", (long long)r->number[k]);
	}
}

/* Every row carries the period billed, so that rows of several bills
 * pasted together still say which each is of. */
static void write_csv(FILE *f, const struct bill *b)
{
	char p1[64] = "", p2[64] = "";
	int64_t start, end;
	if (period_start(b, &start))
		utc(start, true, p1, sizeof(p1));
	if (period_end(b, &end))
		utc(end, true, p2, sizeof(p2));
	csv_keys(f, b, NULL);
	fprintf(f, ",target_ns,control_ns,cpu_ns,steal_ns,apparent_ns,unknown_steal_cpu_ns,"
		"samples,cpu_hours%s,wait_ns,denied_ns,period_start,period_end\n",
		b->nprices ? ",cost" : "");
	for (size_t i = 0; i < b->n; i++) {
		const struct bill_row *r = &b->rows[i].r;
		bool known = r->unknown_steal_cpu_ns < r->cpu_ns || !r->cpu_ns;
		csv_keys(f, b, r);
		fprintf(f, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",", r->cpu_ns - r->control_ns,
			r->control_ns, r->cpu_ns);
		if (known)
			fprintf(f, "%" PRId64 ",%" PRId64, r->steal_ns, r->cpu_ns + r->steal_ns);
		else
			putc(',', f);
		fprintf(f, ",%" PRId64 ",%" PRId64 ",%.6f", r->unknown_steal_cpu_ns, r->samples,
			hours(r->cpu_ns));
		if (b->nprices)
			fprintf(f, ",%.6f", r->cost);
		putc(',', f);
		if (r->wait_known)
			fprintf(f, "%" PRId64, r->wait_ns);
		putc(',', f);
		if (r->wait_known && known)
			fprintf(f, "%" PRId64, r->steal_ns + r->wait_ns);
		fprintf(f, ",%s,%s\n", p1, p2);
	}
}

static void json_double(FILE *f, bool *first, const char *k, double v)
{
	json_put_member(f, first, k);
	fprintf(f, "%.9g", v);
}

/* The values each key shows, named as in CSV. */
static void json_keys(FILE *f, bool *first, const struct bill *b, const struct bill_row *r)
{
	for (size_t i = 0; i < b->nfields; i++) {
		enum row_field k = b->fields[i];
		const struct key_entry *e = key_entry(k);
		if (key_entry__is_text(e))
			json_put_str_member(f, first, key_entry__label(e), r->text[k]);
		else
			json_put_num_member(f, first, key_entry__label(e),
					    number_known(e, r->number[k]), r->number[k]);
	}
}

static void json_figures(FILE *f, bool *first, const struct bill *b, const struct bill_row *r)
{
	bool known = r->unknown_steal_cpu_ns < r->cpu_ns || !r->cpu_ns;
	json_put_num_member(f, first, "target_ns", true, r->cpu_ns - r->control_ns);
	json_put_num_member(f, first, "control_ns", true, r->cpu_ns ? r->control_ns : 0);
	json_put_num_member(f, first, "cpu_ns", true, r->cpu_ns);
	json_double(f, first, "cpu_hours", hours(r->cpu_ns));
	json_put_num_member(f, first, "steal_ns", known, r->steal_ns);
	json_put_num_member(f, first, "apparent_ns", known, r->cpu_ns + r->steal_ns);
	json_put_num_member(f, first, "unknown_steal_cpu_ns", true, r->unknown_steal_cpu_ns);
	json_put_num_member(f, first, "samples", true, r->samples);
	if (b->nprices)
		json_double(f, first, "cost", r->cost);
	json_put_num_member(f, first, "wait_ns", r->wait_known, r->wait_ns);
	json_put_num_member(f, first, "denied_ns", r->wait_known && known,
			    r->steal_ns + r->wait_ns);
	putc('}', f);
}

/* "period", "collections", "hosts" and "prices": what the bill covers. */
static void json_cover(FILE *f, const struct bill *b)
{
	char t[64];
	int64_t start, end;
	bool s = period_start(b, &start), e = period_end(b, &end);
	fputs(",\"period\":{", f);
	bool first = true;
	json_put_str_member(f, &first, "start", s ? utc(start, true, t, sizeof(t)) : NULL);
	json_put_str_member(f, &first, "end", e ? utc(end, true, t, sizeof(t)) : NULL);
	json_put_num_member(f, &first, "start_ns", s, start);
	json_put_num_member(f, &first, "end_ns", e, end);
	json_put_str_member(f, &first, "since", b->since != INT64_MIN ? utc(b->since, true, t, sizeof(t)) :
		 NULL);
	json_put_str_member(f, &first, "until", b->until != INT64_MAX ? utc(b->until, true, t, sizeof(t)) :
		 NULL);
	fprintf(f, "},\"collections\":%lld,\"undated_collections\":%lld,\"hosts\":[",
		(long long)b->span.collections, (long long)b->span.undated);
	for (size_t i = 0; i < b->span.nhosts; i++) {
		if (i)
			putc(',', f);
		json_put_string(f, b->span.hosts[i]);
	}
	fputs("],\"prices\":[", f);
	for (size_t i = 0; i < b->nprices; i++) {
		first = true;
		fputs(i ? ",{" : "{", f);
		json_put_str_member(f, &first, "account", b->prices[i].account);
		json_double(f, &first, "per_cpu_hour", b->prices[i].per_cpu_hour);
		putc('}', f);
	}
	putc(']', f);
}

static void write_json(FILE *f, const struct bill *b, const char *by)
{
	fprintf(f, "{\"version\":2,\"by\":");
	json_put_string(f, by);
	json_cover(f, b);
	fputs(",\"rows\":[", f);
	for (size_t i = 0; i < b->n; i++) {
		bool first = true;
		fputs(i ? ",\n{" : "\n{", f);
		json_keys(f, &first, b, &b->rows[i].r);
		json_figures(f, &first, b, &b->rows[i].r);
	}
	fputs("],\"totals\":{", f);
	bool first = true;
	json_figures(f, &first, b, &b->total);
	fputs("}\n", f);
}

struct bill_opts {
	const char *path, *output, *format;
	const char *per;	/* --per: a period key's name, or NULL */
	enum row_field per_key;
	char by[160];
	int64_t since, until;
	struct cli_list control;
	struct bill_price prices[64];
	size_t nprices;
	bool help;	/* --help printed: nothing more to do */
};

/* At most as many keys as bill takes (one may be given twice). */
static size_t max_keys(void)
{
	size_t n = 0;
	for (int f = 0; f < RF_COUNT; f++)
		n += (key_entry((enum row_field)f)->uses & KEY_BILL) != 0;
	return n;
}

static int parse_by(struct bill *b, struct bill_opts *o, const char *arg)
{
	b->nkeys = 0;
	snprintf(o->by, sizeof(o->by), "%s", arg);
	bool period = false;
	for (const char *p = arg;;) {
		size_t len = strcspn(p, ",");
		enum row_field f;
		if (key_entry__find(p, len, KEY_BILL, &f, NULL) || b->nkeys == max_keys()) {
			cli_error("--by: '%.*s' is not a key (%s)", (int)len, p,
				  cli_keys(KEY_BILL, ", ", 0, 0));
			return EXIT_USAGE;
		}
		if (period && key_entry(f)->type == KEY_PERIOD) {
			cli_error("--by: one period only (hour, day or month), not '%s'", arg);
			return EXIT_USAGE;
		}
		period |= key_entry(f)->type == KEY_PERIOD;
		b->keys[b->nkeys++] = f;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/* --price [ACCOUNT=]P: P a number, not negative; one price an account. */
static int parse_price(struct bill_opts *o, const char *arg)
{
	const char *eq = strrchr(arg, '=');
	const char *num = eq ? eq + 1 : arg;
	char *end;
	errno = 0;
	double v = strtod(num, &end);
	if (!*num || *end || errno || !isfinite(v) || v < 0 || (eq && eq == arg)) {
		cli_error("--price: '%s' is not [ACCOUNT=]P, P a price per CPU-hour (0 or more)",
			  arg);
		return EXIT_USAGE;
	}
	if (o->nprices == sizeof(o->prices) / sizeof(*o->prices)) {
		cli_error("--price: at most %zu prices", o->nprices);
		return EXIT_USAGE;
	}
	char *account = eq ? strndup(arg, (size_t)(eq - arg)) : NULL;
	if (eq && !account) {
		cli_error("out of memory");
		return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < o->nprices; i++)
		if (account ? o->prices[i].account && !strcmp(o->prices[i].account, account) :
			      !o->prices[i].account) {
			cli_error("--price: two prices for %s%s%s", account ? "'" : "",
				  account ? account : "the other accounts", account ? "'" : "");
			free(account);
			return EXIT_USAGE;
		}
	o->prices[o->nprices++] = (struct bill_price){ account, v };
	return 0;
}

/* --per PERIOD: one of the key table's periods. */
static int parse_per(struct bill_opts *o, const char *arg)
{
	if (key_entry__find(arg, strlen(arg), KEY_BILL, &o->per_key, NULL) ||
	    key_entry(o->per_key)->type != KEY_PERIOD) {
		cli_error("--per: '%s' is not hour, day or month", arg);
		return EXIT_USAGE;
	}
	o->per = arg;
	return 0;
}

static int one_option(struct bill *b, struct bill_opts *o, int id, const char *arg)
{
	switch (id) {
	case B_LEDGER: o->path = arg; return 0;
	case B_OUTPUT: o->output = arg; return 0;
	case B_BY: return parse_by(b, o, arg);
	case B_CONTROL: return cli_parse_list("--control", arg, &o->control);
	case B_PRICE: return parse_price(o, arg);
	case B_PER: return parse_per(o, arg);
	case B_SINCE:
	case B_UNTIL:
		if (cli_parse_time(arg, id == B_SINCE ? &o->since : &o->until))
			return 0;
		cli_error("%s: '%s' is not YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS], @SECONDS, now, "
			  "today, yesterday or -N{s,min,h,d,w}", id == B_SINCE ? "--since" :
			  "--until", arg);
		return EXIT_USAGE;
	case B_FORMAT:
		if (strcmp(arg, "text") && strcmp(arg, "csv") && strcmp(arg, "json")) {
			cli_error("--format: unknown format '%s' (text|csv|json)", arg);
			return EXIT_USAGE;
		}
		o->format = arg;
		return 0;
	}
	return EXIT_USAGE;
}

/* --per PERIOD: the period first among the keys (named in "by"). */
static int add_period(struct bill *b, struct bill_opts *o)
{
	enum row_field k = o->per_key;
	for (size_t i = 0; i < b->nkeys; i++)
		if (key_entry(b->keys[i])->type == KEY_PERIOD && b->keys[i] != k) {
			cli_error("--per %s: --by has another period (%s)", o->per, o->by);
			return EXIT_USAGE;
		} else if (b->keys[i] == k) {
			return 0;
		}
	memmove(b->keys + 1, b->keys, b->nkeys * sizeof(*b->keys));
	b->keys[0] = k;
	b->nkeys++;
	char by[sizeof(o->by)];
	memcpy(by, o->by, sizeof(by));
	size_t n = strlen(o->per) + 1;	/* "hour," before what --by said */
	memcpy(o->by, o->per, n - 1);
	o->by[n - 1] = ',';
	snprintf(o->by + n, sizeof(o->by) - n, "%s", by);
	return 0;
}

/* The values the keys show (key_entry__shows), key by key, each in the
 * key table's order: a process's host, pid and command. */
static void fields_of(struct bill *b)
{
	b->nfields = 0;
	for (size_t i = 0; i < b->nkeys; i++)
		for (int f = 0; f < RF_COUNT; f++)
			if (key_entry__shows(b->keys[i]) & RF_BIT(f))
				b->fields[b->nfields++] = (enum row_field)f;
}

static const struct bill *shown_of;	/* cmp_shown's bill (qsort has no context) */

/* Two rows by the values their keys show, RF_START aside. */
static int cmp_shown(const void *pa, const void *pb)
{
	const struct bill_row *a = &shown_of->rows[*(const size_t *)pa].r,
			      *b = &shown_of->rows[*(const size_t *)pb].r;
	for (size_t i = 0; i < shown_of->nfields; i++) {
		enum row_field f = shown_of->fields[i];
		int c = !a->text[f] || !b->text[f] ? !a->text[f] - !b->text[f] :
			strcmp(a->text[f], b->text[f]);
		c = c ? c : (a->number[f] > b->number[f]) - (a->number[f] < b->number[f]);
		if (c)
			return c;
	}
	return 0;
}

/*
 * Whether two rows show one process, one pid given to two (the rows are
 * by start too: the ledger keeps each apart): then every row says its
 * start, after its task's id, and a bill where no pid was given again
 * is as it always was. 0, or EXIT_RUNTIME having said why.
 */
static int find_starts(struct bill *b)
{
	size_t at = b->nfields, *v;
	for (size_t i = 0; i < b->nfields; i++)
		if (b->fields[i] == RF_THREAD || (b->fields[i] == RF_PROCESS && at == b->nfields))
			at = i;
	if (at == b->nfields || b->n < 2)
		return 0;
	if (!(v = malloc(b->n * sizeof(*v)))) {
		cli_error("out of memory");
		return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < b->n; i++)
		v[i] = i;
	shown_of = b;
	qsort(v, b->n, sizeof(*v), cmp_shown);
	for (size_t i = 1; i < b->n && !b->starts; i++)
		b->starts = !cmp_shown(&v[i - 1], &v[i]);
	free(v);
	if (b->starts) {
		memmove(&b->fields[at + 2], &b->fields[at + 1],
			(b->nfields - at - 1) * sizeof(*b->fields));
		b->fields[at + 1] = RF_START;
		b->nfields++;
	}
	return 0;
}

/* 0 (o->help when --help printed), or the exit status, having said why. */
static int parse(int argc, char **argv, struct bill *b, struct bill_opts *o)
{
	int id, status;
	const char *arg;
	cli_begin();
	while ((id = cli_next(&bill_command, argc, argv, &arg)) != CLI_END) {
		if (id == CLI_HELP) {
			cli_usage(stdout, &bill_command);
			o->help = true;
			return 0;
		}
		/* CLI_BAD: cli_next said what is wrong */
		if ((status = id == CLI_BAD ? EXIT_USAGE : one_option(b, o, id, arg)))
			return status;
	}
	if (optind != argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (!b->nkeys && (status = parse_by(b, o, "comm")))
		return status;
	if (o->per && (status = add_period(b, o)))
		return status;
	fields_of(b);
	if (o->since > o->until) {
		cli_error("--since is after --until");
		return EXIT_USAGE;
	}
	return o->control.n ? 0 : cli_parse_list("--control", "kernel", &o->control);
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

/* The accounts named by --control and --price must be in the ledger. */
static int check_accounts(struct ledger *l, const struct bill_opts *o, char *msg, size_t n)
{
	int err = ledger__check_accounts(l, (const char *const *)o->control.v, o->control.n,
					 msg, n);
	for (size_t i = 0; i < o->nprices && !err; i++)
		if (o->prices[i].account &&
		    (err = ledger__check_accounts(l, &o->prices[i].account, 1, msg, n)))
			snprintf(msg, n, "--price: no account '%s' in the ledger (nor a default: "
				 "kernel, program, library)", o->prices[i].account);
	return err;
}

static int query(struct bill *b, const struct bill_opts *o)
{
	char msg[512];
	struct ledger *l;
	int err = ledger__open(o->path, LEDGER_READ, &l, msg, sizeof(msg));
	if (err) {
		cli_error("%s", msg);
		return err == -EINVAL || err == -ENOENT || err == -ELOOP ? EXIT_USAGE : EXIT_RUNTIME;
	}
	struct bill_query q = { b->keys, b->nkeys, o->since, o->until,
				(const char *const *)o->control.v, o->control.n, o->prices,
				o->nprices };
	err = ledger__bill_query(l, &q, keep, b, msg, sizeof(msg));
	if (!err)
		err = ledger__bill_span(l, o->since, o->until, &b->span, msg, sizeof(msg));
	if (!err)
		err = check_accounts(l, o, msg, sizeof(msg));
	ledger__close(l);
	if (err)
		cli_error("%s", err == -ENOMEM ? "out of memory" : msg);
	return !err ? 0 : err == -ENOENT ? EXIT_USAGE : EXIT_RUNTIME;
}

static void bill_opts__release(struct bill_opts *o)
{
	cli_list__release(&o->control);
	for (size_t i = 0; i < o->nprices; i++)
		free((char *)o->prices[i].account);
}

int cmd_bill(int argc, char **argv)
{
	struct bill b = { 0 };
	struct bill_opts o = { .path = "cpuledger.db", .format = "text", .since = INT64_MIN,
			       .until = INT64_MAX };
	int status = parse(argc, argv, &b, &o);
	if (status || o.help) {
		bill_opts__release(&o);
		return status;
	}
	b.since = o.since;
	b.until = o.until;
	b.prices = o.prices;
	b.nprices = o.nprices;
	status = outfile__not_input(o.output, o.path, "the ledger");
	if (!status)
		status = query(&b, &o);
	if (!status)
		status = find_starts(&b);
	if (!status)
		status = write_bill(&b, &o);
	for (size_t i = 0; i < b.n; i++)
		for (int k = 0; k < RF_COUNT; k++)
			free(b.rows[i].s[k]);
	free(b.rows);
	bill_span__release(&b.span);
	bill_opts__release(&o);
	return status;
}
