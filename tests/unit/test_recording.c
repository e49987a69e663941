/*
 * The recording file: items written come back in order; a file cut short
 * or with a damaged block is refused with the offset of the damage.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "format/recording.h"

/* Writes n items (the second block-filling), returns the file's fd. */
static int write_file(int n, off_t *size)
{
	int fd = memfd_create("rec", 0);
	assert_true(fd >= 0);
	struct rec_writer *w = rec_writer__new(fd);
	assert_non_null(w);
	static char big[300000];
	for (int i = 0; i < n; i++) {
		uint32_t v[2] = { (uint32_t)i, 0 };
		/* large items force several blocks */
		assert_int_equal(rec_writer__add(w, REC_PERF, v, sizeof(v), big,
						 i % 4 == 1 ? sizeof(big) : (size_t)i), 0);
	}
	assert_int_equal(rec_writer__finish(w), 0);
	rec_writer__free(w);
	*size = lseek(fd, 0, SEEK_END);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* Reads fd to its end, reading ahead from item ahead_at on (-1: never);
 * returns 0 or the error, with items counted. */
static int read_from(int fd, int *items, struct rec_error *e, int ahead_at)
{
	*items = 0;
	lseek(fd, 0, SEEK_SET);
	struct rec_reader *r = rec_reader__new(fd, e);
	if (!r)
		return -errno;
	uint32_t type, len;
	const uint8_t *d;
	int err;
	*items = 0;
	while ((*items != ahead_at || (assert_true(rec_reader__read_ahead(r)), 1)) &&
	       (err = rec_reader__next(r, &type, &d, &len, e)) == 1) {
		uint32_t v;
		memcpy(&v, d, 4);
		assert_int_equal(type, REC_PERF);
		assert_int_equal(v, (uint32_t)*items);
		assert_int_equal(len, 8 + (*items % 4 == 1 ? 300000 : *items));
		(*items)++;
	}
	rec_reader__free(r);
	return err;
}

/* Whether this process may read ahead (it needs a second CPU). */
static bool can_read_ahead(void)
{
	int fd = memfd_create("one", 0);
	struct rec_writer *w = rec_writer__new(fd);
	assert_int_equal(rec_writer__finish(w), 0);
	rec_writer__free(w);
	lseek(fd, 0, SEEK_SET);
	struct rec_error e;
	struct rec_reader *r = rec_reader__new(fd, &e);
	bool can = rec_reader__read_ahead(r);
	rec_reader__free(r);
	close(fd);
	return can;
}

/* Read as it comes, and read ahead from each of a few items on: the
 * same items, the same end or the same error at the same offset. */
static int read_all(int fd, int *items, struct rec_error *e)
{
	int err = read_from(fd, items, e, -1);
	if (!can_read_ahead())
		return err;
	static const int starts[] = { 0, 1, 3, 7 };
	for (size_t i = 0; i < sizeof(starts) / sizeof(*starts); i++) {
		if (starts[i] > *items)
			break;
		int n;
		struct rec_error e2 = { 0 };
		assert_int_equal(read_from(fd, &n, &e2, starts[i]), err);
		assert_int_equal(n, *items);
		if (err == -EINVAL) {
			assert_int_equal(e2.offset, e->offset);
			assert_string_equal(e2.msg, e->msg);
		}
	}
	return err;
}

/* A reader freed while its thread reads ahead: the thread ends with it
 * (valgrind and ASan say nothing is left). */
static void read_ahead_stopped(void **state)
{
	(void)state;
	if (!can_read_ahead())
		skip();	/* one CPU: nothing reads ahead */
	off_t size;
	int fd = write_file(40, &size);
	for (int stop_at = 0; stop_at < 12; stop_at++) {
		lseek(fd, 0, SEEK_SET);
		struct rec_error e;
		struct rec_reader *r = rec_reader__new(fd, &e);
		assert_non_null(r);
		assert_true(rec_reader__read_ahead(r));
		assert_true(rec_reader__read_ahead(r));	/* once: a second call is the first's */
		uint32_t type, len;
		const uint8_t *d;
		for (int i = 0; i < stop_at; i++)
			assert_int_equal(rec_reader__next(r, &type, &d, &len, &e), 1);
		rec_reader__free(r);
	}
	close(fd);
}

static void round_trip(void **state)
{
	(void)state;
	off_t size;
	int fd = write_file(20, &size), n;
	struct rec_error e;
	assert_int_equal(read_all(fd, &n, &e), 0);
	assert_int_equal(n, 20);
	close(fd);
}

static void cut_short(void **state)
{
	(void)state;
	off_t size;
	int fd = write_file(20, &size), n;
	struct rec_error e;
	off_t cuts[] = { size - 1, size / 2, 20, 16 };
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(ftruncate(fd, cuts[i]), 0);
		assert_int_equal(read_all(fd, &n, &e), -EINVAL);
		assert_true(e.offset <= (uint64_t)cuts[i]);
		assert_true(strstr(e.msg, "cut short") || strstr(e.msg, "end mark"));
	}
	close(fd);
}

static void damaged_block(void **state)
{
	(void)state;
	off_t size;
	int fd = write_file(20, &size), n;
	struct rec_error e;
	/* A byte in the middle of the file, inside some block's frame. */
	off_t at = size / 2;
	unsigned char b;
	assert_int_equal(pread(fd, &b, 1, at), 1);
	b ^= 0x5a;
	assert_int_equal(pwrite(fd, &b, 1, at), 1);
	assert_int_equal(read_all(fd, &n, &e), -EINVAL);
	assert_true(e.offset <= (uint64_t)at);
	assert_true(n < 20);
	close(fd);
}

