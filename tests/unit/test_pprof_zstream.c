/*
 * report/pprof_zstream keeps ISA-L's deflate state at fixed addresses,
 * because igzip's level 1 match finder hashes the state's address
 * (pprof_zstream.h): states made are at fixed addresses, apart while
 * alive, the first free one again after one is freed (so the same order
 * of making and freeing gives the same addresses in every run), zeroed,
 * and on the heap when every fixed one is taken. A stream deflated with
 * a state made there inflates to its input.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>

#include "report/pprof_zstream.h"

static void fixed_apart_and_again(void **state)
{
	(void)state;
	struct isal_zstream *a = pprof_zstream__new(), *b = pprof_zstream__new();
	assert_non_null(a);
	assert_non_null(b);
	assert_true(pprof_zstream__fixed(a));
	assert_true(pprof_zstream__fixed(b));
	assert_ptr_not_equal(a, b);
	/* bits 16 to 47 are what igzip reads: they differ */
	assert_int_not_equal(((uintptr_t)a >> 16) & 0xffffffff, ((uintptr_t)b >> 16) & 0xffffffff);
	memset(a, 0xa5, sizeof(*a));
	pprof_zstream__free(a);
	struct isal_zstream *c = pprof_zstream__new();
	assert_ptr_equal(c, a);	/* the first free one, zeroed */
	static const struct isal_zstream zero;
	assert_memory_equal(c, &zero, sizeof(zero));
	pprof_zstream__free(c);
	pprof_zstream__free(b);
	pprof_zstream__free(NULL);
}

static void heap_when_all_taken(void **state)
{
	(void)state;
	struct isal_zstream *v[40];
	int fixed = 0;
	for (int i = 0; i < 40; i++) {
		v[i] = pprof_zstream__new();
		assert_non_null(v[i]);
		fixed += pprof_zstream__fixed(v[i]);
	}
	assert_int_equal(fixed, 16);
	assert_false(pprof_zstream__fixed(v[39]));
	for (int i = 0; i < 40; i++)
		pprof_zstream__free(v[i]);
	struct isal_zstream *again = pprof_zstream__new();
	assert_true(pprof_zstream__fixed(again));
	pprof_zstream__free(again);
}

/* Level 1 as pprof_runs deflates a run, inflated by zlib. */
static void deflates(void **state)
{
	(void)state;
	enum { N = 200000 };
	uint8_t *in = malloc(N), *out = malloc(N + N / 8 + 1024), *back = malloc(N);
	uint8_t *level_buf = malloc(ISAL_DEF_LVL1_SMALL);
	assert_non_null(in);
	assert_non_null(out);
	assert_non_null(back);
	assert_non_null(level_buf);
	for (size_t i = 0; i < N; i++)
		in[i] = (uint8_t)("pprof samples "[i % 14] + (i / 5000) % 3);
	struct isal_zstream *s = pprof_zstream__new();
	assert_non_null(s);
	isal_deflate_stateless_init(s);
	s->level = 1;
	s->level_buf = level_buf;
	s->level_buf_size = ISAL_DEF_LVL1_SMALL;
	s->end_of_stream = 1;
	s->gzip_flag = IGZIP_DEFLATE;
	s->next_in = in;
	s->avail_in = N;
	s->next_out = out;
	s->avail_out = N + N / 8 + 1024;
	assert_int_equal(isal_deflate_stateless(s), COMP_OK);
	z_stream z = { 0 };
	assert_int_equal(inflateInit2(&z, -15), Z_OK);
	z.next_in = out;
	z.avail_in = s->total_out;
	z.next_out = back;
	z.avail_out = N;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.total_out, N);
	assert_memory_equal(back, in, N);
	inflateEnd(&z);
	pprof_zstream__free(s);
	free(in);
	free(out);
	free(back);
	free(level_buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fixed_apart_and_again),
		cmocka_unit_test(heap_when_all_taken),
		cmocka_unit_test(deflates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
