/*
 * lines_ahead: the lines of a file, read ahead on a thread or in turn,
 * are the same lines, each with what look found of it, in order: lines
 * longer than a batch, the last one without a newline, NULs said with
 * the lines near them, a take's error that stops the rest, a pipe.
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
#include <unistd.h>
#include <cmocka.h>

#include "format/lines_ahead.h"

struct seen_line {
	uint64_t hash;		/* of the line, as look found it */
	size_t len;
	bool nul_near;
};

/* What look finds, and what take checks it against. */
struct slot {
	uint64_t hash;
	size_t len;
	bool nul_near;
	uint64_t order;		/* the look's count */
};

struct looked {
	uint64_t count;
};

struct taken {
	struct seen_line *v;
	size_t n, cap;
	size_t stop_at;		/* take fails at this line (0: never) */
	uint64_t progress;	/* the last bytes said (on the reading thread) */
	bool progress_back;	/* said fewer than before */
};

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

static void look(void *ctx, const char *line, size_t len, bool nul_near, void *slot)
{
	struct looked *l = ctx;
	struct slot *s = slot;
	*s = (struct slot){ fnv(line, len), len, nul_near, l->count++ };
}

static int take(void *ctx, const char *line, size_t len, const void *slot)
{
	struct taken *t = ctx;
	const struct slot *s = slot;
	assert_int_equal(s->len, len);
	assert_true(s->hash == fnv(line, len));	/* the slot is this line's */
	assert_int_equal(s->order, t->n);
	if (t->stop_at && t->n + 1 == t->stop_at)
		return -EBADMSG;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->v = realloc(t->v, t->cap * sizeof(*t->v));
		assert_non_null(t->v);
	}
	t->v[t->n++] = (struct seen_line){ s->hash, len, s->nul_near };
	return 0;
}

/* (on the reading thread: no assertion here, checked after the run) */
static void progress(void *ctx, uint64_t bytes)
{
	struct taken *t = ctx;
	t->progress_back |= bytes <= t->progress;
	t->progress = bytes;
}

/* The text's lines as a line splitter would give them. */
static size_t expected(const char *text, size_t n, struct seen_line *out)
{
	size_t k = 0;
	const char *p = text, *end = text + n;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		out[k++] = (struct seen_line){ fnv(p, len), len, false };
		p += len + 1;
	}
	return k;
}

static int run(int fd, bool in_turn, struct taken *t)
{
	struct looked l = { 0 };
	struct lines_ahead_fns f = {
		.look = look, .look_ctx = &l, .slot_size = sizeof(struct slot),
		.take = take, .take_ctx = t, .progress = progress, .progress_ctx = t,
		.in_turn = in_turn,
	};
	return lines_ahead__run(fd, &f);
}

static int file_of(const char *text, size_t n)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	int fd = dup(fileno(f));
	fclose(f);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* Lines of every length from 0 up, some far longer than a batch, the
 * last without a newline. */
static char *many_lines(size_t *n)
{
	size_t cap = 8u << 20, len = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	for (size_t i = 0; len < cap - (1u << 20) - 2; i++) {
		size_t l = i % 97 == 0 ? 300000 + i : i % 61;
		if (len + l + 1 > cap - (1u << 20))
			break;
		for (size_t k = 0; k < l; k++)
			s[len + k] = (char)('a' + (i + k) % 26);
		len += l;
		s[len++] = '\n';
	}
	memcpy(s + len, "the last, without a newline", 27);
	len += 27;
	*n = len;
	return s;
}

static void same_lines_either_way(void **state)
{
	(void)state;
	size_t n;
	char *text = many_lines(&n);
	struct seen_line *want = malloc((n + 1) * sizeof(*want));
	assert_non_null(want);
	size_t nwant = expected(text, n, want);
	for (int in_turn = 0; in_turn < 2; in_turn++) {
		int fd = file_of(text, n);
		struct taken t = { 0 };
		assert_int_equal(run(fd, in_turn, &t), 0);
		close(fd);
		assert_int_equal(t.n, nwant);
		for (size_t i = 0; i < nwant; i++) {
			assert_int_equal(t.v[i].len, want[i].len);
			assert_true(t.v[i].hash == want[i].hash);
			assert_false(t.v[i].nul_near);
		}
		assert_true(t.progress == n);
		assert_false(t.progress_back);
		free(t.v);
	}
	free(want);
	free(text);
}

