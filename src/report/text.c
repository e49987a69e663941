/*
 * report/text: a table for people. Rows largest apparent time first; times
 * in seconds to the millisecond (the sampling interval's own resolution);
 * the totals say how much steal there was and how much the method could
 * put on a program.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "report.h"
#include "../core/stats.h"
#include "../core/banned.h"

/* ns as seconds with three decimals, rounded to the nearest millisecond. */
static const char *secs(char *buf, size_t size, uint64_t ns)
{
	uint64_t ms = ns / 1000000 + (ns % 1000000 >= 500000);
	snprintf(buf, size, "%" PRIu64 ".%03" PRIu64, ms / 1000, ms % 1000);
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

/* A live recording's per-CPU steal beside the kernel's own figure. */
static void write_cpus(FILE *out, const struct report_extras *x)
{
	char a[32], b[32];
	fprintf(out, "\nsteal source: %s", x->steal_source);
	if (!strcmp(x->steal_source, "tracepoints"))
		fprintf(out, "; per-stint bias %" PRId64 " ns", x->bias_ns);
	fprintf(out, "; %" PRIu64 " records lost%s", x->lost,
		x->lost ? " (figures are low by what they held)" : "");
	if (x->lossy_stints)
		fprintf(out, "; steal not measured in %" PRIu64 " stints over them",
			x->lossy_stints);
	fputc('\n', out);
	fprintf(out, "%5s %12s %12s\n", "CPU", "STEAL_S", "KERNEL_S");
	for (uint32_t i = 0; i < x->ncpus; i++) {
		const struct report_cpu *c = &x->cpus[i];
		fprintf(out, "%5" PRIu32 " %12s %12s\n", c->cpu,
			secs(a, sizeof(a), c->steal_ns),
			c->kernel_known ? secs(b, sizeof(b), c->kernel_steal_ns) : "unknown");
	}
}

static int write_text(FILE *out, const struct table *t,
		      const struct report_extras *x)
{
	const struct table_totals *tot = &t->totals;
	char a[32], b[32], c[32];
	int vmw = 2, fnw = 8;
	bool dso = t->by == BY_DSO || (t->by == BY_FUNCTION && x);
	/* seed 000's FIG. 3: per program, target and control program time */
	bool fig3 = x && (t->by == BY_PROCESS || t->by == BY_THREAD);

	for (size_t i = 0; i < t->nrows; i++) {
		int n = (int)strlen(t->rows[i].vm);
		if (n > vmw)
			vmw = n;
	}

	if (x)
		fprintf(out, "Steal-corrected CPU time by %s on %s, method %s, %.1f s recorded (%s)\n",
			group_by__name(t->by), x->host, steal_method__name(t->method),
			(double)x->duration_ns / 1e9, x->scope);
	else
		fprintf(out, "Steal-corrected CPU time by %s, method %s, %s\n",
			group_by__name(t->by), steal_method__name(t->method),
			t->timestamps ? "durations from timestamps" :
					"fixed sample interval");
	fprintf(out, "%" PRIu32 " streams, %" PRIu32 " programs; samples: %"
		PRIu64 " run, %" PRIu64 " steal, %" PRIu64 " idle; interval %s ms\n\n",
		tot->streams, tot->programs, tot->samples, tot->steal_samples,
		tot->idle_samples, secs(a, sizeof(a), t->interval_ns * 1000));

	fprintf(out, "%-*s %8s ", vmw, "VM", "PID");
	if (t->by == BY_THREAD || t->by == BY_FUNCTION)
		fprintf(out, "%8s ", "TID");
	fprintf(out, "%12s %12s %12s %6s %10s %10s %14s", "APPARENT_S", "STEAL_S",
		"CPU_S", "STEAL%", "SAMPLES", "STEAL_SMP", "SHARE (95% CI)");
	if (fig3)
		fprintf(out, " %12s %12s", "TARGET_S", "CONTROL_S");
	if (t->inclusive)
		fprintf(out, " %12s", "INCL_S");
	if (t->by == BY_FUNCTION)
		fprintf(out, "  %-*s", fnw, "FUNCTION");
	if (dso)
		fputs("  DSO", out);
	if (t->by == BY_ACCOUNT)
		fputs("  ACCOUNT", out);
	if (x)
		fputs("  COMMAND", out);
	fputc('\n', out);

	for (size_t i = 0; i < t->nrows; i++) {
		const struct table_row *r = &t->rows[i];
		fprintf(out, "%-*s %8" PRIu32 " ", vmw, r->vm, r->pid);
		if (t->by == BY_THREAD || t->by == BY_FUNCTION)
			fprintf(out, "%8" PRIu32 " ", r->tid);
		if (!x || x->steal_known)
			fprintf(out, "%12s %12s %12s %5.1f%% %10" PRIu64 " %10" PRIu64,
				secs(a, sizeof(a), r->apparent_ns),
				secs(b, sizeof(b), r->steal_ns),
				secs(c, sizeof(c), r->cpu_ns),
				pct(r->steal_ns, r->apparent_ns), r->samples,
				r->steal_samples);
		else
			fprintf(out, "%12s %12s %12s %6s %10" PRIu64 " %10s", "unknown",
				"unknown", secs(c, sizeof(c), r->cpu_ns), "?",
				r->samples, "-");
		fprintf(out, " %14s", share(a, sizeof(a), r->samples, tot->samples));
		if (fig3)
			fprintf(out, " %12s %12s",
				secs(a, sizeof(a), r->cpu_ns - r->control_ns),
				secs(b, sizeof(b), r->control_ns));
		if (t->inclusive)
			fprintf(out, " %12s", secs(a, sizeof(a), r->inclusive_ns));
		if (t->by == BY_FUNCTION)
			fprintf(out, "  %s", r->function[0] ? r->function : "[unknown]");
		if (dso)
			fprintf(out, "  %s", r->dso ? r->dso : "[unknown]");
		if (t->by == BY_ACCOUNT)
			fprintf(out, "  %s", r->account ? r->account : "[unknown]");
		if (x)
			fprintf(out, "  %s", r->command ? r->command : "");
		fputc('\n', out);
	}

	uint64_t held = tot->run_ns + tot->steal_ns;
	if (x && !x->steal_known) {
		fprintf(out, "\nrun %s s, steal unknown: %s\n",
			secs(a, sizeof(a), tot->run_ns), x->steal_source);
		return ferror(out) ? -EIO : 0;
	}
	fprintf(out, "\nrun %s s, steal %s s (%.2f%% of run + steal), idle %s s\n",
		secs(a, sizeof(a), tot->run_ns), secs(b, sizeof(b), tot->steal_ns),
		pct(tot->steal_ns, held), secs(c, sizeof(c), tot->idle_ns));
	int64_t un = tot->unattributed_steal_ns;
	if (!x)
		fprintf(out, "steal attributed %s s (%.1f%%), unattributed %s%s s\n",
			secs(a, sizeof(a), tot->attributed_steal_ns),
			pct(tot->attributed_steal_ns, tot->steal_ns), un < 0 ? "-" : "",
			secs(b, sizeof(b), un < 0 ? (uint64_t)-un : (uint64_t)un));
	else
		write_cpus(out, x);
	return ferror(out) ? -EIO : 0;
}

const struct report_writer report_text = { "text", write_text };
