/*
 * sched_clock: loads the BPF collector (sched_clock.bpf.c, embedded as a
 * bpftool skeleton), finds out from the kernel's BTF what it can read
 * (the steal clock, sched_info, whether run time already excludes
 * steal), and reads the maps when asked. sched_clock.h says what each
 * figure is.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "sched_clock.h"
#include "sched_clock_abi.h"
#include "sched_clock.skel.h"
#include "../collect/procfs.h"
#include "../core/banned.h"

struct sched_clock {
	struct sched_clock_bpf *skel;
	struct ring_buffer *ring;
	uint32_t ncpus;
	bool have_steal_var;	/* steal_time in the kernel's BTF */
	uint64_t steal_off, rq_off, cpu_number_off;	/* in .data..percpu */
	bool events_wait;
	char steal_source[128];
	struct sched_clock_status status;
	sched_clock_stint_fn fn;	/* during sched_clock__poll_stints */
	void *fn_ctx;
};

/* libbpf's own messages: the last warning is kept to say why a load
 * failed, none is printed (only src/cli prints). */
static char libbpf_last[256];

static int keep_libbpf_message(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	char line[sizeof(libbpf_last)];
	vsnprintf(line, sizeof(line), fmt, ap);
	size_t n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = 0;
	if (n)
		memcpy(libbpf_last, line, n + 1);
	return 0;
}

/* Whether struct NAME in btf has a member MEMBER (one level). */
static bool btf_has_member(const struct btf *btf, const char *name, const char *member)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);
	if (id < 0)
		return false;
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m = btf_members(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return true;
	return false;
}

/* The offsets in .data..percpu of the variables the programs read, by
 * the section's entries in BTF; false when one is not there. */
static bool percpu_offsets(const struct btf *btf, uint64_t *steal, uint64_t *rq,
			   uint64_t *cpu_number)
{
	int id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	if (id < 0)
		return false;
	const struct btf_type *sec = btf__type_by_id(btf, id);
	const struct btf_var_secinfo *v = btf_var_secinfos(sec);
	int found = 0;
	for (unsigned i = 0; i < btf_vlen(sec); i++, v++) {
		const struct btf_type *var = btf__type_by_id(btf, v->type);
		const char *name = var ? btf__name_by_offset(btf, var->name_off) : "";
		uint64_t *to = !strcmp(name, "steal_time") ? steal : !strcmp(name, "runqueues") ? rq :
			       !strcmp(name, "cpu_number") ? cpu_number : NULL;
		if (to) {
			*to = v->offset;
			found++;
		}
	}
	return found == 3;
}

/* "no-steal-acc" on the kernel's command line turns steal accounting off
 * in run time even where the kernel was built with it. */
static bool cmdline_has(const char *word)
{
	size_t n;
	char *c = procfs_read("/", "proc/cmdline", &n);
	bool yes = false;
	for (char *p = c; p && (p = strstr(p, word)); p++)
		if ((p == c || p[-1] == ' ') && (p[strlen(word)] == ' ' || p[strlen(word)] == '\n' ||
						 !p[strlen(word)]))
			yes = true;
	free(c);
	return yes;
}

/* What the running kernel's BTF holds, or -errno with why said. */
static int probe_btf(struct sched_clock *sc, bool *sched_info, bool *paravirt_acct,
		     char *why, size_t whylen)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(why, whylen, "the kernel has no BTF (/sys/kernel/btf/vmlinux: %s)",
			 strerror(errno));
		return -ENOENT;
	}
	struct btf *btf = btf__load_vmlinux_btf();
	if (!btf) {
		int err = -errno;
		snprintf(why, whylen, "cannot read the kernel's BTF: %s", strerror(-err));
		return err;
	}
	sc->have_steal_var = percpu_offsets(btf, &sc->steal_off, &sc->rq_off, &sc->cpu_number_off) &&
			     btf_has_member(btf, "cfs_rq", "rq");
	*sched_info = btf_has_member(btf, "task_struct", "sched_info");
	*paravirt_acct = btf_has_member(btf, "rq", "prev_steal_time_rq");
	btf__free(btf);
	return 0;
}

