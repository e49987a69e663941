/*
 * report/folded: a recording's call stacks as folded stacks for the
 * flame-graph tools, "process;root;...;leaf SAMPLES", one line per
 * distinct stack of a process, sorted (docs/formats.md). The process is
 * named as the report names it (its command's first word, else [comm]),
 * with spaces as underscores. perf script text is folded by fold.c
 * instead, exactly as the reference collapser does.
 */
#include <errno.h>
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

/* report_stack_program of a command line (NULL: none) and a comm (NULL:
 * unknown). */
static void program_name(const char *cmd, const char *comm, char *buf, size_t size)
{
	if (!cmd) {
		snprintf(buf, size, comm ? "[%s]" : "[unknown]", comm ? comm : "");
		return;
	}
	char name[256];
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(cmd, " "), cmd);
	const char *slash = name[0] != '[' ? strrchr(name, '/') : NULL;
	snprintf(buf, size, "%s", slash ? slash + 1 : name);
}

void report_stack_program(const struct rows *st, const struct row *w, char *buf,
			  size_t size)
{
	const char *cmd = rows__str(st, w->command);
	if (!cmd)
		cmd = rows__str(st, w->attr_command);
	const char *comm = rows__str(st, w->comm);
	if (!comm)
		comm = rows__str(st, w->attr_comm);
	program_name(cmd, comm, buf, size);
}

void report_folds__init(struct report_folds *f)
{
	memset(f, 0, sizeof(*f));
	strtab__init(&f->progs);
	hindex__init(&f->index);
}

