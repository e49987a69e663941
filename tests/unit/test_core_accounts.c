/*
 * Account rules (core/accounts.c): first match wins, the defaults catch
 * the rest, and a bad line is refused with its number and reason.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/accounts.h"

static const char rules_text[] =
	"# crypto first, then the C runtime\n"
	"crypto   path   */libcrypto.so*\n"
	"\n"
	"runtime  path   */libc.so*   # trailing comment\n"
	"runtime  path   */ld-linux*\n"
	"hot      symbol sha256_*\n"
	"jit      range  7f0000000000-7f00000fffff\n"
	"sys      kernel\n"
	"app      executable\n";

static const char *match(const struct account_rules *r, const char *dso,
			 const char *sym, uint64_t ip, bool kernel, bool exe)
{
	struct code_site s = { dso, sym, ip, kernel, exe };
	return account_rules__match(r, &s);
}

static void first_match_wins(void **state)
{
	(void)state;
	struct account_rules r;
	size_t line;
	char msg[128];
	assert_int_equal(account_rules__parse(&r, rules_text, strlen(rules_text),
					      &line, msg, sizeof(msg)), 0);
	assert_int_equal(r.n, 7);
	assert_string_equal(match(&r, "/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
				  "sha256_block_data_order", 0x1000, false, false), "crypto");
	assert_string_equal(match(&r, "/usr/lib/libc.so.6", "memcpy", 0x1000, false, false),
			    "runtime");
	assert_string_equal(match(&r, "/opt/app", "sha256_update", 0x1000, false, true), "hot");
	assert_string_equal(match(&r, "[anon]", NULL, 0x7f0000001000, false, false), "jit");
	assert_string_equal(match(&r, "[anon]", NULL, 0x7f0000100000, false, false), "library");
	assert_string_equal(match(&r, "[kernel.kallsyms]", "read_zero", 0xffffffff81000000,
				  true, false), "sys");
	assert_string_equal(match(&r, "/opt/app", "main", 0x1000, false, true), "app");
	account_rules__release(&r);
}

static void defaults(void **state)
{
	(void)state;
	assert_string_equal(match(NULL, "[kernel.kallsyms]", NULL, 0, true, false), "kernel");
	assert_string_equal(match(NULL, "/usr/bin/dd", "main", 0, false, true), "program");
	assert_string_equal(match(NULL, "/usr/lib/libc.so.6", "read", 0, false, false), "library");
	struct account_rules empty;
	size_t line;
	char msg[64];
	assert_int_equal(account_rules__parse(&empty, "# nothing\n\n", 11, &line, msg,
					      sizeof(msg)), 0);
	assert_string_equal(match(&empty, "/x", NULL, 0, false, false), "library");
	account_rules__release(&empty);
}

static void expect_error(const char *text, size_t want_line, const char *want)
{
	struct account_rules r;
	size_t line;
	char msg[128];
	assert_int_equal(account_rules__parse(&r, text, strlen(text), &line, msg,
					      sizeof(msg)), -EINVAL);
	if (line != want_line || !strstr(msg, want))
		fail_msg("for %s: got %zu: %s", text, line, msg);
	account_rules__release(&r);
}

static void errors(void **state)
{
	(void)state;
	expect_error("a path /x\nb\n", 2, "account 'b' has no match");
	expect_error("a paths /x\n", 1, "unknown match 'paths'");
	expect_error("# c\na path\n", 2, "'path' needs a pattern");
	expect_error("a kernel yes\n", 1, "'kernel' takes no pattern");
	expect_error("a range 10-1\n", 1, "bad range '10-1'");
	expect_error("a range zz-ff\n", 1, "bad range");
	expect_error("a range 10\n", 1, "bad range");
	expect_error("a path /x /y\n", 1, "unexpected '/y'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_match_wins),
		cmocka_unit_test(defaults),
		cmocka_unit_test(errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
