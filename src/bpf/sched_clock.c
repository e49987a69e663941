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
#include "sched_flight.h"
#include "sched_forget.h"
#include "../collect/clock.h"
#include "../collect/procfs.h"
#include "../core/sched_delta.h"
#include "../core/banned.h"

struct sched_clock {
	struct sched_clock_bpf *skel;
	struct ring_buffer *ring;
	uint32_t ncpus;
	bool have_steal_var;	/* steal_time in the kernel's BTF */
	uint64_t steal_off, rq_off, cpu_number_off;	/* in .data..percpu */
	uint64_t cpustat_off, irq_off;	/* the same, 0: not there */
	bool have_base;		/* runqueues, cpu_number, cfs_rq.rq there */
	bool events_wait;
	enum sched_clock_steal_from steal_from;
	char steal_source[128], irq_source[128];
	struct sched_delta deltas;	/* the threads' totals at the last
					 * collection */
	struct sched_clock_cpu *cpus_then;	/* the CPUs' then */
	uint64_t collected_ns;
	struct sched_clock_delta *out;	/* the last collection's */
	struct sched_clock_cpu_delta *out_cpus;
	struct sched_clock_status status;
	/* per CPU: the stint in progress at the last read, and the task
	 * running at the load with its run time then (sched_flight.h) */
	struct sched_flight *flight;
	struct sched_flight_load *load;
	sched_clock_stint_fn fn;	/* during sched_clock__poll_stints */
	void *fn_ctx;
	/* the maps as last read, reused from read to read: every CPU's
	 * entry, and the threads' keys and values (kv_cap of each) */
	struct sc_cpu *cpu_now;		/* ncpus + 1 of them, and their keys */
	uint32_t *cpu_keys;
	uint32_t *keys;
	struct sc_thread *vals;
	size_t kv_cap;
	bool batch;		/* batched lookups (BPF_MAP_LOOKUP_BATCH) */
	bool no_take;		/* the kernel cannot lookup-and-delete a
				 * hash entry (before 5.14): delete by id */
	bool fake_einval;	/* (tests) the first answers EINVAL */
	char map_reads[96];	/* status.map_reads */
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

/* The byte offset of MEMBER in struct NAME, or -1. */
static long btf_member_offset(const struct btf *btf, const char *name, const char *member)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);
	if (id < 0)
		return -1;
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m = btf_members(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return (long)(btf_member_bit_offset(t, i) / 8);
	return -1;
}

static bool btf_has_member(const struct btf *btf, const char *name, const char *member)
{
	return btf_member_offset(btf, name, member) >= 0;
}

/* The value of enumerator NAME of enum ENUM, or -1. */
static long btf_enum_value(const struct btf *btf, const char *enum_name, const char *name)
{
	int id = btf__find_by_name_kind(btf, enum_name, BTF_KIND_ENUM);
	if (id < 0)
		return -1;
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_enum *e = btf_enum(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, e++)
		if (!strcmp(btf__name_by_offset(btf, e->name_off), name))
			return e->val;
	return -1;
}

/* The offset in .data..percpu of each of n variables (names[i] into
 * offs[i], left as it was when absent), by the section's entries in BTF.
 * How many were found. */
static int percpu_offsets(const struct btf *btf, const char *const *names, uint64_t *offs,
			  int n)
{
	int id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	if (id < 0)
		return 0;
	const struct btf_type *sec = btf__type_by_id(btf, id);
	const struct btf_var_secinfo *v = btf_var_secinfos(sec);
	int found = 0;
	for (unsigned i = 0; i < btf_vlen(sec); i++, v++) {
		const struct btf_type *var = btf__type_by_id(btf, v->type);
		const char *name = var ? btf__name_by_offset(btf, var->name_off) : "";
		for (int k = 0; k < n; k++)
			if (!strcmp(name, names[k])) {
				offs[k] = v->offset;
				found++;
			}
	}
	return found;
}

/* The kernel's per-CPU counters a switch reads besides the steal clock:
 * kernel_cpustat's steal (CPUTIME_STEAL, or the enumerator
 * CPULEDGER_BPF_CPUSTAT_FIELD names: a test reads a field that grows on
 * any machine through the same path) and cpu_irqtime's total. */
