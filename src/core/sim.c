/*
 * sim: see sim.h for the model. Each vCPU is a generator of segments (run
 * of one function, idle, or steal) laid end to end in time; sampling reads
 * the segment under each sample time, and truth adds up every segment's
 * overlap with the simulated window.
 */
#include "sim.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"

#define MS 1000000ULL

/* Names with a comma and a quote, so that writers' quoting is exercised. */
static const char *const function_pool[] = {
	"main", "parse_request", "hash_block", "deflate_slow", "render_page",
	"gc_mark", "sort_keys", "aes_encrypt", "query_index", "write_log",
	"std::map<int, long>::find", "json_\"escape\"", "memcpy", "poll_events",
	"compute_checksum", "tree_insert", "resize_image", "vector_dot",
	"regex_match", "lz4_compress", "sqlite3VdbeExec", "ssl_read",
	"matrix_mul", "bloom_lookup",
};
#define POOL_SIZE (sizeof(function_pool) / sizeof(*function_pool))

enum seg_kind { SEG_RUN, SEG_IDLE, SEG_STEAL };

struct thread {
	uint32_t vm, pid, tid;
	uint32_t first;		/* its programs: truth[first .. first+nfuncs) */
	uint32_t nfuncs;
};

struct vcpu {
	uint32_t vm, vcpu;
	uint64_t rng;
	uint32_t *threads;	/* pinned here */
	uint32_t nthreads;
	/* the segment under the last sample */
	uint64_t seg_start, seg_end;
	enum seg_kind kind;
	uint32_t owner;		/* program, or PROG_NONE */
	/* the activity the next segments continue */
	uint32_t thread, prog;
	uint64_t slice_left, func_left, idle_left;
	uint64_t until_steal;	/* of non-stolen time */
	bool steal_due;
	uint32_t steal_owner;	/* whoever held the vCPU when it fell due */
	bool started;
};

struct sim {
	struct sim_config c;
	double mean_gap_ns;	/* between steal bursts, in non-stolen time */
	double switch_steal_p;
	struct thread *threads;
	uint32_t nthreads;
	struct sim_truth *truth;
	uint32_t ntruth;
	struct vcpu *vcpus;
	uint32_t nvcpus;
	char (*vm_names)[16];
	uint64_t k, nsamples;	/* sample round, rounds in all */
	uint32_t next_vcpu;
	uint64_t window_end;
	struct sim_totals totals;
};

