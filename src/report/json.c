/* report/json: the table as one JSON object (docs/analyze.md). */
#include <inttypes.h>

#include "report.h"
#include "../core/banned.h"

/* A figure that the recording may not have been able to measure. */
static void put_known(FILE *out, bool known, uint64_t v)
{
	if (known)
		fprintf(out, "%" PRIu64, v);
	else
		fputs("null", out);
}

static void write_extras(FILE *out, const struct report_extras *x)
{
	fputs("\"host\":", out);
	json_put_string(out, x->host);
	fputs(",\"steal_source\":", out);
	json_put_string(out, x->steal_source);
	fputs(",\"scope\":", out);
	json_put_string(out, x->scope);
	fprintf(out, ",\"duration_ns\":%" PRIu64 ",\"bias_ns\":%" PRId64
		",\"lost\":%" PRIu64 ",\"lossy_stints\":%" PRIu64
		",\"bad_records\":%" PRIu64 ",\"clock_samples\":%" PRIu64 ",\"cpus\":[",
		x->duration_ns, x->bias_ns, x->lost, x->lossy_stints, x->bad_records,
		x->clock_samples);
	for (uint32_t i = 0; i < x->ncpus; i++) {
		const struct report_cpu *c = &x->cpus[i];
		fprintf(out, "%s{\"cpu\":%" PRIu32 ",\"steal_ns\":%" PRIu64
			",\"kernel_steal_ns\":", i ? "," : "", c->cpu,
			x->steal_known ? c->steal_ns : 0);
		put_known(out, c->kernel_known, c->kernel_steal_ns);
		fprintf(out, ",\"lost\":%" PRIu64 "}", c->lost);
	}
	fputs("],", out);
}

static int write_json(FILE *out, const struct table *t,
		      const struct report_extras *x)
{
	const struct table_totals *tot = &t->totals;
	fprintf(out, "{\"version\":%d,\"method\":\"%s\",\"by\":\"%s\","
		"\"interval_ns\":%" PRIu64 ",\"timestamps\":%s,",
		REPORT_FORMAT_VERSION, steal_method__name(t->method),
		group_by__name(t->by), t->interval_ns,
		t->timestamps ? "true" : "false");
	if (x)
		write_extras(out, x);
	bool known = !x || x->steal_known;
	fprintf(out, "\"totals\":{\"run_ns\":%" PRIu64 ",\"steal_ns\":", tot->run_ns);
	put_known(out, known, tot->steal_ns);
	fprintf(out, ",\"idle_ns\":%" PRIu64 ",\"attributed_steal_ns\":", tot->idle_ns);
	put_known(out, known, tot->attributed_steal_ns);
	fputs(",\"unattributed_steal_ns\":", out);
	if (known)
		fprintf(out, "%" PRId64, tot->unattributed_steal_ns);
	else
		fputs("null", out);
	fprintf(out, ",\"samples\":%" PRIu64
		",\"steal_samples\":%" PRIu64 ",\"idle_samples\":%" PRIu64
		",\"streams\":%" PRIu32 ",\"programs\":%" PRIu32 "},\"rows\":[",
		tot->samples, tot->steal_samples,
		tot->idle_samples, tot->streams, tot->programs);
	for (size_t i = 0; i < t->nrows; i++) {
		const struct table_row *r = &t->rows[i];
		fputs(i ? ",\n{\"vm\":" : "\n{\"vm\":", out);
		json_put_string(out, r->vm);
		fprintf(out, ",\"pid\":%" PRIu32, r->pid);
		if (t->by == BY_THREAD || t->by == BY_FUNCTION)
			fprintf(out, ",\"tid\":%" PRIu32, r->tid);
		if (t->by == BY_FUNCTION) {
			fputs(",\"function\":", out);
			json_put_string(out, r->function);
		}
		if (r->dso) {
			fputs(",\"dso\":", out);
			json_put_string(out, r->dso);
		}
		if (r->account) {
			fputs(",\"account\":", out);
			json_put_string(out, r->account);
		}
		if (x)
			fprintf(out, ",\"target_ns\":%" PRIu64 ",\"control_ns\":%" PRIu64,
				r->cpu_ns - r->control_ns, r->control_ns);
		if (t->inclusive)
			fprintf(out, ",\"self_ns\":%" PRIu64 ",\"inclusive_ns\":%" PRIu64,
				r->cpu_ns, r->inclusive_ns);
		if (x) {
			fputs(",\"command\":", out);
			json_put_string(out, r->command ? r->command : "");
		}
		fprintf(out, ",\"samples\":%" PRIu64 ",\"steal_samples\":%" PRIu64
			",\"cpu_ns\":%" PRIu64 ",\"steal_ns\":",
			r->samples, r->steal_samples, r->cpu_ns);
		put_known(out, known, r->steal_ns);
		fputs(",\"apparent_ns\":", out);
		put_known(out, known, r->apparent_ns);
		fprintf(out, ",\"corrected_ns\":%" PRIu64 "}", r->corrected_ns);
	}
	fputs("]}\n", out);
	return ferror(out) ? -EIO : 0;
}

const struct report_writer report_json = { "json", write_json };
