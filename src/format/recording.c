/* recording: see recording.h and docs/recording-format.md. */
#include "recording.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_c_literalCompressionMode */
#include <zstd.h>

#include "worker.h"
#include "../core/grow.h"
#include "../core/strtab.h"
#include "../core/banned.h"

#define BLOCK_MAGIC 0x314b4c42u	/* "BLK1" little-endian: versions 1 to 3 */
#define BLOCK_MAGIC_4 0x324b4c42u	/* "BLK2": version 4 */
#define BLOCK_RAW (1u << 20)	/* a block holds up to 1 MiB of items, and
				 * of addresses */
#define ITEM_MAX (1u << 20)

struct block_header {
	uint32_t magic;
	uint32_t raw_len;	/* items, uncompressed */
	uint32_t zlen;		/* the zstd frame that follows */
	uint32_t reserved;
};

/* Version 4's: the items' frame, then their addresses' (none: 0, 0). */
struct block_header_4 {
	uint32_t magic;
	uint32_t raw_len, zlen;
	uint32_t addr_len, addr_zlen;
	uint32_t reserved;
};

struct file_header {
	char magic[8];
	uint32_t version;
	uint32_t reserved;
};

struct rec_writer {
	int fd;
	ZSTD_CCtx *cctx;
	uint8_t *raw, *z;
	size_t raw_len, raw_cap, z_cap;
	uint8_t *addr;		/* the block's samples' addresses */
	size_t addr_len, addr_cap;
	uint64_t bytes, items;
	struct strtab stacks;	/* each REC_STACK written: its frames' names */
	struct rec_stack_frame *key;	/* a sample's, to look up */
	uint32_t key_cap;
	uint64_t *ips;
	struct writer_behind *behind;	/* rec_writer__behind's, or NULL */
};

/*
 * A second thread that does the writer's work (rec_writer__behind): the
 * calls that add items are kept as they come in a run of bytes (op, type,
 * the two parts' lengths, the parts), and a run of STAGE_BYTES or more is
 * handed to the thread, which makes the items, names the samples' stacks,
 * and compresses and writes the blocks, while the caller fills the other
 * run. The writer's state is the thread's while it works; the caller
 * touches it only once the thread has done all it was given (settle).
 */
#define STAGE_BYTES (1u << 20)
enum { OP_ADD, OP_SAMPLE, OP_STACK_SAMPLE };
struct stage_op {
	uint32_t op, type;
	uint32_t alen, blen;
};
/* a sample's frames follow its head in a run at 8 bytes' alignment, as
 * do_run reads them in place */
_Static_assert(sizeof(struct stage_op) % 8 == 0 && sizeof(struct rec_sample_head) % 8 == 0 &&
	       sizeof(struct rec_stack_sample) % 8 == 0, "staged parts keep 8 bytes' alignment");

struct writer_behind {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool busy;		/* a run handed over, not yet done */
	bool stop;
	int err;		/* the first error, said at the next hand-over */
	char *work;		/* the run handed over (then the one to fill) */
	size_t work_len, work_cap;
	char *stage;		/* the run being filled: the caller's */
	size_t stage_len, stage_cap;
};

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t w = write(fd, b, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * How blocks are compressed: for the reader, who reads a recording again
 * and again, where the recorder writes it once. Level 3 with the literals
 * (bytes no match covers: the samples' addresses, mostly) stored as they
 * are, not Huffman-coded: 8 minutes of `record -a -g` of a compile loop
 * (86 MB of items) decompress in 65 ms where level 1's took 80 (zstd's
 * own decoding on this machine, -19 %), and its file takes 22.9 MB
 * where level 1's took 23.2. Writing costs 0.30 s for those 8 minutes
 * where level 1 took 0.21: a fiftieth of a percent of a CPU. A libzstd
 * that does not know the literals' setting (an experimental one:
 * ZSTD_STATIC_LINKING_ONLY) refuses it, and codes them as before. The
 * checksum is what lets a reader name a damaged block.
 */