const char *sim_config__check(const struct sim_config *c)
{
	if (c->vms < 1 || c->vms > 1000)
		return "--vms must be from 1 to 1000";
	if (c->vcpus < 1 || c->vcpus > 1024)
		return "--vcpus must be from 1 to 1024";
	if (c->duration_ms < 1)
		return "--duration-ms must be at least 1";
	if (!(c->steal_pct >= 0 && c->steal_pct <= 90))
		return "--steal-pct must be from 0 to 90";
	if (c->interval_ns < 1000)
		return "--period-ns must be at least 1000";
	if (c->jitter_ns * 2 >= c->interval_ns)
		return "--jitter-ns must be less than half the period";
	if (c->duration_ms > UINT64_MAX / MS / 2)
		return "--duration-ms is too large";
	return NULL;
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double uniform(uint64_t *x)
{
	return (double)(splitmix(x) >> 11) * 0x1.0p-53;
}

static uint64_t between(uint64_t *x, uint64_t lo, uint64_t hi)
{
	return lo + (uint64_t)(uniform(x) * (double)(hi - lo));
}

static uint64_t steal_gap(struct sim *s, struct vcpu *v)
{
	if (s->mean_gap_ns <= 0)
		return UINT64_MAX;
	double g = -log(1.0 - uniform(&v->rng)) * s->mean_gap_ns;
	return g < 1 ? 1 : (uint64_t)g;
}

static uint64_t burst_len(struct vcpu *v)
{
	return between(&v->rng, 1 * MS, 7 * MS);	/* mean 4 ms */
}

static int build(struct sim *s)
{
	uint64_t rng = s->c.seed ^ 0x6a09e667f3bcc909ULL;
	uint32_t cap = 0;
	for (uint32_t vm = 0; vm < s->c.vms; vm++) {
		uint32_t nproc = 2 + (uint32_t)(splitmix(&rng) % 3);
		uint32_t first = s->nthreads;
		for (uint32_t p = 0; p < nproc; p++) {
			uint32_t pid = 1000 + 97 * p + vm;
			uint32_t nthr = 1 + (uint32_t)(splitmix(&rng) % 3);
			if (p == nproc - 1 && s->nthreads - first + nthr < s->c.vcpus)
				nthr = s->c.vcpus - (s->nthreads - first);
			for (uint32_t i = 0; i < nthr; i++) {
				if (s->nthreads == cap) {
					cap = cap ? cap * 2 : 64;
					struct thread *t = realloc(s->threads, cap * sizeof(*t));
					if (!t)
						return -ENOMEM;
					s->threads = t;
				}
				struct thread *t = &s->threads[s->nthreads++];
				*t = (struct thread){ vm, pid, pid + i, 0, 0 };
				t->nfuncs = 2 + (uint32_t)(splitmix(&rng) % 4);
			}
		}
	}

	uint32_t nt = 0;
	for (uint32_t i = 0; i < s->nthreads; i++)
		nt += s->threads[i].nfuncs;
	s->truth = calloc(nt, sizeof(*s->truth));
	if (!s->truth)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct thread *t = &s->threads[i];
		uint32_t start = (uint32_t)(splitmix(&rng) % POOL_SIZE);
		t->first = s->ntruth;
		for (uint32_t f = 0; f < t->nfuncs; f++)
			s->truth[s->ntruth++] = (struct sim_truth){
				.vm = t->vm, .pid = t->pid, .tid = t->tid,
				.function = function_pool[(start + 5 * f) % POOL_SIZE],
			};
	}

	s->nvcpus = s->c.vms * s->c.vcpus;
	s->vcpus = calloc(s->nvcpus, sizeof(*s->vcpus));
	if (!s->vcpus)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->nvcpus; i++) {
		struct vcpu *v = &s->vcpus[i];
		v->vm = i / s->c.vcpus;
		v->vcpu = i % s->c.vcpus;
		v->rng = s->c.seed * 0x100000001b3ULL + i;
		v->threads = calloc(s->nthreads, sizeof(*v->threads));
		if (!v->threads)
			return -ENOMEM;
		/* Slices start before the window, so that its start is not
		 * special; truth counts only what falls inside. */
		v->seg_end = SIM_T0_NS - 50 * MS;
		v->owner = PROG_NONE;
	}
	for (uint32_t i = 0, n = 0; i < s->nthreads; i++) {
		struct thread *t = &s->threads[i];
		if (i && t->vm != s->threads[i - 1].vm)
			n = 0;
		struct vcpu *v = &s->vcpus[t->vm * s->c.vcpus + n++ % s->c.vcpus];
		v->threads[v->nthreads++] = i;
	}
	for (uint32_t i = 0; i < s->nvcpus; i++)
		s->vcpus[i].until_steal = steal_gap(s, &s->vcpus[i]);
	return 0;
}

/* "vm" and the number: core has no stdio to format with. */
static void name_vm(char *out, uint32_t vm)
{
	char digits[10];
	size_t n = 0;
	do {
		digits[n++] = (char)('0' + vm % 10);
		vm /= 10;
	} while (vm);
	*out++ = 'v';
	*out++ = 'm';
	while (n)
		*out++ = digits[--n];
	*out = '\0';
}

struct sim *sim__new(const struct sim_config *c)
{
	struct sim *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->c = *c;
	double f = c->steal_pct / 100.0;
	s->mean_gap_ns = f > 0 ? (1 - f) * 4.0 * MS / f : 0;
	s->switch_steal_p = f;
	s->nsamples = c->duration_ms * MS / c->interval_ns;
	s->window_end = SIM_T0_NS + c->duration_ms * MS;
	s->vm_names = calloc(c->vms, sizeof(*s->vm_names));
	if (!s->vm_names || build(s)) {
		sim__free(s);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t vm = 0; vm < c->vms; vm++)
		name_vm(s->vm_names[vm], vm);
	return s;
}

void sim__free(struct sim *s)
{
	if (!s)
		return;
	if (s->vcpus)
		for (uint32_t i = 0; i < s->nvcpus; i++)
			free(s->vcpus[i].threads);
	free(s->vcpus);
	free(s->threads);
	free(s->truth);
	free(s->vm_names);
	free(s);
}

/* The part of [a, b) inside the simulated window. */
static uint64_t in_window(const struct sim *s, uint64_t a, uint64_t b)
{
	if (a < SIM_T0_NS)
		a = SIM_T0_NS;
	if (b > s->window_end)
		b = s->window_end;
	return b > a ? b - a : 0;
}

