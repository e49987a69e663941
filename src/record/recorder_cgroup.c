/*
 * recorder_cgroup: which cgroup each task is in, and the cgroups' own
 * counters (docs/cgroups.md). A process's cgroup is read from /proc at
 * the start and at each exec (CGROUP items with tid 0); where the kernel
 * puts the cgroup id in each sample (PERF_SAMPLE_CGROUP, Linux 5.7+), a
 * thread whose samples show another cgroup than the one last written for
 * it gets a CGROUP item of its own, so a task moved (a container runtime
 * or systemd placing a forked child) is followed. Ids are named by a walk
 * of the v2 hierarchy at the start and the kernel's CGROUP records of
 * groups made later. Counters and run-queue waits are read at the start
 * and the end (CGSTAT, WAIT items).
 */
#include "recorder_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/procfs.h"
#include "../core/grow.h"
#include "../core/banned.h"

static bool id_eq(const void *ctx, uint32_t i)
{
	const struct { const struct recorder *r; uint64_t id; } *k = ctx;
	return k->r->cgids[i].id == k->id;
}

static uint32_t id_find(struct recorder *r, uint64_t id)
{
	struct { const struct recorder *r; uint64_t id; } k = { r, id };
	uint32_t i = hindex__find(&r->cgid_index, hash_mix(id), id_eq, &k);
	if (i == HINDEX_NONE)
		return HINDEX_NONE;
	r->cgids[i].used = true;
	return r->cgids[i].name;
}

/* With max_cgroups, the slot of the id least recently named, by the clock
 * algorithm (a hand that spares what was named since it last passed): a
 * true LRU's order for a constant cost, however fast groups come and go.
 * The evicted id leaves the index; its path goes with the pool's sweep. */
static uint32_t evict(struct recorder *r)
{
	for (;;) {
		uint32_t i = r->cg_hand;
		r->cg_hand = (r->cg_hand + 1) % r->ncgids;
		struct recorder_cgid *c = &r->cgids[i];
		if (c->used) {
			c->used = false;
			continue;
		}
		hindex__remove(&r->cgid_index, hash_mix(c->id), i);
		r->cgids_evicted++;
		return i;
	}
}

/* Names cgroup id by path (a string id); 0 or -ENOMEM. */
static int id_add(struct recorder *r, uint64_t id, uint32_t name)
{
	struct { const struct recorder *r; uint64_t id; } k = { r, id };
	uint32_t i = hindex__find(&r->cgid_index, hash_mix(id), id_eq, &k);
	if (i != HINDEX_NONE) {
		r->cgids[i].name = name;	/* an id given again */
		return 0;
	}
	bool full = r->o.max_cgroups && r->ncgids >= r->o.max_cgroups;
	if (!full && grow_array((void **)&r->cgids, &r->cgids_cap, r->ncgids,
				sizeof(*r->cgids), 64))
		return -ENOMEM;
	i = full ? evict(r) : r->ncgids;
	if (hindex__insert(&r->cgid_index, hash_mix(id), i))
		return -ENOMEM;
	r->cgids[i] = (struct recorder_cgid){ id, name, true };
	if (!full)
		r->ncgids++;
	return 0;
}

static uint32_t intern(struct recorder *r, const char *path)
{
	return strtab__intern(&r->names, path, strlen(path));
}

/* A path met while recording (an exec's, a group made): pooled. ENOSPC
 * (no room) leaves the group unnamed, as one made before the walk. */
static int user_path(struct recorder *r, const char *path, uint64_t time, uint32_t *name)
{
	*name = recorder_user_name(r, path, strlen(path), time, UN_CGROUP);
	if (*name != HINDEX_NONE)
		return 0;
	return errno == ENOSPC ? -ENOSPC : -ENOMEM;
}

/* The CGSTAT text being made: one line per cgroup. */
struct cgstat_text {
	struct recorder *r;
	int phase;
	char *buf;
	size_t len, cap;
	int err;
};

static void put_counter(char *s, size_t size, bool known, uint64_t v)
{
	if (known)
		snprintf(s, size, "%" PRIu64, v);
	else
		snprintf(s, size, "-");
}

static int on_group(void *ctx, uint64_t id, const char *path)
{
	struct cgstat_text *t = ctx;
	struct recorder *r = t->r;
	uint32_t name = intern(r, path);
	if (name == HINDEX_NONE)
		return -ENOMEM;
	if (r->perf.opts.cgroup && id_add(r, id, name))
		return -ENOMEM;
	struct cg_counters c;
	if (cgroup_counters__read(&r->cgfs, path, &c))
		return 0;	/* gone meanwhile */
	if (cgstats__counters(&r->cg, t->phase, name, &c))
		return -ENOMEM;
	char u[24], th[24], nr[24];
	put_counter(u, sizeof(u), c.usage_known, c.usage_ns);
	put_counter(th, sizeof(th), c.throttled_known, c.throttled_ns);
	put_counter(nr, sizeof(nr), c.throttled_known, c.nr_throttled);
	size_t need = strlen(u) + strlen(th) + strlen(nr) + strlen(path) + 5;
	if (t->len + need > t->cap) {
		size_t cap = (t->cap ? t->cap * 2 : 4096) + need;
		char *b = realloc(t->buf, cap);
		if (!b)
			return -ENOMEM;
		t->buf = b;
		t->cap = cap;
	}
	t->len += (size_t)snprintf(t->buf + t->len, t->cap - t->len, "%s %s %s %s\n", u, th,
				   nr, path);
	return 0;
}