static void empty_and_newlines_only(void **state)
{
	(void)state;
	const char *texts[] = { "", "\n", "\n\n\n", "x", "x\n" };
	size_t lines[] = { 0, 1, 3, 1, 1 };
	for (size_t k = 0; k < 5; k++)
		for (int in_turn = 0; in_turn < 2; in_turn++) {
			int fd = file_of(texts[k], strlen(texts[k]));
			struct taken t = { 0 };
			assert_int_equal(run(fd, in_turn, &t), 0);
			close(fd);
			assert_int_equal(t.n, lines[k]);
			free(t.v);
		}
}

/* A take's error is returned, and no line after it is taken. */
static void take_error_stops(void **state)
{
	(void)state;
	size_t n;
	char *text = many_lines(&n);
	for (int in_turn = 0; in_turn < 2; in_turn++) {
		int fd = file_of(text, n);
		struct taken t = { .stop_at = 1000 };
		assert_int_equal(run(fd, in_turn, &t), -EBADMSG);
		close(fd);
		assert_int_equal(t.n, 999);
		free(t.v);
	}
	free(text);
}

/* A NUL is said to the look of the lines read with it, not of all. */
static void nul_said_near(void **state)
{
	(void)state;
	size_t n;
	char *text = many_lines(&n);
	text[n - 5] = '\0';	/* in the last line */
	for (int in_turn = 0; in_turn < 2; in_turn++) {
		int fd = file_of(text, n);
		struct taken t = { 0 };
		assert_int_equal(run(fd, in_turn, &t), 0);
		close(fd);
		assert_true(t.v[t.n - 1].nul_near);
		assert_false(t.v[0].nul_near);
		free(t.v);
	}
	free(text);
}

/* A pipe is read in turn, its lines the same. */
static void from_a_pipe(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_false(lines_ahead__threaded(p[0]));
	const char text[] = "one\ntwo\r\n\nthree";
	assert_int_equal(write(p[1], text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(p[1]);
	struct taken t = { 0 };
	assert_int_equal(run(p[0], false, &t), 0);
	close(p[0]);
	assert_int_equal(t.n, 4);
	assert_int_equal(t.v[1].len, 4);	/* "two\r": the caller's to strip */
	assert_int_equal(t.v[2].len, 0);
	free(t.v);
}

/* Lines far more than a batch holds (empty ones: 300 000 in 300 000
 * bytes), and a last line without a newline after them: all taken, in
 * order, either way. */
static void more_lines_than_a_batch(void **state)
{
	(void)state;
	size_t n = 300000 + 4;
	char *text = malloc(n);
	assert_non_null(text);
	memset(text, '\n', 300000);
	memcpy(text + 300000, "last", 4);
	for (int in_turn = 0; in_turn < 2; in_turn++) {
		int fd = file_of(text, n);
		struct taken t = { 0 };
		assert_int_equal(run(fd, in_turn, &t), 0);
		close(fd);
		assert_int_equal(t.n, 300001);
		assert_int_equal(t.v[299999].len, 0);
		assert_int_equal(t.v[300000].len, 4);
		free(t.v);
	}
	free(text);
}

/* A pipe's lines are taken as they come: a bad first line stops the run
 * while the pipe is still open (were it read to fill a batch first, the
 * run would wait for ever). */
static void pipe_taken_as_it_comes(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "bad\n", 4), 4);
	struct taken t = { .stop_at = 1 };
	assert_int_equal(run(p[0], false, &t), -EBADMSG);
	close(p[0]);
	close(p[1]);
	free(t.v);
}

/* A read's error comes after the lines read before it. */
static void read_error(void **state)
{
	(void)state;
	struct taken t = { 0 };
	assert_int_equal(run(-1, false, &t), -EBADF);
	assert_int_equal(t.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_lines_either_way),
		cmocka_unit_test(empty_and_newlines_only),
		cmocka_unit_test(take_error_stops),
		cmocka_unit_test(nul_said_near),
		cmocka_unit_test(from_a_pipe),
		cmocka_unit_test(more_lines_than_a_batch),
		cmocka_unit_test(pipe_taken_as_it_comes),
		cmocka_unit_test(read_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
