/* lines_ahead: see lines_ahead.h. */
#include "lines_ahead.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker.h"
#include "../core/grow.h"
#include "../core/banned.h"

/* A batch's text is read BATCH_TEXT bytes at a time (more for a longer
 * line), and holds BATCH_LINES lines at most (the rest waits for the
 * next: a text of empty lines would make a slot of each byte); BATCHES
 * of them are taken in turn. So the reader is 1 MiB ahead at most, and
 * its memory is bounded but for the longest line. */
#define BATCH_TEXT (256u << 10)
#define BATCH_LINES 8192u
#define BATCHES 4

struct span {
	size_t at, len;
};

/* Whole lines read, each looked at; what came after them (the end, an
 * error). */
struct batch {
	char *text;
	size_t len, cap;	/* bytes read into text */
	struct span *lines;
	unsigned char *slots;	/* slot_size each */
	uint32_t nlines, lines_cap;
	int err;		/* a read's, or -ENOMEM: after the lines */
	bool end;		/* the last batch */
	bool full;		/* the caller's to take (under the lock) */
};

struct ahead {
	int fd;
	const struct lines_ahead_fns *f;
	struct batch b[BATCHES];
	char *carry;		/* what the batch before left: the line it
				 * began, the lines past BATCH_LINES */
	size_t carry_len, carry_cap;
	uint64_t total;		/* bytes read */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
};

/* Into b, what the batch before left, then, unless that holds a whole
 * line, what one read gives (up to BATCH_TEXT bytes in all: a regular
 * file's whole, a pipe's what it holds, so its lines are taken as they
 * come), more while no line is whole; or the end, or an error, met only
 * so (a batch that ends holds no newline). false: out of memory. */
static bool read_text(struct ahead *a, struct batch *b)
{
	size_t room = a->carry_len < BATCH_TEXT ? BATCH_TEXT : a->carry_len + BATCH_TEXT;
	if (b->cap > 2 * room) {	/* grown for a long line: let it go */
		free(b->text);
		b->text = NULL;
		b->cap = 0;
	}
	if (grow_bytes(&b->text, &b->cap, room, BATCH_TEXT))
		goto nomem;
	if (a->carry_len)
		memcpy(b->text, a->carry, a->carry_len);
	b->len = a->carry_len;
	a->carry_len = 0;
	bool newline = b->len && memchr(b->text, '\n', b->len);
	while (!newline) {
		size_t want = b->len < BATCH_TEXT ? BATCH_TEXT - b->len : BATCH_TEXT;
		if (grow_bytes(&b->text, &b->cap, b->len + want, BATCH_TEXT))
			goto nomem;
		ssize_t n = read(a->fd, b->text + b->len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			b->err = n < 0 ? -errno : 0;
			b->end = true;
			return true;
		}
		newline = memchr(b->text + b->len, '\n', (size_t)n) != NULL;
		b->len += (size_t)n;
		a->total += (uint64_t)n;
		if (a->f->progress)
			a->f->progress(a->f->progress_ctx, a->total);
	}
	return true;
nomem:
	b->err = -ENOMEM;
	b->end = true;
	return false;
}

static int add_line(struct ahead *a, struct batch *b, size_t at, size_t len, bool nul)
{
	size_t slot = a->f->slot_size;
	uint32_t cap = b->lines_cap;
	if (grow_array((void **)&b->lines, &b->lines_cap, b->nlines, sizeof(*b->lines), 1024))
		return -ENOMEM;
	if (b->lines_cap != cap && slot) {
		unsigned char *s = realloc(b->slots, (size_t)b->lines_cap * slot);
		if (!s) {
			b->lines_cap = cap;	/* lines' room is no use without slots' */
			return -ENOMEM;
		}
		b->slots = s;
	}
	b->lines[b->nlines] = (struct span){ at, len };
	if (a->f->look)
		a->f->look(a->f->look_ctx, b->text + at, len, nul,
			   slot ? b->slots + (size_t)b->nlines * slot : NULL);
	b->nlines++;
	return 0;
}

