/* profile: see profile.h. */
#include "profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/units.h"
#include "../report/report.h"
#include "../core/banned.h"

void profiles__init(struct profiles *ps, bool labels)
{
	*ps = (struct profiles){ .labels = labels };
	pthread_mutex_init(&ps->lock, NULL);
	pthread_cond_init(&ps->done, NULL);
}

void profiles__release(struct profiles *ps)
{
	pthread_cond_destroy(&ps->done);
	pthread_mutex_destroy(&ps->lock);
}

/* --- the HTTP threads' side */

static bool client_busy(const struct profiles *ps, const char *client)
{
	for (int i = 0; i < PROFILE_SLOTS; i++)
		if (ps->p[i].state != P_FREE && !strcmp(ps->p[i].client, client))
			return true;
	return false;
}

static struct profile *free_slot(struct profiles *ps)
{
	for (int i = 0; i < PROFILE_SLOTS; i++)
		if (ps->p[i].state == P_FREE)
			return &ps->p[i];
	return NULL;
}

static void deadline(struct timespec *t, unsigned seconds)
{
	clock_gettime(CLOCK_REALTIME, t);
	t->tv_sec += seconds;
}

/* A slot for client, waiting in the queue for one if need be; NULL with
 * *err (EBUSY: the client has one, or the queue is full or took too
 * long). Under ps->lock. */
static struct profile *take_slot(struct profiles *ps, const char *client, int *err)
{
	struct profile *p = NULL;
	*err = -EBUSY;
	if (client_busy(ps, client) || (!(p = free_slot(ps)) && ps->waiting >= PROFILE_QUEUE))
		return NULL;
	if (!p) {
		struct timespec until;
		deadline(&until, PROFILE_QUEUE_WAIT_S);
		ps->waiting++;
		int e = 0;
		while (!(p = free_slot(ps)) && !ps->stopping && !e)
			e = pthread_cond_timedwait(&ps->done, &ps->lock, &until);
		ps->waiting--;
		if (!p || ps->stopping || client_busy(ps, client))
			return NULL;
	}
	*p = (struct profile){ .state = P_ASKED };
	snprintf(p->client, sizeof(p->client), "%s", client);
	*err = 0;
	return p;
}

/* The slot's pprof, into memory (from the names copied at its end). */
static int profile_write(struct profile *p, char **body, size_t *len)
{
	FILE *f = open_memstream(body, len);
	if (!f)
		return -ENOMEM;
	int err = report_pprof.write(f, p->a.table, &p->a.x);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(*body);
		*body = NULL;
	}
	return err;
}

static void profile_release(struct profile *p)
{
	analysis__release(&p->a);
	stacktab__release(&p->stacks);
	free(p->names.bytes);
	free(p->names.offset);
	free(p->names.length);
	memset(&p->names, 0, sizeof(p->names));
}

int profiles__take(struct profiles *ps, const char *client, unsigned seconds, char **body,
		   size_t *len)
{
	int err;
	pthread_mutex_lock(&ps->lock);
	struct profile *p = take_slot(ps, client, &err);
	if (!p) {
		pthread_mutex_unlock(&ps->lock);
		return err;
	}
	p->seconds = seconds;
	/* the recording's thread ends every profile it took: its seconds, or
	 * when it stops */
	while (p->state == P_ASKED || p->state == P_ACTIVE)
		pthread_cond_wait(&ps->done, &ps->lock);
	bool built = p->state == P_BUILT;
	err = p->err;
	p->state = P_WRITING;
	pthread_mutex_unlock(&ps->lock);
	if (built && !err)
		err = profile_write(p, body, len);
	profile_release(p);
	pthread_mutex_lock(&ps->lock);
	p->state = P_FREE;
	pthread_cond_broadcast(&ps->done);
	pthread_mutex_unlock(&ps->lock);
	return err;
}

/* --- the recording's side */

/* The profile engine starts from what the main one knows of the tasks
 * alive: their names and command lines. */
