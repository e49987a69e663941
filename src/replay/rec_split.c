/* rec_split: see rec_split.h. */
#include "rec_split.h"


#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/reorder.h"
#include "rec_source.h"
#include "../core/banned.h"

#define BATCHES 4
#define BATCH_BYTES (128u * 1024)

/* An event to process (the oldest queued), one that came late, a note
 * (its kind is the client's, past OP_NOTE). */
enum op_kind { OP_EVENT, OP_LATE, OP_NOTE };

struct op_head {
	uint32_t kind, len;	/* len: of what follows, before padding */
};

struct batch {
	uint8_t *ops;
	size_t len, cap;
	bool full;		/* under mu: written, not yet done */
	bool last;		/* the reading thread's last */
	int status;		/* last: how its reading ended */
};

struct rec_split {
	struct rec_split_client c;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch b[BATCHES];
	unsigned fill;		/* the reading thread's batch */
	/* under mu: batches full, whether a thread waits for the other, and
	 * whether the caller's thread failed. The reading thread, the faster
	 * one, once it waits for room waits for half the batches: woken for
	 * each one, the waking was a twentieth of the other thread's time. */
	unsigned nfull;
	bool reader_waits, engine_waits, stop;
	struct rec_error err;	/* the reading thread's error */
	struct reorder q;	/* the reading thread's */
};

/* An event's strings let go: it is not handed on. */
static void let_go(struct eng_event *ev)
{
	free(ev->text);
	free(ev->exe);
}

