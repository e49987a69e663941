/* perf: see perf.h. */
#include "perf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../core/heap.h"
#include "../core/units.h"
#include "../core/banned.h"

static int read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	return 0;
}

/* Finds "field:<type> NAME;\toffset:N;\tsize:M;" in a format file. */
static int find_field(const char *fmt, const char *name, struct tp_field *f)
{
	char want[64];
	snprintf(want, sizeof(want), " %s;", name);
	const char *p = strstr(fmt, want);
	if (!p)
		return -ENOENT;
	const char *o = strstr(p, "offset:"), *s = strstr(p, "size:");
	if (!o || !s)
		return -ENOENT;
	f->offset = (uint32_t)strtoul(o + 7, NULL, 10);
	f->size = (uint32_t)strtoul(s + 5, NULL, 10);
	return f->size == 4 || f->size == 8 ? 0 : -ENOENT;
}

static int load_event(const char *root, const char *name, uint64_t *id,
		      char *fmt, size_t size)
{
	static const char *const bases[] = { "sys/kernel/tracing",
					     "sys/kernel/debug/tracing" };
	char path[512], buf[32];
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s/events/sched/%s/id", root,
			 bases[i], name);
		if (read_text(path, buf, sizeof(buf)))
			continue;
		*id = strtoull(buf, NULL, 10);
		snprintf(path, sizeof(path), "%s/%s/events/sched/%s/format", root,
			 bases[i], name);
		return read_text(path, fmt, size);
	}
	return -ENOENT;
}

/* A freshly booted machine often has tracefs unmounted until something
 * asks for it (perf mounts it on first use too). Mounting it is harmless
 * and needs root; on a root other than "/" (tests) nothing is mounted. */
static void mount_tracefs(const char *root)
{
	struct stat st;
	if (strcmp(root, "/") != 0 || stat("/sys/kernel/tracing", &st) != 0 ||
	    !S_ISDIR(st.st_mode) || access("/sys/kernel/tracing/events", F_OK) == 0)
		return;
	(void)mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
}

int tp_formats__load(struct tp_formats *f, const char *root)
{
	char fmt[8192];
	int err = load_event(root, "sched_switch", &f->switch_config, fmt, sizeof(fmt));
	if (err == -ENOENT) {
		mount_tracefs(root);
		err = load_event(root, "sched_switch", &f->switch_config, fmt,
				 sizeof(fmt));
	}
	if (!err)
		err = find_field(fmt, "prev_pid", &f->prev_pid);
	if (!err)
		err = find_field(fmt, "next_pid", &f->next_pid);
	if (!err)
		err = load_event(root, "sched_stat_runtime", &f->runtime_config,
				 fmt, sizeof(fmt));
	if (!err)
		err = find_field(fmt, "pid", &f->rt_pid);
	if (!err)
		err = find_field(fmt, "runtime", &f->rt_runtime);
	return err;
}

uint64_t perf_session__sample_type(const struct perf_options *o,
				   enum perf_event_kind k)
{
	/* PERIOD on the tracepoints too: sched_stat_runtime passes its
	 * runtime as the event's count, and a software event sampled every
	 * count without PERF_SAMPLE_PERIOD emits one sample per unit of it
	 * (kernel/events/core.c perf_swevent_event): thousands of copies of
	 * each event. With it, one sample carries the count as its period. */
	uint64_t t = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
		     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (k == EV_CLOCK) {
		t |= PERF_SAMPLE_IP;
		if (o->callchain)
			t |= PERF_SAMPLE_CALLCHAIN;
		if (o->cgroup)
			t |= PERF_SAMPLE_CGROUP;
	} else {
		t |= PERF_SAMPLE_RAW;
	}
	return t;
}

