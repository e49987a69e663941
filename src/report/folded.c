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

/*
 * The lines are sorted as text without being made: a line is its
 * program, then its frames' names root first, each made safe (put), so
 * two lines compare piece by piece, and pieces of the same name id are
 * the same text. Made, the lines were the output's size again in memory
 * (and an index of them): 17 MB of 62 at the peak of an 8-minute
 * recording's report.
 */
struct fline {
	uint32_t row;		/* its stack row */
	uint32_t prog;		/* its program: an offset into progs */
};

static struct {
	const struct report_extras *x;
	const char *progs;
} sorting;

/* A line's stack: its frames (leaf first) and how many. */
static const char *frames_of(const struct fline *l, size_t *n)
{
	const struct strtab *fr = sorting.x->stack_frames;
	uint32_t stack = sorting.x->stacks->v[l->row].stack;
	*n = strtab__len(fr, stack) / (3 * sizeof(uint32_t));
	return strtab__str(fr, stack);
}

/* Piece k of a line (0: its program; k >= 1: frame n - k's function). */
static uint32_t frame_name(const char *frames, size_t n, size_t k)
{
	uint32_t id;
	memcpy(&id, frames + (n - k) * 3 * sizeof(uint32_t), sizeof(id));
	return id;
}

/* A line read a byte at a time from piece k on, as put makes it. */
struct line_cursor {
	const char *frames, *p;
	size_t n, k;
};

static int next_byte(struct line_cursor *c)
{
	if (!*c->p) {
		if (c->k >= c->n)
			return 0;
		c->p = strtab__str(sorting.x->names, frame_name(c->frames, c->n, ++c->k));
		return ';';
	}
	char ch = *c->p++;
	return (unsigned char)(ch == ';' ? ':' : ch == ' ' ? '_' : ch);
}

/* Two lines as strcmp would order them made. */
static int cmp_fline(const void *pa, const void *pb)
{
	const struct fline *a = pa, *b = pb;
	struct line_cursor x = { .p = sorting.progs + a->prog };
	struct line_cursor y = { .p = sorting.progs + b->prog };
	x.frames = frames_of(a, &x.n);
	y.frames = frames_of(b, &y.n);
	if (a->prog == b->prog || !strcmp(x.p, y.p)) {
		/* the same program: skip the frames both name alike */
		size_t k = 1;
		while (k <= x.n && k <= y.n &&
		       frame_name(x.frames, x.n, k) == frame_name(y.frames, y.n, k))
			k++;
		if (k > x.n && k > y.n)
			return 0;
		x.k = y.k = k - 1;
		x.p = x.k ? strtab__str(sorting.x->names, frame_name(x.frames, x.n, x.k)) : "";
		y.p = y.k ? strtab__str(sorting.x->names, frame_name(y.frames, y.n, y.k)) : "";
		x.p += strlen(x.p);
		y.p += strlen(y.p);
	}
	for (;;) {
		int cx = next_byte(&x), cy = next_byte(&y);
		if (cx != cy || !cx)
			return cx - cy;
	}
}

/* A line made into *line, NUL-terminated. */
static int make_line(char **line, size_t *cap, const struct report_extras *x,
		     const char *prog, const struct row *w)
{
	size_t len = 0;
	int err = put(line, &len, cap, prog, 0);
	const char *k = strtab__str(x->stack_frames, w->stack);
	size_t nloc = strtab__len(x->stack_frames, w->stack) / (3 * sizeof(uint32_t));
	for (size_t f = nloc; !err && f-- > 0;) {	/* root first */
		uint32_t fn;
		memcpy(&fn, k + 3 * sizeof(uint32_t) * f, sizeof(fn));
		err = put(line, &len, cap, strtab__str(x->names, fn), ';');
	}
	if (!err)
		(*line)[len] = '\0';	/* put leaves room for it */
	return err;
}

/* Each stack row with samples as a line to sort, its program named in
 * *progs (a thread's rows come together: one name for each run). */
static int gather(const struct report_extras *x, struct fline *v, uint32_t *n,
		  char **progs, size_t *len, size_t *cap)
{
	char name[256];
	uint32_t last = UINT32_MAX;
	*n = 0;
	for (uint32_t i = 0; i < x->stacks->n; i++) {
		const struct row *w = &x->stacks->v[i];
		if (!w->f.samples)
			continue;
		report_stack_program(x->stacks, w, name, sizeof(name));
		size_t l = strlen(name);
		if (last == UINT32_MAX || strcmp(*progs + last, name)) {
			if (grow_bytes(progs, cap, *len + l + 1, 4096))
				return -ENOMEM;
			memcpy(*progs + *len, name, l + 1);
			last = (uint32_t)*len;
			*len += l + 1;
		}
		v[(*n)++] = (struct fline){ .row = i, .prog = last };
	}
	return 0;
}

static int write_folded(FILE *out, const struct table *t, const struct report_extras *x)
{
	(void)t;
	if (!x || !x->stacks)
		return -EINVAL;	/* the caller keeps stacks for this writer */
	struct fline *v = malloc((x->stacks->n ? x->stacks->n : 1) * sizeof(*v));
	char *progs = NULL, *line = NULL;
	size_t plen = 0, pcap = 0, cap = 0;
	uint32_t n = 0;
	int err = v ? gather(x, v, &n, &progs, &plen, &pcap) : -ENOMEM;
	if (!err) {
		sorting.x = x;
		sorting.progs = progs;
		qsort(v, n, sizeof(*v), cmp_fline);
	}
	/* the rows of one line are together now: summed, written once */
	for (uint32_t i = 0; !err && i < n;) {
		uint64_t samples = 0;
		uint32_t j = i;
		for (; j < n && (j == i || !cmp_fline(&v[i], &v[j])); j++)
			samples += x->stacks->v[v[j].row].f.samples;
		err = make_line(&line, &cap, x, progs + v[i].prog, &x->stacks->v[v[i].row]);
		if (!err) {
			/* names are the processes' own: no control characters */
			text_put(out, line, 0, 0);
			fprintf(out, " %" PRIu64 "\n", samples);
		}
		i = j;
	}
	free(v);
	free(progs);
	free(line);
	return err ? err : ferror(out) ? -EIO : 0;
}

const struct report_writer report_folded = {
	.name = "folded", .write = write_folded,
	.needs = REPORT_NEEDS_STACKS | REPORT_NEEDS_FUNCTION | REPORT_FOLDS_STACKS |
		 REPORT_NO_ROWS,
	.by = "thread,function,account",
};