struct seed {
	struct engine *e;
	uint64_t now;
	bool commands;		/* ps->labels */
	struct strtab seen;	/* pids given a PROC event */
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int seed_task(void *ctx, const struct eng_proc *p, const struct eng_thread *t)
{
	struct seed *s = ctx;
	uint32_t pid = p ? p->pid : t->tid;
	uint32_t before = s->seen.count;
	if (p && strtab__intern(&s->seen, (const char *)&pid, sizeof(pid)) == HINDEX_NONE)
		return -ENOMEM;
	int err = 0;
	if (p && s->seen.count != before) {
		struct eng_event ev = { .kind = EK_PROC, .time = s->now, .pid = pid,
					.text = s->commands ? dup_or_null(p->command) : NULL,
					.exe = dup_or_null(p->executable), .uid = p->uid };
		err = engine__push(s->e, &ev);
	}
	struct eng_event ev = { .kind = EK_TASK, .time = s->now, .pid = pid, .tid = t->tid,
				.comm = t->comm };
	return err ? err : engine__push(s->e, &ev);
}

static int profile_start(struct profiles *ps, struct profile *p, struct recorder *r,
			 struct engine *main_e, uint64_t now)
{
	struct analysis_opts ao = { .method = METHOD_PRECEDING, .stacks = true };
	size_t bad;
	row_keys__parse(&ao.keys, "thread,function,account", &bad);
	/* fed by a tap of its own (recorder__tap below), not attached */
	struct pipeline_opts po = { .analysis = &p->a,
				    .analysis_opts = &ao, .start_ns = now };
	int err = pipeline__init(&p->pipe, recorder__source(r), &po);
	struct seed s = { p->pipe.engine, now, .commands = ps->labels };
	strtab__init(&s.seen);
	if (!err)
		err = engine__each_thread(main_e, seed_task, &s);
	strtab__release(&s.seen);
	struct stacktab *stacks = err ? NULL : recorder__tap(r, p->pipe.engine, ps->labels);
	if (!err && !stacks)
		err = -errno;
	if (err) {
		pipeline__release(&p->pipe);
		analysis__release(&p->a);
		return err;
	}
	p->a.stack_frames = stacks;
	p->start_ns = now;
	p->end_ns = now + (uint64_t)p->seconds * NSEC_PER_SEC;
	return 0;
}

/* A copy of the names to read while the recording goes on adding to its
 * own (the index is not needed to read). 0 or -ENOMEM. */
static int copy_names(struct strtab *to, const struct strtab *from)
{
	strtab__init(to);
	to->bytes = malloc(from->len ? from->len : 1);
	to->offset = malloc((from->count ? from->count : 1) * sizeof(*to->offset));
	to->length = malloc((from->count ? from->count : 1) * sizeof(*to->length));
	if (!to->bytes || !to->offset || !to->length)
		return -ENOMEM;
	memcpy(to->bytes, from->bytes, from->len);
	memcpy(to->offset, from->offset, from->count * sizeof(*to->offset));
	memcpy(to->length, from->length, from->count * sizeof(*to->length));
	to->len = to->cap = from->len;
	to->count = to->slots = from->count;
	return 0;
}

/* Its seconds are over: the figures built (on this thread, where the
 * names are), for the HTTP thread to write. */
static int profile_build(struct profile *p, struct recorder *r, uint64_t now)
{
	recorder__untap(r, p->pipe.engine, &p->stacks);
	p->a.stack_frames = &p->stacks;
	int err = pipeline__finish(&p->pipe, now);
	if (!err)
		err = pipeline__build(&p->pipe, now);
	if (!err)
		err = copy_names(&p->names, recorder__names(r));
	p->a.names = &p->names;
	p->a.x.names = &p->names;
	p->a.x.stack_frames = &p->stacks;
	pipeline__release(&p->pipe);
	return err;
}

static void profile_done(struct profiles *ps, struct profile *p, int state, int err)
{
	pthread_mutex_lock(&ps->lock);
	p->err = err;
	p->state = state;
	pthread_cond_broadcast(&ps->done);
	pthread_mutex_unlock(&ps->lock);
}

void profiles__turn(struct profiles *ps, struct recorder *r, struct engine *e, uint64_t now)
{
	for (int i = 0; i < PROFILE_SLOTS; i++) {
		struct profile *p = &ps->p[i];
		pthread_mutex_lock(&ps->lock);
		int state = p->state;
		pthread_mutex_unlock(&ps->lock);
		int err;
		if (state == P_ASKED && (err = profile_start(ps, p, r, e, now)))
			profile_done(ps, p, P_BUILT, err);	/* the request failed, not the agent */
		else if (state == P_ASKED)
			profile_done(ps, p, P_ACTIVE, 0);
		else if (state == P_ACTIVE && now >= p->end_ns)
			profile_done(ps, p, P_BUILT, profile_build(p, r, now));
	}
}

void profiles__stop(struct profiles *ps)
{
	pthread_mutex_lock(&ps->lock);
	ps->stopping = true;
	for (int i = 0; i < PROFILE_SLOTS; i++) {
		struct profile *p = &ps->p[i];
		if (p->state != P_ASKED && p->state != P_ACTIVE)
			continue;
		pipeline__release(&p->pipe);
		p->err = -ECANCELED;
		p->state = P_BUILT;
	}
	pthread_cond_broadcast(&ps->done);
	pthread_mutex_unlock(&ps->lock);
}