static void percpu_counters(struct sched_clock *sc, const struct btf *btf)
{
	static const char *const names[] = { "kernel_cpustat", "cpu_irqtime" };
	uint64_t offs[2] = { UINT64_MAX, UINT64_MAX };
	percpu_offsets(btf, names, offs, 2);
	const char *field = getenv("CPULEDGER_BPF_CPUSTAT_FIELD");
	long idx = btf_enum_value(btf, "cpu_usage_stat", field ? field : "CPUTIME_STEAL");
	long arr = btf_member_offset(btf, "kernel_cpustat", "cpustat");
	if (offs[0] != UINT64_MAX && idx >= 0 && arr >= 0)
		sc->cpustat_off = offs[0] + (uint64_t)arr + 8 * (uint64_t)idx;
	long total = btf_member_offset(btf, "irqtime", "total");
	if (offs[1] != UINT64_MAX && total >= 0)
		sc->irq_off = offs[1] + (uint64_t)total;
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
	static const char *const names[] = { "runqueues", "cpu_number", "steal_time" };
	uint64_t offs[3] = { UINT64_MAX, UINT64_MAX, UINT64_MAX };
	percpu_offsets(btf, names, offs, 3);
	sc->have_base = offs[0] != UINT64_MAX && offs[1] != UINT64_MAX &&
			btf_has_member(btf, "cfs_rq", "rq");
	sc->rq_off = offs[0];
	sc->cpu_number_off = offs[1];
	sc->steal_off = offs[2];
	sc->have_steal_var = sc->have_base && offs[2] != UINT64_MAX;
	if (sc->have_base)
		percpu_counters(sc, btf);
	*sched_info = btf_has_member(btf, "task_struct", "sched_info");
	*paravirt_acct = btf_has_member(btf, "rq", "prev_steal_time_rq");
	btf__free(btf);
	return 0;
}

/* Runs the sampler: every CPU's steal clock into the cpus map, and the
 * task running on each, where it can run there (an offline CPU, or a
 * kernel before 5.10, cannot: then not). */
static int sample(struct sched_clock *sc)
{
	int fd = bpf_program__fd(sc->skel->progs.sample);
	for (uint32_t cpu = 0; cpu < sc->ncpus; cpu++) {
		uint64_t args[2] = { cpu, 1 };
		LIBBPF_OPTS(bpf_test_run_opts, there, .ctx_in = args, .ctx_size_in = sizeof(args),
			    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);
		if (!bpf_prog_test_run_opts(fd, &there))
			continue;
		args[1] = 0;
		LIBBPF_OPTS(bpf_test_run_opts, here, .ctx_in = args, .ctx_size_in = sizeof(args));
		if (bpf_prog_test_run_opts(fd, &here))
			return -errno;
	}
	return 0;
}

static int read_cpu(struct sched_clock *sc, uint32_t cpu, struct sc_cpu *out)
{
	return bpf_map_lookup_elem(bpf_map__fd(sc->skel->maps.cpus), &cpu, out) ? -errno : 0;
}

/*
 * Reading the maps whole. Entry by entry costs two system calls an
 * entry (the next key, then its value): 540 for 270 threads. A batched
 * lookup (BPF_MAP_LOOKUP_BATCH, Linux 5.6, hash and array maps) copies
 * as many entries as the buffers hold in one. Where the kernel refuses
 * it (EINVAL: a command it does not know; ENOTSUP: a map without it),
 * the collector reads entry by entry from then on, and status.map_reads
 * says so. CPULEDGER_BPF_BATCH=off starts there; =einval has the first
 * batched lookup answer EINVAL as such a kernel would (live_bpf,
 * bench/bpf_read.sh).
 */
static int lookup_batch(struct sched_clock *sc, int fd, void *in, void *out, void *keys,
			void *vals, uint32_t *count)
{
	if (sc->fake_einval) {
		sc->fake_einval = false;
		*count = 0;
		return -EINVAL;
	}
	return bpf_map_lookup_batch(fd, in, out, keys, vals, count, NULL) ? -errno : 0;
}

static void batch_refused(struct sched_clock *sc, int err)
{
	sc->batch = false;
	snprintf(sc->map_reads, sizeof(sc->map_reads), "entry by entry (batched lookups: %s)",
		 strerror(-err));
	sc->status.map_reads = sc->map_reads;
}

/* Every entry of map fd into keys and vals (ksz and vsz bytes each, cap
 * of them), batched: how many in *n. 0; -EAGAIN: refused, read entry by
 * entry; -ENOSPC: more than cap (or a hash bucket more than the room
 * left: the caller grows and reads again); or -errno. */
