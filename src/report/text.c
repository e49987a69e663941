/*
 * report/text: a table for people. Rows largest apparent time first; times
 * in seconds to the millisecond (the sampling interval's own resolution);
 * the totals say how much steal there was and how much the method could
 * put on a program.
 */
#include <inttypes.h>
#include <string.h>

#include "report.h"
#include "../core/banned.h"

/* ns as seconds with three decimals, rounded to the nearest millisecond. */
static const char *secs(char *buf, size_t size, uint64_t ns)
{
	uint64_t ms = ns / 1000000 + (ns % 1000000 >= 500000);
	snprintf(buf, size, "%" PRIu64 ".%03" PRIu64, ms / 1000, ms % 1000);
	return buf;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int write_text(FILE *out, const struct table *t)
{
	const struct table_totals *x = &t->totals;
	char a[32], b[32], c[32];
	int vmw = 2, fnw = 8;

	for (size_t i = 0; i < t->nrows; i++) {
		int n = (int)strlen(t->rows[i].vm);
		if (n > vmw)
			vmw = n;
	}

	fprintf(out, "Steal-corrected CPU time by %s, method %s, %s\n",
		group_by__name(t->by), steal_method__name(t->method),
		t->timestamps ? "durations from timestamps" :
				"fixed sample interval");
	fprintf(out, "%" PRIu32 " streams, %" PRIu32 " programs; samples: %"
		PRIu64 " run, %" PRIu64 " steal, %" PRIu64 " idle; interval %s ms\n\n",
		x->streams, x->programs, x->samples, x->steal_samples,
		x->idle_samples, secs(a, sizeof(a), t->interval_ns * 1000));

	fprintf(out, "%-*s %8s ", vmw, "VM", "PID");
	if (t->by != BY_PROCESS)
		fprintf(out, "%8s ", "TID");
	fprintf(out, "%12s %12s %12s %6s %10s %10s", "APPARENT_S", "STEAL_S",
		"CPU_S", "STEAL%", "SAMPLES", "STEAL_SMP");
	if (t->by == BY_FUNCTION)
		fprintf(out, "  %-*s", fnw, "FUNCTION");
	fputc('\n', out);

	for (size_t i = 0; i < t->nrows; i++) {
		const struct table_row *r = &t->rows[i];
		fprintf(out, "%-*s %8" PRIu32 " ", vmw, r->vm, r->pid);
		if (t->by != BY_PROCESS)
			fprintf(out, "%8" PRIu32 " ", r->tid);
		fprintf(out, "%12s %12s %12s %5.1f%% %10" PRIu64 " %10" PRIu64,
			secs(a, sizeof(a), r->apparent_ns),
			secs(b, sizeof(b), r->steal_ns),
			secs(c, sizeof(c), r->cpu_ns),
			pct(r->steal_ns, r->apparent_ns), r->samples,
			r->steal_samples);
		if (t->by == BY_FUNCTION)
			fprintf(out, "  %s", r->function[0] ? r->function : "[unknown]");
		fputc('\n', out);
	}

	uint64_t held = x->run_ns + x->steal_ns;
	fprintf(out, "\nrun %s s, steal %s s (%.2f%% of run + steal), idle %s s\n",
		secs(a, sizeof(a), x->run_ns), secs(b, sizeof(b), x->steal_ns),
		pct(x->steal_ns, held), secs(c, sizeof(c), x->idle_ns));
	int64_t un = x->unattributed_steal_ns;
	fprintf(out, "steal attributed %s s (%.1f%%), unattributed %s%s s\n",
		secs(a, sizeof(a), x->attributed_steal_ns),
		pct(x->attributed_steal_ns, x->steal_ns), un < 0 ? "-" : "",
		secs(b, sizeof(b), un < 0 ? (uint64_t)-un : (uint64_t)un));
	return ferror(out) ? -EIO : 0;
}

const struct report_writer report_text = { "text", write_text };
