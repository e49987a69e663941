/* report/json: the table as one JSON object (docs/analyze.md). */
#include <inttypes.h>

#include "report.h"
#include "../core/banned.h"

static int write_json(FILE *out, const struct table *t)
{
	const struct table_totals *x = &t->totals;
	fprintf(out, "{\"version\":%d,\"method\":\"%s\",\"by\":\"%s\","
		"\"interval_ns\":%" PRIu64 ",\"timestamps\":%s,",
		REPORT_FORMAT_VERSION, steal_method__name(t->method),
		group_by__name(t->by), t->interval_ns,
		t->timestamps ? "true" : "false");
	fprintf(out, "\"totals\":{\"run_ns\":%" PRIu64 ",\"steal_ns\":%" PRIu64
		",\"idle_ns\":%" PRIu64 ",\"attributed_steal_ns\":%" PRIu64
		",\"unattributed_steal_ns\":%" PRId64 ",\"samples\":%" PRIu64
		",\"steal_samples\":%" PRIu64 ",\"idle_samples\":%" PRIu64
		",\"streams\":%" PRIu32 ",\"programs\":%" PRIu32 "},\"rows\":[",
		x->run_ns, x->steal_ns, x->idle_ns, x->attributed_steal_ns,
		x->unattributed_steal_ns, x->samples, x->steal_samples,
		x->idle_samples, x->streams, x->programs);
	for (size_t i = 0; i < t->nrows; i++) {
		const struct table_row *r = &t->rows[i];
		fputs(i ? ",\n{\"vm\":" : "\n{\"vm\":", out);
		json_put_string(out, r->vm);
		fprintf(out, ",\"pid\":%" PRIu32, r->pid);
		if (t->by != BY_PROCESS)
			fprintf(out, ",\"tid\":%" PRIu32, r->tid);
		if (t->by == BY_FUNCTION) {
			fputs(",\"function\":", out);
			json_put_string(out, r->function);
		}
		fprintf(out, ",\"samples\":%" PRIu64 ",\"steal_samples\":%" PRIu64
			",\"cpu_ns\":%" PRIu64 ",\"steal_ns\":%" PRIu64
			",\"apparent_ns\":%" PRIu64 ",\"corrected_ns\":%" PRIu64 "}",
			r->samples, r->steal_samples, r->cpu_ns, r->steal_ns,
			r->apparent_ns, r->corrected_ns);
	}
	fputs("]}\n", out);
	return ferror(out) ? -EIO : 0;
}

const struct report_writer report_json = { "json", write_json };
