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
}

void report_folds__release(struct report_folds *f)
{
	if (!f)
		return;
	strtab__release(&f->progs);
	free(f->first);
	free(f->more);
	memset(f, 0, sizeof(*f));
}

/* Lines are named by a stack id (its first line) or by MORE_LINE plus
 * their place in more: stack ids are below 2^31 (a stack takes 3 bytes
 * or more of the 4 GiB stacktab holds). */
#define MORE_LINE (1u << 31)

static void line_of(const struct report_folds *f, uint32_t id, uint32_t *prog,
		    uint32_t *stack, uint32_t *samples)
{
	if (id < MORE_LINE) {
		*prog = f->first[id].prog - 1;
		*stack = id;
		*samples = f->first[id].samples;
		return;
	}
	const struct report_fold *l = &f->more[id - MORE_LINE];
	*prog = l->prog;
	*stack = l->stack;
	*samples = l->samples;
}

/* Up to samples added to a line that has room; what is left. */
static uint64_t add_to(uint32_t *line, uint64_t samples)
{
	uint32_t room = UINT32_MAX - *line;
	uint32_t add = samples < room ? (uint32_t)samples : room;
	*line += add;
	return samples - add;
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
	if (!samples)
		return 0;
	if (stack >= MORE_LINE)
		return -ENOMEM;
	if (grow_array_to((void **)&f->first, &f->first_cap, stack, sizeof(*f->first), 1024))
		return -ENOMEM;
	struct report_fold_first *first = &f->first[stack];
	if (!first->prog) {
		first->prog = p;
		samples = add_to(&first->samples, samples);
	} else if (first->prog == p) {
		samples = add_to(&first->samples, samples);
	}
	/* the program's lines of the stack with room, in more; the one that
	 * takes them all goes to the front: a program's threads come in runs
	 * (a compile loop's cc1s), and a stack that every program has (a
	 * system call's) chains a line for each (the walk was 8 % of folded) */
	for (uint32_t *link = &first->next; samples && *link;) {
		uint32_t i = *link;
		struct report_fold *l = &f->more[i - 1];
		if (l->prog == p - 1 && !(samples = add_to(&l->samples, samples)) &&
		    link != &first->next) {
			*link = l->next;
			l->next = first->next;
			first->next = i;
			break;
		}
		link = &l->next;
	}
	while (samples) {
		if (grow_array((void **)&f->more, &f->more_cap, f->nmore, sizeof(*f->more), 256))
			return -ENOMEM;
		first = &f->first[stack];
		struct report_fold *l = &f->more[f->nmore];
		*l = (struct report_fold){ .prog = p - 1, .stack = stack, .next = first->next };
		samples = add_to(&l->samples, samples);
		first->next = ++f->nmore;
	}
	return 0;
}

/*
 * The lines are sorted as text without being made: a line is its
 * program, then its frames' names root first, each made safe (put), so
 * two lines compare piece by piece, and pieces of the same name id are
 * the same text. Made, the lines were the output's size again in memory
 * (and an index of them): 17 MB of 62 at the peak of an 8-minute
 * recording's report. Each name and program is ranked once, as its text
 * sorts in a line that goes on after it (followed by ';'), so that two
 * lines compare by ranks; only where a line ends at the piece that tells
 * them apart are the two pieces' bytes compared (then what follows the
 * ended one is the line's end, not ';': "f" before "f.cold" either way,
 * but "f;g" after "f.cold;g").
 */
static struct {
	const struct report_extras *x;
	const struct report_folds *f;
	const struct strtab *ranked;	/* piece_ranks' table */
	uint32_t *name_rank, *prog_rank;
} sorting;

static int safe_byte(char ch)
{
	return (unsigned char)(ch == ';' ? ':' : ch == ' ' ? '_' : ch);
}

/* Two pieces made safe as strcmp would order them in their lines, each
 * followed by ';' where its line goes on (more), else by the line's end. */
static int piece_cmp(const char *a, bool a_more, const char *b, bool b_more)
{
	for (;;) {
		bool a_end = !*a, b_end = !*b;
		int ca = a_end ? (a_more ? ';' : 0) : safe_byte(*a++);
		int cb = b_end ? (b_more ? ';' : 0) : safe_byte(*b++);
		if (ca != cb)
			return ca - cb;
		if (a_end && b_end)
			return 0;
	}
}