/* Runs the sampler: every CPU's steal clock into the cpus map. */
static int sample(struct sched_clock *sc)
{
	int fd = bpf_program__fd(sc->skel->progs.sample);
	for (uint32_t cpu = 0; cpu < sc->ncpus; cpu++) {
		uint64_t args[1] = { cpu };
		LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = args, .ctx_size_in = sizeof(args));
		if (bpf_prog_test_run_opts(fd, &run))
			return -errno;
	}
	return 0;
}

static int read_cpu(struct sched_clock *sc, uint32_t cpu, struct sc_cpu *out)
{
	return bpf_map_lookup_elem(bpf_map__fd(sc->skel->maps.cpus), &cpu, out) ? -errno : 0;
}

/* The steal clock is known where the kernel has it and the host writes
 * it (a version other than 0 on some CPU). Each CPU finds its run queue
 * at its first switch: a busy machine's CPUs all switch within a tick,
 * an idle one's within a few; a second is waited for at most. */
static void decide_steal(struct sched_clock *sc)
{
	bool written = false;
	struct sc_cpu c;
	for (int tries = 0; sc->have_steal_var && !written && tries < 100; tries++) {
		if (tries) {
			struct timespec ts = { 0, 10000000 };
			nanosleep(&ts, NULL);
		}
		if (sample(sc))
			break;
		for (uint32_t i = 0; i < sc->ncpus; i++)
			if (!read_cpu(sc, i, &c) && c.version_now)
				written = true;
	}
	sc->status.steal_known = written;
	sc->skel->bss->steal_live = written;	/* switches read it from now */
	snprintf(sc->steal_source, sizeof(sc->steal_source), "%s",
		 written ? "kvm-steal-clock" :
		 sc->skel->bss->counters.layout_bad ?
		 "unknown (the per-CPU variables are not where BTF says)" :
		 sc->have_steal_var ? "unknown (the host does not write the KVM steal clock)" :
		 "unknown (no KVM steal clock in this kernel)");
	sc->status.steal_source = sc->steal_source;
}

static int on_stint(void *ctx, void *data, size_t size)
{
	struct sched_clock *sc = ctx;
	const struct sc_stint *r = data;
	if (size < sizeof(*r))
		return 0;
	struct sched_clock_stint s = {
		.tid = r->tid, .pid = r->pid, .cpu = r->cpu, .exited = r->flags & SC_EXITED,
		.start_ns = r->start_ns, .end_ns = r->end_ns,
		.steal_ns = sc->status.steal_known ? r->steal_ns : 0,
		.runtime_ns = r->runtime_ns,
	};
	return sc->fn(sc->fn_ctx, &s);
}

/* Sizes and switches set before the load. */
static int configure(struct sched_clock *sc, const struct sched_clock_opts *o, bool events)
{
	struct sched_clock_bpf *s = sc->skel;
	uint32_t ring = o->stints ? (o->ring_bytes ? o->ring_bytes : 4u << 20)
				  : (uint32_t)sysconf(_SC_PAGESIZE);
	if (bpf_map__set_max_entries(s->maps.threads, o->max_threads ? o->max_threads : 16384) ||
	    bpf_map__set_max_entries(s->maps.cpus, sc->ncpus) ||
	    bpf_map__set_max_entries(s->maps.stints, ring))
		return -errno;
	s->rodata->want_stints = o->stints;
	s->rodata->wait_from_events = events;
	if (sc->have_steal_var) {
		s->rodata->steal_off = sc->steal_off;
		s->rodata->rq_off = sc->rq_off;
		s->rodata->cpu_number_off = sc->cpu_number_off;
	}
	bpf_program__set_autoattach(s->progs.sample, false);
	if (!events) {	/* the wakeups are not needed: cheaper without */
		bpf_program__set_autoload(s->progs.on_wakeup, false);
		bpf_program__set_autoload(s->progs.on_wakeup_new, false);
	}
	return 0;
}

