/* scratch: see scratch.h. Writes are gathered in a buffer (a thread's
 * row is a few hundred bytes); reads are pread, so the pages stay the
 * kernel's cache and not this process's memory. */
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/banned.h"

#define SCRATCH_BUF (64 * 1024)

struct scratch {
	int fd;
	int error;		/* the first, -errno */
	char dir[4096];
	uint64_t flushed;	/* bytes in the file */
	size_t used;		/* bytes in buf after them */
	char buf[SCRATCH_BUF];
	struct row_store store;
};

static int write_all(int fd, const char *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

static int failed(struct scratch *s, int err)
{
	if (err && !s->error)
		s->error = err;
	return err;
}

static int flush(struct scratch *s)
{
	int err = write_all(s->fd, s->buf, s->used, s->flushed);
	if (!err) {
		s->flushed += s->used;
		s->used = 0;
	}
	return failed(s, err);
}

static int put(void *ctx, const void *buf, size_t n, uint64_t *off)
{
	struct scratch *s = ctx;
	*off = s->flushed + s->used;
	if (s->used + n > SCRATCH_BUF) {
		int err = flush(s);
		if (err)
			return err;
		if (n > SCRATCH_BUF) {
			err = write_all(s->fd, buf, n, s->flushed);
			if (!err)
				s->flushed += n;
			return failed(s, err);
		}
	}
	memcpy(s->buf + s->used, buf, n);
	s->used += n;
	return 0;
}

static int get(void *ctx, uint64_t off, void *buf, size_t n)
{
	struct scratch *s = ctx;
	if (off + n > s->flushed) {
		/* in the buffer still: written out first, read as the rest */
		int err = flush(s);
		if (err)
			return err;
	}
	char *p = buf;
	while (n) {
		ssize_t r = pread(s->fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return failed(s, r < 0 ? -errno : -EIO);
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static int set(void *ctx, uint64_t off, const void *buf, size_t n)
{
	struct scratch *s = ctx;
	if (off + n > s->flushed + s->used)
		return failed(s, -EINVAL);	/* not put before */
	if (off + n > s->flushed) {
		int err = flush(s);
		if (err)
			return err;
	}
	return failed(s, write_all(s->fd, buf, n, off));
}

struct scratch *scratch__open(void)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	struct scratch *s = malloc(sizeof(*s));
	if (!s)
		return NULL;
	s->fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (s->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		/* a file system without O_TMPFILE: a name, gone at once */
		char path[4096];
		if (snprintf(path, sizeof(path), "%s/cpuledger-XXXXXX", dir) >=
		    (int)sizeof(path)) {
			free(s);
			errno = ENAMETOOLONG;
			return NULL;
		}
		s->fd = mkostemp(path, O_CLOEXEC);
		if (s->fd >= 0 && unlink(path)) {
			int e = errno;	/* a name it keeps: not scratch */
			close(s->fd);
			errno = e;
			s->fd = -1;
		}
	}
	if (s->fd < 0) {
		int e = errno;
		free(s);
		errno = e;
		return NULL;
	}
	s->flushed = 0;
	s->used = 0;
	s->error = 0;
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	s->store = (struct row_store){ .ctx = s, .put = put, .get = get, .set = set };
	return s;
}

void scratch__close(struct scratch *s)
{
	if (!s)
		return;
	close(s->fd);
	free(s);
}

const struct row_store *scratch__store(struct scratch *s)
{
	return &s->store;
}

int scratch__error(const struct scratch *s)
{
	return s ? s->error : 0;
}

const char *scratch__dir(const struct scratch *s)
{
	return s->dir;
}