void report_folds__release(struct report_folds *f)
{
	if (!f)
		return;
	strtab__release(&f->progs);
	hindex__release(&f->index);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

struct fold_key {
	const struct report_folds *f;
	uint32_t prog, stack;
};

static bool fold_eq(const void *ctx, uint32_t id)
{
	const struct fold_key *k = ctx;
	return k->f->v[id].prog == k->prog && k->f->v[id].stack == k->stack;
}

int report_folds__add(struct report_folds *f, const char *prog, uint32_t stack,
		      uint64_t samples)
{
	/* a thread's stacks come together, of one program */
	uint32_t p = f->last_prog;
	if (!p || strcmp(strtab__str(&f->progs, p - 1), prog)) {
		p = strtab__intern(&f->progs, prog, strlen(prog));
		if (p == HINDEX_NONE)
			return -ENOMEM;
		f->last_prog = ++p;
	}
	struct fold_key k = { f, p - 1, stack };
	uint64_t h = hash_mix(((uint64_t)(p - 1) << 32) | stack);
	uint32_t id = hindex__find(&f->index, h, fold_eq, &k);
	if (id == HINDEX_NONE) {
		if (grow_array((void **)&f->v, &f->cap, f->n, sizeof(*f->v), 256) ||
		    hindex__insert(&f->index, h, f->n))
			return -ENOMEM;
		id = f->n++;
		f->v[id] = (struct report_fold){ .prog = p - 1, .stack = stack };
	}
	f->v[id].samples += samples;
	return 0;
}

/*
 * The lines are sorted as text without being made: a line is its
 * program, then its frames' names root first, each made safe (put), so
 * two lines compare piece by piece, and pieces of the same name id are
 * the same text. Made, the lines were the output's size again in memory
 * (and an index of them): 17 MB of 62 at the peak of an 8-minute
 * recording's report.
 */
static struct {
	const struct report_extras *x;
	const struct report_folds *f;
} sorting;

/* Piece k of a line of stack's n frames (k >= 1: frame n - k's function,
 * so root first). */
static uint32_t frame_name(const struct stacktab *t, uint32_t stack, size_t n, size_t k)
{
	return stacktab__frame(t, stack, (uint32_t)(n - k)).function;
}

/* A line read a byte at a time from piece k on, as put makes it. */
struct line_cursor {
	uint32_t stack;
	const char *p;
	size_t n, k;
};

static int next_byte(struct line_cursor *c)
{
	if (!*c->p) {
		if (c->k >= c->n)
			return 0;
		c->p = strtab__str(sorting.x->names,
				   frame_name(sorting.x->stack_frames, c->stack, c->n, ++c->k));
		return ';';
	}
	char ch = *c->p++;
	return (unsigned char)(ch == ';' ? ':' : ch == ' ' ? '_' : ch);
}

/* Two lines (ids in sorting.f) as strcmp would order them made. */
static int cmp_fold(const void *pa, const void *pb)
{
	const struct report_fold *a = &sorting.f->v[*(const uint32_t *)pa];
	const struct report_fold *b = &sorting.f->v[*(const uint32_t *)pb];
	const struct stacktab *t = sorting.x->stack_frames;
	struct line_cursor x = { .stack = a->stack, .p = strtab__str(&sorting.f->progs, a->prog),
				 .n = stacktab__depth(t, a->stack) };
	struct line_cursor y = { .stack = b->stack, .p = strtab__str(&sorting.f->progs, b->prog),
				 .n = stacktab__depth(t, b->stack) };
	if (a->prog == b->prog) {
		/* the same program: skip the frames both name alike */
		size_t k = 1;
		while (k <= x.n && k <= y.n &&
		       frame_name(t, x.stack, x.n, k) == frame_name(t, y.stack, y.n, k))
			k++;
		if (k > x.n && k > y.n)
			return 0;
		x.k = y.k = k - 1;
		x.p = x.k ? strtab__str(sorting.x->names, frame_name(t, x.stack, x.n, x.k)) : "";
		y.p = y.k ? strtab__str(sorting.x->names, frame_name(t, y.stack, y.n, y.k)) : "";
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
		     const char *prog, uint32_t stack)
{
	size_t len = 0;
	int err = put(line, &len, cap, prog, 0);
	size_t n = stacktab__depth(x->stack_frames, stack);
	for (size_t k = 1; !err && k <= n; k++)	/* root first */
		err = put(line, &len, cap,
			  strtab__str(x->names, frame_name(x->stack_frames, stack, n, k)), ';');
	if (!err)
		(*line)[len] = '\0';	/* put leaves room for it */
	return err;
}

/* The lines of f sorted, those that read alike summed, written. */
static int write_lines(FILE *out, const struct report_extras *x, const struct report_folds *f)
{
	uint32_t *order = malloc((f->n ? f->n : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n; i++)
		if (f->v[i].samples)
			order[n++] = i;
	sorting.x = x;
	sorting.f = f;
	qsort(order, n, sizeof(*order), cmp_fold);
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	for (uint32_t i = 0; !err && i < n;) {
		uint64_t samples = 0;
		uint32_t j = i;
		for (; j < n && (j == i || !cmp_fold(&order[i], &order[j])); j++)
			samples += f->v[order[j]].samples;
		const struct report_fold *l = &f->v[order[i]];
		err = make_line(&line, &cap, x, strtab__str(&f->progs, l->prog), l->stack);
		if (!err) {
			/* names are the processes' own: no control characters */
			char num[REPORT_NUM_MAX + 2];
			text_put(out, line, 0, 0);
			num[0] = ' ';
			size_t len = 1 + report_fmt_u64(num + 1, samples);
			num[len++] = '\n';
			fwrite(num, 1, len, out);
		}
		i = j;
	}
	free(line);
	free(order);
	return err;
}

static int write_folded(FILE *out, const struct table *t, const struct report_extras *x)
{
	(void)t;
	if (!x || !x->folds)
		return -EINVAL;	/* the caller folds the stacks for this writer */
	int err = write_lines(out, x, x->folds);
	return err ? err : ferror(out) ? -EIO : 0;
}

const struct report_writer report_folded = {
	.name = "folded", .write = write_folded,
	.needs = REPORT_NEEDS_STACKS | REPORT_NEEDS_FUNCTION | REPORT_FOLDS_STACKS |
		 REPORT_NO_ROWS,
	.by = "thread,function,account",
};
