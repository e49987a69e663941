/* report/json: the table as one JSON object (docs/analyze.md,
 * docs/formats.md). Every row of a table has the same keys: its key's
 * fields, its attributes, its figures; a value not known is null, never
 * 0 or left out. */
#include <inttypes.h>

#include "report.h"
#include "../core/cgroup_name.h"
#include "../core/banned.h"

/* A figure that the recording may not have been able to measure. */
static void put_known(FILE *out, bool known, uint64_t v)
{
	if (known)
		report_put_u64(out, v);
	else
		fputs("null", out);
}

/* A bucket's figures, comma-separated (a recording's minutes make
 * thousands of numbers: no printf each). */
static void put_buckets(FILE *out, const struct report_series *s, const uint64_t *v,
			uint32_t cpu)
{
	for (uint32_t b = 0; b < s->nbuckets; b++) {
		if (b)
			putc(',', out);
		report_put_u64(out, v[b * s->ncpus + cpu]);
	}
}

/* CPU and steal per CPU over time: one array per CPU, a number a bucket. */
static void write_series(FILE *out, const struct report_extras *x)
{
	const struct report_series *s = x->series;
	if (!s) {
		fputs("\"series\":null,", out);
		return;
	}
	fprintf(out, "\"series\":{\"start_ns\":%" PRIu64 ",\"bucket_ns\":%" PRIu64 ",\"cpus\":[",
		s->start_ns, s->bucket_ns);
	for (uint32_t c = 0; c < s->ncpus; c++) {
		fprintf(out, "%s{\"cpu\":%" PRIu32 ",\"cpu_ns\":[", c ? "," : "", c);
		put_buckets(out, s, s->run_ns, c);
		fputs("],\"steal_ns\":", out);
		if (!x->steal_known) {
			fputs("null}", out);
			continue;
		}
		putc('[', out);
		put_buckets(out, s, s->steal_ns, c);
		fputs("]}", out);
	}
	fputs("]},", out);
}

