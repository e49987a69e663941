/* attribute: see attribute.h for the model and the three methods. */
#include "attribute.h"
#include "grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "banned.h"

static const char *const method_names[] = {
	[METHOD_PRECEDING] = "preceding",
	[METHOD_BRACKETED] = "bracketed",
	[METHOD_RATIO] = "ratio",
};

const char *steal_method__name(enum steal_method m)
{
	return method_names[m];
}

int steal_method__parse(const char *s, enum steal_method *out)
{
	for (size_t i = 0; i < sizeof(method_names) / sizeof(*method_names); i++)
		if (strcmp(s, method_names[i]) == 0) {
			*out = (enum steal_method)i;
			return 0;
		}
	return -EINVAL;
}

const char *sample_state__name(enum sample_state s)
{
	static const char *const names[] = { "run", "steal", "idle" };
	return names[s];
}

void attributor__init(struct attributor *a, enum steal_method method,
		      uint64_t interval_ns, bool timestamps)
{
	memset(a, 0, sizeof(*a));
	a->method = method;
	a->interval_ns = interval_ns;
	a->timestamps = timestamps;
	strtab__init(&a->strings);
	hindex__init(&a->prog_index);
	hindex__init(&a->stream_index);
}

void attributor__release(struct attributor *a)
{
	if (!a)
		return;
	strtab__release(&a->strings);
	free(a->progs);
	free(a->streams);
	hindex__release(&a->prog_index);
	hindex__release(&a->stream_index);
	memset(a, 0, sizeof(*a));
}

static int grow_one(void **arr, uint32_t *cap, uint32_t used, size_t elem)
{
	return grow_array(arr, cap, used, elem, 64);
}

struct stream_key {
	const struct attributor *a;
	uint32_t vm, vcpu;
};

static bool stream_eq(const void *ctx, uint32_t id)
{
	const struct stream_key *k = ctx;
	const struct stream *s = &k->a->streams[id];
	return s->vm == k->vm && s->vcpu == k->vcpu;
}

uint32_t attributor__stream(struct attributor *a, uint32_t vm, uint32_t vcpu)
{
	struct stream_key k = { a, vm, vcpu };
	uint64_t h = hash_mix(((uint64_t)vm << 32 | vcpu) ^ 0x2545f4914f6cdd1dULL);
	uint32_t id = hindex__find(&a->stream_index, h, stream_eq, &k);
	if (id != HINDEX_NONE)
		return id;
	int err = grow_one((void **)&a->streams, &a->streams_cap, a->nstreams,
			   sizeof(*a->streams));
	if (!err)
		err = hindex__insert(&a->stream_index, h, a->nstreams);
	if (err) {
		errno = -err;
		return HINDEX_NONE;
	}
	id = a->nstreams++;
	a->streams[id] = (struct stream){ .vm = vm, .vcpu = vcpu,
					  .before = PROG_NONE };
	return id;
}

struct prog_key {
	const struct attributor *a;
	uint32_t vm, pid, tid, function;
};

static bool prog_eq(const void *ctx, uint32_t id)
{
	const struct prog_key *k = ctx;
	const struct program *p = &k->a->progs[id];
	return p->vm == k->vm && p->pid == k->pid && p->tid == k->tid &&
	       p->function == k->function;
}

uint32_t attributor__program(struct attributor *a, uint32_t vm, uint32_t pid,
			     uint32_t tid, uint32_t function)
{
	struct prog_key k = { a, vm, pid, tid, function };
	uint64_t h = hash_mix(hash_mix((uint64_t)vm << 32 | pid) ^
			      ((uint64_t)tid << 32 | function));
	uint32_t id = hindex__find(&a->prog_index, h, prog_eq, &k);
	if (id != HINDEX_NONE)
		return id;
	int err = grow_one((void **)&a->progs, &a->progs_cap, a->nprogs,
			   sizeof(*a->progs));
	if (!err)
		err = hindex__insert(&a->prog_index, h, a->nprogs);
	if (err) {
		errno = -err;
		return HINDEX_NONE;
	}
	id = a->nprogs++;
	a->progs[id] = (struct program){ .vm = vm, .pid = pid, .tid = tid,
					 .function = function, .dso = NO_DSO,
					 .account = NO_DSO };
	return id;
}

/* Decides the open steal run of s, now that `after` (a program, or
 * PROG_NONE for idle or the end of the stream) follows it. */
static void close_steal_run(struct attributor *a, struct stream *s,
			    uint32_t after)
{
	if (!s->run_samples)
		return;
	uint32_t owner = s->before;
	if (a->method == METHOD_BRACKETED && after != owner)
		owner = PROG_NONE;
	a->totals.steal_runs++;
	if (owner != PROG_NONE) {
		struct program *p = &a->progs[owner];
		p->steal_samples += s->run_samples;
		p->steal_ns += s->run_ns;
		a->totals.labelled_steal_ns += s->run_ns;
		a->totals.labelled_runs++;
	}
	s->run_samples = 0;
	s->run_ns = 0;
}

/* Accounts the held-back sample of s, whose duration is now known. */
static void account(struct attributor *a, struct stream *s, uint64_t dur)
{
	switch (s->pend_state) {
	case SAMPLE_RUN: {
		struct program *p = &a->progs[s->pend_prog];
		p->samples++;
		p->run_ns += dur;
		a->totals.samples++;
		a->totals.run_ns += dur;
		close_steal_run(a, s, s->pend_prog);
		s->before = s->pend_prog;
		break;
	}
	case SAMPLE_IDLE:
		a->totals.idle_samples++;
		a->totals.idle_ns += dur;
		close_steal_run(a, s, PROG_NONE);
		s->before = PROG_NONE;
		break;
	case SAMPLE_STEAL:
		a->totals.steal_samples++;
		a->totals.steal_ns += dur;
		s->run_samples++;
		s->run_ns += dur;
		break;
	}
}

int attributor__push(struct attributor *a, uint32_t stream, uint64_t time_ns,
		     enum sample_state state, uint32_t prog)
{
	struct stream *s = &a->streams[stream];
	if (s->pending) {
		if (time_ns <= s->pend_time)
			return -ERANGE;
		uint64_t dur = a->timestamps ? time_ns - s->pend_time : a->interval_ns;
		/* with room left for every stream's last sample, one interval */
		uint64_t sum, room = (uint64_t)a->nstreams * a->interval_ns;
		if (__builtin_add_overflow(a->time_ns, dur, &sum) ||
		    __builtin_add_overflow(sum, room, &room))
			return -EOVERFLOW;
		a->time_ns = sum;
		account(a, s, dur);
	}
	s->pending = true;
	s->pend_state = state;
	s->pend_prog = prog;
	s->pend_time = time_ns;
	return 0;
}

void attributor__finish(struct attributor *a)
{
	for (uint32_t i = 0; i < a->nstreams; i++) {
		struct stream *s = &a->streams[i];
		/* A stream's last sample lasts one interval: nothing follows it
		 * to measure against. */
		if (s->pending)
			account(a, s, a->interval_ns);
		s->pending = false;
		close_steal_run(a, s, PROG_NONE);
	}
}
