/* report/csv: one line per row under a header naming its fields: the
 * key's fields in the order given, one value a field, then the figures,
 * then (for a recording) the target and control time and the process's
 * command and thread's comm where the rows have them (docs/analyze.md,
 * docs/formats.md). A value not known is an empty field, never 0. Totals
 * are not rows: they are in text and JSON. */
#include <inttypes.h>
#include <stdbool.h>

#include "report.h"
#include "../core/banned.h"

static void header(FILE *out, const struct table *t, const struct report_extras *x)
{
	bool pid_done = false, first = true;
	for (uint8_t i = 0; i < t->keys.n; i++) {
		const char *name = NULL;
		switch (t->keys.v[i]) {
		case RF_PROCESS:
		case RF_THREAD:
			if (!pid_done)
				fputs(first ? "pid" : ",pid", out);
			pid_done = true;
			first = false;
			if (t->keys.v[i] == RF_THREAD)
				fputs(",tid", out);
			continue;
		case RF_USER: name = "uid"; break;
		case RF_FUNCTION: name = x ? "function,dso" : "function"; break;
		default: name = row_field__name((enum row_field)t->keys.v[i]); break;
		}
		fprintf(out, "%s%s", first ? "" : ",", name);
		first = false;
	}
	fputs(",samples,steal_samples,cpu_ns,steal_ns,apparent_ns,corrected_ns", out);
	if (t->inclusive)
		fputs(",inclusive_ns", out);
	if (t->cgroup_figures)
		fputs(",throttled_ns,wait_ns", out);
	if (x)
		fputs(",target_ns,control_ns", out);
	if (t->attrs && !row_keys__has(&t->keys, RF_COMMAND))
		fputs(",command", out);
	if (t->attrs && row_keys__has(&t->keys, RF_THREAD) && !row_keys__has(&t->keys, RF_COMM))
		fputs(",comm", out);
	putc('\n', out);
}

static void text_field(FILE *out, bool *first, const char *s)
{
	if (!*first)
		putc(',', out);
	*first = false;
	if (s)
		csv_put_field(out, s);
}

static void num_field(FILE *out, bool *first, bool known, int64_t v)
{
	if (!*first)
		putc(',', out);
	*first = false;
	if (known)
		fprintf(out, "%" PRId64, v);
}

static void keys(FILE *out, const struct table *t, const struct report_extras *x,
		 const struct table_row *r)
{
	bool pid_done = false, first = true;
	for (uint8_t i = 0; i < t->keys.n; i++) {
		switch (t->keys.v[i]) {
		case RF_VM: text_field(out, &first, r->vm); break;
		case RF_PROCESS:
		case RF_THREAD:
			if (!pid_done)
				num_field(out, &first, true, table_id(r->pid));
			pid_done = true;
			if (t->keys.v[i] == RF_THREAD)
				num_field(out, &first, true, table_id(r->tid));
			break;
		case RF_COMM: text_field(out, &first, r->comm); break;
		case RF_COMMAND: text_field(out, &first, r->command); break;
		case RF_EXECUTABLE: text_field(out, &first, r->executable); break;
		case RF_USER: num_field(out, &first, r->uid >= 0, r->uid); break;
		case RF_DSO: text_field(out, &first, r->dso); break;
		case RF_FUNCTION:
			text_field(out, &first, r->function);
			if (x)
				text_field(out, &first, r->dso);
			break;
		case RF_ACCOUNT: text_field(out, &first, r->account); break;
		case RF_CPU: num_field(out, &first, r->cpu >= 0, r->cpu); break;
		case RF_CGROUP: text_field(out, &first, r->cgroup); break;
		default: break;
		}
	}
}

static int write_csv(FILE *out, const struct table *t, const struct report_extras *x)
{
	bool known = !x || x->steal_known;
	header(out, t, x);
	for (size_t i = 0; i < t->nrows; i++) {
		const struct table_row *r = &t->rows[i];
		bool first = false;
		keys(out, t, x, r);
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, r->samples, r->steal_samples,
			r->cpu_ns);
		num_field(out, &first, known, (int64_t)r->steal_ns);
		num_field(out, &first, known, (int64_t)r->apparent_ns);
		fprintf(out, ",%" PRIu64, r->corrected_ns);
		if (t->inclusive)
			fprintf(out, ",%" PRIu64, r->inclusive_ns);
		if (t->cgroup_figures) {
			num_field(out, &first, r->throttled_known, (int64_t)r->throttled_ns);
			num_field(out, &first, r->wait_known, (int64_t)r->wait_ns);
		}
		if (x)
			fprintf(out, ",%" PRIu64 ",%" PRIu64, r->cpu_ns - r->control_ns,
				r->control_ns);
		if (t->attrs && !row_keys__has(&t->keys, RF_COMMAND))
			text_field(out, &first, r->command);
		if (t->attrs && row_keys__has(&t->keys, RF_THREAD) &&
		    !row_keys__has(&t->keys, RF_COMM))
			text_field(out, &first, r->comm);
		putc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}

const struct report_writer report_csv = { "csv", write_csv };
