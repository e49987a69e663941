/*
 * rec_source_events: what the items of either version become, engine
 * events, checked (an event no kernel could have made is refused with
 * its offset) and pushed with the watermark the file allows. Below both
 * readers: rec_source_feed.c (version 2's items) and rec_source_v1.c
 * (version 1's perf records) call here, and this file calls neither.
 */
#include "rec_source_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/banned.h"

/* The rules: the ones given, else those stored (ACCOUNTS, right after
 * the META), else the defaults. */
int rec_source_resolver(struct rec_source *s)
{
	if (s->res)
		return 0;
	const struct account_rules *rules = s->o.rules ? s->o.rules :
		s->have_stored_rules ? &s->stored_rules : NULL;
	bool v1 = s->meta.version == 1 && !s->meta.imported;
	struct sym_source syms = { s, NULL };
	if (v1)
		syms.lookup = rec_source_stored_lookup;
	s->res = resolver__new(&s->names, v1 ? &syms : NULL, rules);
	if (!s->res)
		return -ENOMEM;
	/* the samples' addresses only place them in accounts' ranges: where
	 * none are named, their frames (a third of a block) go unread */
	if (s->rd && !resolver__reads_addresses(s->res))
		rec_reader__skip_addresses(s->rd);
	return 0;
}

void rec_source_seen(struct rec_source *s, uint32_t cpu, uint64_t t)
{
	if (t > s->now) {
		s->now = t;
		s->now_offset = rec_reader__offset(s->rd);
	}
	if (t && !s->first)
		s->first = t;
	if (cpu < s->meta.ncpus) {
		s->cpus[cpu].present = true;
		if (t)
			s->last_time[cpu] = t;
	}
}

/* How long a runtime or a clock window says its thread held a CPU (a
 * thread's clock: its CPU time and the steal in its stints). */
static uint64_t held(const struct eng_event *ev)
{
	if (ev->kind == EK_CPU_CLOCK)
		return ev->steal;
	if (ev->kind != EK_CLOCK)
		return ev->value;
	return ev->steal > UINT64_MAX - ev->value ? UINT64_MAX : ev->value + ev->steal;
}

/* An event no kernel could have made: before the recording began, or a
 * runtime longer than the recording up to it. Refused, with its offset:
 * what follows from it (sums, bills) would be wrong. */
static int impossible(struct rec_source *s, const struct eng_event *ev)
{
	uint64_t base = s->meta.start_ns ? s->meta.start_ns : s->first;
	char msg[200];
	if (!base || !ev->time)
		return 0;
	if (base > REC_SLACK_NS && ev->time < base - REC_SLACK_NS)
		snprintf(msg, sizeof(msg), "an event at %llu ns, before the recording began "
			 "(%llu ns)", (unsigned long long)ev->time, (unsigned long long)base);
	else if ((ev->kind == EK_RUNTIME || ev->kind == EK_CLOCK || ev->kind == EK_CPU_CLOCK) &&
		 held(ev) > REC_SLACK_NS &&
		 held(ev) - REC_SLACK_NS > (ev->time > base ? ev->time - base : 0))
		snprintf(msg, sizeof(msg), "a %s of %llu ns, longer than the recording up "
			 "to it (%llu ns)", ev->kind == EK_CLOCK ? "thread's CPU time and steal" :
			 ev->kind == EK_CPU_CLOCK ? "CPU's steal" : "runtime",
			 (unsigned long long)held(ev),
			 (unsigned long long)(ev->time > base ? ev->time - base : 0));
	else
		return 0;
	return rec_source_fail(s->err, rec_reader__offset(s->rd), msg);
}

/* Each CPU's items are in time order in the file, so everything up to
 * the earliest of the CPUs' latest events has been read (UINT64_MAX: no
 * CPU had one). */
uint64_t rec_source_streams_read(const struct rec_source *s)
{
	uint64_t w = UINT64_MAX;
	for (uint32_t c = 0; c < s->meta.ncpus; c++)
		if (s->cpus[c].present && s->last_time[c] < w)
			w = s->last_time[c];
	return w;
}

static uint64_t streams_of(const void *s)
{
	return rec_source_streams_read(s);
}

/* An import has no round marks (perf script text is in time order): its
 * events go once every CPU's stream is past them, so the queue holds
 * what lies between the streams, not the file. Every 64 events (or one
 * a CPU: the look costs one step a CPU). */
static uint64_t import_advance(struct rec_source *s)
{
	if (++s->pushed < 64 || s->pushed < s->meta.ncpus)
		return UINT64_MAX;
	s->pushed = 0;
	return rec_source_streams_read(s);
}

int rec_source_push(struct rec_source *s, struct engine *e, struct eng_event *ev)
{
	int err = impossible(s, ev);
	if (err) {
		free(ev->text);
		free(ev->exe);
		return err;
	}
	/* the engine refuses an event of no CPU it has (-EINVAL), and then
	 * nothing is advanced by it */
	uint64_t then = UINT64_MAX;
	if (ev->cpu < s->meta.ncpus && s->meta.ordered)
		then = s->now;	/* in time order already */
	else if (ev->cpu < s->meta.ncpus && s->meta.imported)
		then = import_advance(s);
	if (s->split)
		return rec_split__push(s->split, ev, then);
	return engine__push_bounded(e, ev, then, REC_MAX_QUEUED, streams_of, s);
}

int rec_source_advance(struct rec_source *s, struct engine *e, uint64_t watermark)
{
	return s->split ? rec_split__advance(s->split, watermark) :
	       engine__advance(e, watermark);
}

