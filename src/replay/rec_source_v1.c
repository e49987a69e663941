/*
 * rec_source_v1: the perf records of a version 1 recording, decoded
 * (perf_decode.h), resolved against its regions and stored functions
 * (resolve.h) and made into engine events. Its rounds are told from the
 * CPU numbers: the recorder drained the rings in CPU order, so a record of
 * a lower CPU than the one before begins a round, and what the round
 * before it held up to its latest time has all been read (perf's own
 * rule for its FINISHED_ROUND). A process's regions are forgotten once
 * the watermark has passed its exit, not when the exit is read: samples
 * of it from other rings may come after.
 */
#include "rec_source_impl.h"

#include <errno.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/banned.h"

static int forget_later(struct rec_source *s, uint32_t pid, uint64_t time)
{
	if (grow_array((void **)&s->forget, &s->forget_cap, s->nforget,
		       sizeof(*s->forget), 64))
		return -ENOMEM;
	s->forget[s->nforget].pid = pid;
	s->forget[s->nforget++].time = time;
	return 0;
}

static int advance(struct rec_source *s, struct engine *e, uint64_t watermark)
{
	uint32_t kept = 0;
	for (uint32_t i = 0; i < s->nforget; i++) {
		if (s->forget[i].time <= watermark && s->res)
			resolver__forget(s->res, s->forget[i].pid);
		else
			s->forget[kept++] = s->forget[i];
	}
	s->nforget = kept;
	return rec_source_advance(s, e, watermark);
}

int rec_source_v1_advance(struct rec_source *s, struct engine *e)
{
	if (s->meta.version != 1 || s->meta.imported)
		return 0;
	return advance(s, e, s->round_max > s->prev_round_max ? s->round_max :
			     s->prev_round_max);
}

/* A new round begins with a lower CPU: flush what the last one allows. */
static int round_of(struct rec_source *s, struct engine *e, uint32_t cpu)
{
	int err = 0;
	if ((int)cpu < s->last_cpu) {
		err = advance(s, e, s->prev_round_max);
		s->prev_round_max = s->round_max;
	}
	s->last_cpu = (int)cpu;
	return err;
}

static int on_sample(struct rec_source *s, struct engine *e, uint32_t cpu,
		     const struct perf_ev *p)
{
	static __thread struct resolved r;
	if (!p->tid)	/* the idle task: nothing to resolve */
		return rec_source_sample(s, e, NULL, 0, 0, 0, cpu, p->time);
	int err = rec_source_resolver(s);
	if (!err)
		err = resolver__sample(s->res, p, true, &r);
	return err ? err : rec_source_sample(s, e, r.frames, r.nframes, p->pid, p->tid,
					     cpu, p->time);
}

static int on_task_record(struct rec_source *s, struct engine *e, uint32_t cpu,
			  const struct perf_ev *p)
{
	struct eng_event ev = { .time = p->time, .cpu = cpu, .pid = p->pid, .tid = p->tid,
				.ppid = p->ppid, .ptid = p->ptid, .comm = ENGINE_NONE };
	if (p->kind == PD_COMM) {
		ev.kind = EK_COMM;
		ev.flags = p->exec ? EF_EXEC : 0;
		ev.comm = strtab__intern(&s->names, p->name, p->name_len);
		if (ev.comm == HINDEX_NONE)
			return -ENOMEM;
	} else if (p->kind == PD_FORK) {
		ev.kind = EK_FORK;
	} else {
		ev.kind = EK_EXIT;
		if (p->pid == p->tid) {
			int err = forget_later(s, p->pid, p->time);
			if (err)
				return err;
		}
	}
	return rec_source_push(s, e, &ev);
}

/* What one decoded record becomes. */
static int on_decoded(struct rec_source *s, struct engine *e, uint32_t cpu,
		      const struct perf_ev *p)
{
	struct eng_event ev = { .time = p->time, .cpu = cpu };
	switch (p->kind) {
	case PD_SAMPLE:
		return on_sample(s, e, cpu, p);
	case PD_SWITCH:	/* to pid a, tid b */
		s->switches++;
		ev = (struct eng_event){ .kind = EK_SWITCH, .time = p->time, .cpu = cpu,
					 .pid = p->a, .tid = p->b };
		return rec_source_push(s, e, &ev);
	case PD_RUNTIME:	/* of tid a */
		s->runtimes++;
		ev = (struct eng_event){ .kind = EK_RUNTIME, .time = p->time, .cpu = cpu,
					 .tid = p->a, .value = p->value };
		return rec_source_push(s, e, &ev);
	case PD_COMM:
	case PD_FORK:
	case PD_EXIT:
		return on_task_record(s, e, cpu, p);
	case PD_LOST:
		/* what was dropped lies between this CPU's last record and
		 * now: the stints there cannot be judged */
		s->cpus[cpu].lost += p->value;
		ev.kind = EK_LOST;
		ev.value = s->last_time[cpu];
		return p->time ? rec_source_push(s, e, &ev) : 0;
	default:
		return 0;	/* MMAP (for the regions, above), others */
	}
}

int rec_source_v1_perf(struct rec_source *s, struct engine *e, uint32_t cpu,
		       const uint8_t *d, uint32_t len)
{
	struct perf_ev p;
	if (cpu >= s->meta.ncpus || perf_decode(&s->meta.layout, d, len, &p)) {
		s->bad_records++;
		return 0;
	}
	int err = round_of(s, e, cpu);
	if (!err && (p.kind == PD_MMAP || p.kind == PD_FORK || (p.kind == PD_COMM && p.exec)))
		err = rec_source_resolver(s);
	if (!err && (p.kind == PD_MMAP || p.kind == PD_FORK || (p.kind == PD_COMM && p.exec))) {
		err = resolver__record(s->res, d, len);
		if (err == -EINVAL) {
			s->bad_records++;
			err = 0;
		}
	}
	if (err)
		return err;
	/* a LOST's window runs from the CPU's record before it */
	if (p.kind != PD_LOST)
		rec_source_seen(s, cpu, p.time);
	if (p.time > s->round_max)
		s->round_max = p.time;
	return on_decoded(s, e, cpu, &p);
}