static size_t padded(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* The batch being filled given to the other thread; the next one, once
 * it is free, to fill. -ECANCELED when the other thread has failed. */
static int hand_over(struct rec_split *sp, bool last, int status)
{
	struct batch *b = &sp->b[sp->fill];
	pthread_mutex_lock(&sp->mu);
	b->last = last;
	b->status = status;
	b->full = true;
	sp->nfull++;
	if (sp->engine_waits)
		pthread_cond_broadcast(&sp->cv);
	if (last) {
		pthread_mutex_unlock(&sp->mu);
		return 0;
	}
	sp->fill = (sp->fill + 1) % BATCHES;
	if (sp->b[sp->fill].full) {	/* batches are freed in turn */
		sp->reader_waits = true;
		while (sp->nfull > BATCHES / 2 && !sp->stop)
			pthread_cond_wait(&sp->cv, &sp->mu);
		sp->reader_waits = false;
	}
	bool stop = sp->stop;
	pthread_mutex_unlock(&sp->mu);
	sp->b[sp->fill].len = 0;
	return stop ? -ECANCELED : 0;
}

/* Room for an op of kind and len bytes in the batch being filled; NULL
 * when out of memory. The op is written there, then put_done. */
static uint8_t *put_room(struct rec_split *sp, uint32_t kind, size_t len)
{
	struct batch *b = &sp->b[sp->fill];
	struct op_head h = { kind, (uint32_t)len };
	size_t need = sizeof(h) + padded(len);
	if (len > UINT32_MAX ||
	    grow_bytes((char **)&b->ops, &b->cap, b->len + need, BATCH_BYTES + 4096))
		return NULL;
	uint8_t *p = b->ops + b->len;
	memcpy(p, &h, sizeof(h));
	b->len += need;
	return p + sizeof(h);
}

/* The batch handed over when it is full. */
static int put_done(struct rec_split *sp)
{
	return sp->b[sp->fill].len >= BATCH_BYTES ? hand_over(sp, false, 0) : 0;
}

static int put(struct rec_split *sp, uint32_t kind, const void *d, size_t len)
{
	uint8_t *p = put_room(sp, kind, len);
	if (!p)
		return -ENOMEM;
	memcpy(p, d, len);
	return put_done(sp);
}

/* An event written into the batch, where the other thread processes it
 * (an event's 140 bytes copied in and out again were a tenth of either
 * thread's time). Its strings go with it, or are let go. */
static int put_event(struct rec_split *sp, enum op_kind kind, struct eng_event *ev)
{
	_Static_assert(sizeof(struct op_head) % _Alignof(struct eng_event) == 0,
		       "an op's bytes are aligned for an event");
	struct eng_event *to = (struct eng_event *)(void *)put_room(sp, kind, sizeof(*ev));
	if (!to) {
		let_go(ev);
		return -ENOMEM;
	}
	*to = *ev;
	return put_done(sp);
}

/* The oldest queued event handed on. */
static int take_oldest(struct rec_split *sp)
{
	struct eng_event copy;
	uint32_t slot;
	int err = put_event(sp, OP_EVENT, reorder__take(&sp->q, &copy, &slot));
	reorder__done(&sp->q, slot);
	return err;
}

/* The queued events up to t, in order, handed on. */
static int take_due(struct rec_split *sp, uint64_t t)
{
	int err = 0;
	while (!err && reorder__due(&sp->q, t))
		err = take_oldest(sp);
	return err;
}

int rec_split__push(struct rec_split *sp, struct eng_event *ev, uint64_t then)
{
	int r = reorder__push(&sp->q, ev);
	if (r == 1)
		r = put_event(sp, OP_LATE, ev);
	else if (r < 0)
		let_go(ev);
	if (r)
		return r == -EINVAL ? 0 : r;	/* of no CPU: refused, as the engine does */
	int err = then != UINT64_MAX ? take_due(sp, then) : 0;
	if (!err && sp->q.queued > REC_MAX_QUEUED) {
		uint64_t w = sp->c.streams_read(sp->c.ctx);
		err = w != UINT64_MAX ? take_due(sp, w) : 0;
		while (!err && sp->q.queued > REC_MAX_QUEUED / 2)
			err = take_oldest(sp);
	}
	return err;
}

int rec_split__advance(struct rec_split *sp, uint64_t watermark)
{
	return take_due(sp, watermark);
}

int rec_split__note(struct rec_split *sp, uint32_t kind, const void *d, uint32_t len)
{
	return put(sp, OP_NOTE + kind, d, len);
}

/* The reading thread: every item, then its last batch. */
static void *reading(void *arg)
{
	struct rec_split *sp = arg;
	int r = sp->c.read(sp->c.ctx, &sp->err);
	/* the engine's end would process what still waits: it goes now */
	if (!r)
		r = rec_split__advance(sp, UINT64_MAX);
	hand_over(sp, true, r);
	return NULL;
}

/* One op done as the reading thread would have done it itself. */
static int do_op(struct rec_split *sp, struct engine *e, const struct op_head *h, uint8_t *p)
{
	int err;
	/* aligned: put_room */
	if (h->kind >= OP_NOTE) {
		err = sp->c.note(sp->c.ctx, h->kind - OP_NOTE, p, h->len);
	} else {
		err = engine__process(e, (struct eng_event *)(void *)p, h->kind == OP_LATE);
	}
	sp->c.after(sp->c.ctx);
	return err;
}

/* A batch's ops done in turn, or (once one failed) their events' strings
 * let go. */
static int do_batch(struct rec_split *sp, struct engine *e, struct batch *b, int err)
{
	for (size_t at = 0; at < b->len;) {
		struct op_head h;
		memcpy(&h, b->ops + at, sizeof(h));
		uint8_t *p = b->ops + at + sizeof(h);
		if (!err) {
			err = do_op(sp, e, &h, p);
		} else if (h.kind == OP_EVENT || h.kind == OP_LATE) {
			let_go((struct eng_event *)(void *)p);
		}
		at += sizeof(h) + padded(h.len);
	}
	return err;
}

void rec_split__free(struct rec_split *sp)
{
	if (!sp)
		return;
	for (int i = 0; i < BATCHES; i++)
		free(sp->b[i].ops);
	reorder__release(&sp->q);
	pthread_cond_destroy(&sp->cv);
	pthread_mutex_destroy(&sp->mu);
	free(sp);
}

struct rec_split *rec_split__new(uint32_t ncpus, const struct rec_split_client *c)
{
	struct rec_split *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return NULL;
	sp->c = *c;
	if (reorder__init(&sp->q, ncpus)) {
		free(sp);
		return NULL;
	}
	if (pthread_mutex_init(&sp->mu, NULL)) {
		reorder__release(&sp->q);
		free(sp);
		return NULL;
	}
	if (pthread_cond_init(&sp->cv, NULL)) {
		pthread_mutex_destroy(&sp->mu);
		reorder__release(&sp->q);
		free(sp);
		return NULL;
	}
	return sp;
}

int rec_split__run(struct rec_split *sp, struct engine *e, struct rec_error *err)
{
	if (pthread_create(&sp->thread, NULL, reading, sp))
		return 1;
	int failed = 0, status = 0;
	for (unsigned take = 0;; take = (take + 1) % BATCHES) {
		struct batch *b = &sp->b[take];
		pthread_mutex_lock(&sp->mu);
		while (!b->full) {
			sp->engine_waits = true;
			pthread_cond_wait(&sp->cv, &sp->mu);
		}
		sp->engine_waits = false;
		pthread_mutex_unlock(&sp->mu);
		failed = do_batch(sp, e, b, failed);
		bool last = b->last;
		status = b->status;
		pthread_mutex_lock(&sp->mu);
		b->full = false;
		sp->nfull--;
		sp->stop |= failed != 0;
		if (sp->stop || (sp->reader_waits && sp->nfull <= BATCHES / 2))
			pthread_cond_broadcast(&sp->cv);
		pthread_mutex_unlock(&sp->mu);
		if (last)
			break;
	}
	pthread_join(sp->thread, NULL);
	/* the first error of the items in their order: the engine's with an
	 * item before the one the reading stopped at */
	if (!failed && status == -EINVAL)
		*err = sp->err;
	return failed ? failed : status;
}