static int load_failed(int err, const char *what, char *why, size_t whylen)
{
	if (err == -EPERM || err == -EACCES)
		snprintf(why, whylen, "not allowed to load BPF programs (needs CAP_BPF and "
			 "CAP_PERFMON, or root)");
	else
		snprintf(why, whylen, "cannot %s the BPF programs: %s%s%s", what, strerror(-err),
			 *libbpf_last ? ": " : "", libbpf_last);
	return err;
}

struct sched_clock *sched_clock__new(const struct sched_clock_opts *o, char *why, size_t whylen)
{
	static const struct sched_clock_opts none;
	bool sched_info = false, paravirt = false;
	int err = -ENOMEM;
	if (!o)
		o = &none;
	if (!getenv("CPULEDGER_LIBBPF_DEBUG")) libbpf_set_print(keep_libbpf_message);
	libbpf_last[0] = 0;
	snprintf(why, whylen, "out of memory");
	struct sched_clock *sc = calloc(1, sizeof(*sc));
	if (!sc)
		goto err_out;
	int n = libbpf_num_possible_cpus();
	if (n <= 0) {
		err = n < 0 ? n : -EINVAL;
		snprintf(why, whylen, "cannot count the CPUs: %s", strerror(-err));
		goto err_out;
	}
	sc->ncpus = (uint32_t)n;
	err = probe_btf(sc, &sched_info, &paravirt, why, whylen);
	if (err)
		goto err_out;
	sc->events_wait = o->wait_from_events || !sched_info;
	sc->skel = sched_clock_bpf__open();
	if (!sc->skel) {
		err = load_failed(-errno, "open", why, whylen);
		goto err_out;
	}
	err = configure(sc, o, sc->events_wait);
	if (err) {
		snprintf(why, whylen, "cannot size the BPF maps: %s", strerror(-err));
		goto err_out;
	}
	err = sched_clock_bpf__load(sc->skel);
	if (err) {
		err = load_failed(err, "load", why, whylen);
		goto err_out;
	}
	err = sched_clock_bpf__attach(sc->skel);
	if (err) {
		err = load_failed(err, "attach", why, whylen);
		goto err_out;
	}
	if (o->stints) {
		sc->ring = ring_buffer__new(bpf_map__fd(sc->skel->maps.stints), on_stint, sc, NULL);
		if (!sc->ring) {
			err = -errno;
			snprintf(why, whylen, "cannot map the stints' ring buffer: %s", strerror(-err));
			goto err_out;
		}
	}
	decide_steal(sc);
	sc->status.runtime_excludes_steal = paravirt && sc->status.steal_known &&
					    !cmdline_has("no-steal-acc");
	sc->status.wait_source = sc->events_wait ? "events" : "schedstat-run-delay";
	sc->status.irq_known = false;
	why[0] = 0;
	return sc;
err_out:
	sched_clock__free(sc);
	errno = -err;
	return NULL;
}

uint32_t sched_clock__ncpus(const struct sched_clock *sc)
{
	return sc->ncpus;
}

