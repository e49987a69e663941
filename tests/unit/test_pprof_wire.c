/*
 * report/pprof_wire packs a profile's samples, locations and functions
 * by hand: its bytes must be protobuf-c's for every message pprof.c makes
 * and any other. Messages of every shape (samples with no locations, no
 * values, labels with a string or a number; locations of no line or
 * several, folded or not; numbers 0, large, negative) are packed both
 * ways and compared, plus a few worked out by hand from the wire format.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/pprof_wire.h"

#define MOST 64

/* A number from the spread that varints care about: 0, 7-bit edges,
 * large and, for signed fields, negative. */
static uint64_t some_number(unsigned *seed)
{
	static const uint64_t edges[] = {
		0, 1, 127, 128, 16383, 16384, (1ull << 21) - 1, 1ull << 21,
		(1ull << 35) + 5, (1ull << 56) - 1, 1ull << 63, UINT64_MAX,
		(uint64_t)-1000, 480028698947ull,
	};
	unsigned r = (unsigned)rand_r(seed);
	if (r % 3 == 0)
		return edges[(r / 3) % (sizeof(edges) / sizeof(edges[0]))];
	return ((uint64_t)rand_r(seed) << 31 | (uint64_t)rand_r(seed)) >> (r % 60);
}

/* Packs s both ways and compares the bytes and the sizes. */
static void packs_as_protobuf_c(const Perftools__Profiles__Sample *s)
{
	size_t want = perftools__profiles__sample__get_packed_size(s);
	assert_int_equal(pprof_wire__sample_size(s), want);
	uint8_t *a = malloc(want + 1), *b = malloc(want + 1);
	assert_non_null(a);
	assert_non_null(b);
	memset(a, 0xa5, want + 1);
	memset(b, 0xa5, want + 1);
	assert_int_equal(perftools__profiles__sample__pack(s, a), want);
	assert_int_equal(pprof_wire__sample(b, s), want);
	assert_memory_equal(a, b, want + 1);	/* and nothing past its end */
	free(a);
	free(b);
}

/* s written whole by pprof_wire__sample_field, its labels given packed
 * (as protobuf-c packs a Sample of them alone), against protobuf-c's
 * Sample with its tag and length before it as a Profile's field 2. */
static void field_as_protobuf_c(const Perftools__Profiles__Sample *s)
{
	Perftools__Profiles__Sample only = *s;
	only.n_location_id = 0;
	only.n_value = 0;
	size_t tail_len = perftools__profiles__sample__get_packed_size(&only);
	size_t want = perftools__profiles__sample__get_packed_size(s);
	size_t room = PPROF_SAMPLE_FIELD_MAX(s->n_location_id * PPROF_VARINT_MAX, s->n_value,
					     tail_len);
	uint8_t locs[MOST * PPROF_VARINT_MAX];
	uint8_t *tail = malloc(tail_len + 1), *a = malloc(room + 1), *b = malloc(room + 1);
	assert_non_null(tail);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(perftools__profiles__sample__pack(&only, tail), tail_len);
	memset(a, 0xa5, room + 1);
	memset(b, 0xa5, room + 1);
	a[0] = 2 << 3 | 2;
	size_t head = 1 + pprof_wire__varint(a + 1, want);
	assert_int_equal(perftools__profiles__sample__pack(s, a + head), want);
	size_t locs_len = 0;
	for (size_t i = 0; i < s->n_location_id; i++)
		locs_len += pprof_wire__varint(locs + locs_len, s->location_id[i]);
	assert_int_equal(pprof_wire__sample_field(b, locs, locs_len, s->value, s->n_value, tail,
						  tail_len),
			 head + want);
	assert_memory_equal(a, b, room + 1);	/* and nothing past its end */
	free(tail);
	free(a);
	free(b);
}

static void random_samples(void **state)
{
	(void)state;
	unsigned seed = 27;
	uint64_t locs[MOST];
	int64_t values[3];
	Perftools__Profiles__Label labels[MOST];
	Perftools__Profiles__Label *ptrs[MOST];
	for (int round = 0; round < 20000; round++) {
		Perftools__Profiles__Sample s;
		perftools__profiles__sample__init(&s);
		s.n_location_id = (size_t)rand_r(&seed) % MOST;
		s.location_id = locs;
		for (size_t i = 0; i < s.n_location_id; i++)
			locs[i] = some_number(&seed);
		s.n_value = (size_t)rand_r(&seed) % 3;
		s.value = values;
		for (size_t i = 0; i < s.n_value; i++)
			values[i] = (int64_t)some_number(&seed);
		s.n_label = (size_t)rand_r(&seed) % 16;
		s.label = ptrs;
		for (size_t i = 0; i < s.n_label; i++) {
			perftools__profiles__label__init(&labels[i]);
			ptrs[i] = &labels[i];
			labels[i].key = (int64_t)some_number(&seed);
			unsigned kind = (unsigned)rand_r(&seed) % 4;
			if (kind & 1)
				labels[i].str = (int64_t)some_number(&seed);
			if (kind & 2)
				labels[i].num = (int64_t)some_number(&seed);
			if (rand_r(&seed) % 8 == 0)
				labels[i].num_unit = (int64_t)some_number(&seed);
		}
		packs_as_protobuf_c(&s);
		field_as_protobuf_c(&s);
	}
}