/* b's whole lines, each looked at, BATCH_LINES at most; the rest left to
 * the next batch. At the end, the last line without a newline is a line;
 * after an error it is not (as line by line it would never have been
 * taken). */
static void split_lines(struct ahead *a, struct batch *b)
{
	const char *text = b->text, *end = text + b->len, *p = text, *nl = NULL;
	bool nul = memchr(text, '\0', b->len) != NULL;
	int err = 0;
	while (!err && b->nlines < BATCH_LINES && p < end &&
	       (nl = memchr(p, '\n', (size_t)(end - p)))) {
		err = add_line(a, b, (size_t)(p - text), (size_t)(nl - p), nul);
		p = nl + 1;
	}
	if (!err && b->end && !b->err && p < end) {	/* (then no line before it) */
		err = add_line(a, b, (size_t)(p - text), (size_t)(end - p), nul);
		p = end;
	}
	if (!err && p < end && !b->end) {	/* left to the next batch */
		err = grow_bytes(&a->carry, &a->carry_cap, (size_t)(end - p), 256);
		if (!err) {
			a->carry_len = (size_t)(end - p);
			memcpy(a->carry, p, a->carry_len);
		}
	}
	if (err) {
		b->err = err;
		b->end = true;
	}
}

static void fill(struct ahead *a, struct batch *b)
{
	b->nlines = 0;
	b->err = 0;
	b->end = false;
	if (read_text(a, b))
		split_lines(a, b);
}

static void *read_ahead(void *arg)
{
	struct ahead *a = arg;
	for (uint32_t i = 0;; i = (i + 1) % BATCHES) {
		struct batch *b = &a->b[i];
		pthread_mutex_lock(&a->mu);
		while (b->full && !a->stop)
			pthread_cond_wait(&a->cv, &a->mu);
		bool stop = a->stop;
		pthread_mutex_unlock(&a->mu);
		if (stop)
			break;
		fill(a, b);
		pthread_mutex_lock(&a->mu);
		b->full = true;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		if (b->end)
			break;
	}
	return NULL;
}

bool lines_ahead__threaded(int fd)
{
	struct stat st;
	return !fstat(fd, &st) && S_ISREG(st.st_mode) && worker_cpus_to_spare();
}

/* Takes b's lines: take's first error, or b's own. */
static int take_lines(struct ahead *a, const struct batch *b)
{
	const struct lines_ahead_fns *f = a->f;
	int err = 0;
	for (uint32_t k = 0; !err && k < b->nlines; k++)
		err = f->take(f->take_ctx, b->text + b->lines[k].at, b->lines[k].len,
			      f->slot_size ? b->slots + (size_t)k * f->slot_size : NULL);
	return err ? err : b->err;
}

int lines_ahead__run(int fd, const struct lines_ahead_fns *f)
{
	struct ahead *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->fd = fd;
	a->f = f;
	bool threaded = !f->in_turn && lines_ahead__threaded(fd) &&
			worker_start(&a->thread, &a->mu, &a->cv, read_ahead, a);
	int err = 0;
	for (uint32_t i = 0;; i = threaded ? (i + 1) % BATCHES : 0) {
		struct batch *b = &a->b[i];
		if (threaded) {
			pthread_mutex_lock(&a->mu);
			while (!b->full)
				pthread_cond_wait(&a->cv, &a->mu);
			pthread_mutex_unlock(&a->mu);
		} else {
			fill(a, b);
		}
		err = take_lines(a, b);
		bool end = b->end;
		if (threaded) {
			pthread_mutex_lock(&a->mu);
			b->full = false;
			pthread_cond_broadcast(&a->cv);
			pthread_mutex_unlock(&a->mu);
		}
		if (err || end)
			break;
	}
	if (threaded)
		worker_stop(a->thread, &a->mu, &a->cv, &a->stop);
	for (uint32_t i = 0; i < BATCHES; i++) {
		free(a->b[i].text);
		free(a->b[i].lines);
		free(a->b[i].slots);
	}
	free(a->carry);
	free(a);
	return err;
}