static int batch_all(struct sched_clock *sc, int fd, void *keys, size_t ksz, void *vals,
		     size_t vsz, size_t cap, size_t *n)
{
	uint64_t token = 0;	/* the kernel's cursor: a bucket (hash), a key (array) */
	size_t len = 0;
	for (bool first = true;; first = false) {
		uint32_t count = (uint32_t)(cap - len);
		if (!count)
			return -ENOSPC;
		int err = lookup_batch(sc, fd, first ? NULL : &token, &token,
				       (char *)keys + len * ksz, (char *)vals + len * vsz, &count);
		if (first && (err == -EINVAL || err == -ENOTSUP)) {
			batch_refused(sc, err);
			return -EAGAIN;
		}
		if (err && err != -ENOENT)
			return err;
		len += count;
		if (err)	/* ENOENT: the end */
			break;
	}
	*n = len;
	return 0;
}

/* Every CPU's entry into sc->cpu_now. */
static int read_cpus_now(struct sched_clock *sc)
{
	size_t n = 0;
	/* one more than the CPUs: the call that finds the end */
	int err = !sc->batch ? -EAGAIN :
		  batch_all(sc, bpf_map__fd(sc->skel->maps.cpus), sc->cpu_keys,
			    sizeof(*sc->cpu_keys), sc->cpu_now, sizeof(*sc->cpu_now), sc->ncpus + 1, &n);
	if (!err) {
		for (uint32_t i = 0; i < sc->ncpus; i++)
			if (n != sc->ncpus || sc->cpu_keys[i] != i)
				return -EIO;	/* an array's keys come in order */
		return 0;
	}
	if (err != -EAGAIN)
		return err;
	err = 0;
	for (uint32_t i = 0; i < sc->ncpus && !err; i++)
		err = read_cpu(sc, i, &sc->cpu_now[i]);
	return err;
}

/* Task tid's run time now (schedstat brings a running task's up to date),
 * or 0: gone, or no schedstat; its run-queue delay into *delay_ns. */
static uint64_t run_time_now(uint32_t tid, uint64_t *delay_ns)
{
	unsigned long long run = 0, delay = 0;
	if (procfs_schedstat("/", (pid_t)tid, (pid_t)tid, &run, &delay))
		run = 0;
	*delay_ns = delay;
	return run;
}

/* Once the programs are attached: the task running on each CPU at the
 * load, and its run time then: its first stint counts from there. (The
 * sampler's first run also notes the attach time, attached_ns: a task
 * born since counts from its birth, sched_flight.h.) */
static void load_baseline(struct sched_clock *sc)
{
	struct sc_cpu c;
	if (sample(sc))
		return;
	for (uint32_t i = 0; i < sc->ncpus; i++)
		if (!read_cpu(sc, i, &c) && c.curr_now) {
			uint64_t delay;
			sc->load[i].rt = run_time_now(c.curr_now, &delay);
			sc->load[i].tid = sc->load[i].rt ? c.curr_now : 0;
		}
}

/* The stint in progress on each CPU as sampled and read_cpus_now found
 * it: its task's run time now, its steal by the steal clock just sampled;
 * none where the CPU switched since its sample (the entries, read next,
 * hold that stint). */
static void in_flight(struct sched_clock *sc)
{
	uint32_t mode = sc->skel->bss->steal_mode;
	for (uint32_t i = 0; i < sc->ncpus; i++) {
		const struct sc_cpu *c = &sc->cpu_now[i];
		struct sc_cpu again;
		uint64_t delay = 0, run = c->curr_now ? run_time_now(c->curr_now, &delay) : 0;
		uint64_t steal = mode == SC_STEAL_KVM ? c->steal_now :
				 mode == SC_STEAL_CPUSTAT ? c->cpustat_now : 0;
		if (read_cpu(sc, i, &again) || again.switches != c->switches)
			run = 0;
		sched_flight__of(&sc->flight[i], c, &sc->load[i], sc->skel->bss->attached_ns, run,
				 delay, steal);
	}
	sched_flight__one_each(sc->flight, sc->ncpus);
}

/* Whether /proc/cpuinfo's flags (x86) say a hypervisor: 1 yes, 0 no,
 * -1 cannot tell (no flags line: another architecture). */
static int cpuinfo_hypervisor(void)
{
	size_t n;
	char *c = procfs_read("/", "proc/cpuinfo", &n);
	char *flags = c ? strstr(c, "\nflags") : NULL;
	int yes = -1;
	if (flags) {
		char *eol = strchr(flags + 1, '\n');
		if (eol)
			*eol = 0;
		yes = strstr(flags, " hypervisor") != NULL;
	}
	free(c);
	return yes;
}

/* What each CPU's sampler found once every CPU has found its per-CPU
 * base (at its first switch: a busy machine's CPUs all switch within a
 * tick, an idle one's within a few; a second is waited for at most). */
