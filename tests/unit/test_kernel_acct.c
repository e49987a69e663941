/*
 * What the kernel's runtime holds, from what its configuration or BTF
 * says and its boot command line (collect/kernel_acct.h), for the kernel
 * families of docs/record.md: Debian and Ubuntu (no
 * PARAVIRT_TIME_ACCOUNTING), Red Hat (it and IRQ_TIME_ACCOUNTING), this
 * project's KVM guests (it alone), the boot options that turn either off,
 * and a kernel that says nothing (judged from the data).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "collect/kernel_acct.h"

static const struct kernel_config none = { -1, -1, -1 };

static enum steal_accounting decide(struct kernel_config btf, struct kernel_config config,
				    const char *cmdline, struct kernel_acct *k)
{
	kernel_acct__decide(k, &btf, &config, cmdline, 100);
	return k->accounting;
}

static void families(void **state)
{
	(void)state;
	struct kernel_acct k;
	struct kernel_config debian = { 0, 0, 1 }, rhel = { 1, 1, 1 }, here = { 1, 0, 1 };
	assert_int_equal(decide(none, debian, "ro quiet", &k), ACCT_INCLUDED);
	assert_string_equal(k.source, "config");
	assert_int_equal(decide(none, rhel, NULL, &k), ACCT_EXCLUDED_IRQ);
	assert_int_equal(decide(here, none, "console=ttyS0", &k), ACCT_EXCLUDED);
	assert_string_equal(k.source, "btf");
	/* the configuration is read first; BTF where there is none */
	assert_int_equal(decide(rhel, here, NULL, &k), ACCT_EXCLUDED);
	assert_int_equal(decide(none, none, NULL, &k), ACCT_JUDGE);
}

static void boot_options(void **state)
{
	(void)state;
	struct kernel_acct k;
	struct kernel_config rhel = { 1, 1, 1 };
	assert_int_equal(decide(none, rhel, "ro no-steal-acc quiet", &k), ACCT_INCLUDED);
	assert_non_null(strstr(k.source, "no-steal-acc"));
	assert_int_equal(decide(none, rhel, "tsc=noirqtime", &k), ACCT_EXCLUDED);
	/* a word inside another is not the option */
	assert_int_equal(decide(none, rhel, "xno-steal-acc tsc=noirqtimex", &k),
			 ACCT_EXCLUDED_IRQ);
}

static void steal_clock(void **state)
{
	(void)state;
	struct kernel_acct k;
	struct kernel_config here = { 1, 0, 1 };
	kernel_acct__decide(&k, &here, &none, NULL, 0);
	assert_int_equal(k.steal_clock, -1);	/* in BTF, yet none counted */
	/* nothing to take out of runtime without the clock */
	assert_int_equal(k.accounting, ACCT_INCLUDED);
	assert_non_null(strstr(k.source, "no steal clock"));
	kernel_acct__decide(&k, &here, &none, NULL, 5);
	assert_int_equal(k.steal_clock, 1);
	assert_int_equal(k.accounting, ACCT_EXCLUDED);
	kernel_acct__decide(&k, &here, &none, NULL, -1);
	assert_int_equal(k.steal_clock, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(families),
		cmocka_unit_test(boot_options),
		cmocka_unit_test(steal_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
