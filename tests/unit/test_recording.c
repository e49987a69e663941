/*
 * The recording file: items written come back in order; a file cut short
 * or with a damaged block is refused with the offset of the damage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "format/recording.h"

/* Item i's payload after its u32 pair: every other one large, so that
 * 20 items take four blocks. */
static size_t item_len(int i)
{
	return i % 2 == 1 ? 300000 : (size_t)i;
}

/* Writes n items, returns the file's fd. */
static int write_file(int n, off_t *size)
{
	int fd = memfd_create("rec", 0);
	assert_true(fd >= 0);
	struct rec_writer *w = rec_writer__new(fd);
	assert_non_null(w);
	static char big[300000];
	for (int i = 0; i < n; i++) {
		uint32_t v[2] = { (uint32_t)i, 0 };
		assert_int_equal(rec_writer__add(w, REC_PERF, v, sizeof(v), big, item_len(i)), 0);
	}
	assert_int_equal(rec_writer__finish(w), 0);
	rec_writer__free(w);
	*size = lseek(fd, 0, SEEK_END);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* What a read of a file met: the offset each item came from, and the
 * end: its result, what it said, and the results of two calls after. */
struct trace {
	uint64_t offsets[64];
	int items, err, again[2];
	struct rec_error e;
};

/* Reads fd to its end, reading ahead from item ahead_at on (-1: never),
 * checking each item is the one written. */
static void read_from(int fd, struct trace *t, int ahead_at)
{
	memset(t, 0, sizeof(*t));
	lseek(fd, 0, SEEK_SET);
	struct rec_reader *r = rec_reader__new(fd, &t->e);
	if (!r) {	/* no reader to ask again: its refusal stands */
		t->err = t->again[0] = t->again[1] = -errno;
		return;
	}
	uint32_t type, len;
	const uint8_t *d;
	for (;;) {
		if (t->items == ahead_at)
			assert_true(rec_reader__read_ahead(r));
		if ((t->err = rec_reader__next(r, &type, &d, &len, &t->e)) != 1)
			break;
		uint32_t v;
		memcpy(&v, d, 4);
		assert_int_equal(type, REC_PERF);
		assert_int_equal(v, (uint32_t)t->items);
		assert_int_equal(len, 8 + item_len(t->items));
		assert_true(t->items < 64);
		t->offsets[t->items++] = rec_reader__offset(r);
	}
	struct rec_error e2;
	for (int i = 0; i < 2; i++)
		t->again[i] = rec_reader__next(r, &type, &d, &len, &e2);
	rec_reader__free(r);
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

/*
 * Reads fd to its end; returns 0 or the error, with items counted. Read
 * in turn, then reading ahead from each item on: the same items from the
 * same blocks, the same end or the same error at the same offset, said
 * again to the calls after it.
 */
static int read_all(int fd, int *items, struct rec_error *e)
{
	struct trace seq, ahead;
	read_from(fd, &seq, -1);
	*items = seq.items;
	*e = seq.e;
	if (seq.err < 0) {
		assert_int_equal(seq.again[0], seq.err);
		assert_int_equal(seq.again[1], seq.err);
	}
	bool can = can_read_ahead();
	for (int at = 0; can && at <= seq.items; at++) {
		read_from(fd, &ahead, at);
		assert_int_equal(ahead.err, seq.err);
		assert_int_equal(ahead.items, seq.items);
		assert_memory_equal(ahead.offsets, seq.offsets, sizeof(seq.offsets));
		assert_int_equal(ahead.again[0], seq.again[0]);
		assert_int_equal(ahead.again[1], seq.again[1]);
		if (seq.err == -EINVAL) {
			assert_int_equal(ahead.e.offset, seq.e.offset);
			assert_string_equal(ahead.e.msg, seq.e.msg);
		}
	}
	return seq.err;
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
	/* blocks enough that reading ahead hands over several */
	struct trace t;
	read_from(fd, &t, -1);
	int blocks = 1;
	for (int i = 1; i < t.items; i++)
		blocks += t.offsets[i] != t.offsets[i - 1];
	assert_true(blocks >= 4);
	close(fd);
}

/* Peeking names the next item while it is in this block, and nothing
 * where the block ends: the item then read says the same. */
static void peek(void **state)
{
	(void)state;
	off_t size;
	int fd = write_file(20, &size);
	struct rec_error e;
	struct rec_reader *r = rec_reader__new(fd, &e);
	assert_non_null(r);
	uint32_t type, len, peeked;
	const uint8_t *d, *pd;
	int blocks_ended = 0;
	for (uint32_t i = 0; rec_reader__next(r, &type, &d, &len, &e) == 1; i++) {
		uint64_t at = rec_reader__offset(r);
		int got = rec_reader__peek(r, &peeked, &pd, 8);
		uint32_t v = 0;
		if (got)
			memcpy(&v, pd, 4);
		int more = rec_reader__next(r, &type, &d, &len, &e);
		if (more != 1)
			break;
		if (got) {
			assert_int_equal(peeked, type);
			assert_int_equal(v, i + 1);
			assert_true(pd == d);
			assert_int_equal(rec_reader__offset(r), at);
		} else {
			assert_true(rec_reader__offset(r) != at);
			blocks_ended++;
		}
		i++;
	}
	assert_true(blocks_ended > 0);
	rec_reader__free(r);
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
	struct rec_error e, d, first = { 0 };
	bool can = can_read_ahead();
	for (int cut = 0; cut < 2; cut++) {
		int first_n = -1;
		/* read in turn, then reading ahead from item 0 and from item 3 */
		for (int ahead_at = -1; ahead_at <= 3; ahead_at += ahead_at < 0 ? 1 : 3) {
			if (ahead_at >= 0 && !can)
				break;
			lseek(fd, 0, SEEK_SET);
			struct rec_reader *r = rec_reader__new(fd, &e);
			assert_non_null(r);
			rec_reader__set_salvage(r);
			uint32_t type, len;
			const uint8_t *data;
			int n = 0, err;
			while ((n != ahead_at || rec_reader__read_ahead(r)) &&
			       (err = rec_reader__next(r, &type, &data, &len, &e)) == 1)
				n++;
			assert_int_equal(err, 0);
			assert_int_equal(rec_reader__next(r, &type, &data, &len, &e), 0);
			if (!cut) {
				assert_int_equal(n, 20);
				assert_false(rec_reader__damage(r, &d));
			} else {
				assert_true(n < 20);
				assert_true(rec_reader__damage(r, &d));
				assert_true(d.offset <= (uint64_t)size / 2 && d.msg[0]);
				if (first_n < 0) {
					first_n = n;
					first = d;
				}
				assert_int_equal(n, first_n);
				assert_int_equal(d.offset, first.offset);
				assert_string_equal(d.msg, first.msg);
			}
			rec_reader__free(r);
		}
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

/* Sample i's frames: 1 to 120 of them, on one of 50 stacks, each frame's
 * address telling the sample and the frame apart. */
static uint32_t addr_frames(uint32_t i, struct rec_frame *f)
{
	uint32_t n = 1 + i % 120;
	for (uint32_t k = 0; k < n; k++)
		f[k] = (struct rec_frame){ .ip = (uint64_t)i << 16 | k, .function = i % 50 };
	return n;
}

#define ADDR_SAMPLES 20000

/* behind: written by rec_writer__behind's thread (false when it cannot
 * run: one CPU) */
static int addr_file_by(bool behind)
{
	int fd = memfd_create("rec", 0);
	struct rec_writer *w = rec_writer__new(fd);
	assert_non_null(w);
	if (behind && !rec_writer__behind(w)) {
		rec_writer__free(w);
		close(fd);
		return -1;
	}
	struct rec_frame f[120];
	for (uint32_t i = 0; i < ADDR_SAMPLES; i++) {
		struct rec_sample_head h = { .pid = 1, .tid = 1, .time_ns = i };
		h.nframes = addr_frames(i, f);
		assert_int_equal(rec_writer__sample(w, &h, f), 0);
	}
	assert_int_equal(rec_writer__finish(w), 0);
	/* all written once finished: the bytes it says are the file's */
	assert_true(rec_writer__bytes(w) == (uint64_t)lseek(fd, 0, SEEK_END));
	rec_writer__free(w);
	return fd;
}

static int addr_file(void)
{
	return addr_file_by(false);
}

/* Reads fd's samples (skip: passing their addresses over): how many came,
 * each with its own addresses when read; the blocks they came in. */
static uint32_t read_addresses(int fd, bool skip, int *blocks, struct rec_error *e)
{
	lseek(fd, 0, SEEK_SET);
	struct rec_reader *r = rec_reader__new(fd, e);
	assert_non_null(r);
	assert_int_equal(rec_reader__version(r), 4);
	if (skip)
		rec_reader__skip_addresses(r);
	uint32_t type, len, i = 0;
	const uint8_t *d, *ips;
	uint64_t at = UINT64_MAX;
	struct rec_frame f[120];
	int got;
	*blocks = 0;
	while ((got = rec_reader__next(r, &type, &d, &len, e)) == 1) {
		if (type != REC_STACK_SAMPLE)
			continue;
		*blocks += rec_reader__offset(r) != at;
		at = rec_reader__offset(r);
		assert_int_equal(len, sizeof(struct rec_stack_sample));
		uint32_t n = addr_frames(i, f);
		int a = rec_reader__addresses(r, n, &ips);
		assert_int_equal(a, skip ? 0 : 1);
		for (uint32_t k = 0; a == 1 && k < n; k++) {
			uint64_t ip;
			memcpy(&ip, ips + k * 8, 8);
			assert_true(ip == f[k].ip);
		}
		i++;
	}
	rec_reader__free(r);
	return got == 0 ? i : UINT32_MAX;
}

/*
 * Version 4 keeps a block's samples' addresses in a frame of their own:
 * read, each sample has its own, across many blocks (a block ends where
 * either its items or its addresses are full); passed over, none are and
 * the items are the same; a file cut inside an address frame is cut
 * short either way.
 */
static void addresses_apart(void **state)
{
	(void)state;
	int fd = addr_file(), blocks[2];
	struct rec_error e;
	assert_int_equal(read_addresses(fd, false, &blocks[0], &e), ADDR_SAMPLES);
	assert_int_equal(read_addresses(fd, true, &blocks[1], &e), ADDR_SAMPLES);
	assert_true(blocks[0] >= 8);
	assert_int_equal(blocks[0], blocks[1]);
	/* cut inside the last block's address frame: its last bytes */
	off_t size = lseek(fd, 0, SEEK_END);
	assert_int_equal(ftruncate(fd, size - 3), 0);
	for (int skip = 0; skip < 2; skip++) {
		memset(&e, 0, sizeof(e));
		assert_int_equal(read_addresses(fd, skip, &blocks[0], &e), UINT32_MAX);
		assert_non_null(strstr(e.msg, "cut short"));
	}
	close(fd);
}

/* Passed over in a pipe, the address frames are read and let go. */
static void addresses_piped(void **state)
{
	(void)state;
	int fd = addr_file(), p[2];
	off_t size = lseek(fd, 0, SEEK_END);
	assert_int_equal(pipe(p), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (!child) {
		close(p[0]);
		char buf[65536];
		for (off_t at = 0; at < size;) {
			ssize_t n = pread(fd, buf, sizeof(buf), at);
			if (n <= 0 || write(p[1], buf, (size_t)n) != n)
				_exit(1);
			at += n;
		}
		_exit(0);
	}
	close(p[1]);
	struct rec_error e;
	int blocks;
	assert_int_equal(read_addresses(p[0], true, &blocks, &e), ADDR_SAMPLES);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(status, 0);
	close(p[0]);
	close(fd);
}

static bool same_bytes(int a, int b)
{
	off_t n = lseek(a, 0, SEEK_END);
	if (n != lseek(b, 0, SEEK_END))
		return false;
	char x[65536], y[65536];
	for (off_t at = 0; at < n;) {
		ssize_t k = pread(a, x, sizeof(x), at);
		if (k <= 0 || pread(b, y, (size_t)k, at) != k || memcmp(x, y, (size_t)k))
			return false;
		at += k;
	}
	return true;
}

/*
 * Blocks compressed and written by a second thread make the same file,
 * byte for byte, as written in turn (blocks of items, and of addresses
 * with them); and a write that fails there is said by finish, not lost.
 */
static void written_behind(void **state)
{
	(void)state;
	int behind = addr_file_by(true);
	if (behind < 0)
		skip();	/* one CPU: no thread behind */
	int in_turn = addr_file();
	assert_true(same_bytes(behind, in_turn));
	int blocks;
	struct rec_error e;
	assert_int_equal(read_addresses(behind, false, &blocks, &e), ADDR_SAMPLES);
	assert_true(blocks >= 8);
	close(behind);
	close(in_turn);

	/* the file sealed against writes once its header is there */
	int fd = memfd_create("sealed", MFD_ALLOW_SEALING);
	assert_true(fd >= 0);
	struct rec_writer *w = rec_writer__new(fd);
	assert_non_null(w);
	assert_true(rec_writer__behind(w));
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), 0);
	static char big[300000];
	int err = 0;
	for (uint32_t i = 0; i < 40 && !err; i++) {	/* blocks handed over */
		uint32_t v[2] = { i, 0 };
		err = rec_writer__add(w, REC_PERF, v, sizeof(v), big, sizeof(big));
	}
	if (!err)
		err = rec_writer__finish(w);
	assert_int_equal(err, -EPERM);
	assert_int_equal(rec_writer__finish(w), -EPERM);	/* and said again */
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
		cmocka_unit_test(peek),
		cmocka_unit_test(addresses_apart),
		cmocka_unit_test(addresses_piped),
		cmocka_unit_test(written_behind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