static int cmp_ranked(const void *pa, const void *pb)
{
	const struct strtab *t = sorting.ranked;
	return piece_cmp(strtab__str(t, *(const uint32_t *)pa), true,
			 strtab__str(t, *(const uint32_t *)pb), true);
}

/* The rank of each string of t as a piece of a line that goes on: equal
 * texts (made safe) equal ranks. NULL when out of memory. */
static uint32_t *piece_ranks(const struct strtab *t)
{
	uint32_t n = t->count ? t->count : 1;
	uint32_t *order = malloc(n * sizeof(*order)), *rank = malloc(n * sizeof(*rank));
	if (!order || !rank) {
		free(order);
		free(rank);
		return NULL;
	}
	for (uint32_t i = 0; i < t->count; i++)
		order[i] = i;
	sorting.ranked = t;
	qsort(order, t->count, sizeof(*order), cmp_ranked);
	for (uint32_t i = 0, r = 0; i < t->count; i++) {
		if (i && cmp_ranked(&order[i - 1], &order[i]))
			r++;
		rank[order[i]] = r;
	}
	free(order);
	return rank;
}

/* Piece k of a line of stack's n frames (k >= 1: frame n - k's function,
 * so root first). */
static uint32_t frame_name(const struct stacktab *t, uint32_t stack, size_t n, size_t k)
{
	return stacktab__frame(t, stack, (uint32_t)(n - k)).function;
}

/* Two lines (ids in sorting.f) as strcmp would order them made. */
static int cmp_fold(const void *pa, const void *pb)
{
	struct { uint32_t prog, stack, samples; } a, b;
	line_of(sorting.f, *(const uint32_t *)pa, &a.prog, &a.stack, &a.samples);
	line_of(sorting.f, *(const uint32_t *)pb, &b.prog, &b.stack, &b.samples);
	const struct stacktab *t = sorting.x->stack_frames;
	if (a.prog != b.prog) {
		/* a program is followed by its first frame: ';' */
		uint32_t ra = sorting.prog_rank[a.prog], rb = sorting.prog_rank[b.prog];
		if (ra != rb)
			return ra < rb ? -1 : 1;
	}
	size_t na = stacktab__depth(t, a.stack), nb = stacktab__depth(t, b.stack);
	for (size_t k = 1; k <= na && k <= nb; k++) {
		uint32_t fa = frame_name(t, a.stack, na, k), fb = frame_name(t, b.stack, nb, k);
		if (fa == fb)
			continue;
		uint32_t ra = sorting.name_rank[fa], rb = sorting.name_rank[fb];
		if (ra == rb)
			continue;
		if (k < na && k < nb)
			return ra < rb ? -1 : 1;
		return piece_cmp(strtab__str(sorting.x->names, fa), k < na,
				 strtab__str(sorting.x->names, fb), k < nb);
	}
	/* one line the other's beginning: it ends where the other goes on */
	return (na > nb) - (na < nb);
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
	uint32_t lines = 0;
	for (uint32_t s = 0; s < f->first_cap; s++)
		lines += f->first[s].prog && f->first[s].samples;
	for (uint32_t i = 0; i < f->nmore; i++)
		lines += f->more[i].samples > 0;
	uint32_t *order = malloc((lines ? lines : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t s = 0; s < f->first_cap; s++)
		if (f->first[s].prog && f->first[s].samples)
			order[n++] = s;
	for (uint32_t i = 0; i < f->nmore; i++)
		if (f->more[i].samples)
			order[n++] = MORE_LINE + i;
	sorting.x = x;
	sorting.f = f;
	sorting.name_rank = piece_ranks(x->names);
	sorting.prog_rank = piece_ranks(&f->progs);
	if (!sorting.name_rank || !sorting.prog_rank) {
		free(sorting.name_rank);
		free(sorting.prog_rank);
		free(order);
		return -ENOMEM;
	}
	qsort(order, n, sizeof(*order), cmp_fold);
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	for (uint32_t i = 0; !err && i < n;) {
		uint64_t samples = 0;
		uint32_t j = i;
		uint32_t prog, stack, some;
		for (; j < n && (j == i || !cmp_fold(&order[i], &order[j])); j++) {
			line_of(f, order[j], &prog, &stack, &some);
			samples += some;
		}
		line_of(f, order[i], &prog, &stack, &some);
		err = make_line(&line, &cap, x, strtab__str(&f->progs, prog), stack);
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
	free(sorting.name_rank);
	free(sorting.prog_rank);
	sorting.name_rank = sorting.prog_rank = NULL;
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
