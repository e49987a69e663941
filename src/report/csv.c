/* report/csv: one line per row under a header naming its fields: the
 * key's fields in the order given, one value a field, then the figures,
 * then (for a recording) the target and control time and the process's
 * command and thread's comm where the rows have them (docs/analyze.md,
 * docs/formats.md). A value not known is an empty field, never 0. Totals
 * are not rows: they are in text and JSON. */
#include <stdbool.h>

#include "report.h"
#include "../core/banned.h"

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
		report_put_i64(out, v);
}

/* A figure always known, after its comma. */
static void u64_field(FILE *out, uint64_t v)
{
	putc(',', out);
	report_put_u64(out, v);
}

struct fields {
	FILE *out;
	bool first;
	const struct table_row *r;	/* NULL: the header */
};

/* One key's column: its name (the header) or its value. */
static void key_field(void *ctx, enum row_field f, bool with)
{
	struct fields *c = ctx;
	const struct key_entry *e = key_entry(f);
	(void)with;
	if (!c->r) {
		fprintf(c->out, "%s%s", c->first ? "" : ",", e->field);
		c->first = false;
	} else if (e->text) {
		text_field(c->out, &c->first, e->text(c->r));
	} else {
		int64_t v = e->number(c->r);
		num_field(c->out, &c->first, e->type == KEY_TASK || v >= 0,
			  e->type == KEY_TASK ? table_id((uint32_t)v) : v);
	}
}

/* The key's columns in the order given (r NULL: the header); a
 * recording's function with its file. */
static void keys(FILE *out, const struct table *t, const struct report_extras *x,
		 const struct table_row *r)
{
	struct fields c = { out, true, r };
	report_keys(&t->keys, x ? REPORT_AFTER_ALWAYS : REPORT_AFTER_NONE, key_field, &c);
}

static void header(FILE *out, const struct table *t, const struct report_extras *x)
{
	keys(out, t, x, NULL);
	fputs(",samples,steal_samples,cpu_ns,steal_ns,apparent_ns,corrected_ns", out);
	if (t->inclusive)
		fputs(",inclusive_ns", out);
	if (t->cgroup_figures || t->denied_figures)
		fputs(",throttled_ns,wait_ns", out);
	if (t->denied_figures)
		fputs(",denied_ns", out);
	if (x)
		fputs(",target_ns,control_ns", out);
	if (t->attrs && !row_keys__has(&t->keys, RF_COMMAND))
		fputs(",command", out);
	if (t->attrs && row_keys__has(&t->keys, RF_THREAD) && !row_keys__has(&t->keys, RF_COMM))
		fputs(",comm", out);
	putc('\n', out);
}

static int write_csv(FILE *out, const struct table *t, const struct report_extras *x)
{
	bool known = !x || x->steal_known;
	header(out, t, x);
	for (size_t i = 0; i < t->nrows; i++) {
		const struct table_row *r = table__row(t, i);
		bool first = false;
		keys(out, t, x, r);
		u64_field(out, r->samples);
		u64_field(out, r->steal_samples);
		u64_field(out, r->cpu_ns);
		num_field(out, &first, known, (int64_t)r->steal_ns);
		num_field(out, &first, known, (int64_t)r->apparent_ns);
		u64_field(out, r->corrected_ns);
		if (t->inclusive)
			u64_field(out, r->inclusive_ns);
		if (t->cgroup_figures || t->denied_figures) {
			num_field(out, &first, r->throttled_known, (int64_t)r->throttled_ns);
			num_field(out, &first, r->wait_known, (int64_t)r->wait_ns);
		}
		if (t->denied_figures)
			num_field(out, &first, r->denied_known, (int64_t)r->denied_ns);
		if (x) {
			u64_field(out, r->cpu_ns - r->control_ns);
			u64_field(out, r->control_ns);
		}
		if (t->attrs && !row_keys__has(&t->keys, RF_COMMAND))
			text_field(out, &first, r->command);
		if (t->attrs && row_keys__has(&t->keys, RF_THREAD) &&
		    !row_keys__has(&t->keys, RF_COMM))
			text_field(out, &first, r->comm);
		putc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}

const struct report_writer report_csv = {
	.name = "csv", .write = write_csv,
	.needs = REPORT_SAMPLING | REPORT_ROWS_ONCE,
	.by = "thread",
};