static void write_extras(FILE *out, const struct report_extras *x)
{
	fputs("\"host\":", out);
	json_put_string(out, x->host);
	fputs(",\"steal_source\":", out);
	json_put_string(out, x->steal_source);
	fputs(",\"steal_method\":", out);
	json_put_string(out, x->steal_method ? x->steal_method : "");
	fputs(",\"kernel_accounting\":", out);
	json_put_string(out, x->kernel_accounting ? x->kernel_accounting : "");
	fputs(",\"kernel_accounting_source\":", out);
	json_put_string(out, x->accounting_source ? x->accounting_source : "");
	fprintf(out, ",\"steal_resolution_ns\":%" PRIu64 ",\"steal_scaled\":%s"
		",\"steal_clock\":%s", x->steal_resolution_ns, x->steal_scaled ? "true" : "false",
		x->steal_clock > 0 ? "true" : x->steal_clock < 0 ? "false" : "null");
	fputs(",\"scope\":", out);
	json_put_string(out, x->scope);
	fprintf(out, ",\"duration_ns\":%" PRIu64 ",\"bias_ns\":%" PRId64
		",\"lost\":%" PRIu64 ",\"lossy_stints\":%" PRIu64
		",\"bad_records\":%" PRIu64 ",\"late_events\":%" PRIu64
		",\"missed_switches\":%" PRIu64 ",\"unmeasured_stints\":%" PRIu64
		",\"unraised_stints\":%" PRIu64
		",\"steal_over_runtime_ns\":%" PRIu64 ",\"clock_samples\":%" PRIu64
		",\"events\":{",
		x->duration_ns, x->bias_ns, x->lost, x->lossy_stints, x->bad_records,
		x->late_events, x->missed_switches, x->unmeasured_stints, x->unraised_stints,
		x->steal_over_runtime_ns, x->clock_samples);
	for (uint32_t i = 0; i < x->nevents; i++) {
		if (i)
			putc(',', out);
		json_put_string(out, x->events[i].name);
		fprintf(out, ":%" PRIu64, x->events[i].samples);
	}
	fputs("},\"cpus\":[", out);
	for (uint32_t i = 0; i < x->ncpus; i++) {
		const struct report_cpu *c = &x->cpus[i];
		fprintf(out, "%s{\"cpu\":%" PRIu32 ",\"steal_ns\":", i ? "," : "", c->cpu);
		put_known(out, x->steal_known, c->steal_ns);
		fputs(",\"kernel_steal_ns\":", out);
		put_known(out, c->kernel_known, c->kernel_steal_ns);
		fprintf(out, ",\"idle_ns\":%" PRIu64 ",\"lost\":%" PRIu64 "}", c->idle_ns,
			c->lost);
	}
	fputs("],\"cgroups\":[", out);
	for (uint32_t i = 0; i < x->ncgroups; i++) {
		const struct report_cgroup *c = &x->cgroups[i];
		char name[512];
		fputs(i ? ",{\"cgroup\":" : "{\"cgroup\":", out);
		json_put_string_or_null(out, c->path);
		fputs(",\"cgroup_name\":", out);
		json_put_string_or_null(out, c->path ? cgroup_name(c->path, name, sizeof(name)) : NULL);
		fprintf(out, ",\"cpu_ns\":%" PRIu64 ",\"steal_ns\":", c->cpu_ns);
		put_known(out, x->steal_known, c->steal_ns);
		fputs(",\"throttled_ns\":", out);
		put_known(out, c->throttled_known, c->throttled_ns);
		fputs(",\"nr_throttled\":", out);
		put_known(out, c->throttled_known, c->nr_throttled);
		fputs(",\"wait_ns\":", out);
		put_known(out, c->wait_known, c->wait_ns);
		fputs(",\"usage_ns\":", out);
		put_known(out, c->usage_known, c->usage_ns);
		putc('}', out);
	}
	fputs("],\"accounts\":[", out);
	for (uint32_t i = 0; i < x->naccounts; i++) {
		const struct report_account *a = &x->accounts[i];
		fputs(i ? ",{\"account\":" : "{\"account\":", out);
		json_put_string_or_null(out, a->account);
		fprintf(out, ",\"control\":%s,\"cpu_ns\":%" PRIu64 ",\"steal_ns\":",
			a->control ? "true" : "false", a->cpu_ns);
		put_known(out, x->steal_known, a->steal_ns);
		putc('}', out);
	}
	fputs("],", out);
	write_series(out, x);
}

static void write_totals(FILE *out, const struct table *t, bool known)
{
	const struct table_totals *tot = &t->totals;
	fprintf(out, "\"totals\":{\"run_ns\":%" PRIu64 ",\"steal_ns\":", tot->run_ns);
	put_known(out, known, tot->steal_ns);
	fprintf(out, ",\"idle_ns\":%" PRIu64 ",\"attributed_steal_ns\":", tot->idle_ns);
	put_known(out, known, tot->attributed_steal_ns);
	fputs(",\"unattributed_steal_ns\":", out);
	if (known)
		fprintf(out, "%" PRId64, tot->unattributed_steal_ns);
	else
		fputs("null", out);
	fprintf(out, ",\"samples\":%" PRIu64 ",\"steal_samples\":%" PRIu64
		",\"idle_samples\":%" PRIu64 ",\"streams\":%" PRIu32 ",\"programs\":%" PRIu32
		"},", tot->samples, tot->steal_samples, tot->idle_samples, tot->streams,
		tot->programs);
}

struct members {
	struct json_out *o;
	bool *first;
	const struct table_row *r;
};

/* One key's member; a key people know by another form (a cgroup's name)
 * gives that too, as FIELD_name. */
static void key_member(void *ctx, enum row_field f, bool with)
{
	const struct members *c = ctx;
	const struct key_entry *e = key_entry(f);
	(void)with;
	if (e->text) {
		json_out__str_member(c->o, c->first, e->field, e->text(c->r));
	} else {
		int64_t v = e->number(c->r);
		json_out__num_member(c->o, c->first, e->field, e->type == KEY_TASK || v >= 0,
				     e->type == KEY_TASK ? table_id((uint32_t)v) : v);
	}
	if (e->display) {
		char name[512], member[64];
		snprintf(member, sizeof(member), "%s_name", e->field);
		json_out__str_member(c->o, c->first, member, e->display(c->r, name, sizeof(name)));
	}
}