/* Every cgroup's counters now, into a CGSTAT item and r->cg. */
static int write_cgstat(struct recorder *r, int phase)
{
	struct cgstat_text t = { .r = r, .phase = phase };
	int err = cgroup_walk(&r->cgfs, on_group, &t);
	struct rec_cgstat h = { .phase = (uint32_t)phase, .time_ns = clock_mono_ns() };
	if (!err && r->w)
		err = rec_writer__add(r->w, REC_CGSTAT, &h, sizeof(h), t.buf, t.len);
	free(t.buf);
	return err;
}

/* The run-queue waits of every task now (schedstat's second field). */
struct waits {
	struct recorder *r;
	int phase;
	struct rec_wait_task *v;
	uint32_t n, cap;
};

static int on_task_wait(void *ctx, pid_t pid, pid_t tid, const char *comm)
{
	(void)comm;
	struct waits *w = ctx;
	unsigned long long delay;
	if (procfs_run_delay(w->r->o.root, pid, tid, &delay))
		return 0;	/* gone, or no schedstats in this kernel */
	if (grow_array((void **)&w->v, &w->cap, w->n, sizeof(*w->v), 256))
		return -ENOMEM;
	w->v[w->n++] = (struct rec_wait_task){ (uint32_t)pid, (uint32_t)tid, delay };
	return cgstats__wait(&w->r->cg, w->phase, (uint32_t)pid, (uint32_t)tid, delay);
}

/* A thread's wait as the BPF collector counted it, from its first sight. */
static int on_bpf_wait(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns)
{
	struct waits *w = ctx;
	if (grow_array((void **)&w->v, &w->cap, w->n, sizeof(*w->v), 256))
		return -ENOMEM;
	w->v[w->n++] = (struct rec_wait_task){ pid, tid, ns };
	return cgstats__wait(&w->r->cg, w->phase, pid, tid, ns);
}

/* With the BPF collector the waits count from the start (none at the
 * start) to each thread's last switch, exited threads too: its totals,
 * not schedstat's, which lose a thread's last wait once it is gone. */
static int write_waits(struct recorder *r, int phase)
{
	struct waits w = { .r = r, .phase = phase };
	int err = !r->bpf ? procfs_tasks(r->o.root, on_task_wait, &w) :
		  phase == REC_PHASE_END ? recorder_bpf_each_wait(r, on_bpf_wait, &w) : 0;
	if (!err) {
		cgstats__waits_taken(&r->cg, phase);
		struct rec_wait h = { .phase = (uint32_t)phase, .count = w.n,
				      .time_ns = clock_mono_ns() };
		if (r->w)
			err = rec_writer__add(r->w, REC_WAIT, &h, sizeof(h), w.v,
					      (size_t)w.n * sizeof(*w.v));
	}
	free(w.v);
	return err;
}

int recorder_cgroup_start(struct recorder *r)
{
	r->have_cgfs = cgroup_fs__find(&r->cgfs, r->o.root) == 0;
	int err = r->have_cgfs ? write_cgstat(r, REC_PHASE_START) : 0;
	return err ? err : write_waits(r, REC_PHASE_START);
}

int recorder_cgroup_end(struct recorder *r)
{
	return r->have_cgfs ? write_cgstat(r, REC_PHASE_END) : 0;
}

int recorder_cgroup_end_waits(struct recorder *r)
{
	return write_waits(r, REC_PHASE_END);
}

/* A CGROUP item, and the engine told. */
static int cgroup_item(struct recorder *r, uint64_t time, uint32_t pid, uint32_t tid,
		       uint32_t name)
{
	int err = recorder_names_out(r, name);
	struct rec_cgroup c = { .time_ns = time, .pid = pid, .tid = tid, .name = name };
	if (!err && r->w)
		err = rec_writer__add(r->w, REC_CGROUP, &c, sizeof(c), NULL, 0);
	if (err || (!r->engine && !r->ntaps))
		return err;
	struct eng_event ev = { .kind = EK_CGROUP, .time = time, .pid = pid, .tid = tid,
				.cgroup = name };
	return recorder_push(r, &ev);
}

int recorder_cgroup_proc(struct recorder *r, uint32_t pid, uint64_t time)
{
	char path[4096];
	if (!r->have_cgfs || cgroup_of_pid(r->o.root, pid, path, sizeof(path)))
		return 0;	/* gone already, or no cgroups */
	uint32_t name;
	int err = user_path(r, path, time, &name);
	return err ? (err == -ENOSPC ? 0 : err) : cgroup_item(r, time, pid, 0, name);
}

int recorder_cgroup_sample(struct recorder *r, const struct perf_ev *p)
{
	struct recorder_cgcache *c = &r->cgcache[p->tid % RECORDER_CGCACHE];
	if (!p->cgroup || !p->tid || (c->tid == p->tid && c->id == p->cgroup))
		return 0;
	uint32_t name = id_find(r, p->cgroup);
	if (name == HINDEX_NONE)
		return 0;	/* a group made before the walk saw it: not named */
	*c = (struct recorder_cgcache){ p->tid, p->cgroup };
	return cgroup_item(r, p->time, p->pid, p->tid, name);
}

int recorder_cgroup_new(struct recorder *r, const struct perf_ev *p)
{
	char path[4096];
	snprintf(path, sizeof(path), "%.*s", (int)p->name_len, p->name);
	uint32_t name;
	int err = user_path(r, path, p->time, &name);
	return err ? (err == -ENOSPC ? 0 : err) : id_add(r, p->value, name);
}

void recorder_cgroup_release(struct recorder *r)
{
	free(r->cgids);
	hindex__release(&r->cgid_index);
	cgstats__release(&r->cg);
}