static void compress_for_reading(ZSTD_CCtx *c)
{
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
	ZSTD_CCtx_setParameter(c, ZSTD_c_literalCompressionMode, ZSTD_ps_disable);
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
}

void rec_writer__read_once(struct rec_writer *w)
{
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, 1);
}

struct rec_writer *rec_writer__new(int fd)
{
	struct rec_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = fd;
	strtab__init(&w->stacks);
	w->cctx = ZSTD_createCCtx();
	if (!w->cctx) {
		rec_writer__free(w);
		errno = ENOMEM;
		return NULL;
	}
	compress_for_reading(w->cctx);
	struct file_header h = { REC_MAGIC, REC_VERSION, 0 };
	int err = write_all(fd, &h, sizeof(h));
	if (err) {
		rec_writer__free(w);
		errno = -err;
		return NULL;
	}
	w->bytes = sizeof(h);
	return w;
}

static int add_now(struct rec_writer *w, uint32_t type, const void *a, size_t alen,
		   const void *b, size_t blen);
static int sample_now(struct rec_writer *w, const struct rec_sample_head *h,
		      const struct rec_frame *f);
static int stack_sample_now(struct rec_writer *w, const struct rec_stack_sample *s,
			    const void *ips, uint32_t n);

/* The calls kept in run[0, len), made: 0 or the first's error. */
static int do_run(struct rec_writer *w, const char *run, size_t len)
{
	int err = 0;
	for (size_t at = 0; !err && at < len;) {
		struct stage_op o;
		memcpy(&o, run + at, sizeof(o));
		const char *a = run + at + sizeof(o), *b = a + o.alen;
		struct rec_sample_head h;
		struct rec_stack_sample ss;
		switch (o.op) {
		case OP_SAMPLE:
			memcpy(&h, a, sizeof(h));
			err = sample_now(w, &h, (const struct rec_frame *)(const void *)b);
			break;
		case OP_STACK_SAMPLE:
			memcpy(&ss, a, sizeof(ss));
			err = stack_sample_now(w, &ss, b, o.blen / sizeof(uint64_t));
			break;
		default:
			err = add_now(w, o.type, a, o.alen, b, o.blen);
		}
		at += (sizeof(o) + o.alen + o.blen + 7) & ~(size_t)7;
	}
	return err;
}

