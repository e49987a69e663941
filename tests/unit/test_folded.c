/*
 * Folded stacks (report/folded.c): the lines sorted as strcmp orders
 * them made, though they are compared piece by piece unmade: a name
 * whose ';' or ' ' is made ':' or '_' sorts as made, a line that is the
 * start of another first, and lines that read alike (two programs or two
 * names made the same) summed into one; a line of no samples not shown;
 * a line's samples past 2^32 (kept in lines of their own) summed whole;
 * thousands of such lines (sorted many at a time) in strcmp's order.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/report.h"

/* A stack of names (root first) as stack_frames holds it: leaf first. */
static uint32_t stack(struct stacktab *frames, const uint32_t *root_first, size_t n)
{
	struct stack_frame key[8] = { 0 };
	for (size_t i = 0; i < n; i++)
		key[i].function = root_first[n - 1 - i];
	uint32_t id = stacktab__intern(frames, key, (uint32_t)n);
	assert_int_not_equal(id, HINDEX_NONE);
	return id;
}

/* What folded writes of folds (to free). */
static char *folded_of(struct stacktab *frames, struct strtab *names,
		       struct report_folds *folds)
{
	struct report_extras x = { .stack_frames = frames, .names = names, .folds = folds };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	assert_non_null(out);
	assert_int_equal(report_folded.write(out, NULL, &x), 0);
	fclose(out);
	return buf;
}

static void sorted_as_made(void **state)
{
	(void)state;
	struct strtab names;
	struct stacktab frames;
	strtab__init(&names);
	stacktab__init(&frames);
	const char *words[] = { "", "a b", "a_b", "f", "g;h", "g:h", "z" };
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		assert_int_equal(strtab__intern(&names, words[i], strlen(words[i])), i);
	uint32_t f_ab = stack(&frames, (const uint32_t[]){ 3, 1 }, 2);
	uint32_t f_a_b = stack(&frames, (const uint32_t[]){ 3, 2 }, 2);
	uint32_t f = stack(&frames, (const uint32_t[]){ 3 }, 1);
	uint32_t f_gh = stack(&frames, (const uint32_t[]){ 3, 4 }, 2);
	uint32_t z_gh = stack(&frames, (const uint32_t[]){ 6, 5 }, 2);
	struct report_folds folds;
	report_folds__init(&folds);
	assert_int_equal(report_folds__add(&folds, "P_x", f, 6), 0);
	assert_int_equal(report_folds__add(&folds, "P", z_gh, 5), 0);
	assert_int_equal(report_folds__add(&folds, "P", f_ab, 2), 0);
	assert_int_equal(report_folds__add(&folds, "Q", f, 0), 0);
	assert_int_equal(report_folds__add(&folds, "P", f_gh, 4), 0);
	assert_int_equal(report_folds__add(&folds, "P", f_a_b, 3), 0);
	assert_int_equal(report_folds__add(&folds, "P x", f, 7), 0);
	assert_int_equal(report_folds__add(&folds, "P", f, 1), 0);
	assert_int_equal(report_folds__add(&folds, "P", f_ab, 10), 0);
	char *buf = folded_of(&frames, &names, &folds);
	assert_string_equal(buf, "P;f 1\n"
				 "P;f;a_b 15\n"
				 "P;f;g:h 4\n"
				 "P;z;g:h 5\n"
				 "P_x;f 13\n");
	free(buf);
	report_folds__release(&folds);
	stacktab__release(&frames);
	strtab__release(&names);
}

static void many_samples(void **state)
{
	(void)state;
	struct strtab names;
	struct stacktab frames;
	strtab__init(&names);
	stacktab__init(&frames);
	assert_int_equal(strtab__intern(&names, "f", 1), 0);
	assert_int_equal(strtab__intern(&names, "g", 1), 1);
	uint32_t f = stack(&frames, (const uint32_t[]){ 0 }, 1);
	uint32_t fg = stack(&frames, (const uint32_t[]){ 0, 1 }, 2);
	struct report_folds folds;
	report_folds__init(&folds);
	/* one line over 2^32, by adds below it and one above it */
	assert_int_equal(report_folds__add(&folds, "P", f, UINT32_MAX - 1), 0);
	assert_int_equal(report_folds__add(&folds, "Q", f, 3), 0);
	assert_int_equal(report_folds__add(&folds, "P", f, 5), 0);
	assert_int_equal(report_folds__add(&folds, "P", fg, 7), 0);
	assert_int_equal(report_folds__add(&folds, "P", f, 1ull << 33), 0);
	assert_int_equal(report_folds__add(&folds, "P", f, 2), 0);
	char *buf = folded_of(&frames, &names, &folds);
	char want[128];
	snprintf(want, sizeof(want), "P;f %llu\nP;f;g 7\nQ;f 3\n",
		 (unsigned long long)UINT32_MAX - 1 + 5 + (1ull << 33) + 2);
	assert_string_equal(buf, want);
	free(buf);
	report_folds__release(&folds);
	stacktab__release(&frames);
	strtab__release(&names);
}

