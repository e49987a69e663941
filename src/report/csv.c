/* report/csv: one line per row under a header naming the key's columns
 * (docs/analyze.md), and a command column for a live recording. Totals
 * are not rows: they are in text and JSON. */
#include <inttypes.h>
#include <stdbool.h>

#include "report.h"
#include "../core/banned.h"

static int write_csv(FILE *out, const struct table *t,
		     const struct report_extras *x)
{
	bool dso = t->by == BY_DSO || (t->by == BY_FUNCTION && x);
	fputs("vm,pid", out);
	if (t->by == BY_THREAD || t->by == BY_FUNCTION)
		fputs(",tid", out);
	if (t->by == BY_FUNCTION)
		fputs(",function", out);
	if (dso)
		fputs(",dso", out);
	if (t->by == BY_ACCOUNT)
		fputs(",account", out);
	fputs(",samples,steal_samples,cpu_ns,steal_ns,apparent_ns,corrected_ns", out);
	if (t->inclusive)
		fputs(",inclusive_ns", out);
	fputs(x ? ",target_ns,control_ns,command\n" : "\n", out);
	for (size_t i = 0; i < t->nrows; i++) {
		const struct table_row *r = &t->rows[i];
		csv_put_field(out, r->vm);
		fprintf(out, ",%" PRIu32, r->pid);
		if (t->by == BY_THREAD || t->by == BY_FUNCTION)
			fprintf(out, ",%" PRIu32, r->tid);
		if (t->by == BY_FUNCTION) {
			putc(',', out);
			csv_put_field(out, r->function);
		}
		if (dso) {
			putc(',', out);
			csv_put_field(out, r->dso ? r->dso : "");
		}
		if (t->by == BY_ACCOUNT) {
			putc(',', out);
			csv_put_field(out, r->account ? r->account : "");
		}
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64, r->samples,
			r->steal_samples, r->cpu_ns, r->steal_ns,
			r->apparent_ns, r->corrected_ns);
		if (t->inclusive)
			fprintf(out, ",%" PRIu64, r->inclusive_ns);
		if (x) {
			fprintf(out, ",%" PRIu64 ",%" PRIu64 ",", r->cpu_ns - r->control_ns,
				r->control_ns);
			csv_put_field(out, r->command ? r->command : "");
		}
		putc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}

const struct report_writer report_csv = { "csv", write_csv };