/* The key's fields, in the order given; a recording's function with its
 * file, unless that is a key. */
static void keys(struct json_out *o, bool *first, const struct table *t,
		 const struct report_extras *x, const struct table_row *r)
{
	struct members c = { o, first, r };
	report_keys(&t->keys, x ? REPORT_AFTER_UNLESS_KEY : REPORT_AFTER_NONE, key_member, &c);
}

static void write_row(struct json_out *o, const struct table *t, const struct report_extras *x,
		      const struct table_row *r, bool known)
{
	bool first = true;
	json_out__put(o, "{", 1);
	keys(o, &first, t, x, r);
	if (t->attrs && !row_keys__has(&t->keys, RF_COMMAND))
		json_out__str_member(o, &first, "command", r->command);
	if (t->attrs && row_keys__has(&t->keys, RF_THREAD) && !row_keys__has(&t->keys, RF_COMM))
		json_out__str_member(o, &first, "comm", r->comm);
	if (x) {
		json_out__num_member(o, &first, "target_ns", true, (int64_t)(r->cpu_ns - r->control_ns));
		json_out__num_member(o, &first, "control_ns", true, (int64_t)r->control_ns);
	}
	if (t->inclusive) {
		json_out__num_member(o, &first, "self_ns", true, (int64_t)r->cpu_ns);
		json_out__num_member(o, &first, "inclusive_ns", true, (int64_t)r->inclusive_ns);
	}
	json_out__num_member(o, &first, "samples", true, (int64_t)r->samples);
	json_out__num_member(o, &first, "steal_samples", true, (int64_t)r->steal_samples);
	json_out__num_member(o, &first, "cpu_ns", true, (int64_t)r->cpu_ns);
	json_out__num_member(o, &first, "steal_ns", known, (int64_t)r->steal_ns);
	json_out__num_member(o, &first, "apparent_ns", known, (int64_t)r->apparent_ns);
	json_out__num_member(o, &first, "corrected_ns", true, (int64_t)r->corrected_ns);
	if (t->cgroup_figures || t->denied_figures) {
		json_out__num_member(o, &first, "throttled_ns", r->throttled_known,
				     (int64_t)r->throttled_ns);
		json_out__num_member(o, &first, "wait_ns", r->wait_known, (int64_t)r->wait_ns);
	}
	if (t->denied_figures)
		json_out__num_member(o, &first, "denied_ns", r->denied_known,
				     (int64_t)r->denied_ns);
	json_out__put(o, "}", 1);
}

static int write_json(FILE *out, const struct table *t, const struct report_extras *x)
{
	fprintf(out, "{\"version\":%d,\"method\":\"%s\",\"by\":", REPORT_FORMAT_VERSION,
		steal_method__name(t->method));
	json_put_string(out, t->by);
	fprintf(out, ",\"interval_ns\":%" PRIu64 ",\"timestamps\":%s,", t->interval_ns,
		t->timestamps ? "true" : "false");
	if (x)
		write_extras(out, x);
	bool known = !x || x->steal_known;
	write_totals(out, t, known);
	fputs("\"rows\":[", out);
	char buf[16384];
	struct json_out o = json_out__make(out, buf, sizeof(buf));
	for (size_t i = 0; i < t->nrows; i++) {
		json_out__put(&o, i ? ",\n" : "\n", i ? 2 : 1);
		write_row(&o, t, x, table__row(t, i), known);
	}
	json_out__flush(&o);
	fputs("]}\n", out);
	return ferror(out) ? -EIO : 0;
}

const struct report_writer report_json = {
	.name = "json", .write = write_json,
	.needs = REPORT_SAMPLING | REPORT_ROWS_ONCE,
	.by = "thread",
};
