/*
 * The sampling-data CSV reader: good input in any chunking gives the same
 * table; each kind of bad input is refused with its line and reason.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* sampling data's keys, as analyze gives them */
#define BY_PROCESS "vm,process"
#define BY_THREAD "vm,thread"
#define BY_FUNCTION "vm,thread,function"

#include "core/attribute.h"
#include "core/table.h"
#include "format/sampling_csv.h"

#define MS 1000000ULL
#define HDR SAMPLING_CSV_HEADER "\n"

struct parsed {
	struct attributor a;
	int err;
	struct input_error e;
};

/* Parses text in pieces of `piece` bytes (0: whole). */
static void parse(struct parsed *p, const char *text, size_t piece)
{
	attributor__init(&p->a, METHOD_PRECEDING, MS, false);
	struct sampling_reader *r = sampling_reader__new(&p->a);
	assert_non_null(r);
	size_t len = strlen(text), off = 0;
	p->err = 0;
	while (off < len && !p->err) {
		size_t n = piece && len - off > piece ? piece : len - off;
		p->err = sampling_reader__feed(r, text + off, n);
		off += n;
	}
	if (!p->err)
		p->err = sampling_reader__finish(r);
	p->e = *sampling_reader__error(r);
	sampling_reader__free(r);
	if (!p->err)
		attributor__finish(&p->a);
}

static void expect_error(const char *text, uint64_t line, const char *msg)
{
	size_t pieces[] = { 0, 1, 7 };
	for (size_t i = 0; i < 3; i++) {
		struct parsed p;
		parse(&p, text, pieces[i]);
		if (p.err != -EINVAL)
			fail_msg("accepted: %s", text);
		if (p.e.line != line || !strstr(p.e.msg, msg))
			fail_msg("for %.60s (pieces of %zu)\n got %llu: %s\nwant %llu: ...%s...",
				 text, pieces[i], (unsigned long long)p.e.line,
				 p.e.msg, (unsigned long long)line, msg);
		attributor__release(&p.a);
	}
}

static const char good[] =
	HDR
	"vm0,0,1000000,100,10,F,run\n"
	"vm0,1,1000000,200,20,\"std::map<int, long>::find\",run\n"
	"vm0,0,2000000,,,,steal\n"
	"vm0,1,2000000,200,20,\"std::map<int, long>::find\",run\r\n"
	"\n"
	"vm1,0,5,,,,idle\n"
	"vm0,0,3000000,,,,steal\n"
	"vm0,0,4000000,100,10,F,run\n"
	"\"vm0\",\"1\",\"3000000\",\"200\",\"20\",\"say \"\"hi\"\"\",\"run\"\n"
	"vm0,0,5000000,100,10,,run";	/* no newline at the end */

/*
 * vm0 100 10 F             samples 2  steal_samples 2  cpu 2 ms  steal 2 ms
 * vm0 200 20 std::map...   samples 2  cpu 2 ms
 * vm0 100 10 (empty)       samples 1  cpu 1 ms
 * vm0 200 20 say "hi"      samples 1  cpu 1 ms
 * idle 1 ms (vm1)
 */
static void good_input_any_chunking(void **state)
{
	(void)state;
	size_t pieces[] = { 0, 1, 2, 3, 5, 8, 13, 64 };
	for (size_t i = 0; i < sizeof(pieces) / sizeof(*pieces); i++) {
		struct parsed p;
		parse(&p, good, pieces[i]);
		assert_int_equal(p.err, 0);
		struct table *t = table__new_keys(&p.a, BY_FUNCTION);
		assert_int_equal(t->nrows, 4);
		assert_string_equal(t->rows[0].function, "F");
		assert_int_equal(t->rows[0].samples, 2);
		assert_int_equal(t->rows[0].steal_samples, 2);
		assert_int_equal(t->rows[0].steal_ns, 2 * MS);
		assert_string_equal(t->rows[1].function, "std::map<int, long>::find");
		assert_int_equal(t->rows[1].samples, 2);
		assert_int_equal(t->rows[1].cpu_ns, 2 * MS);
		assert_string_equal(t->rows[2].function, "");
		assert_int_equal(t->rows[2].pid, 100);
		assert_string_equal(t->rows[3].function, "say \"hi\"");
		assert_int_equal(t->totals.idle_ns, 1 * MS);
		assert_int_equal(t->totals.streams, 3);
		assert_int_equal(t->totals.samples, 6);
		table__free(t);
		attributor__release(&p.a);
	}
}