struct found {
	bool kvm_written;	/* some CPU's steal clock has a version */
	bool cpustat_steal;	/* some CPU's kernel_cpustat steal is > 0 */
	bool irq;		/* some CPU's IRQ time is > 0 */
	bool base;		/* every CPU's base found */
};

static struct found sample_until_based(struct sched_clock *sc)
{
	struct found f = { 0 };
	struct sc_cpu c;
	for (int tries = 0; sc->have_base && !f.base && tries < 100; tries++) {
		if (tries) {
			struct timespec ts = { 0, 10000000 };
			nanosleep(&ts, NULL);
		}
		if (sample(sc))
			break;
		f.base = true;
		for (uint32_t i = 0; i < sc->ncpus; i++) {
			if (read_cpu(sc, i, &c) || c.base == 1)
				continue;	/* offline, or not found: never */
			f.base &= c.base > 1;
			f.kvm_written |= sc->steal_off && c.version_now;
			f.cpustat_steal |= sc->cpustat_off && c.cpustat_now;
			f.irq |= sc->irq_off && c.irq_now;
		}
	}
	return f;
}

/* The steal source by what was found and asked for: SC_STEAL_* and its
 * name; unknown says why, and "present but never written" is not "none". */
static uint32_t steal_source(struct sched_clock *sc, const struct found *f)
{
	bool layout_bad = sc->skel->bss->counters.layout_bad;
	const char *name;
	uint32_t mode = SC_STEAL_NONE;
	if (f->kvm_written && sc->steal_from != SCHED_CLOCK_STEAL_CPUSTAT) {
		mode = SC_STEAL_KVM;
		name = "kvm-steal-clock";
	} else if (sc->cpustat_off && !layout_bad && (f->cpustat_steal ||
						     sc->steal_from == SCHED_CLOCK_STEAL_CPUSTAT)) {
		mode = SC_STEAL_CPUSTAT;
		name = "kernel-cpustat";
	} else if (layout_bad) {
		name = "unknown (the per-CPU variables are not where BTF says)";
	} else if (sc->have_steal_var) {
		name = "unknown (KVM steal clock present but never written; no steal in "
		       "kernel_cpustat either)";
	} else if (cpuinfo_hypervisor() == 0) {
		name = "none (no hypervisor)";
	} else {
		name = sc->cpustat_off ? "unknown (no steal clock: no KVM steal clock in this "
					 "kernel, and no steal in kernel_cpustat since boot)"
				       : "unknown (no steal clock in this kernel)";
	}
	snprintf(sc->steal_source, sizeof(sc->steal_source), "%s", name);
	return mode;
}

/* Which steal the switches read from now on, and whether IRQ time. */
static void decide_sources(struct sched_clock *sc)
{
	struct found f = sample_until_based(sc);
	uint32_t mode = steal_source(sc, &f);
	sc->skel->bss->steal_mode = mode;
	sc->status.steal_known = mode != SC_STEAL_NONE || !strncmp(sc->steal_source, "none", 4);
	sc->status.steal_per_stint = mode == SC_STEAL_KVM;
	sc->status.steal_resolution = mode == SC_STEAL_KVM ? "1 ns" :
				      mode == SC_STEAL_CPUSTAT ? "one scheduler tick" : "-";
	sc->status.steal_source = sc->steal_source;
	sc->skel->bss->irq_live = f.irq;
	sc->status.irq_known = f.irq;
	snprintf(sc->irq_source, sizeof(sc->irq_source), "%s",
		 f.irq ? "cpu-irqtime" :
		 sc->irq_off ? "unknown (IRQ time accounting is off: cpu_irqtime never grew)" :
		 "unknown (this kernel does not account IRQ time: no cpu_irqtime)");
	sc->status.irq_source = sc->irq_source;
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
	const char *late = getenv("CPULEDGER_BPF_LATE_PID");	/* (tests) */
	s->rodata->late_pid = late ? (uint32_t)strtoul(late, NULL, 10) : 0;
	const char *hide = getenv("CPULEDGER_BPF_HIDE_PID");	/* (tests) */
	s->rodata->hide_pid = hide ? (uint32_t)strtoul(hide, NULL, 10) : 0;
	s->rodata->want_stints = o->stints;
	s->rodata->wait_from_events = events;
	if (sc->have_base) {
		s->rodata->steal_off = sc->have_steal_var ? sc->steal_off : 0;
		s->rodata->rq_off = sc->rq_off;
		s->rodata->cpu_number_off = sc->cpu_number_off;
		s->rodata->cpustat_off = sc->cpustat_off;
		s->rodata->irq_off = sc->irq_off;
	}
	bpf_program__set_autoattach(s->progs.sample, false);
	if (!events) {	/* the wakeups are not needed: cheaper without */
		bpf_program__set_autoload(s->progs.on_wakeup, false);
		bpf_program__set_autoload(s->progs.on_wakeup_new, false);
	}
	return 0;
}

