/* writer: see writer.h. */
#include "writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/grow.h"
#include "../core/hindex.h"
#include "../core/units.h"
#include "../core/banned.h"

static char *dup_or_null(const char *s, bool *ok)
{
	char *d = s ? strdup(s) : NULL;
	*ok &= !s || d;
	return d;
}

struct batch *batch__new(const struct collection *c)
{
	struct batch *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	bool ok = true;
	b->c = *c;
	b->c.reason = dup_or_null(c->reason, &ok);
	b->c.host = dup_or_null(c->host, &ok);
	b->c.boot_id = dup_or_null(c->boot_id, &ok);
	b->c.recording = dup_or_null(c->recording, &ok);
	b->c.steal_source = dup_or_null(c->steal_source, &ok);
	b->merged = 1;
	if (!ok) {
		batch__free(b);
		errno = ENOMEM;
		return NULL;
	}
	return b;
}

int batch__add(struct batch *b, const struct task_info *t, const struct usage *u)
{
	if (grow_array((void **)&b->rows, &b->cap, b->n, sizeof(*b->rows), 64))
		return -ENOMEM;
	bool ok = true;
	struct batch_row *r = &b->rows[b->n];
	*r = (struct batch_row){ *t, *u };
	r->t.command = dup_or_null(t->command, &ok);
	r->t.executable = dup_or_null(t->executable, &ok);
	r->t.cgroup = dup_or_null(t->cgroup, &ok);
	r->t.comm = dup_or_null(t->comm, &ok);
	r->u.account = dup_or_null(u->account, &ok);
	b->n++;
	return ok ? 0 : -ENOMEM;
}

void batch_row__release(struct batch_row *r)
{
	free((char *)r->t.command);
	free((char *)r->t.executable);
	free((char *)r->t.cgroup);
	free((char *)r->t.comm);
	free((char *)r->u.account);
}

void batch__free(struct batch *b)
{
	if (!b)
		return;
	for (uint32_t i = 0; i < b->n; i++)
		batch_row__release(&b->rows[i]);
	free(b->rows);
	hindex__release(&b->index);
	free((char *)b->c.reason);
	free((char *)b->c.host);
	free((char *)b->c.boot_id);
	free((char *)b->c.steal_source);
	free((char *)b->c.recording);
	free(b);
}

int batch__write(const char *path, const struct batch *b, char *msg, size_t size)
{
	struct ledger *l;
	int err = ledger__open(path, LEDGER_WRITE, &l, msg, size);
	if (err)
		return err;
	err = ledger__begin(l, &b->c, msg, size);
	for (uint32_t i = 0; i < b->n && !err; i++)
		err = ledger__add(l, &b->rows[i].t, &b->rows[i].u, msg, size);
	if (!err)
		err = ledger__commit(l, msg, size);
	else if (err != -EEXIST && err != -EBUSY)
		ledger__abort(l);
	/* retention in a transaction of its own, once the collection is in;
	 * if it fails (a reader in the way), the next one does it */
	if (!err && b->retain_before_ns) {
		char why[128];
		ledger__retain(l, b->retain_before_ns, why, sizeof(why));
	}
	ledger__close(l);
	return err;
}