static void not_a_recording(void **state)
{
	(void)state;
	int fd = memfd_create("x", 0);
	assert_int_equal(write(fd, "vm,vcpu,time_ns\n", 16), 16);
	struct rec_error e;
	int n;
	assert_int_equal(read_all(fd, &n, &e), -EINVAL);
	assert_string_equal(e.msg, "not a cpuledger recording");
	close(fd);
}

/* Salvage reads the items before the damage, says where it was, and
 * stops there; an intact file salvages to all of it, no damage said. */
static void salvage(void **state)
{
	(void)state;
	off_t size;
	int fd = write_file(20, &size);
	struct rec_error e, d;
	for (int cut = 0; cut < 2; cut++) {
		lseek(fd, 0, SEEK_SET);
		struct rec_reader *r = rec_reader__new(fd, &e);
		assert_non_null(r);
		rec_reader__set_salvage(r);
		uint32_t type, len;
		const uint8_t *data;
		int n = 0, err;
		while ((err = rec_reader__next(r, &type, &data, &len, &e)) == 1)
			n++;
		assert_int_equal(err, 0);
		if (!cut) {
			assert_int_equal(n, 20);
			assert_false(rec_reader__damage(r, &d));
		} else {
			assert_true(n < 20);
			assert_true(rec_reader__damage(r, &d));
			assert_true(d.offset <= (uint64_t)size / 2 && d.msg[0]);
		}
		rec_reader__free(r);
		assert_int_equal(ftruncate(fd, size / 2), 0);
	}
	close(fd);
}

/* Items up to a block's size (less their header) are written and read
 * back; a larger one is refused, never written across blocks. */
static void largest_item(void **state)
{
	(void)state;
	int fd = memfd_create("big", 0);
	struct rec_writer *w = rec_writer__new(fd);
	size_t block = 1u << 20;
	char *big = calloc(1, block);
	assert_non_null(big);
	assert_int_equal(rec_writer__add(w, REC_META, big, block - 8, NULL, 0), 0);
	assert_int_equal(rec_writer__add(w, REC_META, big, block - 7, NULL, 0), -E2BIG);
	assert_int_equal(rec_writer__add(w, REC_META, big, block, NULL, 0), -E2BIG);
	assert_int_equal(rec_writer__add(w, REC_META, "x", 1, NULL, 0), 0);
	assert_int_equal(rec_writer__finish(w), 0);
	rec_writer__free(w);
	lseek(fd, 0, SEEK_SET);
	struct rec_error e;
	struct rec_reader *r = rec_reader__new(fd, &e);
	uint32_t type, len;
	const uint8_t *data;
	assert_int_equal(rec_reader__next(r, &type, &data, &len, &e), 1);
	assert_int_equal(len, block - 8);
	assert_int_equal(rec_reader__next(r, &type, &data, &len, &e), 1);
	assert_int_equal(len, 1);
	assert_int_equal(rec_reader__next(r, &type, &data, &len, &e), 0);
	rec_reader__free(r);
	free(big);
	close(fd);
}

/* The type of the last item of fd before END. */
static uint32_t last_type(int fd)
{
	struct rec_error e;
	lseek(fd, 0, SEEK_SET);
	struct rec_reader *r = rec_reader__new(fd, &e);
	assert_non_null(r);
	uint32_t type, len, last = 0;
	const uint8_t *d;
	while (rec_reader__next(r, &type, &d, &len, &e) == 1)
		last = type;
	rec_reader__free(r);
	return last;
}

/* One sample of a one-frame stack, function fn, then the file ended. */
static uint32_t after_sample(struct rec_writer *w, int fd, uint32_t fn)
{
	struct rec_sample_head h = { .pid = 1, .tid = 1, .nframes = 1, .time_ns = 1 };
	struct rec_frame f = { .ip = 0x10, .function = fn };
	assert_int_equal(rec_writer__sample(w, &h, &f), 0);
	assert_int_equal(rec_writer__flush(w), 0);
	return last_type(fd);
}

/*
 * A writer's memory of the stacks it wrote is bounded: once they take
 * REC_WRITER_STACK_BYTES, a sample on a new stack has its frames inline
 * (SAMPLE), one on a stack written before still names it.
 */
static void stacks_bounded(void **state)
{
	(void)state;
	int fd = memfd_create("rec", 0);
	struct rec_writer *w = rec_writer__new(fd);
	assert_non_null(w);
	struct rec_sample_head h = { .pid = 1, .tid = 1, .nframes = 1, .time_ns = 1 };
	struct rec_frame f = { .ip = 0x10 };
	/* a frame's names (12 bytes) and a NUL each */
	uint32_t fit = REC_WRITER_STACK_BYTES / 13;
	for (f.function = 0; f.function < fit - 1; f.function++)
		assert_int_equal(rec_writer__sample(w, &h, &f), 0);
	assert_int_equal(after_sample(w, fd, fit - 1), REC_STACK_SAMPLE);	/* the last to fit */
	assert_int_equal(after_sample(w, fd, fit), REC_SAMPLE);
	assert_int_equal(after_sample(w, fd, 7), REC_STACK_SAMPLE);
	rec_writer__free(w);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(salvage),
		cmocka_unit_test(largest_item),
		cmocka_unit_test(round_trip),
		cmocka_unit_test(cut_short),
		cmocka_unit_test(damaged_block),
		cmocka_unit_test(not_a_recording),
		cmocka_unit_test(stacks_bounded),
		cmocka_unit_test(read_ahead_stopped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