static int collect_begin(struct sched_clock *sc);

/* Batched map reads unless CPULEDGER_BPF_BATCH says otherwise (see
 * lookup_batch). */
static void map_reads_from_env(struct sched_clock *sc)
{
	const char *b = getenv("CPULEDGER_BPF_BATCH");
	sc->batch = !b || strcmp(b, "off");
	sc->fake_einval = b && !strcmp(b, "einval");
	snprintf(sc->map_reads, sizeof(sc->map_reads), "%s",
		 sc->batch ? "batched" : "entry by entry (CPULEDGER_BPF_BATCH=off)");
	sc->status.map_reads = sc->map_reads;
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
	sched_delta__init(&sc->deltas);
	sc->flight = calloc(sc->ncpus, sizeof(*sc->flight));
	sc->load = calloc(sc->ncpus, sizeof(*sc->load));
	sc->cpu_now = calloc(sc->ncpus + 1, sizeof(*sc->cpu_now));
	sc->cpu_keys = calloc(sc->ncpus + 1, sizeof(*sc->cpu_keys));
	if (!sc->flight || !sc->load || !sc->cpu_now || !sc->cpu_keys) {
		err = -ENOMEM;
		goto err_out;
	}
	sc->steal_from = o->steal_from;
	map_reads_from_env(sc);
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
	load_baseline(sc);
	if (o->stints) {
		sc->ring = ring_buffer__new(bpf_map__fd(sc->skel->maps.stints), on_stint, sc, NULL);
		if (!sc->ring) {
			err = -errno;
			snprintf(why, whylen, "cannot map the stints' ring buffer: %s", strerror(-err));
			goto err_out;
		}
	}
	decide_sources(sc);
	sc->status.runtime_excludes_steal = paravirt && sc->skel->bss->steal_mode != SC_STEAL_NONE &&
					    !cmdline_has("no-steal-acc");
	sc->status.wait_source = sc->events_wait ? "events" : "schedstat-run-delay";
	err = collect_begin(sc);
	if (err) {
		snprintf(why, whylen, "cannot read the collector's maps: %s", strerror(-err));
		goto err_out;
	}
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
	uint64_t rt = v->rt_last - v->rt_base, steal = v->steal_ns;
	sched_flight__credit(sc->flight, sc->load, sc->ncpus, tid, v, &rt, &steal);
	t->runtime_ns = rt;
	t->seen_runtime_ns = v->rt_seen;
	t->steal_ns = sc->status.steal_known ? steal : 0;
	if (sc->status.runtime_excludes_steal)
		t->cpu_ns = t->runtime_ns;
	else
		t->cpu_ns = t->runtime_ns > t->steal_ns ? t->runtime_ns - t->steal_ns : 0;
	t->wait_ns = sc->events_wait ? v->wait_ns : v->delay_last - v->delay_base;
	t->irq_ns = sc->status.irq_known ? v->irq_ns : 0;
	t->born_ns = v->born_ns;
}

/* The CPUs sampled and read (into sc->cpu_now), then given as cpus
 * (NULL: not wanted). */
static int read_cpus(struct sched_clock *sc, struct sched_clock_cpu *cpus)
{
	uint32_t mode = sc->skel->bss->steal_mode;
	int err = sample(sc);	/* (the running tasks too: in_flight) */
	if (!err)
		err = read_cpus_now(sc);
	for (uint32_t i = 0; cpus && !err && i < sc->ncpus; i++) {
		const struct sc_cpu c = sc->cpu_now[i];
		cpus[i].steal_clock_ns = mode == SC_STEAL_KVM ? c.steal_now :
					 mode == SC_STEAL_CPUSTAT ? c.cpustat_now : 0;
		cpus[i].idle_ns = c.idle_ns;
		cpus[i].idle_steal_ns = mode != SC_STEAL_NONE ? c.idle_steal_ns : 0;
		cpus[i].irq_ns = sc->status.irq_known ? c.irq_now : 0;
	}
	return err;
}

/* Room for twice as many thread entries, zeroed: the kernel fills them,
 * which valgrind does not know of a batched lookup (it does not model
 * the command) and would call every read of them uninitialised. */
