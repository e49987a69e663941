/*
 * report/text: a table for people. Rows largest apparent time first (or
 * as --sort says); times in seconds to the millisecond (the sampling
 * interval's own resolution); the key's short fields (VM, PID, TID, CPU,
 * USER) left of the figures, its long ones (names, files, accounts, the
 * command) right of them, the last cut to the terminal's width. The
 * totals say how much steal there was and how much could be put on a
 * program.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "../core/cgroup_name.h"
#include "../core/engine.h"
#include "../core/stats.h"
#include "../core/units.h"
#include "../core/banned.h"

/* ns as seconds with three decimals, rounded to the nearest millisecond:
 * "%" PRIu64 ".%03" PRIu64 written by hand where buf has room (each
 * row has several, and a report by function thousands of rows). */
static const char *secs(char *buf, size_t size, uint64_t ns)
{
	uint64_t ms = ns / 1000000 + (ns % 1000000 >= 500000);
	if (size < REPORT_NUM_MAX + 4) {
		snprintf(buf, size, "%" PRIu64 ".%03" PRIu64, ms / 1000, ms % 1000);
		return buf;
	}
	size_t n = report_fmt_u64(buf, ms / 1000);
	unsigned f = (unsigned)(ms % 1000);
	buf[n] = '.';
	buf[n + 1] = (char)('0' + f / 100);
	buf[n + 2] = (char)('0' + f / 10 % 10);
	buf[n + 3] = (char)('0' + f % 10);
	buf[n + 4] = '\0';
	return buf;
}

/* s right-aligned in w columns, as printf's "%*s" writes it (one fwrite
 * where it fits). Returns the bytes written. */
static int put_right(FILE *out, const char *s, int w)
{
	char buf[80];
	size_t len = strlen(s), pad = w > 0 && (size_t)w > len ? (size_t)w - len : 0;
	if (w < 0 || pad + len > sizeof(buf))
		return fprintf(out, "%*s", w, s);
	memset(buf, ' ', pad);
	memcpy(buf + pad, s, len);
	fwrite(buf, 1, pad + len, out);
	return (int)(pad + len);
}

/* A figure's column: " %*s". */
static int col(FILE *out, const char *s, int w)
{
	putc(' ', out);
	return 1 + put_right(out, s, w);
}

/* v in decimal into buf (REPORT_NUM_MAX bytes). */
static const char *num(char *buf, uint64_t v)
{
	report_fmt_u64(buf, v);
	return buf;
}

/* A row's share of the run samples, and the half-width of its 95 %
 * confidence interval (Wilson's, the wider side), in percent. */