/* A quoted line and a plain line of the same program are one program. */
static void quoted_and_plain_agree(void **state)
{
	(void)state;
	struct parsed p;
	parse(&p, HDR "vm0,0,1,100,10,F,run\n\"vm0\",\"0\",2,\"100\",10,\"F\",run\n", 0);
	assert_int_equal(p.err, 0);
	assert_int_equal(p.a.nprogs, 1);
	assert_int_equal(p.a.nstreams, 1);
	assert_int_equal(p.a.progs[0].samples, 2);
	attributor__release(&p.a);
}

static void header_and_bom(void **state)
{
	(void)state;
	struct parsed p;
	parse(&p, "\xef\xbb\xbf" HDR "vm0,0,1,,,,idle\n", 0);
	assert_int_equal(p.err, 0);
	attributor__release(&p.a);
	parse(&p, HDR, 0);	/* a header alone is an empty recording */
	assert_int_equal(p.err, 0);
	assert_int_equal(p.a.nstreams, 0);
	attributor__release(&p.a);
}

static void numbers(void **state)
{
	(void)state;
	const char *ok[] = { "0", "7", "12345678", "1234567890123456",
			     "1234567890123456789", "18446744073709551615",
			     "00000000000000000001" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++) {
		char line[160];
		snprintf(line, sizeof(line), HDR "vm0,0,%s,,,,idle\n", ok[i]);
		struct parsed p;
		parse(&p, line, 0);
		assert_int_equal(p.err, 0);
		assert_int_equal(p.a.streams[0].pend_time, strtoull(ok[i], NULL, 10));
		attributor__release(&p.a);
	}
	const char *bad[] = { "18446744073709551616", "99999999999999999999",
			      "123456789012345678901", "1234a678", "12345678a012",
			      "-1", "+1", " 1", "1 ", "0x10", "1234567/" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char line[160];
		snprintf(line, sizeof(line), HDR "vm0,0,%s,,,,idle\n", bad[i]);
		expect_error(line, 2, "bad time_ns");
	}
	expect_error(HDR "vm0,0,1,4294967296,1,f,run\n", 2, "bad pid '4294967296'");
	expect_error(HDR "vm0,4294967296,1,,,,idle\n", 2, "bad vcpu");
}

static void errors(void **state)
{
	(void)state;
	expect_error("", 1, "empty file");
	expect_error("vm,vcpu,time\n", 1, "bad header 'vm,vcpu,time'");
	expect_error(HDR "vm0,0,1,1,1,f,running\n", 2,
		     "unknown state 'running' (expected run, steal or idle)");
	expect_error(HDR "vm0,0,1,,,f,run\n", 2, "run sample without pid");
	expect_error(HDR "vm0,0,1,5,,f,run\n", 2, "run sample without tid");
	expect_error(HDR "vm0,0,1,1,1,run\n", 2, "expected 7 columns");
	expect_error(HDR "vm0,0,1,1,1,f,run,x\n", 2, "found 8");
	expect_error(HDR "vm0,0,,,,,idle\n", 2, "empty time_ns");
	expect_error(HDR ",0,1,,,,idle\n", 2, "empty vm");
	expect_error(HDR "vm0,0,1,1,1,,steal\n", 2, "steal sample with pid");
	expect_error(HDR "vm0,0,1,,,f,idle\n", 2, "idle sample with pid");
	expect_error(HDR "vm0,0,5,,,,idle\nvm1,0,1,,,,idle\nvm0,0,5,,,,idle\n", 4,
		     "time_ns 5 is not after 5, the time of line 2 in the same stream (vm 'vm0', vcpu 0)");
	expect_error(HDR "vm0,0,1,1,1,\xff,run\n", 2, "function is not UTF-8");
	expect_error(HDR "vm0,0,1,1,1,\xc0\x80,run\n", 2, "function is not UTF-8");
	expect_error(HDR "vm0,0,1,1,1,a\tb,run\n", 2, "control characters");
	expect_error(HDR "vm0,0,1,1,1,\"abc,run\n", 2, "unterminated quote");
	expect_error(HDR "vm0,0,1,1,1,\"a\"b,run\n", 2, "text after the closing quote");
	expect_error(HDR "vm0,0,1,1,1,a\"b,run\n", 2, "quote inside unquoted column 6");
	expect_error(HDR "vm0,0,1,,,,idle\n\nvm0,0,2,,,,bogus\n", 4, "unknown state");
}

