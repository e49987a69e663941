/*
 * Folded stacks (report/folded.c): the lines sorted as strcmp orders
 * them made, though they are compared piece by piece unmade: a name
 * whose ';' or ' ' is made ':' or '_' sorts as made, a line that is the
 * start of another first, and lines that read alike (two programs or two
 * names made the same) summed into one; a line of no samples not shown;
 * a line's samples past 2^32 (kept in lines of their own) summed whole.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sorted_as_made),
		cmocka_unit_test(many_samples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