static uint64_t row_hash(const struct batch_row *r)
{
	uint64_t h = hash_mix(((uint64_t)r->t.pid << 32 | r->t.tid) ^
			      (uint64_t)r->t.proc_start_ns);
	if (r->t.command)
		h ^= hash_bytes(r->t.command, strlen(r->t.command), 1);
	if (r->u.account)
		h ^= hash_bytes(r->u.account, strlen(r->u.account), 2);
	return hash_mix(h);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool row_eq(const void *ctx, uint32_t id)
{
	const struct { const struct batch *b; const struct batch_row *r; } *k = ctx;
	const struct batch_row *a = &k->b->rows[id], *r = k->r;
	return a->t.pid == r->t.pid && a->t.tid == r->t.tid &&
	       a->t.proc_start_ns == r->t.proc_start_ns &&
	       same_str(a->t.command, r->t.command) && same_str(a->u.account, r->u.account);
}

/* The rows of b summed into a (one collection covering both); b is
 * freed. Rows of one task and account become one. */
static int merge(struct batch *a, struct batch *b)
{
	if (!a->index_ready) {
		for (uint32_t i = 0; i < a->n; i++)
			if (hindex__insert(&a->index, row_hash(&a->rows[i]), i))
				return -ENOMEM;
		a->index_ready = true;
	}
	for (uint32_t i = 0; i < b->n; i++) {
		struct batch_row *r = &b->rows[i];
		struct { const struct batch *b; const struct batch_row *r; } k = { a, r };
		uint64_t h = row_hash(r);
		uint32_t id = hindex__find(&a->index, h, row_eq, &k);
		if (id != HINDEX_NONE) {
			struct usage *u = &a->rows[id].u;
			u->cpu_ns += r->u.cpu_ns;
			u->steal_ns += r->u.steal_ns;
			u->samples += r->u.samples;
			u->steal_known &= r->u.steal_known;
			/* a task's wait rides on one of its rows: known where
			 * either collection gave it */
			u->wait_ns += r->u.wait_known ? r->u.wait_ns : 0;
			u->wait_known |= r->u.wait_known;
			continue;
		}
		if (grow_array((void **)&a->rows, &a->cap, a->n, sizeof(*a->rows), 64) ||
		    hindex__insert(&a->index, h, a->n))
			return -ENOMEM;
		a->rows[a->n++] = *r;	/* its strings move */
		memset(r, 0, sizeof(*r));
	}
	a->c.end_ns = b->c.end_ns;
	a->c.collected_ns = b->c.collected_ns;
	if (b->retain_before_ns > a->retain_before_ns)
		a->retain_before_ns = b->retain_before_ns;
	a->merged += b->merged;
	batch__free(b);
	return 0;
}

struct ledger_writer {
	char *path;
	uint32_t max_waiting;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake, idle;
	struct batch *head, *tail;
	uint32_t waiting;
	bool stop, busy;
	struct writer_status st;
};

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Writes the head, retrying (with a growing pause) until it goes in or
 * the writer stops. */
static void *run(void *arg)
{
	struct ledger_writer *w = arg;
	int pause = 100;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->wake, &w->lock);
		if (!w->head)
			break;
		struct batch *b = w->head;
		w->busy = true;
		pthread_mutex_unlock(&w->lock);
		char msg[256];
		int err = batch__write(w->path, b, msg, sizeof(msg));
		pthread_mutex_lock(&w->lock);
		w->busy = false;
		if (!err || err == -EEXIST) {
			w->head = b->next;
			if (!w->head)
				w->tail = NULL;
			w->waiting--;
			w->st.written += !err;
			w->st.dropped += err == -EEXIST;
			if (!err) {
				w->st.last_seq = b->c.seq;
				snprintf(w->st.last_reason, sizeof(w->st.last_reason), "%s",
					 b->c.reason ? b->c.reason : "");
			}
			w->st.failing = false;
			batch__free(b);
			pause = 100;
			pthread_cond_broadcast(&w->idle);
			continue;
		}
		w->st.failed_attempts++;
		w->st.failing = true;
		snprintf(w->st.error, sizeof(w->st.error), "%s", msg);
		if (w->stop)
			break;
		pthread_mutex_unlock(&w->lock);
		sleep_ms(pause);
		pause = pause < 2000 ? pause * 2 : 2000;
		pthread_mutex_lock(&w->lock);
	}
	pthread_cond_broadcast(&w->idle);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct ledger_writer *ledger_writer__new(const char *path, uint32_t max_waiting)
{
	struct ledger_writer *w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->max_waiting = max_waiting ? max_waiting : 1;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->wake, NULL);
	pthread_cond_init(&w->idle, NULL);
	/* each attempt waits a second for the lock, then tries again later */
	ledger__set_wait(1000);
	int err = pthread_create(&w->thread, NULL, run, w);
	if (err) {
		free(w->path);
		free(w);
		errno = err;
		return NULL;
	}
	return w;
}

void ledger_writer__submit(struct ledger_writer *w, struct batch *b)
{
	pthread_mutex_lock(&w->lock);
	/* past the bound, the last one waiting (not being written) takes it */
	if (w->waiting >= w->max_waiting && w->tail && (w->tail != w->head || !w->busy) &&
	    !merge(w->tail, b)) {
		pthread_mutex_unlock(&w->lock);
		return;
	}
	b->next = NULL;
	if (w->tail)
		w->tail->next = b;
	else
		w->head = b;
	w->tail = b;
	w->waiting++;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

void ledger_writer__status(struct ledger_writer *w, struct writer_status *st)
{
	pthread_mutex_lock(&w->lock);
	*st = w->st;
	st->waiting = w->waiting;
	pthread_mutex_unlock(&w->lock);
}

uint32_t ledger_writer__drain(struct ledger_writer *w, int timeout_ms)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * NSEC_PER_MSEC;
	if (until.tv_nsec >= NSEC_PER_SEC) {
		until.tv_sec++;
		until.tv_nsec -= NSEC_PER_SEC;
	}
	pthread_mutex_lock(&w->lock);
	while (w->waiting && pthread_cond_timedwait(&w->idle, &w->lock, &until) == 0)
		;
	uint32_t left = w->waiting;
	pthread_mutex_unlock(&w->lock);
	return left;
}

void ledger_writer__free(struct ledger_writer *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	for (struct batch *b = w->head, *next; b; b = next) {
		next = b->next;
		batch__free(b);
	}
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->wake);
	pthread_cond_destroy(&w->idle);
	free(w->path);
	free(w);
}