static void *write_behind(void *arg)
{
	struct rec_writer *w = arg;
	struct writer_behind *b = w->behind;
	pthread_mutex_lock(&b->mu);
	for (;;) {
		while (!b->busy && !b->stop)
			pthread_cond_wait(&b->cv, &b->mu);
		if (!b->busy)
			break;
		pthread_mutex_unlock(&b->mu);
		/* (none is handed over after an error: hand_over) */
		int err = do_run(w, b->work, b->work_len);
		pthread_mutex_lock(&b->mu);
		if (err && !b->err)
			b->err = err;
		b->busy = false;
		pthread_cond_broadcast(&b->cv);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

/* Hands the run filled to the thread, once it has done the one before:
 * 0 or the first error it met. wait: and returns once it has done this
 * one too (the writer's state is then the caller's). */
static int hand_over(struct writer_behind *b, bool wait)
{
	pthread_mutex_lock(&b->mu);
	while (b->busy)
		pthread_cond_wait(&b->cv, &b->mu);
	if (!b->err && b->stage_len) {
		char *run = b->work;
		size_t cap = b->work_cap;
		b->work = b->stage, b->work_cap = b->stage_cap, b->work_len = b->stage_len;
		b->stage = run, b->stage_cap = cap, b->stage_len = 0;
		b->busy = true;
		pthread_cond_broadcast(&b->cv);
		while (wait && b->busy)
			pthread_cond_wait(&b->cv, &b->mu);
	}
	int err = b->err;
	pthread_mutex_unlock(&b->mu);
	return err;
}

/* All that was kept, done: 0 or the first error. */
static int settle(struct rec_writer *w)
{
	return w->behind ? hand_over(w->behind, true) : 0;
}

/* A call kept for the thread behind: 0, or an error it met before. */
static int stage(struct rec_writer *w, uint32_t op, uint32_t type, const void *a,
		 size_t alen, const void *bytes, size_t blen)
{
	struct writer_behind *b = w->behind;
	if (alen + blen > ITEM_MAX + BLOCK_RAW)
		return -E2BIG;	/* more than any call takes */
	struct stage_op o = { op, type, (uint32_t)alen, (uint32_t)blen };
	size_t len = (sizeof(o) + alen + blen + 7) & ~(size_t)7;
	if (grow_bytes(&b->stage, &b->stage_cap, b->stage_len + len, 65536))
		return -ENOMEM;
	char *p = b->stage + b->stage_len;
	memcpy(p, &o, sizeof(o));
	if (alen)
		memcpy(p + sizeof(o), a, alen);
	if (blen)
		memcpy(p + sizeof(o) + alen, bytes, blen);
	b->stage_len += len;
	return b->stage_len >= STAGE_BYTES ? hand_over(b, false) : 0;
}

/* The current block, compressed and written: 0 or -errno. */
static int seal_block(struct rec_writer *w)
{
	if (!w->raw_len)
		return 0;
	size_t bound = ZSTD_compressBound(w->raw_len) + ZSTD_compressBound(w->addr_len);
	if (grow_bytes((char **)&w->z, &w->z_cap, bound, 65536))
		return -ENOMEM;
	size_t z = ZSTD_compress2(w->cctx, w->z, w->z_cap, w->raw, w->raw_len);
	size_t az = ZSTD_isError(z) || !w->addr_len ? 0 :
		    ZSTD_compress2(w->cctx, w->z + z, w->z_cap - z, w->addr, w->addr_len);
	if (ZSTD_isError(z) || ZSTD_isError(az))
		return -EIO;
	struct block_header_4 h = { BLOCK_MAGIC_4, (uint32_t)w->raw_len, (uint32_t)z,
				    (uint32_t)w->addr_len, (uint32_t)az, 0 };
	int err = write_all(w->fd, &h, sizeof(h));
	if (!err)
		err = write_all(w->fd, w->z, z + az);
	if (err)
		return err;
	w->bytes += sizeof(h) + z + az;
	w->raw_len = w->addr_len = 0;
	return 0;
}

int rec_writer__flush(struct rec_writer *w)
{
	int err = settle(w);
	return err ? err : seal_block(w);
}

bool rec_writer__behind(struct rec_writer *w)
{
	if (w->behind)
		return true;
	if (!worker_cpus_to_spare())
		return false;
	struct writer_behind *b = calloc(1, sizeof(*b));
	if (!b)
		return false;
	w->behind = b;	/* (the thread finds it there) */
	if (!worker_start(&b->thread, &b->mu, &b->cv, write_behind, w)) {
		free(b);
		w->behind = NULL;
		return false;	/* done here, as before */
	}
	return true;
}

static void stop_behind(struct rec_writer *w)
{
	struct writer_behind *b = w->behind;
	if (!b)
		return;
	worker_stop(b->thread, &b->mu, &b->cv, &b->stop);	/* a run handed over is still done */
	free(b->work);
	free(b->stage);
	free(b);
	w->behind = NULL;
}

int rec_writer__append(struct rec_writer *w, int fd, uint64_t items)
{
	int err = rec_writer__flush(w);
	if (err)
		return err;
	uint8_t *buf = malloc(BLOCK_RAW);
	if (!buf)
		return -ENOMEM;
	off_t at = sizeof(struct file_header);
	for (;;) {
		ssize_t n = pread(fd, buf, BLOCK_RAW, at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		if ((err = write_all(w->fd, buf, (size_t)n)))
			break;
		at += n;
		w->bytes += (uint64_t)n;
	}
	free(buf);
	if (!err)
		w->items += items;
	return err;
}

int rec_writer__add(struct rec_writer *w, uint32_t type, const void *a,
		    size_t alen, const void *b, size_t blen)
{
	return w->behind ? stage(w, OP_ADD, type, a, alen, b, blen) :
	       add_now(w, type, a, alen, b, blen);
}

static int add_now(struct rec_writer *w, uint32_t type, const void *a, size_t alen,
		   const void *b, size_t blen)
{
	size_t len = alen + blen, padded = (8 + len + 7) & ~(size_t)7;
	if (len > ITEM_MAX || padded > BLOCK_RAW)
		return -E2BIG;	/* an item never spans blocks */
	if (w->raw_len + padded > BLOCK_RAW) {
		int err = seal_block(w);
		if (err)
			return err;
	}
	/* the block buffer grows with what is written, up to a block */
	if (grow_bytes((char **)&w->raw, &w->raw_cap, w->raw_len + padded, 65536))
		return -ENOMEM;	/* powers of 2 from 64 KiB: a block at most */
	uint8_t *p = w->raw + w->raw_len;
	uint32_t head[2] = { type, (uint32_t)len };
	memcpy(p, head, 8);
	if (alen)
		memcpy(p + 8, a, alen);
	if (blen)
		memcpy(p + 8 + alen, b, blen);
	memset(p + 8 + len, 0, padded - 8 - len);
	w->raw_len += padded;
	w->items++;
	return 0;
}

/* *id: the file's id of the stack in w->key[0..n), written as REC_STACK
 * first when new; HINDEX_NONE when it is new and the stacks written
 * already take their bound. 0 or -errno. */
static int stack_of(struct rec_writer *w, uint32_t n, uint32_t *id)
{
	size_t len = n * sizeof(*w->key);
	uint32_t count = w->stacks.count;
	if (w->stacks.len + len + 1 > REC_WRITER_STACK_BYTES) {
		*id = strtab__find(&w->stacks, (const char *)w->key, len);
		return 0;
	}
	*id = strtab__intern(&w->stacks, (const char *)w->key, len);
	if (*id == HINDEX_NONE)
		return -errno;
	struct rec_stack st = { *id, n };
	return w->stacks.count == count ? 0 :
	       add_now(w, REC_STACK, &st, sizeof(st), w->key, len);
}

int rec_writer__sample(struct rec_writer *w, const struct rec_sample_head *h,
		       const struct rec_frame *f)
{
	return w->behind ? stage(w, OP_SAMPLE, 0, h, sizeof(*h), f,
				 (size_t)h->nframes * sizeof(*f)) :
	       sample_now(w, h, f);
}

static int sample_now(struct rec_writer *w, const struct rec_sample_head *h,
		      const struct rec_frame *f)
{
	uint32_t n = h->nframes;
	if (!n)
		return add_now(w, REC_SAMPLE, h, sizeof(*h), NULL, 0);
	if (n > w->key_cap) {
		struct rec_stack_frame *k = realloc(w->key, n * sizeof(*k));
		uint64_t *ips = realloc(w->ips, n * sizeof(*ips));
		if (k)
			w->key = k;
		if (ips)
			w->ips = ips;
		if (!k || !ips)
			return -ENOMEM;
		w->key_cap = n;
	}
	for (uint32_t i = 0; i < n; i++) {
		w->key[i] = (struct rec_stack_frame){ f[i].function, f[i].dso, f[i].flags };
		w->ips[i] = f[i].ip;
	}
	uint32_t id;
	int err = stack_of(w, n, &id);
	if (err)
		return err;
	if (id == HINDEX_NONE)	/* past the bound: the frames inline */
		return add_now(w, REC_SAMPLE, h, sizeof(*h), f, n * sizeof(*f));
	struct rec_stack_sample s = { h->pid, h->tid, h->cpu, id, h->time_ns, h->period };
	return stack_sample_now(w, &s, w->ips, n);
}

int rec_writer__stack_sample(struct rec_writer *w, const struct rec_stack_sample *s,
			     const void *ips, uint32_t n)
{
	return w->behind ? stage(w, OP_STACK_SAMPLE, 0, s, sizeof(*s), ips,
				 (size_t)n * sizeof(uint64_t)) :
	       stack_sample_now(w, s, ips, n);
}

static int stack_sample_now(struct rec_writer *w, const struct rec_stack_sample *s,
			    const void *ips, uint32_t n)
{
	/* the item and its addresses in one block: a new one when either
	 * part is full */
	size_t alen = (size_t)n * sizeof(uint64_t);
	int err;
	if (alen > BLOCK_RAW)
		return -E2BIG;
	if (w->raw_len + 8 + sizeof(*s) > BLOCK_RAW || w->addr_len + alen > BLOCK_RAW) {
		if ((err = seal_block(w)))
			return err;
	}
	if (grow_bytes((char **)&w->addr, &w->addr_cap, w->addr_len + alen, 65536))
		return -ENOMEM;
	if ((err = add_now(w, REC_STACK_SAMPLE, s, sizeof(*s), NULL, 0)))
		return err;
	if (alen)
		memcpy(w->addr + w->addr_len, ips, alen);
	w->addr_len += alen;
	return 0;
}

int rec_writer__finish(struct rec_writer *w)
{
	int err = settle(w);	/* the items counted */
	uint64_t n = w->items;
	if (!err)
		err = add_now(w, REC_END, &n, sizeof(n), NULL, 0);
	return err ? err : seal_block(w);
}

uint64_t rec_writer__bytes(const struct rec_writer *w)
{
	return w->bytes + w->raw_len + w->addr_len;
}

uint64_t rec_writer__items(const struct rec_writer *w)
{
	return w->items;
}

void rec_writer__free(struct rec_writer *w)
{
	if (!w)
		return;
	stop_behind(w);
	ZSTD_freeCCtx(w->cctx);
	strtab__release(&w->stacks);
	free(w->key);
	free(w->ips);
	free(w->raw);
	free(w->z);
	free(w->addr);
	free(w);
}

/* A block of the file, read and decompressed. */
struct rec_block {
	uint8_t *raw, *z;	/* grown to the largest block read */
	size_t raw_len, raw_cap, z_cap;
	uint8_t *addr;		/* version 4: its samples' addresses */
	size_t addr_len, addr_cap;
	bool addr_skipped;	/* there, not read (rec_reader__skip_addresses) */
	uint64_t offset;	/* of the block in the file */
	int status;		/* of reading it: 0, 1 (a partial file's end), -errno */
	struct rec_error err;	/* status -EINVAL: what is wrong */
	enum { BLOCK_FREE, BLOCK_FILLED, BLOCK_HELD } state;	/* reading ahead */
};

struct rec_reader {
	int fd;
	ZSTD_DCtx *dctx;
	struct rec_block blk[2];	/* the second only to read ahead into */
	unsigned cur;		/* the block items come from */
	size_t pos;		/* in it */
	size_t addr_pos;	/* in its addresses */
	bool skip_addr;		/* (atomic: the reading thread reads it) */
	uint64_t offset;	/* of the next block in the file */
	uint64_t items;
	uint32_t version;
	bool ended;
	bool partial;
	bool salvage;		/* damage ends the file, kept in damage */
	bool damaged;
	struct rec_error damage;
	/* reading ahead: a thread reads and decompresses the next block while
	 * the items of this one are handled; the fd, dctx and offset are its */
	bool ahead, stop;
	unsigned first_fill;	/* the block the thread reads into first: not
				 * r->cur ^ 1 as it runs, r->cur may have moved */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

uint32_t rec_reader__version(const struct rec_reader *r)
{
	return r->version;
}

uint64_t rec_reader__offset(const struct rec_reader *r)
{
	return r->blk[r->cur].offset;
}

void rec_reader__set_partial(struct rec_reader *r)
{
	r->partial = true;
}

void rec_reader__set_salvage(struct rec_reader *r)
{
	r->salvage = true;
}

bool rec_reader__damage(const struct rec_reader *r, struct rec_error *err)
{
	if (r->damaged)
		*err = r->damage;
	return r->damaged;
}

__attribute__((format(printf, 3, 4)))
static int damaged(struct rec_error *err, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	err->offset = offset;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Reads exactly n bytes; 1, 0 at a clean end of file, or -errno.
 * A part of n is reported as -EPIPE. */
static int read_exact(int fd, void *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (uint8_t *)p + got, n - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return got ? -EPIPE : 0;
		got += (size_t)r;
	}
	return 1;
}

struct rec_reader *rec_reader__new(int fd, struct rec_error *err)
{
	struct file_header h;
	int n = read_exact(fd, &h, sizeof(h));
	if (n < 0 && n != -EPIPE) {
		errno = -n;
		return NULL;
	}
	if (n != 1 || memcmp(h.magic, REC_MAGIC, 8) != 0) {
		damaged(err, 0, "not a cpuledger recording");
		errno = EINVAL;
		return NULL;
	}
	if (h.version < 1 || h.version > REC_VERSION) {
		damaged(err, 8, "recording format version %u; this cpuledger reads versions 1 to %d",
			h.version, REC_VERSION);
		errno = EINVAL;
		return NULL;
	}
	struct rec_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = fd;
	r->version = h.version;
	r->offset = sizeof(h);
	r->dctx = ZSTD_createDCtx();
	if (!r->dctx) {
		rec_reader__free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

/* Of read_exact's results for a block's part that is not its first byte:
 * what is wrong, said in err, or 1 for the part read whole. */
static int part_read(int n, struct rec_error *err, uint64_t offset, const char *cut)
{
	if (n == 0 || n == -EPIPE)
		return damaged(err, offset, "%s", cut);
	if (n == -EINVAL)	/* read(2)'s own: -EINVAL says err is set */
		return damaged(err, offset, "cannot read the block: %s", strerror(EINVAL));
	return n;
}

/* The zstd frame of zlen bytes at the file's position into out (len
 * bytes when whole): 0 or -errno (-EINVAL: err says what is wrong). */
static int load_frame(struct rec_reader *r, struct rec_block *b, uint8_t *out, size_t len,
		      size_t zlen)
{
	struct rec_error *err = &b->err;
	int n = part_read(read_exact(r->fd, b->z, zlen), err, r->offset, "block cut short");
	if (n != 1)
		return n;
	size_t raw = ZSTD_decompressDCtx(r->dctx, out, len, b->z, zlen);
	if (ZSTD_isError(raw) || raw != len)
		return damaged(err, r->offset, "block does not decompress or fails its checksum (%s)",
			       ZSTD_isError(raw) ? ZSTD_getErrorName(raw) : "length");
	return 0;
}

/* Passes over zlen bytes of the file (a frame not wanted): 0 or -errno. */
static int skip_frame(struct rec_reader *r, struct rec_block *b, size_t zlen)
{
	struct stat st;
	off_t at = lseek(r->fd, (off_t)zlen, SEEK_CUR);
	if (at >= 0 && !fstat(r->fd, &st) && S_ISREG(st.st_mode))
		return at <= st.st_size ? 0 : damaged(&b->err, r->offset, "block cut short");
	if (at >= 0)	/* (not a regular file: back, and read) */
		lseek(r->fd, -(off_t)zlen, SEEK_CUR);
	/* a pipe: read and let go */
	int n = part_read(read_exact(r->fd, b->z, zlen), &b->err, r->offset, "block cut short");
	return n == 1 ? 0 : n;
}

/* The block at r->offset into b: 0, 1 at a partial file's end, or -errno
 * (-EINVAL: b->err says what is wrong); r->offset past it. */
static int load_block(struct rec_reader *r, struct rec_block *b)
{
	struct block_header_4 h = { 0 };
	struct rec_error *err = &b->err;
	bool v4 = r->version >= 4;
	size_t hlen = v4 ? sizeof(h) : sizeof(struct block_header);
	int n = read_exact(r->fd, &h, hlen);
	if (n == 0 && r->partial)
		return 1;	/* what is there so far, read whole */
	if (n == 0)
		return damaged(err, r->offset, "the recording ends without its end mark (cut short?)");
	if ((n = part_read(n, err, r->offset, "block header cut short")) != 1)
		return n;
	if (!v4)
		h.addr_len = h.addr_zlen = 0;	/* (the old header's reserved) */
	if (h.magic != (v4 ? BLOCK_MAGIC_4 : BLOCK_MAGIC) || h.raw_len > BLOCK_RAW ||
	    h.zlen > ZSTD_compressBound(BLOCK_RAW) || h.addr_len > BLOCK_RAW ||
	    h.addr_len % sizeof(uint64_t) || h.addr_zlen > ZSTD_compressBound(BLOCK_RAW) ||
	    !h.addr_len != !h.addr_zlen)
		return damaged(err, r->offset, "bad block header");
	bool skip = __atomic_load_n(&r->skip_addr, __ATOMIC_RELAXED);
	/* buffers as big as the blocks read, not the largest allowed */
	if (grow_bytes((char **)&b->z, &b->z_cap, h.zlen > h.addr_zlen ? h.zlen : h.addr_zlen,
		       4096) ||
	    grow_bytes((char **)&b->raw, &b->raw_cap, h.raw_len, 4096) ||
	    (!skip && grow_bytes((char **)&b->addr, &b->addr_cap, h.addr_len, 4096)))
		return -ENOMEM;
	if ((n = load_frame(r, b, b->raw, h.raw_len, h.zlen)))
		return n;
	b->addr_skipped = skip && h.addr_len;
	n = !h.addr_len ? 0 : skip ? skip_frame(r, b, h.addr_zlen) :
	    load_frame(r, b, b->addr, h.addr_len, h.addr_zlen);
	if (n)
		return n;
	r->offset += hlen + h.zlen + h.addr_zlen;
	b->raw_len = h.raw_len;
	b->addr_len = skip ? 0 : h.addr_len;
	return 0;
}

/* load_block's, kept in b->status. */
static void read_block(struct rec_reader *r, struct rec_block *b)
{
	b->raw_len = b->addr_len = 0;
	b->addr_skipped = false;
	b->offset = r->offset;
	b->status = load_block(r, b);
}

/* The reading thread: fills the block items are not coming from, then
 * waits for it to be let go; ends at the file's end or its first error. */
static void *read_ahead(void *arg)
{
	struct rec_reader *r = arg;
	pthread_mutex_lock(&r->mu);
	unsigned k = r->first_fill;
	for (;;) {
		while (r->blk[k].state != BLOCK_FREE && !r->stop)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stop)
			break;
		pthread_mutex_unlock(&r->mu);
		read_block(r, &r->blk[k]);
		pthread_mutex_lock(&r->mu);
		r->blk[k].state = BLOCK_FILLED;
		pthread_cond_broadcast(&r->cv);
		if (r->blk[k].status)
			break;
		k ^= 1;
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

bool rec_reader__may_read_ahead(const struct rec_reader *r)
{
	struct stat st;
	/* a pipe's read could wait for ever when the reader is freed early;
	 * a partial file is still being written */
	return !r->ahead && !r->ended && !r->partial && !r->blk[r->cur].status &&
	       !fstat(r->fd, &st) && S_ISREG(st.st_mode) && worker_cpus_to_spare();
}

bool rec_reader__read_ahead(struct rec_reader *r)
{
	if (!rec_reader__may_read_ahead(r))
		return r->ahead;
	r->blk[r->cur].state = BLOCK_HELD;
	r->first_fill = r->cur ^ 1;
	r->blk[r->first_fill].state = BLOCK_FREE;
	if (!worker_start(&r->thread, &r->mu, &r->cv, read_ahead, r))
		return false;	/* read as before, in this thread */
	r->ahead = true;
	return true;
}

/* The next block as the current one: 0, 1 at a partial file's end, or
 * -errno (err set for -EINVAL). An end or error stays the current
 * block's, said again to each call after, read ahead or not. */
static int next_block(struct rec_reader *r, struct rec_error *err)
{
	struct rec_block *b = &r->blk[r->cur];
	if (b->status) {
		/* said again: the block after a bad one is not read */
	} else if (!r->ahead) {
		read_block(r, b);
	} else {
		pthread_mutex_lock(&r->mu);
		b->state = BLOCK_FREE;
		pthread_cond_broadcast(&r->cv);
		r->cur ^= 1;
		b = &r->blk[r->cur];
		while (b->state != BLOCK_FILLED)
			pthread_cond_wait(&r->cv, &r->mu);
		b->state = BLOCK_HELD;
		pthread_mutex_unlock(&r->mu);
	}
	r->pos = r->addr_pos = 0;
	if (b->status == -EINVAL)
		*err = b->err;
	return b->status;
}

static int next_item(struct rec_reader *r, uint32_t *type, const uint8_t **data,
		     uint32_t *len, struct rec_error *err)
{
	if (r->ended)
		return 0;
	const struct rec_block *b = &r->blk[r->cur];
	if (r->pos >= b->raw_len) {
		int e = next_block(r, err);
		if (e == 1) {
			r->ended = true;
			return 0;
		}
		if (e)
			return e;
		b = &r->blk[r->cur];
	}
	if (b->raw_len - r->pos < 8)
		return damaged(err, b->offset, "item header cut short in block");
	uint32_t head[2];
	memcpy(head, b->raw + r->pos, 8);
	size_t padded = (8 + (size_t)head[1] + 7) & ~(size_t)7;
	if (padded > b->raw_len - r->pos)
		return damaged(err, b->offset, "item longer than its block");
	*type = head[0];
	*len = head[1];
	*data = b->raw + r->pos + 8;
	r->pos += padded;
	if (head[0] == REC_END) {
		uint64_t n = 0;
		if (head[1] >= 8)
			memcpy(&n, *data, 8);
		if (n != r->items)
			return damaged(err, b->offset, "end mark counts %llu items, found %llu",
				       (unsigned long long)n, (unsigned long long)r->items);
		r->ended = true;
		return 0;
	}
	r->items++;
	return 1;
}

int rec_reader__next(struct rec_reader *r, uint32_t *type, const uint8_t **data,
		     uint32_t *len, struct rec_error *err)
{
	int e = next_item(r, type, data, len, err);
	if (e != -EINVAL || !r->salvage)
		return e;
	/* salvage: the damage ends the file; what came before it stands */
	r->damaged = true;
	r->damage = *err;
	r->ended = true;
	return 0;
}

int rec_reader__peek(const struct rec_reader *r, uint32_t *type,
		     const uint8_t **data, uint32_t len)
{
	const struct rec_block *b = &r->blk[r->cur];
	if (r->ended || b->raw_len - r->pos < 8 + (size_t)len)
		return 0;
	memcpy(type, b->raw + r->pos, sizeof(*type));
	*data = b->raw + r->pos + 8;
	return 1;
}

void rec_reader__free(struct rec_reader *r)
{
	if (!r)
		return;
	if (r->ahead)
		worker_stop(r->thread, &r->mu, &r->cv, &r->stop);
	ZSTD_freeDCtx(r->dctx);
	for (int i = 0; i < 2; i++) {
		free(r->blk[i].raw);
		free(r->blk[i].z);
		free(r->blk[i].addr);
	}
	free(r);
}

void rec_reader__skip_addresses(struct rec_reader *r)
{
	__atomic_store_n(&r->skip_addr, true, __ATOMIC_RELAXED);
}

int rec_reader__addresses(struct rec_reader *r, uint32_t n, const uint8_t **ips)
{
	const struct rec_block *b = &r->blk[r->cur];
	size_t len = (size_t)n * sizeof(uint64_t);
	*ips = NULL;
	if (b->addr_skipped)
		return 0;
	if (b->addr_len - r->addr_pos < len)
		return -EINVAL;
	*ips = b->addr + r->addr_pos;
	r->addr_pos += len;
	return 1;
}
