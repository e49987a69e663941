/*
 * report/folded: a recording's call stacks as folded stacks for the
 * flame-graph tools, "process;root;...;leaf SAMPLES", one line per
 * distinct stack of a process, sorted (docs/formats.md). The process is
 * named as the report names it (its command's first word, else [comm]),
 * with spaces as underscores. perf script text is folded by fold.c
 * instead, exactly as the reference collapser does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "../core/attribute.h"
#include "../core/grow.h"
#include "../core/strtab.h"
#include "../core/banned.h"

static const struct strtab *sort_lines;

static int cmp_line(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return strcmp(strtab__str(sort_lines, x), strtab__str(sort_lines, y));
}

/* Appends s to the line, ';' and ' ' made safe for the format. */
static int put(char **line, size_t *len, size_t *cap, const char *s, char sep)
{
	size_t n = strlen(s);
	if (grow_bytes(line, cap, *len + n + 2, 256))
		return -ENOMEM;
	if (sep)
		(*line)[(*len)++] = sep;
	for (size_t i = 0; i < n; i++)
		(*line)[(*len)++] = s[i] == ';' ? ':' : s[i] == ' ' ? '_' : s[i];
	return 0;
}

void report_stack_program(const struct rows *st, const struct row *w, char *buf,
			  size_t size)
{
	const char *cmd = rows__str(st, w->command);
	if (!cmd)
		cmd = rows__str(st, w->attr_command);
	if (!cmd) {
		const char *comm = rows__str(st, w->comm);
		if (!comm)
			comm = rows__str(st, w->attr_comm);
		snprintf(buf, size, comm ? "[%s]" : "[unknown]", comm ? comm : "");
		return;
	}
	char name[256];
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(cmd, " "), cmd);
	const char *slash = name[0] != '[' ? strrchr(name, '/') : NULL;
	snprintf(buf, size, "%s", slash ? slash + 1 : name);
}

/* Appends one stack row's line to lines (counts by line). */
static int add_line(struct strtab *lines, uint64_t **counts, uint32_t *cap,
		    uint32_t *n, char **line, size_t *line_cap,
		    const struct report_extras *x, const struct row *w)
{
	char name[256];
	size_t len = 0;
	report_stack_program(x->stacks, w, name, sizeof(name));
	int err = put(line, &len, line_cap, name, 0);
	const uint32_t *k = (const uint32_t *)strtab__str(x->stack_frames, w->stack);
	size_t nloc = strtab__len(x->stack_frames, w->stack) / (3 * sizeof(uint32_t));
	for (size_t f = nloc; !err && f-- > 0;) {	/* root first */
		uint32_t pair[2];
		memcpy(pair, k + 3 * f, sizeof(pair));
		err = put(line, &len, line_cap, strtab__str(x->names, pair[0]), ';');
	}
	uint32_t id = err ? HINDEX_NONE : strtab__intern(lines, *line, len);
	if (id == HINDEX_NONE ||
	    (id == *n && grow_array((void **)counts, cap, *n, sizeof(**counts), 256)))
		return -ENOMEM;
	if (id == *n)
		(*counts)[(*n)++] = 0;
	(*counts)[id] += w->f.samples;
	return 0;
}

static int write_folded(FILE *out, const struct table *t, const struct report_extras *x)
{
	(void)t;
	if (!x || !x->stacks)
		return -EINVAL;	/* the caller keeps stacks for this writer */
	struct strtab lines;
	strtab__init(&lines);
	uint64_t *counts = NULL;
	uint32_t counts_cap = 0, ncounts = 0;
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	for (uint32_t i = 0; !err && i < x->stacks->n; i++)
		if (x->stacks->v[i].f.samples)
			err = add_line(&lines, &counts, &counts_cap, &ncounts, &line, &cap, x,
				       &x->stacks->v[i]);
	uint32_t *order = err ? NULL : malloc((ncounts ? ncounts : 1) * sizeof(*order));
	if (!err && !order)
		err = -ENOMEM;
	if (!err) {
		for (uint32_t i = 0; i < ncounts; i++)
			order[i] = i;
		sort_lines = &lines;
		qsort(order, ncounts, sizeof(*order), cmp_line);
		for (uint32_t i = 0; i < ncounts; i++) {
			/* names are the processes' own: no control characters */
			text_put(out, strtab__str(&lines, order[i]), 0, 0);
			fprintf(out, " %" PRIu64 "\n", counts[order[i]]);
		}
	}
	free(order);
	free(counts);
	free(line);
	strtab__release(&lines);
	return err ? err : ferror(out) ? -EIO : 0;
}

const struct report_writer report_folded = {
	.name = "folded", .write = write_folded,
	.needs = REPORT_NEEDS_STACKS | REPORT_NEEDS_FUNCTION | REPORT_FOLDS_STACKS |
		 REPORT_NO_ROWS,
	.by = "thread,function,account",
};
