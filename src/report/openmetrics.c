/*
 * report/openmetrics: the rows as counters a Prometheus scrape or
 * textfile collector reads (docs/formats.md): cpuledger_cpu_seconds_total
 * and cpuledger_steal_seconds_total, one sample per row, labelled with
 * what the row is keyed by (process and account with `report -f
 * openmetrics`). Steal that was not measured is left out, never given as
 * zero. Families are named with their _total suffix, as the Prometheus
 * text format has it and `promtool check metrics` checks; the input ends
 * with "# EOF" as OpenMetrics asks.
 */
#include <inttypes.h>
#include <stdbool.h>

#include "report.h"
#include "../core/banned.h"

/* A label value: backslash, double quote and newline escaped. */
static void put_label(FILE *out, bool *first, const char *name, const char *v)
{
	fprintf(out, "%s%s=\"", *first ? "" : ",", name);
	*first = false;
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(out, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			putc(*v, out);
	}
	putc('"', out);
}

static void put_labels(FILE *out, const struct table *t, const struct table_row *r,
		       const struct report_extras *x)
{
	bool first = true;
	char num[16];
	putc('{', out);
	put_label(out, &first, x ? "host" : "vm", r->vm);
	snprintf(num, sizeof(num), "%" PRIu32, r->pid);
	put_label(out, &first, "pid", num);
	if (t->by == BY_THREAD || t->by == BY_FUNCTION) {
		snprintf(num, sizeof(num), "%" PRIu32, r->tid);
		put_label(out, &first, "tid", num);
	}
	if (r->command)
		put_label(out, &first, "command", r->command);
	if (t->by == BY_FUNCTION && r->function)
		put_label(out, &first, "function", r->function);
	if ((t->by == BY_FUNCTION || t->by == BY_DSO) && r->dso)
		put_label(out, &first, "dso", r->dso);
	if (t->by == BY_ACCOUNT)	/* time no function was found for */
		put_label(out, &first, "account", r->account ? r->account : "[unknown]");
	putc('}', out);
}

static void family(FILE *out, const struct table *t, const struct report_extras *x,
		   const char *name, const char *help, bool steal)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
	for (size_t i = 0; i < t->nrows; i++) {
		const struct table_row *r = &t->rows[i];
		uint64_t ns = steal ? r->steal_ns : r->cpu_ns;
		fputs(name, out);
		put_labels(out, t, r, x);
		fprintf(out, " %" PRIu64 ".%09" PRIu64 "\n", ns / 1000000000u,
			ns % 1000000000u);
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

const struct report_writer report_openmetrics = { "openmetrics", write_openmetrics };
