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

static int write_folded(FILE *out, const struct table *t, const struct report_extras *x)
{
	if (!x || !x->stacks)
		return -EINVAL;	/* the caller loads stacks for this writer */
	const struct stack_set *st = x->stacks;
	struct report_process *procs = report_processes(t);
	struct strtab lines;
	strtab__init(&lines);
	uint64_t *counts = NULL;
	uint32_t counts_cap = 0, ncounts = 0;
	char *line = NULL;
	size_t cap = 0;
	int err = procs ? 0 : -ENOMEM;
	for (uint32_t i = 0; !err && i < st->n; i++) {
		const struct stack_sample *ss = &st->v[i];
		const struct report_process *p = report_process_of(procs, t, ss->pid);
		if (!p || !ss->samples)
			continue;	/* out of the report's scope, or no sample */
		char name[64];
		const char *cmd = p->command ? p->command : "[unknown]";
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(cmd, " "), cmd);
		const char *slash = name[0] != '[' ? strrchr(name, '/') : NULL;
		size_t len = 0;
		err = put(&line, &len, &cap, slash ? slash + 1 : name, 0);
		const uint32_t *k = (const uint32_t *)strtab__str(&st->keys, ss->stack);
		size_t nloc = strtab__len(&st->keys, ss->stack) / (2 * sizeof(uint32_t));
		for (size_t f = nloc; !err && f-- > 0;) {	/* root first */
			uint32_t pair[2];
			memcpy(pair, k + 2 * f, sizeof(pair));
			err = put(&line, &len, &cap, strtab__str(st->names, pair[0]), ';');
		}
		uint32_t id = err ? HINDEX_NONE : strtab__intern(&lines, line, len);
		if (id == HINDEX_NONE || (id == ncounts &&
		    grow_array((void **)&counts, &counts_cap, ncounts, sizeof(*counts), 256))) {
			err = -ENOMEM;
			break;
		}
		if (id == ncounts)
			counts[ncounts++] = 0;
		counts[id] += ss->samples;
	}
	uint32_t *order = err ? NULL : malloc((ncounts ? ncounts : 1) * sizeof(*order));
	if (!err && !order)
		err = -ENOMEM;
	if (!err) {
		for (uint32_t i = 0; i < ncounts; i++)
			order[i] = i;
		sort_lines = &lines;
		qsort(order, ncounts, sizeof(*order), cmp_line);
		for (uint32_t i = 0; i < ncounts; i++)
			fprintf(out, "%s %" PRIu64 "\n", strtab__str(&lines, order[i]),
				counts[order[i]]);
	}
	free(order);
	free(counts);
	free(line);
	free(procs);
	strtab__release(&lines);
	return err ? err : ferror(out) ? -EIO : 0;
}

const struct report_writer report_folded = { "folded", write_folded };