/* A sample's stack: (function, dso, account) of each frame, leaf first. */
static uint32_t stack_id(struct rec_source *s, const struct res_frame *f, uint32_t n,
			 const uint32_t *accounts)
{
	struct stack_frame key[RES_MAX_FRAMES];
	for (uint32_t i = 0; i < n; i++)
		key[i] = (struct stack_frame){ f[i].function, f[i].dso, accounts[i] };
	return stacktab__intern(&s->stacks, key, n);
}

/* The function, file, account and (with stacks) stack of a sample whose
 * frames are f[0, n), n >= 1, into ev. */
static int name_sample(struct rec_source *s, const struct res_frame *f, uint32_t n,
		       struct eng_event *ev)
{
	static __thread uint32_t acc[RES_MAX_FRAMES];
	int err = rec_source_resolver(s);
	if (err)
		return err;
	uint32_t frames = s->o.stacks ? n : 1;
	for (uint32_t i = 0; i < frames; i++) {
		acc[i] = resolver__account(s->res, f[i].dso, f[i].function, f[i].ip,
					   f[i].flags);
		if (acc[i] == UINT32_MAX)
			return -ENOMEM;
	}
	ev->function = f[0].function;
	ev->dso = f[0].dso;
	ev->account = acc[0];
	ev->flags = f[0].flags;
	ev->ip = f[0].ip;
	if (s->o.stacks && (ev->stack = stack_id(s, f, n, acc)) == HINDEX_NONE)
		return -ENOMEM;
	return 0;
}

/* A named sample (resolved here or by the recorder) into the engine. */
int rec_source_sample(struct rec_source *s, struct engine *e, const struct res_frame *f,
		  uint32_t n, uint32_t pid, uint32_t tid, uint32_t cpu, uint64_t time)
{
	struct eng_event ev = { .kind = EK_SAMPLE, .time = time, .cpu = cpu, .pid = pid,
				.tid = tid, .stack = ENGINE_NONE };
	s->samples++;
	rec_source_seen(s, cpu, time);
	if (tid && n) {
		int err = name_sample(s, f, n, &ev);
		if (err)
			return err;
	}
	return rec_source_push(s, e, &ev);
}

int rec_source_stack(struct rec_source *s, struct file_stack *fs, const struct res_frame *f,
		     uint32_t n)
{
	int err = rec_source_resolver(s);
	if (err || !n)
		return err;
	if (!resolver__reads_addresses(s->res)) {
		struct eng_event ev = { .stack = ENGINE_NONE };
		if ((err = name_sample(s, f, n, &ev)))
			return err;
		struct stack_frame leaf = { ev.function, ev.dso, ev.account };
		uint32_t id = stacktab__intern_frame(&s->stacks, &leaf);
		if (id == HINDEX_NONE)
			return -ENOMEM;
		*fs = (struct file_stack){ .n = fs->n, .nframes = fs->nframes, .named = true,
					   .flags = ev.flags, .leaf = id, .stack = ev.stack };
		return 0;
	}
	if (grow_array((void **)&s->file_frames, &s->file_frames_cap, s->nfile_frames + n,
		       sizeof(*s->file_frames), 4096))
		return -ENOMEM;
	fs->first = s->nfile_frames;
	for (uint32_t i = 0; i < n; i++)
		s->file_frames[s->nfile_frames++] = (struct file_frame){
			.function = f[i].function, .dso = f[i].dso, .flags = f[i].flags };
	return 0;
}

/* A kept stack's frames with a sample's addresses: want of them at most. */
static uint32_t stack_frames(const struct rec_source *s, const struct file_stack *fs,
			     const uint8_t *ips, uint32_t want, struct res_frame *f)
{
	uint32_t n = fs->n < want ? fs->n : want;
	const struct file_frame *from = s->file_frames + fs->first;
	for (uint32_t i = 0; i < n; i++) {
		f[i] = (struct res_frame){ .function = from[i].function, .dso = from[i].dso,
					   .flags = from[i].flags };
		if (ips)
			memcpy(&f[i].ip, ips + i * sizeof(uint64_t), sizeof(uint64_t));
	}
	return n;
}

/* A sample on a stack named as it was read needs only its own address:
 * naming each sample's frames (each one's account, the stack's id) was
 * most of its reading, and a compile loop's samples share a stack by
 * name nine times in ten. */
int rec_source_stack_sample(struct rec_source *s, struct engine *e, struct file_stack *fs,
			    const uint8_t *ips, const struct rec_stack_sample *h)
{
	static __thread struct res_frame f[RES_MAX_FRAMES];
	if (!h->tid)	/* the idle task's samples are not named */
		return rec_source_sample(s, e, f, 0, h->pid, h->tid, h->cpu, h->time_ns);
	if (!fs->named) {
		uint32_t n = stack_frames(s, fs, ips, s->o.stacks ? RES_MAX_FRAMES : 1, f);
		if (!n)	/* no frame: a function not known */
			f[n++] = (struct res_frame){ .function = s->unknown, .dso = s->unknown };
		return rec_source_sample(s, e, f, n, h->pid, h->tid, h->cpu, h->time_ns);
	}
	struct stack_frame leaf = stacktab__frame_of(&s->stacks, fs->leaf);
	struct eng_event ev = { .kind = EK_SAMPLE, .time = h->time_ns, .cpu = h->cpu,
				.pid = h->pid, .tid = h->tid, .function = leaf.function,
				.dso = leaf.dso, .account = leaf.account, .flags = fs->flags,
				.stack = s->o.stacks ? fs->stack : ENGINE_NONE };
	if (ips)	/* (NULL: not read, not needed) */
		memcpy(&ev.ip, ips, sizeof(ev.ip));
	s->samples++;
	rec_source_seen(s, h->cpu, h->time_ns);
	return rec_source_push(s, e, &ev);
}
