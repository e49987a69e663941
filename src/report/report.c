/* report: the table of writers, and the escaping they share. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "../core/banned.h"

static const struct report_writer *const writers[] = {
	&report_text, &report_csv, &report_json, &report_openmetrics,
	&report_pprof,
};

const struct report_writer *report_writer__find(const char *name)
{
	for (size_t i = 0; i < sizeof(writers) / sizeof(*writers); i++)
		if (strcmp(writers[i]->name, name) == 0)
			return writers[i];
	return NULL;
}

const char *report_writer__names(void)
{
	return "text|csv|json|openmetrics|pprof";
}

static int cmp_pid(const void *a, const void *b)
{
	uint32_t x = ((const struct report_process *)a)->pid,
		 y = ((const struct report_process *)b)->pid;
	return (x > y) - (x < y);
}

struct report_process *report_processes(const struct table *t)
{
	struct report_process *v = malloc((t->nrows ? t->nrows : 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < t->nrows; i++)
		v[i] = (struct report_process){ t->rows[i].pid, t->rows[i].command };
	qsort(v, t->nrows, sizeof(*v), cmp_pid);
	return v;
}

const struct report_process *report_process_of(const struct report_process *v,
					       const struct table *t, uint32_t pid)
{
	struct report_process key = { pid, NULL };
	return t->nrows ? bsearch(&key, v, t->nrows, sizeof(*v), cmp_pid) : NULL;
}

void json_put_string(FILE *out, const char *s)
{
	putc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			putc(c, out);
	}
	putc('"', out);
}

void csv_put_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, out);
		return;
	}
	putc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			putc('"', out);
		putc(*s, out);
	}
	putc('"', out);
}