static void thread_of(const struct sched_clock *sc, uint32_t tid, const struct sc_thread *v,
		      struct sched_clock_thread *t)
{
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = v->pid;
	t->flags = (v->flags & SC_EXITED ? SCHED_CLOCK_EXITED : 0) |
		   (v->flags & SC_PARTIAL ? SCHED_CLOCK_PARTIAL : 0);
	memcpy(t->comm, v->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = 0;
	t->on_ns = v->on_ns;
	t->stints = v->stints;
	t->runtime_ns = v->rt_last - v->rt_base;
	t->steal_ns = sc->status.steal_known ? v->steal_ns : 0;
	if (sc->status.runtime_excludes_steal)
		t->cpu_ns = t->runtime_ns;
	else
		t->cpu_ns = t->runtime_ns > t->steal_ns ? t->runtime_ns - t->steal_ns : 0;
	t->wait_ns = sc->events_wait ? v->wait_ns : v->delay_last - v->delay_base;
}

static int read_cpus(struct sched_clock *sc, struct sched_clock_cpu *cpus)
{
	int err = sc->status.steal_known ? sample(sc) : 0;
	for (uint32_t i = 0; !err && i < sc->ncpus; i++) {
		struct sc_cpu c;
		err = read_cpu(sc, i, &c);
		if (err)
			break;
		cpus[i].steal_clock_ns = sc->status.steal_known ? c.steal_now : 0;
		cpus[i].idle_ns = c.idle_ns;
		cpus[i].idle_steal_ns = sc->status.steal_known ? c.idle_steal_ns : 0;
	}
	return err;
}

/* Every entry of the threads map; exited ones deleted when forget. */
static int read_threads(struct sched_clock *sc, bool forget, struct sched_clock_thread **out,
			size_t *n)
{
	int fd = bpf_map__fd(sc->skel->maps.threads);
	size_t cap = 0, len = 0;
	struct sched_clock_thread *v = NULL;
	uint32_t key, next;
	uint32_t *prev = NULL;
	int err = 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		struct sc_thread th;
		if (bpf_map_lookup_elem(fd, &key, &th))
			continue;	/* deleted meanwhile */
		if (len == cap) {
			size_t ncap = cap ? 2 * cap : 256;
			struct sched_clock_thread *nv = realloc(v, ncap * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				goto out_free;
			}
			v = nv;
			cap = ncap;
		}
		thread_of(sc, key, &th, &v[len++]);
	}
	if (forget)	/* after the walk: deleting during it would restart it */
		for (size_t i = 0; i < len; i++)
			if (v[i].flags & SCHED_CLOCK_EXITED)
				bpf_map_delete_elem(fd, &v[i].tid);
	*out = v;
	*n = len;
	return 0;
out_free:
	free(v);
	return err;
}

/* The switches seen, summed over the CPUs (each counts its own). */
static void count_switches(struct sched_clock *sc)
{
	uint64_t n = 0;
	struct sc_cpu c;
	for (uint32_t i = 0; i < sc->ncpus; i++)
		if (!read_cpu(sc, i, &c))
			n += c.switches;
	sc->status.switches = n;
}

int sched_clock__read(struct sched_clock *sc, bool forget, struct sched_clock_cpu *cpus,
		      struct sched_clock_thread **threads, size_t *n)
{
	*threads = NULL;
	*n = 0;
	count_switches(sc);
	int err = cpus ? read_cpus(sc, cpus) : 0;
	if (!err)
		err = read_threads(sc, forget, threads, n);
	const struct sc_counters *c = &sc->skel->bss->counters;
	sc->status.map_full = c->map_full;
	sc->status.ring_lost = c->ring_lost;
	sc->status.torn_reads = c->torn_reads;
	sc->status.unseen = c->unseen;
	sc->status.reused = c->reused;
	return err;
}

int sched_clock__poll_stints(struct sched_clock *sc, int timeout_ms, sched_clock_stint_fn fn,
			     void *ctx)
{
	if (!sc->ring)
		return -EINVAL;
	sc->fn = fn;
	sc->fn_ctx = ctx;
	int r = ring_buffer__poll(sc->ring, timeout_ms);
	sc->fn = NULL;
	return r;
}

const struct sched_clock_status *sched_clock__status(const struct sched_clock *sc)
{
	return &sc->status;
}

void sched_clock__free(struct sched_clock *sc)
{
	if (!sc)
		return;
	ring_buffer__free(sc->ring);
	sched_clock_bpf__destroy(sc->skel);
	free(sc);
}
