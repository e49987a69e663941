/*
 * report/openmetrics: the rows as counters a Prometheus scrape or
 * textfile collector reads (docs/formats.md): cpuledger_cpu_seconds_total
 * and cpuledger_steal_seconds_total, one sample per row, labelled with the
 * fields the rows are keyed by (host and account with `report -f
 * openmetrics`, unless --by says otherwise). Steal that was not measured
 * is left out, never given as zero. Families are named with their _total
 * suffix, as the Prometheus text format has it and `promtool check
 * metrics` checks; the input ends with "# EOF" as OpenMetrics asks. Label
 * values are valid UTF-8 whatever bytes a process put in its name: what
 * is not UTF-8 becomes U+FFFD, and backslash, quote and newline are
 * escaped.
 */
#include <stdbool.h>
#include <string.h>

#include "report.h"
#include "../core/units.h"
#include "../core/banned.h"

static void put_num_label(FILE *out, bool *first, const char *name, int64_t v)
{
	char num[REPORT_NUM_MAX];
	report_fmt_i64(num, v);
	om_put_label(out, first, name, num);
}

struct labels {
	FILE *out;
	bool first;
	const struct table_row *r;
	const struct report_extras *x;
};

/* One key's label, named as a recording's rows name it (host for vm);
 * one shown with another key only when known. */
static void key_label(void *ctx, enum row_field f, bool with)
{
	struct labels *c = ctx;
	const struct key_entry *e = key_entry(f);
	const char *name = c->x && e->label ? e->label : e->field;
	if (e->text) {
		const char *v = e->text(c->r);
		if (!v && with)
			return;
		om_put_label(c->out, &c->first, name, v || !e->unknown ? v : e->unknown);
	} else {
		int64_t v = e->number(c->r);
		if (v < 0 && e->type == KEY_START)
			return;	/* alive at the start: no start known */
		put_num_label(c->out, &c->first, name,
			      e->type == KEY_TASK ? table_id((uint32_t)v) : v);
	}
}

/* The labels of a row: its key's fields (a function with its file, unless
 * a key) and its process's command. */
static void put_labels(FILE *out, const struct table *t, const struct table_row *r,
		       const struct report_extras *x)
{
	struct labels c = { out, true, r, x };
	putc('{', out);
	report_keys(&t->keys, REPORT_AFTER_UNLESS_KEY, key_label, &c);
	if (t->attrs && r->command && !row_keys__has(&t->keys, RF_COMMAND))
		om_put_label(out, &c.first, "command", r->command);
	putc('}', out);
}

/* " S.NNNNNNNNN\n", ns in seconds to the nanosecond, as printf's
 * " %" PRIu64 ".%09" PRIu64 "\n" writes it: a sample a row, no printf. */
static void put_seconds(FILE *out, uint64_t ns)
{
	char buf[REPORT_NUM_MAX + 12];
	size_t n = 1 + report_fmt_u64(buf + 1, ns / NSEC_PER_SEC);
	uint64_t frac = ns % NSEC_PER_SEC;
	buf[0] = ' ';
	buf[n] = '.';
	for (size_t k = 9; k >= 1; k--) {
		buf[n + k] = (char)('0' + frac % 10);
		frac /= 10;
	}
	buf[n + 10] = '\n';
	fwrite(buf, 1, n + 11, out);
}

static void family(FILE *out, const struct table *t, const struct report_extras *x,
		   const char *name, const char *help, bool steal)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
	for (size_t i = 0; i < t->nrows; i++) {
		const struct table_row *r = table__row(t, i);
		uint64_t ns = steal ? r->steal_ns : r->cpu_ns;
		fputs(name, out);
		put_labels(out, t, r, x);
		put_seconds(out, ns);
	}
}

static int write_openmetrics(FILE *out, const struct table *t,
			     const struct report_extras *x)
{
	family(out, t, x, "cpuledger_cpu_seconds_total",
	       "CPU time the program ran, steal taken out.", false);
	if (!x || x->steal_known)
		family(out, t, x, "cpuledger_steal_seconds_total",
		       "Time the hypervisor stole while the program held a CPU.", true);
	fputs("# EOF\n", out);
	return ferror(out) ? -EIO : 0;
}

const struct report_writer report_openmetrics = {
	.name = "openmetrics", .write = write_openmetrics,
	.by = "vm,account",	/* counters by account */
};
