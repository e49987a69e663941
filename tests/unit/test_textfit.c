/*
 * Text for a terminal (report/textfit.c): a command line quoted as the
 * shell would read it back (run's echo), never with raw control bytes; a
 * long string cut in its middle, its end kept, to the columns asked.
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

static void quoted(const char *const *argv, const char *want)
{
	char *q = shell_quote(argv);
	assert_non_null(q);
	assert_string_equal(q, want);
	free(q);
}

static void quoting(void **state)
{
	(void)state;
	quoted((const char *[]){ "sh", "-c", "exit 3", NULL }, "sh -c 'exit 3'");
	quoted((const char *[]){ "cc", "-DX=1", "a.c", "-o", "/tmp/a.o", NULL },
	       "cc -DX=1 a.c -o /tmp/a.o");
	quoted((const char *[]){ "echo", "it's", "", "$HOME", NULL },
	       "echo 'it'\\''s' '' '$HOME'");
	quoted((const char *[]){ "printf", "a\nb\t", "\x1b[31m", NULL },
	       "printf $'a\\nb\\t' $'\\x1b[31m'");
	/* not UTF-8, and C1 (U+009B, a terminal's CSI): escaped */
	quoted((const char *[]){ "x", "\xff", "\xc2\x9b", "caf\xc3\xa9", NULL },
	       "x $'\\xff' $'\\xc2\\x9b' 'caf\xc3\xa9'");
	quoted((const char *[]){ "x", "a'b\n", NULL }, "x $'a\\'b\\n'");
}

static char *put(const char *s, int max, int pad, int *cols)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	assert_non_null(f);
	*cols = text_put_middle(f, s, max, pad);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void middle(void **state)
{
	(void)state;
	int cols;
	char *s = put("short", 20, 8, &cols);
	assert_string_equal(s, "short   ");
	assert_int_equal(cols, 8);
	free(s);
	/* 30 characters into 15: 4 from the start, "...", 8 from the end */
	s = put("/usr/lib/gcc/cc1 -o x /src/a.c", 15, 0, &cols);
	assert_string_equal(s, "/usr.../src/a.c");
	free(s);
	s = put("/usr/lib/gcc/cc1 -o x /src/a.c", 15, 0, &cols);
	assert_int_equal(cols, 15);
	free(s);
	/* characters, not bytes; control characters as '?' */
	s = put("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\x01zzzzzzzzzz", 10, 10, &cols);
	assert_string_equal(s, "\xc3\xa9\xc3\xa9...zzzzz");
	assert_int_equal(cols, 10);
	free(s);
	s = put("a\x1b[2Jb", 0, 0, &cols);
	assert_string_equal(s, "a?[2Jb");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quoting),
		cmocka_unit_test(middle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