/* A line's text as made: the program, then ';' and each name root first,
 * ';' and ' ' in them made ':' and '_'. */
static void made(char *out, const char *prog, const char *const *names, const uint32_t *ids,
		 size_t n)
{
	size_t at = 0;
	for (const char *c = prog; *c; c++)
		out[at++] = *c == ';' ? ':' : *c == ' ' ? '_' : *c;
	for (size_t i = 0; i < n; i++) {
		out[at++] = ';';
		for (const char *c = names[ids[i]]; *c; c++)
			out[at++] = *c == ';' ? ':' : *c == ' ' ? '_' : *c;
	}
	out[at] = '\0';
}

struct want_line {
	char text[128];
	unsigned long long samples;
};

static int cmp_want(const void *a, const void *b)
{
	return strcmp(((const struct want_line *)a)->text, ((const struct want_line *)b)->text);
}

/* Thousands of lines of names that are each other's starts, or alike once
 * made: sorted (by pieces, many at a time) and summed as their texts made
 * would be by strcmp. */
static void many_lines_sorted_as_made(void **state)
{
	(void)state;
	static const char *const words[] = { "", "f", "f.cold", "f;g", "f:g", "f g", "f_g",
					     "g", "a", "ab", "a b", "zz" };
	static const char *const progs[] = { "P", "P x", "P_x", "Q", "P;" };
	enum { NW = sizeof(words) / sizeof(words[0]), NP = sizeof(progs) / sizeof(progs[0]),
	       LINES = 3000 };
	struct strtab names;
	struct stacktab frames;
	strtab__init(&names);
	stacktab__init(&frames);
	for (size_t i = 0; i < NW; i++)
		assert_int_equal(strtab__intern(&names, words[i], strlen(words[i])), i);
	struct report_folds folds;
	report_folds__init(&folds);
	static struct want_line want[LINES];
	uint32_t seed = 12345;
	for (int i = 0; i < LINES; i++) {
		uint32_t ids[6];
		seed = seed * 1103515245u + 12345u;
		size_t n = 1 + (seed >> 16) % 6;
		for (size_t k = 0; k < n; k++) {
			seed = seed * 1103515245u + 12345u;
			/* mostly a few names: long shared starts */
			ids[k] = (seed >> 16) % (k < 3 ? 3 : NW);
		}
		seed = seed * 1103515245u + 12345u;
		const char *prog = progs[(seed >> 16) % NP];
		unsigned long long samples = 1 + (seed >> 8) % 5;
		assert_int_equal(report_folds__add(&folds, prog, stack(&frames, ids, n), samples), 0);
		made(want[i].text, prog, words, ids, n);
		want[i].samples = samples;
	}
	qsort(want, LINES, sizeof(want[0]), cmp_want);
	char *expect = malloc((size_t)LINES * 160);
	assert_non_null(expect);
	size_t len = 0;
	for (int i = 0; i < LINES;) {
		unsigned long long sum = 0;
		int j = i;
		for (; j < LINES && !strcmp(want[i].text, want[j].text); j++)
			sum += want[j].samples;
		len += (size_t)sprintf(expect + len, "%s %llu\n", want[i].text, sum);
		i = j;
	}
	char *buf = folded_of(&frames, &names, &folds);
	assert_string_equal(buf, expect);
	free(buf);
	free(expect);
	report_folds__release(&folds);
	stacktab__release(&frames);
	strtab__release(&names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sorted_as_made),
		cmocka_unit_test(many_samples),
		cmocka_unit_test(many_lines_sorted_as_made),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