static void random_locations_and_functions(void **state)
{
	(void)state;
	unsigned seed = 5;
	uint8_t a[512], b[512];
	for (int round = 0; round < 20000; round++) {
		Perftools__Profiles__Line lines[4];
		Perftools__Profiles__Line *ptrs[4];
		Perftools__Profiles__Location l;
		perftools__profiles__location__init(&l);
		l.id = some_number(&seed);
		l.mapping_id = some_number(&seed);
		l.address = rand_r(&seed) % 2 ? some_number(&seed) : 0;
		l.n_line = (size_t)rand_r(&seed) % 4;
		l.line = ptrs;
		for (size_t i = 0; i < l.n_line; i++) {
			perftools__profiles__line__init(&lines[i]);
			ptrs[i] = &lines[i];
			lines[i].function_id = some_number(&seed);
			lines[i].line = (int64_t)some_number(&seed);
		}
		l.is_folded = rand_r(&seed) % 2;
		size_t want = perftools__profiles__location__get_packed_size(&l);
		assert_int_equal(pprof_wire__location_size(&l), want);
		memset(a, 0xa5, sizeof(a));
		memset(b, 0xa5, sizeof(b));
		assert_int_equal(perftools__profiles__location__pack(&l, a), want);
		assert_int_equal(pprof_wire__location(b, &l), want);
		assert_memory_equal(a, b, sizeof(a));

		Perftools__Profiles__Function f;
		perftools__profiles__function__init(&f);
		f.id = some_number(&seed);
		f.name = (int64_t)some_number(&seed);
		f.system_name = rand_r(&seed) % 2 ? f.name : (int64_t)some_number(&seed);
		f.filename = (int64_t)some_number(&seed);
		f.start_line = rand_r(&seed) % 3 ? 0 : (int64_t)some_number(&seed);
		want = perftools__profiles__function__get_packed_size(&f);
		assert_int_equal(pprof_wire__function_size(&f), want);
		memset(a, 0xa5, sizeof(a));
		memset(b, 0xa5, sizeof(b));
		assert_int_equal(perftools__profiles__function__pack(&f, a), want);
		assert_int_equal(pprof_wire__function(b, &f), want);
		assert_memory_equal(a, b, sizeof(a));
	}
}

static void by_hand(void **state)
{
	(void)state;
	Perftools__Profiles__Sample s;
	perftools__profiles__sample__init(&s);
	uint8_t out[64];
	/* nothing at all: no bytes */
	assert_int_equal(pprof_wire__sample_size(&s), 0);
	assert_int_equal(pprof_wire__sample(out, &s), 0);

	/* locations 1 and 300, values 5 and 0, a label key 2 str 3 and one
	 * key 4 num -1 */
	uint64_t locs[] = { 1, 300 };
	int64_t values[] = { 5, 0 };
	Perftools__Profiles__Label a, b;
	perftools__profiles__label__init(&a);
	perftools__profiles__label__init(&b);
	a.key = 2;
	a.str = 3;
	b.key = 4;
	b.num = -1;
	Perftools__Profiles__Label *labels[] = { &a, &b };
	s.n_location_id = 2;
	s.location_id = locs;
	s.n_value = 2;
	s.value = values;
	s.n_label = 2;
	s.label = labels;
	static const uint8_t want[] = {
		0x0a, 3, 1, 0xac, 0x02,			/* locations: 1, 300 */
		0x12, 2, 5, 0,				/* values: 5, 0 */
		0x1a, 4, 0x08, 2, 0x10, 3,		/* key 2, str 3 */
		0x1a, 13, 0x08, 4, 0x18,		/* key 4, num -1: */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
	};
	assert_int_equal(pprof_wire__sample_size(&s), sizeof(want));
	assert_int_equal(pprof_wire__sample(out, &s), sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
	packs_as_protobuf_c(&s);

	/* a location as pprof.c writes it: id 3, mapping 1, one line of
	 * function 3; its function: id 3, name and system name 7, file 2 */
	Perftools__Profiles__Line line;
	Perftools__Profiles__Line *lines[] = { &line };
	perftools__profiles__line__init(&line);
	line.function_id = 3;
	Perftools__Profiles__Location l;
	perftools__profiles__location__init(&l);
	l.id = 3;
	l.mapping_id = 1;
	l.n_line = 1;
	l.line = lines;
	static const uint8_t want_l[] = { 0x08, 3, 0x10, 1, 0x22, 2, 0x08, 3 };
	assert_int_equal(pprof_wire__location_size(&l), sizeof(want_l));
	assert_int_equal(pprof_wire__location(out, &l), sizeof(want_l));
	assert_memory_equal(out, want_l, sizeof(want_l));
	Perftools__Profiles__Function f;
	perftools__profiles__function__init(&f);
	f.id = 3;
	f.name = f.system_name = 7;
	f.filename = 2;
	static const uint8_t want_f[] = { 0x08, 3, 0x10, 7, 0x18, 7, 0x20, 2 };
	assert_int_equal(pprof_wire__function_size(&f), sizeof(want_f));
	assert_int_equal(pprof_wire__function(out, &f), sizeof(want_f));
	assert_memory_equal(out, want_f, sizeof(want_f));
}

static void varints(void **state)
{
	(void)state;
	uint8_t out[PPROF_VARINT_MAX];
	assert_int_equal(pprof_wire__varint(out, 0), 1);
	assert_int_equal(out[0], 0);
	assert_int_equal(pprof_wire__varint(out, 127), 1);
	assert_int_equal(pprof_wire__varint(out, 128), 2);
	assert_int_equal(out[0], 0x80);
	assert_int_equal(out[1], 1);
	assert_int_equal(pprof_wire__varint(out, UINT64_MAX), PPROF_VARINT_MAX);
	assert_int_equal(out[9], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(varints),
		cmocka_unit_test(by_hand),
		cmocka_unit_test(random_samples),
		cmocka_unit_test(random_locations_and_functions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