static void emit(struct sim *s, struct vcpu *v, enum seg_kind kind,
		 uint32_t owner, uint64_t len, bool at_switch)
{
	v->seg_start = v->seg_end;
	v->seg_end += len;
	v->kind = kind;
	v->owner = kind == SEG_RUN ? owner : PROG_NONE;
	uint64_t w = in_window(s, v->seg_start, v->seg_end);
	switch (kind) {
	case SEG_RUN:
		s->truth[owner].cpu_ns += w;
		s->totals.run_ns += w;
		break;
	case SEG_IDLE:
		s->totals.idle_ns += w;
		break;
	case SEG_STEAL:
		if (owner != PROG_NONE) {
			s->truth[owner].steal_ns += w;
			s->totals.held_steal_ns += w;
		} else if (at_switch) {
			s->totals.switch_steal_ns += w;
		} else {
			s->totals.idle_steal_ns += w;
		}
		break;
	}
}

/* Chooses what the vCPU does after a slice or idle period ends. */
static void next_activity(struct sim *s, struct vcpu *v)
{
	if (v->started && uniform(&v->rng) < s->switch_steal_p) {
		/* The hypervisor takes the vCPU in the middle of a switch. */
		emit(s, v, SEG_STEAL, PROG_NONE, burst_len(v), true);
	}
	v->started = true;
	if (!v->nthreads || uniform(&v->rng) < 0.25) {
		v->idle_left = between(&v->rng, MS / 2, 20 * MS);
		return;
	}
	v->thread = v->threads[splitmix(&v->rng) % v->nthreads];
	v->slice_left = between(&v->rng, 1 * MS, 30 * MS);
	v->func_left = 0;
}

static void next_segment(struct sim *s, struct vcpu *v)
{
	if (v->steal_due) {
		v->steal_due = false;
		emit(s, v, SEG_STEAL, v->steal_owner, burst_len(v), false);
		v->until_steal = steal_gap(s, v);
		return;
	}
	if (!v->slice_left && !v->idle_left) {
		uint64_t before = v->seg_end;
		next_activity(s, v);
		if (v->seg_end != before)
			return;		/* a switch steal came first */
	}
	bool run = v->slice_left > 0;
	if (run && !v->func_left) {
		const struct thread *t = &s->threads[v->thread];
		v->prog = t->first + (uint32_t)(splitmix(&v->rng) % t->nfuncs);
		v->func_left = between(&v->rng, 3 * MS / 10, 8 * MS);
	}
	uint64_t len = run ? (v->func_left < v->slice_left ? v->func_left
							     : v->slice_left)
			   : v->idle_left;
	if (v->until_steal <= len) {
		len = v->until_steal;
		v->steal_due = true;
		v->steal_owner = run ? v->prog : PROG_NONE;
	}
	v->until_steal -= len;
	if (run) {
		v->func_left -= len;
		v->slice_left -= len;
	} else {
		v->idle_left -= len;
	}
	if (len)
		emit(s, v, run ? SEG_RUN : SEG_IDLE, v->prog, len, false);
	else
		next_segment(s, v);
}

bool sim__next(struct sim *s, struct sim_sample *out)
{
	if (s->k >= s->nsamples)
		return false;
	struct vcpu *v = &s->vcpus[s->next_vcpu];
	uint64_t t = SIM_T0_NS + s->k * s->c.interval_ns;
	if (s->c.jitter_ns)
		t = t - s->c.jitter_ns + between(&v->rng, 0, 2 * s->c.jitter_ns + 1);
	while (v->seg_end <= t)
		next_segment(s, v);

	const struct sim_truth *p = v->owner != PROG_NONE ? &s->truth[v->owner]
							  : NULL;
	*out = (struct sim_sample){
		.vm = v->vm,
		.vcpu = v->vcpu,
		.time_ns = t,
		.state = v->kind == SEG_RUN ? SAMPLE_RUN :
			 v->kind == SEG_IDLE ? SAMPLE_IDLE : SAMPLE_STEAL,
		.pid = p ? p->pid : 0,
		.tid = p ? p->tid : 0,
		.function = p ? p->function : NULL,
	};

	if (++s->next_vcpu == s->nvcpus) {
		s->next_vcpu = 0;
		if (++s->k == s->nsamples) {
			/* Let every vCPU reach the window's end, so the truth
			 * covers all of it. */
			for (uint32_t i = 0; i < s->nvcpus; i++)
				while (s->vcpus[i].seg_end < s->window_end)
					next_segment(s, &s->vcpus[i]);
		}
	}
	return true;
}

const char *sim__vm_name(const struct sim *s, uint32_t vm)
{
	return s->vm_names[vm];
}

const struct sim_truth *sim__truth(const struct sim *s, uint32_t *count)
{
	*count = s->ntruth;
	return s->truth;
}

const struct sim_totals *sim__totals(const struct sim *s)
{
	return &s->totals;
}