/* A line longer than the limit is refused, not buffered without bound. */
static void long_line(void **state)
{
	(void)state;
	size_t n = SAMPLING_CSV_MAX_LINE + 10;
	char *text = malloc(sizeof(HDR) + n + 2);
	memcpy(text, HDR, sizeof(HDR) - 1);
	memset(text + sizeof(HDR) - 1, 'x', n);
	memcpy(text + sizeof(HDR) - 1 + n, "\n", 2);
	expect_error(text, 2, "line longer than");
	free(text);
}

/* After an error the reader takes nothing more. */
static void stops_at_error(void **state)
{
	(void)state;
	struct attributor a;
	attributor__init(&a, METHOD_PRECEDING, MS, false);
	struct sampling_reader *r = sampling_reader__new(&a);
	const char *bad = HDR "vm0,0,x,,,,idle\n";
	assert_int_equal(sampling_reader__feed(r, bad, strlen(bad)), -EINVAL);
	uint32_t streams = a.nstreams;
	const char *more = "vm1,0,1,,,,idle\n";
	assert_int_equal(sampling_reader__feed(r, more, strlen(more)), -EINVAL);
	assert_int_equal(sampling_reader__finish(r), -EINVAL);
	assert_int_equal(a.nstreams, streams);
	assert_int_equal(a.totals.idle_samples, 0);
	assert_int_equal(sampling_reader__error(r)->line, 2);
	sampling_reader__free(r);
	attributor__release(&a);
}

/* The writer's lines read back as the samples written. */
static void writer_round_trip(void **state)
{
	(void)state;
	struct csv_sample s[] = {
		{ "vm0", 3, 1000, 7, 8, "a,b \"c\"", SAMPLE_RUN },
		{ "vm,1", 0, 2000, 0, 0, NULL, SAMPLE_STEAL },
		{ "vm0", 3, 3000, 0, 0, NULL, SAMPLE_IDLE },
	};
	char text[1024];
	size_t n = (size_t)snprintf(text, sizeof(text), "%s", HDR);
	for (size_t i = 0; i < 3; i++) {
		assert_true(sampling_csv__line_max(&s[i]) < sizeof(text) - n);
		n += sampling_csv__format(text + n, &s[i]);
	}
	text[n] = '\0';
	assert_non_null(strstr(text, "vm0,3,1000,7,8,\"a,b \"\"c\"\"\",run\n"));
	assert_non_null(strstr(text, "\"vm,1\",0,2000,,,,steal\n"));
	struct parsed p;
	parse(&p, text, 0);
	assert_int_equal(p.err, 0);
	assert_int_equal(p.a.nprogs, 1);
	assert_string_equal(strtab__str(&p.a.strings, p.a.progs[0].function),
			    "a,b \"c\"");
	assert_int_equal(p.a.totals.steal_samples, 1);
	assert_int_equal(p.a.totals.idle_samples, 1);
	attributor__release(&p.a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_input_any_chunking),
		cmocka_unit_test(quoted_and_plain_agree),
		cmocka_unit_test(header_and_bom),
		cmocka_unit_test(numbers),
		cmocka_unit_test(errors),
		cmocka_unit_test(long_line),
		cmocka_unit_test(stops_at_error),
		cmocka_unit_test(writer_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