static int grow_entries(struct sched_clock *sc)
{
	size_t old = sc->kv_cap, cap = old ? 2 * old : 1024;
	uint32_t *k = realloc(sc->keys, cap * sizeof(*k));
	if (k)
		sc->keys = k;
	struct sc_thread *v = k ? realloc(sc->vals, cap * sizeof(*v)) : NULL;
	if (!v)
		return -ENOMEM;
	memset(k + old, 0, (cap - old) * sizeof(*k));
	memset(v + old, 0, (cap - old) * sizeof(*v));
	sc->vals = v;
	sc->kv_cap = cap;
	return 0;
}

/* The threads map entry by entry: the next key, then its value. */
static int each_entry(struct sched_clock *sc, int fd, size_t *n)
{
	size_t len = 0;
	uint32_t key, next, *prev = NULL;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (len == sc->kv_cap && grow_entries(sc))
			return -ENOMEM;
		if (bpf_map_lookup_elem(fd, &key, &sc->vals[len]))
			continue;	/* deleted meanwhile */
		sc->keys[len++] = key;
	}
	*n = len;
	return 0;
}

/* Every entry of the threads map into sc->keys and sc->vals (*n). */
static int thread_entries(struct sched_clock *sc, int fd, size_t *n)
{
	for (;;) {
		int err = !sc->batch ? -EAGAIN :
			  batch_all(sc, fd, sc->keys, sizeof(*sc->keys), sc->vals,
				    sizeof(*sc->vals), sc->kv_cap, n);
		if (err == -EAGAIN)
			return each_entry(sc, fd, n);
		if (err != -ENOSPC)
			return err;
		if (grow_entries(sc))
			return -ENOMEM;
	}
}

/* The exited threads' entries out of the map (tids, n of them) by id,
 * where the kernel cannot take an entry with its value (before 5.14): a
 * new thread that took an id since the read loses its entry's first
 * figures. Batched where the kernel can. A batch stops at an entry
 * already gone (a new thread that took the id deleted it): the rest go
 * on from the next. */
static void delete_entries(struct sched_clock *sc, int fd, const uint32_t *tids, size_t n)
{
	size_t done = 0;
	while (sc->batch && done < n) {
		uint32_t count = (uint32_t)(n - done);
		if (!bpf_map_delete_batch(fd, tids + done, &count, NULL))
			return;
		if (errno != ENOENT)
			break;	/* refused: entry by entry */
		done += count + 1;
	}
	for (; done < n; done++)
		bpf_map_delete_elem(fd, &tids[done]);
}

static int take_entry(void *ctx, uint32_t tid, struct sc_thread *v)
{
	return bpf_map_lookup_and_delete_elem(*(int *)ctx, &tid, v) ? -errno : 0;
}

static int put_entry(void *ctx, uint32_t tid, const struct sc_thread *v)
{
	return bpf_map_update_elem(*(int *)ctx, &tid, v, BPF_NOEXIST) ? -errno : 0;
}

/* The n exited threads' entries (tids, as read in gone) out of the map,
 * never a new thread's that took one of the ids since the read
 * (sched_forget.h): those are added to the read's keys and vals (*len;
 * room for n more is there). */
static void forget_exited(struct sched_clock *sc, int fd, const uint32_t *tids,
			  const struct sc_thread *gone, size_t n, size_t *len)
{
	struct sched_forget_ops ops = { &fd, take_entry, put_entry };
	size_t kept = 0, done = 0;
	int err = sc->no_take ? -ENOTSUP :
		  sched_forget__exited(&ops, tids, gone, n, sc->keys + *len, sc->vals + *len,
				       &kept, &done);
	*len += kept;
	/* the kernel cannot (from then on: before 5.14 a hash map answers
	 * the kernel's own ENOTSUPP, 524, which no libc names), or another
	 * error: the rest by id, as before */
	if (err == -EINVAL || err == -ENOTSUP || err == -524)
		sc->no_take = true;
	if (err)
		delete_entries(sc, fd, tids + done, n - done);
}

/* Where a thread runs that has no entry yet (it has not switched out
 * since the load or since its first switch in: a spinner alone on its
 * CPU may not for seconds), its stint so far is in sc->flight but would
 * be counted nowhere: the read would not show the thread at all. */
static bool has_entry(const struct sched_clock *sc, size_t len, uint32_t tid)
{
	for (size_t k = 0; k < len; k++)
		if (sc->keys[k] == tid)
			return true;
	return false;
}

/* The process and name of thread tid, from /proc: 0, or -errno. */
static int task_ids(uint32_t tid, struct sc_thread *e)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "proc/%u/status", tid);
	char *st = procfs_read("/", rel, NULL);
	const char *tg = st ? strstr(st, "\nTgid:") : NULL;
	int err = tg ? 0 : -ENOENT;
	if (tg)
		e->pid = (uint32_t)strtoul(tg + 6, NULL, 10);
	free(st);
	snprintf(rel, sizeof(rel), "proc/%u/comm", tid);
	char *comm = err ? NULL : procfs_read("/", rel, NULL);
	if (comm)
		snprintf(e->comm, sizeof(e->comm), "%.*s", (int)strcspn(comm, "\n"), comm);
	free(comm);
	return err;
}

