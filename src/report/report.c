/* report: the table of writers, and the escaping they share. */
#include "report.h"

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
