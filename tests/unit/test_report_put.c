/*
 * What the report writers put without a printf (report/report.c): an
 * integer as printf's "%" PRId64 and "%" PRIu64 write it, a JSON member,
 * a JSON string (also through a json_out whose buffer fills), a CSV field and an OpenMetrics label, byte for byte,
 * hostile bytes included. The expected strings are worked out by hand;
 * the integers are also checked against snprintf over a spread of values.
 */
#include <inttypes.h>
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

static void u64_is(uint64_t v, const char *want)
{
	char buf[REPORT_NUM_MAX];
	memset(buf, 'x', sizeof(buf));
	size_t n = report_fmt_u64(buf, v);
	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
}

static void i64_is(int64_t v, const char *want)
{
	char buf[REPORT_NUM_MAX];
	memset(buf, 'x', sizeof(buf));
	size_t n = report_fmt_i64(buf, v);
	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
}

static void integers(void **state)
{
	(void)state;
	u64_is(0, "0");
	u64_is(7, "7");
	u64_is(10, "10");
	u64_is(1000000000, "1000000000");
	u64_is(UINT64_MAX, "18446744073709551615");
	i64_is(0, "0");
	i64_is(-1, "-1");
	i64_is(-10, "-10");
	i64_is(-987654321, "-987654321");
	i64_is(INT64_MAX, "9223372036854775807");
	i64_is(INT64_MIN, "-9223372036854775808");
	i64_is(INT64_MIN + 1, "-9223372036854775807");
}

/* Each power of ten and its neighbours, and a spread of others, as
 * snprintf writes them. */
static void integers_as_printf(void **state)
{
	(void)state;
	char want[32], got[REPORT_NUM_MAX];
	uint64_t x = 0x9e3779b97f4a7c15u;
	for (int i = 0; i < 4000; i++) {
		uint64_t v;
		if (i < 60) {
			uint64_t p = 1;
			for (int k = 0; k < i / 3; k++)
				p *= 10;
			v = p + (uint64_t)(i % 3) - 1;	/* 10^k - 1, 10^k, 10^k + 1 */
		} else {
			x = x * 6364136223846793005u + 1442695040888963407u;
			v = x >> (i % 64);
		}
		snprintf(want, sizeof(want), "%" PRIu64, v);
		assert_int_equal(report_fmt_u64(got, v), strlen(want));
		assert_string_equal(got, want);
		snprintf(want, sizeof(want), "%" PRId64, (int64_t)v);
		assert_int_equal(report_fmt_i64(got, (int64_t)v), strlen(want));
		assert_string_equal(got, want);
	}
}

/* What fn wrote to a stream, NUL-terminated (the caller frees it). */
struct written {
	FILE *f;
	char *buf;
	size_t size;
};

static FILE *start(struct written *w)
{
	w->buf = NULL;
	w->f = open_memstream(&w->buf, &w->size);
	assert_non_null(w->f);
	return w->f;
}

static void written_is(struct written *w, const char *want)
{
	assert_int_equal(fclose(w->f), 0);
	assert_string_equal(w->buf, want);
	free(w->buf);
}

static void puts_of_integers(void **state)
{
	(void)state;
	struct written w;
	FILE *f = start(&w);
	report_put_u64(f, UINT64_MAX);
	putc(' ', f);
	report_put_i64(f, INT64_MIN);
	putc(' ', f);
	report_put_i64(f, 0);
	written_is(&w, "18446744073709551615 -9223372036854775808 0");
}

static void json_members(void **state)
{
	(void)state;
	struct written w;
	FILE *f = start(&w);
	bool first = true;
	putc('{', f);
	json_put_num_member(f, &first, "pid", true, 545);
	json_put_num_member(f, &first, "steal_ns", false, 12);
	json_put_num_member(f, &first, "min", true, INT64_MIN);
	json_put_num_member(f, &first, "zero", true, 0);
	json_put_str_member(f, &first, "comm", "cc1");
	json_put_str_member(f, &first, "none", NULL);
	json_put_member(f, &first, "raw");
	fputs("[]}", f);
	written_is(&w, "{\"pid\":545,\"steal_ns\":null,\"min\":-9223372036854775808,"
		   "\"zero\":0,\"comm\":\"cc1\",\"none\":null,\"raw\":[]}");

	/* a key longer than the member's buffer: written in pieces, the same */
	char key[200], want[512];
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	f = start(&w);
	first = true;
	json_put_num_member(f, &first, key, true, -5);
	json_put_num_member(f, &first, key, false, 0);
	snprintf(want, sizeof(want), "\"%s\":-5,\"%s\":null", key, key);
	written_is(&w, want);
}