/* Each running thread without an entry gets the one its switch out
 * would make (BPF_NOEXIST: where the programs made theirs meanwhile, it
 * stays and is read), added to the read (*len). */
static int adopt_running(struct sched_clock *sc, int fd, size_t *len)
{
	for (uint32_t i = 0; i < sc->ncpus; i++) {
		const struct sched_flight *f = &sc->flight[i];
		if (!f->tid || has_entry(sc, *len, f->tid))
			continue;
		struct sc_thread e = { .flags = f->partial ? SC_PARTIAL : 0,
				       .rt_base = f->rt_base, .rt_last = f->rt_base,
				       .delay_base = f->delay_base, .delay_last = f->delay_base,
				       .born_ns = clock_mono_ns() };
		if (task_ids(f->tid, &e) || e.pid != f->pid)
			continue;	/* gone meanwhile (its id another's) */
		if (*len == sc->kv_cap && grow_entries(sc))
			return -ENOMEM;
		if (bpf_map_update_elem(fd, &f->tid, &e, BPF_NOEXIST) &&
		    (errno != EEXIST || bpf_map_lookup_elem(fd, &f->tid, &e)))
			continue;	/* the map is full, or it left already */
		sc->keys[*len] = f->tid;
		sc->vals[(*len)++] = e;
	}
	return 0;
}

/* Every entry of the threads map; exited ones deleted when forget. */
static int read_threads(struct sched_clock *sc, bool forget, struct sched_clock_thread **out,
			size_t *n)
{
	int fd = bpf_map__fd(sc->skel->maps.threads);
	size_t len = 0, gone = 0;
	int err = thread_entries(sc, fd, &len);
	if (!err)
		err = adopt_running(sc, fd, &len);
	struct sched_clock_thread *v = err || !len ? NULL : malloc(2 * len * sizeof(*v));
	if (!err && len && !v)
		err = -ENOMEM;
	if (err)
		return err;
	for (size_t i = 0; i < len; i++) {
		thread_of(sc, sc->keys[i], &sc->vals[i], &v[i]);
		if (v[i].flags & SCHED_CLOCK_EXITED) {
			sc->keys[gone] = v[i].tid;
			sc->vals[gone++] = sc->vals[i];
		}
	}
	/* after the walk: deleting during it would restart it; a new
	 * thread's entry found among the gone is read with the rest */
	size_t kept = gone;
	while (forget && !err && sc->kv_cap < 2 * gone)
		err = grow_entries(sc);
	if (!err && forget)
		forget_exited(sc, fd, sc->keys, sc->vals, gone, &kept);
	for (size_t i = gone; i < kept; i++)
		thread_of(sc, sc->keys[i], &sc->vals[i], &v[len++]);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*n = len;
	return 0;
}

/* The switches seen, summed over the CPUs (each counts its own). */
static void count_switches(struct sched_clock *sc)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < sc->ncpus; i++)
		n += sc->cpu_now[i].switches;
	sc->status.switches = n;
}

