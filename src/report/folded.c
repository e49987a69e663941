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
	if (stack >= f->nfirst) {
		while (stack >= f->first_cap)
			if (grow_array((void **)&f->first, &f->first_cap, f->first_cap,
				       sizeof(*f->first), 1024))
				return -ENOMEM;
		memset(&f->first[f->nfirst], 0, (size_t)(stack + 1 - f->nfirst) * sizeof(*f->first));
		f->nfirst = stack + 1;
	}
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
 * recording's report. Each name is ranked once as its text sorts in a
 * line that goes on after it (followed by ';') and once as a line's last
 * piece (followed by the line's end), in one order: "f" before "f.cold"
 * either way, but "f;g" after "f.cold;g". A program is always followed
 * by ';'. Lines then compare as their pieces' ranks do, and are sorted by
 * them as keys, a piece at a time (sort_lines).
 */
static struct {
	const struct report_extras *x;
	const struct report_folds *f;
	const struct strtab *ranked;	/* piece_ranks' table */
	bool ranked_ends;		/* its strings ranked as last pieces too */
	uint32_t *prog_rank;		/* from 1 */
	/* each frame id's function's name ranks, from 1: [2 fid] as a
	 * line's last piece, [2 fid + 1] as one that goes on */
	uint32_t *frame_rank;
	/* sort_lines' lines, and for each place whether its line reads as
	 * the one before it */
	const uint32_t *lines;
	uint8_t *same;
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

/* Pieces as piece_ranks numbers them: with ends, 2 id + 1 goes on and
 * 2 id is a last piece; without, id goes on. */
static int cmp_ranked(const void *pa, const void *pb)
{
	const struct strtab *t = sorting.ranked;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	if (!sorting.ranked_ends)
		return piece_cmp(strtab__str(t, a), true, strtab__str(t, b), true);
	return piece_cmp(strtab__str(t, a >> 1), a & 1, strtab__str(t, b >> 1), b & 1);
}

/* The rank, from 1, of each string of t as a piece of a line that goes
 * on, and with ends as a line's last piece too (numbered as cmp_ranked's):
 * equal texts (made safe) equal ranks. NULL when out of memory. */
static uint32_t *piece_ranks(const struct strtab *t, bool ends)
{
	uint32_t n = t->count * (ends ? 2 : 1);
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	uint32_t *rank = malloc((n ? n : 1) * sizeof(*rank));
	if (!order || !rank) {
		free(order);
		free(rank);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	sorting.ranked = t;
	sorting.ranked_ends = ends;
	qsort(order, n, sizeof(*order), cmp_ranked);
	for (uint32_t i = 0, r = 1; i < n; i++) {
		if (i && cmp_ranked(&order[i - 1], &order[i]))
			r++;
		rank[order[i]] = r;
	}
	free(order);
	return rank;
}

/* Each frame id's two name ranks (sorting.frame_rank's), or NULL. */
static uint32_t *frame_ranks(const struct stacktab *t, const uint32_t *name_rank)
{
	uint32_t n = stacktab__nframes(t);
	uint32_t *rank = name_rank ? malloc((n ? 2 * (size_t)n : 1) * sizeof(*rank)) : NULL;
	for (uint32_t fid = 0; rank && fid < n; fid++) {
		uint32_t name = stacktab__frame_of(t, fid).function;
		rank[2 * fid] = name_rank[2 * name];
		rank[2 * fid + 1] = name_rank[2 * name + 1];
	}
	return rank;
}

/* Piece d of line id as a key: 0 its program's rank, 1 to n its frames'
 * names' root first, past them 0 (the line has ended). */
static uint32_t line_key(uint32_t id, size_t d)
{
	uint32_t prog, stack, samples;
	line_of(sorting.f, id, &prog, &stack, &samples);
	if (!d)
		return sorting.prog_rank[prog];
	const struct stacktab *t = sorting.x->stack_frames;
	size_t n = stacktab__depth(t, stack);
	if (d > n)
		return 0;
	return sorting.frame_rank[2 * stacktab__frame_id(t, stack, (uint32_t)(n - d)) + (d < n)];
}

/* Two lines as strcmp would order them made, from piece d on (the pieces
 * before it alike). */
static int cmp_lines(uint32_t a, uint32_t b, size_t d)
{
	for (;; d++) {
		uint32_t ka = line_key(a, d), kb = line_key(b, d);
		if (ka != kb)
			return ka < kb ? -1 : 1;
		if (!ka)
			return 0;
	}
}

static void swap_lines(uint32_t *a, uint32_t *b)
{
	uint32_t c = *a;
	*a = *b;
	*b = c;
}

static uint32_t median3(uint32_t a, uint32_t b, uint32_t c)
{
	return a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
}

/*
 * v[0, n), alike up to piece d, sorted (multikey quicksort): split by
 * piece d into those before, alike and after a pivot; those alike go on
 * at piece d + 1. A line's pieces shared with others are read once a
 * split, where a comparison sort read them again in each comparison
 * (sorting 47 000 lines was a sixteenth of an 8-minute recording's
 * folded report). The two smaller parts are sorted by a call, the
 * largest in turn here: calls nest no deeper than log2(n).
 */
static void sort_lines(uint32_t *v, size_t n, size_t d)
{
	while (n > 1) {
		if (n < 8) {	/* by insertion */
			for (size_t i = 1; i < n; i++)
				for (size_t j = i; j && cmp_lines(v[j - 1], v[j], d) > 0; j--)
					swap_lines(&v[j - 1], &v[j]);
			for (size_t i = 1; i < n; i++)
				sorting.same[v + i - sorting.lines] = !cmp_lines(v[i - 1], v[i], d);
			return;
		}
		uint32_t p = median3(line_key(v[0], d), line_key(v[n / 2], d),
				     line_key(v[n - 1], d));
		size_t lt = 0, i = 0, gt = n;
		while (i < gt) {
			uint32_t k = line_key(v[i], d);
			if (k < p)
				swap_lines(&v[lt++], &v[i++]);
			else if (k > p)
				swap_lines(&v[i], &v[--gt]);
			else
				i++;
		}
		/* before, alike (all ended when the pivot is 0: the same line,
		 * in its place for good), after */
		if (!p)
			memset(sorting.same + (v + lt + 1 - sorting.lines), 1, gt - lt - 1);
		struct { uint32_t *v; size_t n, d; } part[3] = {
			{ v, lt, d }, { v + lt, p ? gt - lt : 0, d + 1 }, { v + gt, n - gt, d },
		};
		int most = 0;
		for (int k = 1; k < 3; k++)
			most = part[k].n > part[most].n ? k : most;
		for (int k = 0; k < 3; k++)
			if (k != most)
				sort_lines(part[k].v, part[k].n, part[k].d);
		v = part[most].v;
		n = part[most].n;
		d = part[most].d;
	}
}

/*
 * Names as lines show them: made safe for the format (';' and ' ', as
 * put has them), then for a terminal (text_char's, as text_put shows a
 * line: no UTF-8 sequence holds a ';', so a line shown is its pieces
 * shown). Each name once, where it was each time it was in a line
 * (making and showing the lines byte by byte was a seventh of folded).
 */
struct shown {
	char **text;		/* a name's shown text, NULL: its own */
	uint32_t *len;		/* its length + 1; 0: not yet looked at */
};

static void shown_release(struct shown *sh, uint32_t n)
{
	for (uint32_t i = 0; sh->text && i < n; i++)
		free(sh->text[i]);
	free(sh->text);
	free(sh->len);
}

static int shown_init(struct shown *sh, uint32_t n)
{
	sh->text = calloc(n ? n : 1, sizeof(*sh->text));
	sh->len = calloc(n ? n : 1, sizeof(*sh->len));
	return sh->text && sh->len ? 0 : -ENOMEM;
}

/* String id of t as shown, its length in *len; NULL out of memory. */
static const char *shown(struct shown *sh, const struct strtab *t, uint32_t id, size_t *len)
{
	const char *s = strtab__str(t, id);
	if (!sh->len[id]) {
		uint32_t n = strtab__len(t, id);
		bool plain = true;
		for (uint32_t i = 0; i < n && plain; i++)
			plain = s[i] > 0x20 && s[i] < 0x7f && s[i] != ';';
		if (!plain) {
			char *safe = NULL;
			size_t safe_len = 0, safe_cap = 0, size = 3 * (size_t)n + 1;
			char *text = malloc(size);	/* a byte shows as 3 at most */
			if (!text || put(&safe, &safe_len, &safe_cap, s, 0)) {
				free(text);
				free(safe);
				return NULL;
			}
			safe[safe_len] = '\0';
			n = (uint32_t)text_clean(text, size, safe);
			free(safe);
			sh->text[id] = text;
		}
		sh->len[id] = n + 1;
	}
	*len = sh->len[id] - 1;
	return sh->text[id] ? sh->text[id] : s;
}

/* Lines written a buffer at a time. */
struct line_out {
	FILE *out;
	size_t len;
	char buf[1 << 16];
};

static void out_put(struct line_out *o, const char *s, size_t n)
{
	if (o->len + n > sizeof(o->buf)) {
		fwrite(o->buf, 1, o->len, o->out);
		o->len = 0;
		if (n > sizeof(o->buf)) {
			fwrite(s, 1, n, o->out);
			return;
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

/* A line of prog's stack and its samples, written to o. */
static int put_line(struct line_out *o, struct shown sh[2], const struct report_extras *x,
		    const struct report_folds *f, uint32_t prog, uint32_t stack, uint64_t samples)
{
	size_t len;
	const char *s = shown(&sh[0], &f->progs, prog, &len);
	if (!s)
		return -ENOMEM;
	out_put(o, s, len);
	const struct stacktab *t = x->stack_frames;
	uint32_t n = stacktab__depth(t, stack);
	for (uint32_t k = n; k-- > 0;) {	/* root first */
		if (!(s = shown(&sh[1], x->names, stacktab__frame(t, stack, k).function, &len)))
			return -ENOMEM;
		out_put(o, ";", 1);
		out_put(o, s, len);
	}
	char num[REPORT_NUM_MAX + 2];
	num[0] = ' ';
	size_t nlen = 1 + report_fmt_u64(num + 1, samples);
	num[nlen++] = '\n';
	out_put(o, num, nlen);
	return 0;
}

/* The lines of f sorted, those that read alike summed, written. */
static int write_lines(FILE *out, const struct report_extras *x, const struct report_folds *f)
{
	uint32_t lines = 0;
	for (uint32_t s = 0; s < f->nfirst; s++)
		lines += f->first[s].prog && f->first[s].samples;
	for (uint32_t i = 0; i < f->nmore; i++)
		lines += f->more[i].samples > 0;
	uint32_t *order = malloc((lines ? lines : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t s = 0; s < f->nfirst; s++)
		if (f->first[s].prog && f->first[s].samples)
			order[n++] = s;
	for (uint32_t i = 0; i < f->nmore; i++)
		if (f->more[i].samples)
			order[n++] = MORE_LINE + i;
	sorting.x = x;
	sorting.f = f;
	uint32_t *name_rank = piece_ranks(x->names, true);
	sorting.prog_rank = piece_ranks(&f->progs, false);
	sorting.frame_rank = frame_ranks(x->stack_frames, name_rank);
	free(name_rank);
	sorting.lines = order;
	sorting.same = calloc(n ? n : 1, 1);
	int err = sorting.prog_rank && sorting.frame_rank && sorting.same ? 0 : -ENOMEM;
	if (!err)
		sort_lines(order, n, 0);
	struct shown sh[2] = { 0 };
	struct line_out *o = err ? NULL : malloc(sizeof(*o));
	if (!err && (!o || shown_init(&sh[0], f->progs.count) ||
		     shown_init(&sh[1], x->names->count)))
		err = -ENOMEM;
	if (o)
		*o = (struct line_out){ .out = out };
	for (uint32_t i = 0; !err && i < n;) {
		uint64_t samples = 0;
		uint32_t j = i;
		uint32_t prog, stack, some;
		for (; j < n && (j == i || sorting.same[j]); j++) {
			line_of(f, order[j], &prog, &stack, &some);
			samples += some;
		}
		line_of(f, order[i], &prog, &stack, &some);
		err = put_line(o, sh, x, f, prog, stack, samples);
		i = j;
	}
	if (o && o->len)
		fwrite(o->buf, 1, o->len, out);
	free(o);
	shown_release(&sh[0], f->progs.count);
	shown_release(&sh[1], x->names->count);
	free(order);
	free(sorting.prog_rank);
	free(sorting.frame_rank);
	free(sorting.same);
	sorting.prog_rank = sorting.frame_rank = NULL;
	sorting.same = NULL;
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