static const char *share(char *buf, size_t size, uint64_t k, uint64_t n)
{
	double lo, hi, p = n ? (double)k / (double)n : 0;
	wilson95(k, n, &lo, &hi);
	double h = hi - p > p - lo ? hi - p : p - lo;
	snprintf(buf, size, "%.1f%% +-%.1f", 100 * p, 100 * h);
	return buf;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

struct layout {
	int narrow[RF_COUNT];	/* the width of each short key column */
	bool fig3;		/* CPU_S split into own and system code (target/control) */
	bool wait;		/* WAIT_S and DENIED_S: some row's wait is known */
	bool throttled;		/* THROTTLED_S: some row's cgroup was throttled */
	enum row_field cols[12];	/* the long columns, right of the figures:
					 * a key field or an attribute */
	int widths[12];
	int ncols;
};

static const char *long_value(const struct table_row *r, enum row_field f)
{
	const struct key_entry *e = key_entry(f);
	static __thread char name[512];
	return e->display ? e->display(r, name, sizeof(name)) : e->text(r);
}

static void add_col(struct layout *l, enum row_field f)
{
	for (int i = 0; i < l->ncols; i++)
		if (l->cols[i] == f)
			return;
	l->cols[l->ncols++] = f;
}

struct planning {
	struct layout *l;
	const struct table *t;
};

/* A key's column: a short one as wide as it needs, else a long one. */
static void plan_key(void *ctx, enum row_field f, bool with)
{
	struct planning *c = ctx;
	const struct key_entry *e = key_entry(f);
	(void)with;
	if (!e->narrow) {
		add_col(c->l, f);
		return;
	}
	int w = e->width ? e->width : (int)strlen(e->header);
	for (size_t i = 0; !e->width && i < c->t->nrows; i++) {
		const char *v = e->text(table__row(c->t, i));
		int n = v ? (int)strlen(v) : 1;
		w = n > w ? n : w;
	}
	c->l->narrow[f] = w;
}

static void plan(struct layout *l, const struct table *t, const struct report_extras *x)
{
	memset(l, 0, sizeof(*l));
	const struct row_keys *k = &t->keys;
	l->fig3 = x && (row_keys__has(k, RF_PROCESS) || row_keys__has(k, RF_THREAD));
	struct planning p = { l, t };
	/* a recording's function is named within its file */
	report_keys(k, x ? REPORT_AFTER_ALWAYS : REPORT_AFTER_NONE, plan_key, &p);
	/* each thread shows its own name, each process its command, as perf
	 * and top do */
	if (t->attrs && row_keys__has(k, RF_THREAD))
		add_col(l, RF_COMM);
	if (t->attrs)
		add_col(l, RF_COMMAND);
	/* all but the last padded to what they hold, up to 40 */
	for (int c = 0; c < l->ncols; c++)
		l->widths[c] = (int)strlen(key_entry(l->cols[c])->header);
	/* one pass over the rows (stored ones are read back): the columns'
	 * widths, and whether any row has a wait or throttling to show */
	for (size_t i = 0; i < t->nrows && (l->ncols > 1 || t->denied_figures); i++) {
		const struct table_row *r = table__row(t, i);
		if (t->denied_figures) {
			l->wait |= r->wait_known;
			l->throttled |= r->throttled_known && r->throttled_ns;
		}
		for (int c = 0; c + 1 < l->ncols; c++) {
			const char *v = long_value(r, l->cols[c]);
			int n = v ? (int)strlen(v) : 9, w = l->widths[c];
			l->widths[c] = n > w ? (n < 40 ? n : 40) : w;
		}
	}
}

struct short_cols {
	FILE *out;
	const struct table *t;
	const struct layout *l;
	const struct table_row *r;	/* NULL: the titles */
	int n;
};

/* One short key column: a task exited shows -1, a value not known '?',
 * a user their name. */
static void short_key(void *ctx, enum row_field f, bool with)
{
	struct short_cols *c = ctx;
	const struct key_entry *e = key_entry(f);
	const struct table_row *r = c->r;
	int w = c->l->narrow[f];
	char buf[64];
	(void)with;
	if (!e->narrow)
		return;
	if (e->text || e->type == KEY_UID) {
		const char *v = !r ? e->header : e->text ? e->text(r) :
				report_user(e->number(r), buf, sizeof(buf));
		c->n += text_put(c->out, v ? v : "?", e->width, w) + 1;
		putc(' ', c->out);
		return;
	}
	int64_t v = r ? e->number(r) : 0;
	if (r && e->type == KEY_START) {	/* seconds into the recording */
		uint64_t o = c->t->origin_ns, ns = (uint64_t)v;
		c->n += put_right(c->out, v < 0 ? "-" :
				  secs(buf, sizeof(buf), ns > o ? ns - o : 0), w) + 1;
		putc(' ', c->out);
		return;
	}
	if (r && e->type == KEY_TASK)
		v = table_id((uint32_t)v);
	const char *s = !r ? e->header : v == -1 && e->type == KEY_TASK ? "-1" : "?";
	if (r && v >= 0) {
		report_fmt_i64(buf, v);
		s = buf;
	}
	c->n += put_right(c->out, s, w) + 1;
	putc(' ', c->out);
}

/* The short key columns, in the order given. */
static int short_keys(FILE *out, const struct table *t, const struct layout *l,
		      const struct table_row *r)
{
	struct short_cols c = { out, t, l, r, 0 };
	report_keys(&t->keys, REPORT_AFTER_NONE, short_key, &c);
	return c.n;
}

static int figure_header(FILE *out, const struct table *t, const struct layout *l)
{
	int n = fprintf(out, "%12s %12s %12s %6s %10s %13s %14s", "APPARENT_S", "STEAL_S",
			"CPU_S", "STEAL%", "SAMPLES", "STEAL_SAMPLES", "SHARE (95% CI)");
	if (l->fig3)
		n += fprintf(out, " %12s %13s", "OWN_CODE_S", "SYSTEM_CODE_S");
	if (t->inclusive)
		n += fprintf(out, " %12s", "INCL_S");
	if (l->wait)
		n += fprintf(out, " %12s", "WAIT_S");
	if (l->throttled)
		n += fprintf(out, " %12s", "THROTTLED_S");
	if (l->wait)
		n += fprintf(out, " %12s", "DENIED_S");
	return n;
}

/* What the row wanted and did not get: each "unknown" where not known. */
static int denied(FILE *out, const struct layout *l, const struct table_row *r)
{
	char a[32];
	int n = 0;
	if (l->wait)
		n += col(out, r->wait_known ? secs(a, sizeof(a), r->wait_ns) : "unknown", 12);
	if (l->throttled)
		n += col(out, r->throttled_known ? secs(a, sizeof(a), r->throttled_ns) : "unknown",
			 12);
	if (l->wait)
		n += col(out, r->denied_known ? secs(a, sizeof(a), r->denied_ns) : "unknown", 12);
	return n;
}

static int figures(FILE *out, const struct table *t, const struct layout *l,
		   const struct table_row *r, bool known)
{
	char a[32];
	int n;
	/* a column at a time: printf only for the percentages (doubles) */
	n = put_right(out, known ? secs(a, sizeof(a), r->apparent_ns) : "unknown", 12);
	n += col(out, known ? secs(a, sizeof(a), r->steal_ns) : "unknown", 12);
	n += col(out, secs(a, sizeof(a), r->cpu_ns), 12);
	if (known)
		n += fprintf(out, " %5.1f%%", pct(r->steal_ns, r->apparent_ns));
	else
		n += col(out, "?", 6);
	n += col(out, num(a, r->samples), 10);
	n += col(out, known ? num(a, r->steal_samples) : "-", 13);
	n += col(out, share(a, sizeof(a), r->samples, t->totals.samples), 14);
	if (l->fig3) {
		n += col(out, secs(a, sizeof(a), r->cpu_ns - r->control_ns), 12);
		n += col(out, secs(a, sizeof(a), r->control_ns), 13);
	}
	if (t->inclusive)
		n += col(out, secs(a, sizeof(a), r->inclusive_ns), 12);
	return n + denied(out, l, r);
}

/* The long columns; the last cut to what is left of width (0: no cut). */
static void long_cols(FILE *out, const struct layout *l, const struct table_row *r,
		      int used, unsigned width)
{
	for (int c = 0; c < l->ncols; c++) {
		const char *v = r ? long_value(r, l->cols[c]) : key_entry(l->cols[c])->header;
		if (!v)	/* an attribute may be missing; a key not known */
			v = l->cols[c] == RF_COMMAND || l->cols[c] == RF_COMM ? "" : "[unknown]";
		fputs("  ", out);
		if (c + 1 < l->ncols) {
			used += 2 + text_put(out, v, l->widths[c], l->widths[c]);
			continue;
		}
		int room = width ? (int)width - used - 2 : 0;
		if (width && room < 8)
			room = 8;
		text_put(out, v, room, 0);
	}
	putc('\n', out);
}

/* How steal was found: from what, what the kernel's runtime holds (and
 * how that was known), and the least steal it tells from noise. */
static void write_steal_method(FILE *out, const struct report_extras *x)
{
	if (!x->steal_method || !*x->steal_method)
		return;
	fprintf(out, ", %s%s", !strcmp(x->steal_method, "residual") ?
		"the residual of each stint" : "sample gaps",
		x->steal_scaled ? " scaled to /proc/stat" : "");
	if (x->kernel_accounting && *x->kernel_accounting) {
		/* a recording's words: a crafted one could hold escapes */
		fputs(" (", out);
		text_put(out, x->kernel_accounting, 0, 0);
		fprintf(out, ": %s; known by ",
			steal_accounting__describe_name(x->kernel_accounting));
		text_put(out, x->accounting_source ? x->accounting_source : "", 0, 0);
		putc(')', out);
	}
	fprintf(out, ", resolution %" PRIu64 " us", x->steal_resolution_ns / 1000);
	if (x->steal_clock < 0)
		fputs("; the kernel has counted no steal since boot (no steal clock): "
		      "/proc/stat is no reference here", out);
}

/* A live recording's per-CPU steal beside the kernel's own figure. */
static void write_cpus(FILE *out, const struct report_extras *x)
{
	char a[32], b[32], c[32];
	fputs("\nsteal source: ", out);
	text_put(out, x->steal_source, 0, 0);
	write_steal_method(out, x);
	if (!strcmp(x->steal_source, "tracepoints") && !strcmp(x->steal_method, "residual"))
		fprintf(out, "; switch overhead %" PRId64 " ns a context switch, taken out",
			x->bias_ns);
	fprintf(out, "; %" PRIu64 " records lost%s", x->lost,
		x->lost ? " (figures are low by what they held)" : "");
	if (x->lossy_stints)
		fprintf(out, "; steal not measured in %" PRIu64 " stints over them",
			x->lossy_stints);
	if (x->missed_switches)
		fprintf(out, "; %" PRIu64 " context switches missing from the kernel's records, "
			"placed from the events around them", x->missed_switches);
	fputc('\n', out);
	fprintf(out, "%5s %12s %14s %12s\n", "CPU", "STEAL_S", "KERNEL_STEAL_S", "IDLE_S");
	for (uint32_t i = 0; i < x->ncpus; i++) {
		const struct report_cpu *cp = &x->cpus[i];
		fprintf(out, "%5" PRIu32 " %12s %14s %12s\n", cp->cpu,
			x->steal_known ? secs(a, sizeof(a), cp->steal_ns) : "unknown",
			cp->kernel_known ? secs(b, sizeof(b), cp->kernel_steal_ns) : "unknown",
			secs(c, sizeof(c), cp->idle_ns));
	}
	fputs("KERNEL_STEAL_S: the steal /proc/stat counted on that CPU over the recording\n",
	      out);
}

/* Where each cgroup's time went (docs/cgroups.md): shown when there is
 * more to say than "everything ran in the root", or when asked for by
 * cgroup (throttling and wait are only here, whatever the cgroups). */
static void write_cgroups(FILE *out, const struct table *t, const struct report_extras *x)
{
	bool worth = x->ncgroups > 1 || (x->ncgroups && row_keys__has(&t->keys, RF_CGROUP));
	for (uint32_t i = 0; i < x->ncgroups && !worth; i++)
		worth = strcmp(x->cgroups[i].path, "/") ||
			(x->cgroups[i].throttled_known && x->cgroups[i].throttled_ns);
	if (!worth)
		return;
	char a[32], b[32], c[32], d[32], e[32];
	fprintf(out, "\n%12s %12s %12s %12s %12s  %s\n", "CPU_S", "STEAL_S", "THROTTLED_S",
		"WAIT_S", "USAGE_S", "CGROUP");
	uint32_t shown = x->ncgroups < 10 ? x->ncgroups : 10;
	for (uint32_t i = 0; i < shown; i++) {
		const struct report_cgroup *g = &x->cgroups[i];
		fprintf(out, "%12s %12s %12s %12s %12s  ", secs(a, sizeof(a), g->cpu_ns),
			x->steal_known ? secs(b, sizeof(b), g->steal_ns) : "unknown",
			g->throttled_known ? secs(c, sizeof(c), g->throttled_ns) : "unknown",
			g->wait_known ? secs(d, sizeof(d), g->wait_ns) : "unknown",
			g->usage_known ? secs(e, sizeof(e), g->usage_ns) : "unknown");
		char name[512];
		text_put(out, cgroup_name(g->path, name, sizeof(name)), 0, 0);
		putc('\n', out);
	}
	if (shown < x->ncgroups)
		fprintf(out, "... %" PRIu32 " more cgroups (--format json lists all)\n",
			x->ncgroups - shown);
}

/* The rows past --top, summed on one line. */
static void write_rest(FILE *out, const struct table *t, size_t from, bool known)
{
	uint64_t app = 0, steal = 0, cpu = 0;
	for (size_t i = from; i < t->nrows; i++) {
		const struct table_row *r = table__row(t, i);
		app += r->apparent_ns;
		steal += r->steal_ns;
		cpu += r->cpu_ns;
	}
	char a[32], b[32], c[32];
	fprintf(out, "... %zu more rows: apparent %s s, steal %s s, cpu %s s (--top 0 shows all)\n",
		t->nrows - from, known ? secs(a, sizeof(a), app) : "unknown",
		known ? secs(b, sizeof(b), steal) : "unknown", secs(c, sizeof(c), cpu));
}

static void write_totals(FILE *out, const struct table *t, const struct report_extras *x)
{
	const struct table_totals *tot = &t->totals;
	char a[32], b[32], c[32];
	if (x && !x->steal_known) {
		fprintf(out, "\nrun %s s, steal unknown, idle %s s: ",
			secs(a, sizeof(a), tot->run_ns), secs(c, sizeof(c), tot->idle_ns));
		text_put(out, x->steal_source, 0, 0);
		putc('\n', out);
		return;
	}
	uint64_t held = tot->run_ns + tot->steal_ns;
	fprintf(out, "\nrun %s s, steal %s s (%.2f%% of run + steal), idle %s s\n",
		secs(a, sizeof(a), tot->run_ns), secs(b, sizeof(b), tot->steal_ns),
		pct(tot->steal_ns, held), secs(c, sizeof(c), tot->idle_ns));
	int64_t un = tot->unattributed_steal_ns;
	if (!x)
		fprintf(out, "steal attributed %s s (%.1f%%), unattributed %s%s s\n",
			secs(a, sizeof(a), tot->attributed_steal_ns),
			pct(tot->attributed_steal_ns, tot->steal_ns), un < 0 ? "-" : "",
			secs(b, sizeof(b), un < 0 ? (uint64_t)-un : (uint64_t)un));
}

/* Each method in a user's words (docs/analyze.md has the details). */
static const char *method_words(enum steal_method m)
{
	switch (m) {
	case METHOD_BRACKETED:
		return "steal charged where the same program ran just before and after it";
	case METHOD_RATIO:
		return "steal shared out by each program's share of steal samples";
	default:
		return "steal charged to the program that ran just before it";
	}
}

static void write_title(FILE *out, const struct table *t, const struct report_extras *x)
{
	const struct table_totals *tot = &t->totals;
	char a[32];
	fprintf(out, "CPU time by %s, steal taken out", t->by);
	if (x) {
		/* the host and scope come from the recording: an imported
		 * perf script's "# hostname :" line is anybody's text */
		if (x->host && *x->host && strcmp(x->host, "unknown")) {
			fputs(", on ", out);
			text_put(out, x->host, 0, 0);
		}
		fprintf(out, ": %.1f s recorded (", (double)x->duration_ns / NSEC_PER_SEC);
		text_put(out, x->scope, 0, 0);
		fputs(")\n", out);
	} else
		fprintf(out, "; each sample's time %s\n",
			t->timestamps ? "up to the next one's timestamp" : "the fixed interval");
	fprintf(out, "%s (--method %s); %" PRIu32 " thread-function pairs\n",
		method_words(t->method), steal_method__name(t->method), tot->programs);
	fprintf(out, "samples: %" PRIu64 " run, %" PRIu64 " steal, %" PRIu64
		" idle, one every %s ms, on %" PRIu32 " CPU%s\n\n",
		tot->samples, tot->steal_samples, tot->idle_samples,
		secs(a, sizeof(a), t->interval_ns * 1000), tot->streams,
		tot->streams == 1 ? "" : "s");
}

/* One line under the rows for the columns whose names cannot say it all. */
static void write_legend(FILE *out, const struct layout *l)
{
	fputs("STEAL_SAMPLES: samples that put steal on the row", out);
	if (l->fig3)
		fputs("; OWN_CODE_S + SYSTEM_CODE_S = CPU_S (system code: the kernel, "
		      "or --control's accounts)", out);
	if (l->wait)
		fputs("; WAIT_S: time its threads waited on a run queue (schedstat), "
		      "DENIED_S = STEAL_S + WAIT_S", out);
	if (l->throttled)
		fputs("; THROTTLED_S: its cgroup's quota (all the group's tasks, "
		      "already within WAIT_S)", out);
	fputc('\n', out);
}

static int write_text(FILE *out, const struct table *t, const struct report_extras *x)
{
	struct layout l;
	bool known = !x || x->steal_known;
	size_t shown = x && x->top && x->top < t->nrows ? x->top : t->nrows;
	unsigned width = x ? x->width : 0;
	plan(&l, t, x);
	write_title(out, t, x);
	int used = short_keys(out, t, &l, NULL);
	used += figure_header(out, t, &l);
	long_cols(out, &l, NULL, used, width);
	for (size_t i = 0; i < shown; i++) {
		const struct table_row *r = table__row(t, i);
		used = short_keys(out, t, &l, r);
		used += figures(out, t, &l, r, known);
		long_cols(out, &l, r, used, width);
	}
	if (shown < t->nrows)
		write_rest(out, t, shown, known);
	write_legend(out, &l);
	write_totals(out, t, x);
	if (x)
		write_cpus(out, x);
	if (x)
		write_cgroups(out, t, x);
	return ferror(out) ? -EIO : 0;
}

const struct report_writer report_text = {
	.name = "text", .write = write_text,
	.needs = REPORT_SAMPLING,
	.by = "thread",
};