static int open_event(struct perf_event_attr *a, int pid, int cpu)
{
	int fd = (int)syscall(SYS_perf_event_open, a, pid, cpu, -1,
			      PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void attr_common(struct perf_event_attr *a, const struct perf_options *o,
			enum perf_event_kind k)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->sample_type = perf_session__sample_type(o, k);
	a->disabled = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->wakeup_watermark = (uint32_t)(o->ring_pages * 4096 / 4);
	a->watermark = 1;
}

int perf_session__open(struct perf_session *s, const struct perf_options *o,
		       const struct tp_formats *tp)
{
	memset(s, 0, sizeof(*s));
	s->opts = *o;
	long n = sysconf(_SC_NPROCESSORS_CONF);
	s->cpus = calloc((size_t)n, sizeof(*s->cpus));
	if (!s->cpus)
		return -ENOMEM;
	int err = 0;
	for (int cpu = 0; cpu < n && !err; cpu++) {
		struct perf_cpu *c = &s->cpus[s->ncpus];
		struct perf_event_attr a;
		c->cpu = cpu;
		for (int k = 0; k < EV_KINDS; k++)
			c->fd[k] = -1;

		attr_common(&a, o, EV_CLOCK);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.sample_period = NSEC_PER_SEC / o->hz;
		a.comm = 1;
		a.comm_exec = 1;
		a.task = 1;
		a.mmap = 1;
		a.mmap2 = 1;
		a.cgroup = o->cgroup;
		/* Not attr.build_id: with it, the kernel marks MMAP2 records
		 * of other sessions recording at the same time as carrying a
		 * build-id too, and perf report then aborts on their data
		 * (seen with perf 6.1 on Linux 6.18). Symbols are stored at
		 * the end of a recording instead (recorder.c). */
		if (o->task) {
			/* One process tree, per CPU (the kernel maps no ring
			 * of an inherited event on every CPU), user space only. */
			a.inherit = 1;
			a.exclude_kernel = 1;
			a.exclude_hv = 1;
		}
		int fd = open_event(&a, o->task ? o->task : -1, cpu);
		if (fd == -ENODEV)
			continue;	/* offline CPU */
		if (fd < 0) {
			err = fd;
			break;
		}
		c->fd[EV_CLOCK] = fd;
		s->ncpus++;
		if (o->tracepoints && !o->task) {
			uint64_t cfg[2] = { tp->switch_config, tp->runtime_config };
			for (int k = EV_SWITCH; k <= EV_RUNTIME && !err; k++) {
				attr_common(&a, o, (enum perf_event_kind)k);
				a.type = PERF_TYPE_TRACEPOINT;
				a.config = cfg[k - EV_SWITCH];
				a.sample_period = 1;
				fd = open_event(&a, -1, cpu);
				if (fd < 0)
					err = fd;
				else
					c->fd[k] = fd;
			}
		}
		if (!err)
			err = ring__init(&c->ring, c->fd[EV_CLOCK], o->ring_pages);
		for (int k = 0; k < EV_KINDS && !err; k++) {
			if (c->fd[k] < 0)
				continue;
			if (ioctl(c->fd[k], PERF_EVENT_IOC_ID, &c->id[k]) < 0)
				err = -errno;
			else if (k != EV_CLOCK &&
				 ioctl(c->fd[k], PERF_EVENT_IOC_SET_OUTPUT, c->fd[EV_CLOCK]) < 0)
				err = -errno;
		}
	}
	if (err)
		perf_session__release(s);
	return err;
}

static int ioctl_all(struct perf_session *s, unsigned long req)
{
	for (int i = 0; i < s->ncpus; i++)
		for (int k = 0; k < EV_KINDS; k++)
			if (s->cpus[i].fd[k] >= 0 && ioctl(s->cpus[i].fd[k], req, 0) < 0)
				return -errno;
	return 0;
}

int perf_session__enable(struct perf_session *s)
{
	return ioctl_all(s, PERF_EVENT_IOC_ENABLE);
}

int perf_session__disable(struct perf_session *s)
{
	return ioctl_all(s, PERF_EVENT_IOC_DISABLE);
}

/* A ring's next record in the merge: its time, and the ring's index. */
struct ring_next {
	uint64_t time;
	uint32_t i;
};

/* The earlier record first; at one time, the lower CPU's (a fixed order). */
static inline bool next_before(const struct ring_next *a, const struct ring_next *b)
{
	return a->time < b->time || (a->time == b->time && a->i < b->i);
}

HEAP_DEFINE(next_heap, struct ring_next, next_before)

/* Why merge: a record is resolved as it is read, against the mappings
 * read so far, so a mapping on one CPU must come before another CPU's
 * samples in it. Read ring after ring, an exec's mappings on CPU 1 came
 * after a round's worth of its new thread's samples on CPU 0 (up to
 * 90 ms of them), which found no mapping and were "[unknown]". Every
 * head is taken before a record is read, so the records left for the
 * next read were written after these, but for those written (or made
 * visible: a head moves when its outermost writer ends) in the moment
 * the heads took. */
int perf_session__read(struct perf_session *s, perf_record_fn fn, perf_time_fn time_of,
		       void *ctx)
{
	if (!s->ncpus)
		return 0;
	if (!s->next) {
		s->next = calloc((size_t)s->ncpus, sizeof(*s->next));
		if (!s->next)
			return -ENOMEM;
	}
	uint32_t n = 0;
	for (int i = 0; i < s->ncpus; i++)
		ring__start(&s->cpus[i].ring);
	for (int i = 0; i < s->ncpus; i++) {
		const struct perf_event_header *h = ring__peek(&s->cpus[i].ring);
		if (h) {
			s->next[n] = (struct ring_next){ time_of(ctx, h), (uint32_t)i };
			next_heap_up(s->next, n++);
		}
	}
	int err = 0;
	while (n && !err) {
		struct ring *r = &s->cpus[s->next[0].i].ring;
		err = fn(ctx, s->cpus[s->next[0].i].cpu, ring__peek(r));
		if (err)
			break;
		ring__pass(r);
		const struct perf_event_header *h = ring__peek(r);
		if (h)
			s->next[0].time = time_of(ctx, h);
		else
			s->next[0] = s->next[--n];
		next_heap_down(s->next, n, 0);
	}
	for (int i = 0; i < s->ncpus; i++)
		ring__finish(&s->cpus[i].ring);
	return err;
}

void perf_session__wait(struct perf_session *s, int timeout_ms)
{
	struct pollfd p[256];
	int n = s->ncpus < 256 ? s->ncpus : 256;
	for (int i = 0; i < n; i++)
		p[i] = (struct pollfd){ .fd = s->cpus[i].fd[EV_CLOCK], .events = POLLIN };
	poll(p, (nfds_t)n, timeout_ms);
}

uint64_t perf_session__lost(const struct perf_session *s, int i)
{
	return s->cpus[i].ring.lost;
}

void perf_session__release(struct perf_session *s)
{
	if (!s || !s->cpus)
		return;
	for (int i = 0; i < s->ncpus; i++) {
		ring__release(&s->cpus[i].ring);
		for (int k = 0; k < EV_KINDS; k++)
			if (s->cpus[i].fd[k] >= 0)
				close(s->cpus[i].fd[k]);
	}
	/* a CPU that failed half way is past ncpus */
	free(s->cpus);
	free(s->next);
	s->cpus = NULL;
	s->next = NULL;
	s->ncpus = 0;
}
