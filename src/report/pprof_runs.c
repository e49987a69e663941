/*
 * report/pprof_runs: runs of a profile's samples deflated, on a thread
 * of their own where there is a CPU to spare (pprof_runs.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>

#include "pprof_runs.h"
#include "pprof_zstream.h"
#include "report.h"
#include "../core/banned.h"

/* igzip's level 1 buffer: its hash table and 64 K tokens a block (its
 * default is four times as many: a quarter of a megabyte more, the
 * file 0.1 % smaller) */
#define LEVEL_BUF ISAL_DEF_LVL1_SMALL

/* Where the run given last is: none given (or taken), being deflated,
 * deflated and not yet taken. */
enum job { JOB_NONE, JOB_GIVEN, JOB_DONE };

struct run_deflater {
	bool threaded, stop;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	enum job job;		/* under mu when threaded */
	uint8_t *in;		/* the run given, or the buffer to give back */
	size_t in_len, in_cap;
	struct deflated_run out;
	size_t out_cap;		/* out.z's: kept from run to run (a run's
				 * buffer each time was page faults) */
	int err;
	uint8_t *level_buf;	/* igzip's level 1 buffer */
	struct isal_zstream *zs;	/* igzip's state (pprof_zstream.h) */
};

/* d->in deflated into d->out, or d->err set. */
static void deflate_run(struct run_deflater *d)
{
	/* stored blocks at worst: the input, and a few bytes each 64 KB */
	size_t cap = d->in_len + d->in_len / 8 + 1024;
	d->err = 0;
	for (;;) {
		if (cap > d->out_cap) {
			free(d->out.z);
			d->out_cap = 0;
			if (!(d->out.z = malloc(cap))) {
				d->err = -ENOMEM;
				return;
			}
			d->out_cap = cap;
		}
		/* zeroed (as made, and after each use below): the init leaves
		 * fields of the state that the deflating reads (and its output
		 * then varied); at the same address each time (pprof_zstream.h) */
		struct isal_zstream *s = d->zs;
		isal_deflate_stateless_init(s);
		s->level = 1;
		s->level_buf = d->level_buf;
		s->level_buf_size = LEVEL_BUF;
		s->flush = FULL_FLUSH;	/* byte-aligned, no look-back past it */
		s->end_of_stream = 0;	/* more follows it in the stream */
		s->gzip_flag = IGZIP_DEFLATE;
		s->next_in = d->in;
		s->avail_in = (uint32_t)d->in_len;
		s->next_out = d->out.z;
		s->avail_out = (uint32_t)d->out_cap;
		int r = isal_deflate_stateless(s);
		uint32_t zlen = s->total_out;
		/* zeroed for the next, and the buffers' addresses (its own
		 * and its bit writer's) left out of a page whose own address
		 * is known */
		memset(s, 0, sizeof(*s));
		if (r == COMP_OK) {
			d->out.zlen = zlen;
			d->out.len = d->in_len;
			d->out.crc = crc32_gzip_refl(0, d->in, d->in_len);
			return;
		}
		if (r != STATELESS_OVERFLOW) {
			d->err = -ENOMEM;
			return;
		}
		cap = 2 * d->out_cap;
	}
}

static void *deflating(void *arg)
{
	struct run_deflater *d = arg;
	pthread_mutex_lock(&d->mu);
	for (;;) {
		while (d->job != JOB_GIVEN && !d->stop)
			pthread_cond_wait(&d->cv, &d->mu);
		if (d->stop)
			break;
		pthread_mutex_unlock(&d->mu);
		deflate_run(d);
		pthread_mutex_lock(&d->mu);
		d->job = JOB_DONE;
		pthread_cond_broadcast(&d->cv);
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

struct run_deflater *run_deflater__new(void)
{
	struct run_deflater *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	bool mu = false;
	if (!(d->level_buf = malloc(LEVEL_BUF)) || !(d->zs = pprof_zstream__new()) ||
	    !(mu = !pthread_mutex_init(&d->mu, NULL)) || pthread_cond_init(&d->cv, NULL)) {
		if (mu)
			pthread_mutex_destroy(&d->mu);
		pprof_zstream__free(d->zs);
		free(d->level_buf);
		free(d);
		return NULL;
	}
	/* without a thread, each run is deflated as it is given */
	d->threaded = report_cpus_to_spare() && !pthread_create(&d->thread, NULL, deflating, d);
	return d;
}

int run_deflater__give(struct run_deflater *d, uint8_t **buf, size_t *cap, size_t len)
{
	/* the run given before must have been taken: its buffers are the
	 * thread's until then */
	pthread_mutex_lock(&d->mu);
	bool idle = d->job == JOB_NONE;
	pthread_mutex_unlock(&d->mu);
	if (!idle)
		return -EBUSY;
	if (!d->threaded) {	/* deflated now: its buffer given back as it is */
		d->in = *buf;
		d->in_cap = *cap;
		d->in_len = len;
		deflate_run(d);
		d->in = NULL;
		d->in_cap = 0;
		d->job = JOB_DONE;
		return 0;
	}
	uint8_t *back = d->in;
	size_t back_cap = d->in_cap;
	d->in = *buf;
	d->in_cap = *cap;
	d->in_len = len;
	*buf = back;
	*cap = back_cap;
	pthread_mutex_lock(&d->mu);
	d->job = JOB_GIVEN;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
	return 0;
}

int run_deflater__take(struct run_deflater *d, struct deflated_run *out)
{
	pthread_mutex_lock(&d->mu);
	while (d->job == JOB_GIVEN)
		pthread_cond_wait(&d->cv, &d->mu);
	bool done = d->job == JOB_DONE;
	d->job = JOB_NONE;
	pthread_mutex_unlock(&d->mu);
	if (!done)
		return 0;
	if (d->err)
		return d->err;
	*out = d->out;
	return 1;
}

void run_deflater__free(struct run_deflater *d)
{
	if (!d)
		return;
	struct deflated_run left;
	run_deflater__take(d, &left);
	if (d->threaded) {
		pthread_mutex_lock(&d->mu);
		d->stop = true;
		pthread_cond_broadcast(&d->cv);
		pthread_mutex_unlock(&d->mu);
		pthread_join(d->thread, NULL);
	}
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d->in);
	free(d->out.z);
	free(d->level_buf);
	pprof_zstream__free(d->zs);
	free(d);
}

int run_inflate(const uint8_t *z, size_t zlen, uint8_t *buf, size_t len)
{
	struct inflate_state *st = malloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	isal_inflate_init(st);
	st->crc_flag = ISAL_DEFLATE;
	st->next_in = (uint8_t *)z;
	st->avail_in = (uint32_t)zlen;
	st->next_out = buf;
	st->avail_out = (uint32_t)len;
	int r = isal_inflate(st);
	bool whole = r == ISAL_DECOMP_OK && st->total_out == len;
	free(st);
	return whole ? 0 : -EINVAL;
}