static void json_strings(void **state)
{
	(void)state;
	struct written w;
	FILE *f = start(&w);
	/* quote and backslash escaped; C0 and DEL as \u00XX (lowercase hex);
	 * a byte that is not UTF-8 as \ufffd; UTF-8 as it is */
	json_put_string(f, "sh -c \"a\\b\"\x01\x1f\x7f caf\xc3\xa9 \xff\xc3(");
	written_is(&w, "\"sh -c \\\"a\\\\b\\\"\\u0001\\u001f\\u007f caf\xc3\xa9 "
		   "\\ufffd\\ufffd(\"");
	f = start(&w);
	json_put_string(f, "");
	json_put_string(f, "\"");
	written_is(&w, "\"\"\"\\\"\"");
}

/* s through a json_out whose buffer holds cap bytes: what it wrote. */
static char *json_out_of(const char *s, size_t cap)
{
	struct written w;
	FILE *f = start(&w);
	char buf[64];
	assert_true(cap <= sizeof(buf));
	struct json_out o = json_out__make(f, buf, cap);
	json_out__string(&o, s);
	json_out__flush(&o);
	assert_int_equal(fclose(f), 0);
	return w.buf;
}

/* Each byte a JSON string escapes, and a few it does not, at each place
 * in a run of plain bytes longer than a word (the plain ones are looked
 * at eight at a time), through buffers that fill mid-string: the same as
 * written a byte at a time by hand. */
static void json_strings_by_word(void **state)
{
	(void)state;
	static const char *const bytes[][2] = {
		{ "\"", "\\\"" }, { "\\", "\\\\" }, { "\x01", "\\u0001" },
		{ "\x1f", "\\u001f" }, { "\x7f", "\\u007f" }, { "\x80", "\\ufffd" },
		{ "\xc3\xa9", "\xc3\xa9" }, { " ", " " }, { "~", "~" },
	};
	for (size_t b = 0; b < sizeof(bytes) / sizeof(bytes[0]); b++) {
		for (size_t at = 0; at < 20; at++) {
			char s[64], want[64];
			memset(s, 'a', at);
			snprintf(s + at, sizeof(s) - at, "%s%s", bytes[b][0], "aaaaaaaaaaa");
			snprintf(want, sizeof(want), "\"%.*s%s%s\"", (int)at, s, bytes[b][1],
				 "aaaaaaaaaaa");
			size_t caps[] = { 5, 7, 64 };
			for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
				char *got = json_out_of(s, caps[c]);
				assert_string_equal(got, want);
				free(got);
			}
			struct written w;
			json_put_string(start(&w), s);
			written_is(&w, want);
		}
	}
}

static void csv_fields(void **state)
{
	(void)state;
	struct written w;
	FILE *f = start(&w);
	const char *in[] = {
		"plain", "a,b", "say \"hi\"", "\"", "=1+2", "-x", "caf\xc3\xa9",
		"bad\xff\xfe end", "two\nlines", "",
	};
	for (size_t i = 0; i < sizeof(in) / sizeof(*in); i++) {
		csv_put_field(f, in[i]);
		putc('|', f);
	}
	written_is(&w, "plain|\"a,b\"|\"say \"\"hi\"\"\"|\"\"\"\"|\"'=1+2\"|\"'-x\"|"
		   "caf\xc3\xa9|bad\xef\xbf\xbd\xef\xbf\xbd end|\"two\nlines\"||");
}

static void om_labels(void **state)
{
	(void)state;
	struct written w;
	FILE *f = start(&w);
	bool first = true;
	om_put_label(f, &first, "comm", "a\\b\"c\nd\xff" "e\xc3\xa9");
	om_put_label(f, &first, "pid", "545");
	om_put_label(f, &first, "none", NULL);
	om_put_label(f, &first, "q", "\"");
	written_is(&w, "comm=\"a\\\\b\\\"c\\nd\xef\xbf\xbd" "e\xc3\xa9\",pid=\"545\","
		   "none=\"\",q=\"\\\"\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(integers),
		cmocka_unit_test(integers_as_printf),
		cmocka_unit_test(puts_of_integers),
		cmocka_unit_test(json_members),
		cmocka_unit_test(json_strings),
		cmocka_unit_test(json_strings_by_word),
		cmocka_unit_test(csv_fields),
		cmocka_unit_test(om_labels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