int sched_clock__read(struct sched_clock *sc, bool forget, struct sched_clock_cpu *cpus,
		      struct sched_clock_thread **threads, size_t *n)
{
	*threads = NULL;
	*n = 0;
	int err = read_cpus(sc, cpus);
	if (!err) {
		count_switches(sc);
		in_flight(sc);
	}
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

/* The CPUs' figures at the load: the first collection's start. */
static int collect_begin(struct sched_clock *sc)
{
	sc->cpus_then = calloc(sc->ncpus, sizeof(*sc->cpus_then));
	sc->out_cpus = calloc(sc->ncpus, sizeof(*sc->out_cpus));
	if (!sc->cpus_then || !sc->out_cpus)
		return -ENOMEM;
	sc->collected_ns = clock_mono_ns();
	return read_cpus(sc, sc->cpus_then);
}

/* The running totals sched_delta takes apart, in this order. */
enum { D_CPU, D_STEAL, D_WAIT, D_IRQ, D_ON, D_RUNTIME, D_STINTS, D_SEEN_RUNTIME };

/* One thread's totals into its growth; false when it did nothing and
 * neither began nor ended (left out of the collection). */
static int thread_delta(struct sched_clock *sc, const struct sched_clock_thread *t,
			struct sched_clock_delta *d, bool *keep)
{
	uint64_t cum[SCHED_DELTA_N] = { t->cpu_ns, t->steal_ns, t->wait_ns, t->irq_ns,
					t->on_ns, t->runtime_ns, t->stints, t->seen_runtime_ns };
	uint64_t g[SCHED_DELTA_N];
	bool first, exited = t->flags & SCHED_CLOCK_EXITED;
	int err = sched_delta__step(&sc->deltas, t->tid, t->born_ns, cum, exited, g, &first);
	if (err)
		return err;
	*d = (struct sched_clock_delta){
		.tid = t->tid, .pid = t->pid,
		.flags = (exited ? SCHED_CLOCK_EXITED : 0) | (first ? SCHED_CLOCK_NEW : 0),
		.cpu_ns = g[D_CPU], .steal_ns = g[D_STEAL], .wait_ns = g[D_WAIT],
		.irq_ns = g[D_IRQ], .on_ns = g[D_ON], .runtime_ns = g[D_RUNTIME],
		.stints = g[D_STINTS], .seen_runtime_ns = g[D_SEEN_RUNTIME],
	};
	memcpy(d->comm, t->comm, sizeof(d->comm));
	*keep = first || exited || g[D_RUNTIME] || g[D_WAIT] || g[D_STINTS];
	return 0;
}

/* A clock's growth from a to b: none where a was not read yet (0: the
 * sampler had not found the CPU's steal clock when the last collection
 * read it, and its first reading is the steal since boot: 13.5 s of it
 * in one collection of 0.3 s, refused as impossible by a report of the
 * recording) or where it went back. */
static uint64_t grown(uint64_t a, uint64_t b)
{
	return a && b > a ? b - a : 0;
}

static void cpu_deltas(struct sched_clock *sc, const struct sched_clock_cpu *now)
{
	for (uint32_t i = 0; i < sc->ncpus; i++) {
		const struct sched_clock_cpu *a = &sc->cpus_then[i], *b = &now[i];
		sc->out_cpus[i] = (struct sched_clock_cpu_delta){
			.steal_ns = grown(a->steal_clock_ns, b->steal_clock_ns),
			.idle_ns = b->idle_ns - a->idle_ns,
			.idle_steal_ns = b->idle_steal_ns - a->idle_steal_ns,
			.irq_ns = b->irq_ns - a->irq_ns,
		};
	}
	memcpy(sc->cpus_then, now, sc->ncpus * sizeof(*now));
}

int sched_clock__collect(struct sched_clock *sc, struct sched_clock_collection *out)
{
	struct sched_clock_thread *t = NULL;
	size_t n = 0, kept = 0;
	int err = -ENOMEM;
	struct sched_clock_cpu *now = calloc(sc->ncpus, sizeof(*now));
	if (!now)
		goto out;
	err = sched_clock__read(sc, true, now, &t, &n);
	if (err)
		goto out;
	free(sc->out);
	sc->out = n ? calloc(n, sizeof(*sc->out)) : NULL;
	err = n && !sc->out ? -ENOMEM : 0;
	sched_delta__begin(&sc->deltas);
	for (size_t i = 0; !err && i < n; i++) {
		bool keep;
		err = thread_delta(sc, &t[i], &sc->out[kept], &keep);
		kept += keep;
	}
	uint32_t vanished = sched_delta__end(&sc->deltas);
	if (err)
		goto out;
	cpu_deltas(sc, now);
	*out = (struct sched_clock_collection){
		.start_ns = sc->collected_ns, .end_ns = clock_mono_ns(),
		.threads = sc->out, .nthreads = kept, .cpus = sc->out_cpus, .ncpus = sc->ncpus,
		.vanished = vanished,
	};
	sc->collected_ns = out->end_ns;
out:
	free(now);
	free(t);
	return err;
}

void sched_clock__describe(const struct sched_clock *sc, char *buf, size_t len)
{
	const struct sched_clock_status *st = &sc->status;
	snprintf(buf, len, "steal: %s (%s, resolution %s); wait: %s (resolution 1 ns); irq: %s",
		 st->steal_source,
		 st->steal_per_stint ? "read at every switch" :
		 st->steal_resolution[0] != '-' ? "accounted at ticks, placed by the stints" :
		 "not read",
		 st->steal_resolution, st->wait_source, st->irq_source);
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
	sched_delta__release(&sc->deltas);
	free(sc->cpus_then);
	free(sc->out);
	free(sc->out_cpus);
	free(sc->flight);
	free(sc->load);
	free(sc->cpu_now);
	free(sc->cpu_keys);
	free(sc->keys);
	free(sc->vals);
	free(sc);
}
