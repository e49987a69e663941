/* recorder: see recorder.h; the file it writes is docs/recording-format.md. */
#include "recorder_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../collect/procfs.h"
#include "../core/grow.h"
#include "../format/procstat.h"
#include "../format/rec_meta.h"
#include "../core/units.h"
#include "../core/banned.h"

/* Ring pages per CPU. Root is not held to perf_event_mlock_kb, and a busy
 * machine (thousands of context switches a second, each two tracepoint
 * records) fills 512 KiB between two drains: 4 MiB as root. */
static size_t ring_pages(const struct recorder_opts *o)
{
	if (o->mmap_pages)
		return o->mmap_pages;
	size_t pages = geteuid() == 0 ? 1024 : 128;
	return o->callchain ? 2 * pages : pages;
}

/* The perf events, with the fallbacks: no tracepoints (sample gaps), and
 * unprivileged, the command's (or -p process's) own user-space samples. */
static int open_session(struct recorder *r, enum recorder_failure *fail)
{
	const struct recorder_opts *o = &r->o;
	/* the collector gives what the sched tracepoints would, at a cost
	 * that does not grow with the switches: not both */
	r->tracepoints = !o->no_tracepoints && !r->bpf && tp_formats__load(&r->tp, o->root) == 0;
	struct perf_options po = { .hz = o->hz, .callchain = o->callchain,
				   .tracepoints = r->tracepoints, .ring_pages = ring_pages(o),
				   .cgroup = true };
	int err = perf_session__open(&r->perf, &po, &r->tp);
	if (err == -EINVAL) {	/* before Linux 5.7: cgroups from /proc alone */
		po.cgroup = false;
		err = perf_session__open(&r->perf, &po, &r->tp);
	}
	if (err == -ENOENT && r->tracepoints) {
		r->tracepoints = po.tracepoints = false;	/* tracefs yes, kernel no */
		err = perf_session__open(&r->perf, &po, &r->tp);
	}
	pid_t task = o->child > 0 && !o->all && !o->npids ? o->child :
		     !o->all && !o->child && o->npids == 1 ? o->pids[0] : 0;
	if ((err == -EACCES || err == -EPERM) && task > 0) {
		/* not allowed system-wide: its own user-space samples are
		 * still ours to take; steal cannot be measured so */
		r->tracepoints = po.tracepoints = po.cgroup = false;
		po.task = task;
		err = perf_session__open(&r->perf, &po, &r->tp);
		r->st.task_only = !err;
	}
	r->st.tracepoints_missing = !r->tracepoints && !po.task && !o->no_tracepoints && !r->bpf;
	if (err) {
		*fail = err == -EACCES || err == -EPERM ? REC_FAIL_NOT_ALLOWED : REC_FAIL_PERF;
		return err;
	}
	return 0;
}

/* What reading the session's records needs (kept in META too). */
static int make_layout(struct recorder *r)
{
	for (int k = 0; k < EV_KINDS; k++)
		r->layout.sample_type[k] = perf_session__sample_type(&r->perf.opts,
								     (enum perf_event_kind)k);
	r->layout.prev_pid = (struct pd_field){ r->tp.prev_pid.offset, r->tp.prev_pid.size };
	r->layout.next_pid = (struct pd_field){ r->tp.next_pid.offset, r->tp.next_pid.size };
	r->layout.rt_pid = (struct pd_field){ r->tp.rt_pid.offset, r->tp.rt_pid.size };
	r->layout.rt_runtime = (struct pd_field){ r->tp.rt_runtime.offset, r->tp.rt_runtime.size };
	for (int i = 0; i < r->perf.ncpus; i++) {
		const struct perf_cpu *c = &r->perf.cpus[i];
		if ((uint32_t)c->cpu + 1 > r->ncpus)
			r->ncpus = (uint32_t)c->cpu + 1;
		for (int k = 0; k < EV_KINDS; k++)
			if (c->fd[k] >= 0 && pd_layout__add_id(&r->layout, c->id[k], (enum pd_event)k))
				return -ENOMEM;
	}
	pd_layout__ready(&r->layout);
	return 0;
}

static int symbolizer_lookup(void *ctx, const char *dso, uint64_t offset, struct sym_hit *out)
{
	struct sym s;
	int err = symbolizer__lookup(ctx, dso, offset, &s);
	if (!err)
		*out = (struct sym_hit){ s.name, s.start, s.end };
	return err;
}

static int symbolizer_jit(void *ctx, uint32_t pid, uint64_t addr, struct sym_hit *out,
			  const char **dso)
{
	static __thread char file[64];
	struct sym s;
	int err = symbolizer__jit(ctx, pid, addr, &s);
	if (err)
		return err;
	*out = (struct sym_hit){ s.name, s.start, s.end };
	snprintf(file, sizeof(file), "/tmp/perf-%u.map", pid);
	*dso = file;
	return 0;
}

static void read_host(struct recorder *r)
{
	gethostname(r->host, sizeof(r->host) - 1);
	char *boot = procfs_read(r->o.root, "proc/sys/kernel/random/boot_id", NULL);
	if (boot)
		snprintf(r->boot_id, sizeof(r->boot_id), "%.*s", (int)strcspn(boot, "\n"), boot);
	free(boot);
}

/* Why the last recorder__new of this thread could not load the collector
 * (the recorder is gone by then). */
static __thread char failure_why[256];

const char *recorder__failure_why(void)
{
	return failure_why;
}

/* The BPF collector, as --source asks: bpf fails without it; auto
 * falls back to perf's tracepoints, keeping why to say it. */
static int open_bpf(struct recorder *r, enum recorder_failure *fail)
{
	r->st.source_why = r->source_why;
	/* asking for sample gaps is asking for perf, unless bpf was asked */
	if (r->o.source == RECORDER_SOURCE_PERF ||
	    (r->o.source == RECORDER_SOURCE_AUTO && r->o.no_tracepoints))
		return 0;
	char why[sizeof(r->source_why) - 32];
	int err = recorder_bpf_open(r, why, sizeof(why));
	if (!err)
		return 0;
	snprintf(r->source_why, sizeof(r->source_why), "%s", why[0] ? why : strerror(-err));
	if (r->o.source == RECORDER_SOURCE_AUTO)
		return 0;
	snprintf(failure_why, sizeof(failure_why), "%s", r->source_why);
	*fail = REC_FAIL_BPF;
	return err;
}

/* Where steal comes from, for META and the command's line. */
static void name_source(struct recorder *r)
{
	if (r->bpf && r->st.task_only) {	/* the collector, yet no perf -a */
		snprintf(r->source_why, sizeof(r->source_why),
			 "perf_event_open refused system-wide");
		recorder_bpf_release(r);
	}
	r->st.source = r->bpf ? "bpf" : "perf";
	r->st.steal_source = r->st.task_only ?
		"unknown (no permission to record system-wide)" :
		r->bpf ? recorder_bpf_steal_source(r) :
		r->tracepoints ? "tracepoints" : "sample-gaps";
}

struct recorder *recorder__new(const struct recorder_opts *o, enum recorder_failure *fail)
{
	struct recorder *r = calloc(1, sizeof(*r));
	*fail = REC_FAIL_NOMEM;
	if (!r)
		return NULL;
	r->o = *o;
	strtab__init(&r->names);
	hindex__init(&r->scope.index);
	hindex__init(&r->cgid_index);
	cgstats__init(&r->cg);
	int err = open_bpf(r, fail);
	if (!err)
		err = open_session(r, fail);
	if (!err)
		err = make_layout(r);
	/* the kernel's symbols, read now, while their addresses show (a
	 * recorder under sudo gives up root later) */
	if (!err && !(r->sy = symbolizer__new(o->root)))
		err = -ENOMEM;
	if (!err) {
		symbolizer__read_kernel(r->sy);
		recorder_bounds_init(r);
	}
	struct sym_source syms = { r->sy, symbolizer_lookup, symbolizer_jit };
	if (!err && !(r->res = resolver__new(&r->names, &syms, o->rules)))
		err = -ENOMEM;
	if (!err) {
		r->unknown = resolver__unknown(r->res);
		name_source(r);
		read_host(r);
		kernel_acct__read(&r->acct);
		return r;
	}
	recorder__free(r);
	errno = -err;
	return NULL;
}

void recorder__attach(struct recorder *r, struct engine *e)
{
	r->engine = e;
}

void recorder__set_rules(struct recorder *r, const struct account_rules *rules)
{
	r->o.rules = rules;
	resolver__set_rules(r->res, rules);
}

struct strtab *recorder__names(struct recorder *r)
{
	return &r->names;
}

/* One USER_HZ tick, /proc/stat's unit, in ns. */
static uint64_t user_hz_ns(void)
{
	return NSEC_PER_SEC / (uint64_t)sysconf(_SC_CLK_TCK);
}

void recorder__config(struct recorder *r, struct engine_config *c)
{
	*c = (struct engine_config){
		.interval_ns = NSEC_PER_SEC / r->o.hz, .ncpus = r->ncpus,
		.vm = strtab__intern(&r->names, r->host, strlen(r->host)),
		.unknown_fn = r->unknown,
		.scope_all = r->o.all || (!r->o.npids && r->o.child <= 0),
		.mode = r->st.task_only ? STEAL_UNKNOWN : r->bpf ? STEAL_GIVEN :
			r->tracepoints ? STEAL_STINTS : STEAL_GAPS,
		.accounting = r->acct.accounting,
		/* the collector's steal is read, not shared out */
		.scale_to_kernel = r->acct.steal_clock > 0 && !r->bpf,
		.kernel_tick_ns = user_hz_ns(),
		/* a thread's last figures come at the read after its exit */
		.exit_grace_ns = 3 * recorder_bpf_interval(r),
		/* each CPU's steal from its steal clock (recorder_bpf.c) */
		.cpu_clocks = recorder_bpf_cpu_clocks(r),
	};
	c->keep_all = c->mode == STEAL_GAPS;
}

/* Appends "key=value\n" to a memstream. */
__attribute__((format(printf, 3, 4)))
static void meta(FILE *m, enum rec_meta_key k, const char *fmt, ...)
{
	va_list ap;
	fprintf(m, "%s=", rec_meta_key__name(k));
	va_start(ap, fmt);
	vfprintf(m, fmt, ap);
	va_end(ap);
	putc('\n', m);
}

static void meta_layout(struct recorder *r, FILE *m)
{
	static const char *const names[EV_KINDS] = { "clock", "switch", "runtime" };
	for (int k = 0; k < EV_KINDS; k++)
		fprintf(m, "%s.%s=%llu\n", rec_meta_key__name(MK_SAMPLE_TYPE), names[k],
			(unsigned long long)r->layout.sample_type[k]);
	for (int i = 0; i < r->perf.ncpus; i++) {
		const struct perf_cpu *c = &r->perf.cpus[i];
		meta(m, MK_CPU, "%d", c->cpu);
		for (int k = 0; k < EV_KINDS; k++)
			if (c->fd[k] >= 0)
				fprintf(m, "%s.%s=%llu\n", rec_meta_key__name(MK_ID), names[k],
					(unsigned long long)c->id[k]);
	}
}

static void meta_start(struct recorder *r, FILE *m)
{
	const struct recorder_opts *o = &r->o;
	struct utsname u;
	uname(&u);
	meta(m, MK_PHASE, "start");
	meta(m, MK_HOST, "%s", r->host);
	meta(m, MK_KERNEL, "%s", u.release);
	meta(m, MK_BOOT_ID, "%s", r->boot_id);
	meta(m, MK_HZ, "%u", o->hz);
	meta(m, MK_INTERVAL_NS, "%llu", (unsigned long long)(NSEC_PER_SEC / o->hz));
	meta(m, MK_CLK_TCK, "%ld", sysconf(_SC_CLK_TCK));
	meta(m, MK_CALLCHAIN, "%d", o->callchain);
	meta(m, MK_STEAL_SOURCE, "%s", r->st.steal_source);
	meta(m, MK_KERNEL_ACCOUNTING, "%s", steal_accounting__name(r->acct.accounting));
	meta(m, MK_ACCOUNTING_SOURCE, "%s", r->acct.source);
	meta(m, MK_STEAL_CLOCK, "%s", r->acct.steal_clock > 0 ? "yes" :
				      r->acct.steal_clock < 0 ? "none" : "unknown");
	if (recorder_bpf_cpu_clocks(r))
		meta(m, MK_CPU_CLOCK, "steal");	/* REC_CPUCLOCK items */
	/* -a with a command records everything, until it exits */
	meta(m, MK_SCOPE, "%s", rec_scope__name(o->all ? SCOPE_ALL : o->child > 0 ?
					      SCOPE_COMMAND : o->npids ? SCOPE_PIDS : SCOPE_ALL));
	for (int i = 0; i < o->npids; i++)
		meta(m, MK_PID, "%d", (int)o->pids[i]);
	if (o->child > 0)
		meta(m, MK_CHILD, "%d", (int)o->child);
	meta_layout(r, m);
}

static int write_meta(struct recorder *r, bool start)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m)
		return -ENOMEM;
	if (start)
		meta_start(r, m);
	else
		meta(m, MK_PHASE, "end");
	/* the end is when the events stopped, not when what they left was
	 * read: nothing after that is in the recording */
	uint64_t now = start ? clock_mono_ns() : r->st.end_ns;
	int64_t real = start ? clock_real_ns() : r->realtime_end;
	if (start) {
		r->st.start_ns = now;
		r->realtime_start = real;
	}
	meta(m, MK_TIME_NS, "%llu", (unsigned long long)now);
	meta(m, MK_REALTIME_NS, "%lld", (long long)real);
	int err = ferror(m) ? -ENOMEM : 0;
	fclose(m);
	if (!err && r->w)
		err = rec_writer__add(r->w, REC_META, text, len, NULL, 0);
	free(text);
	return err;
}

static int write_procstat(struct recorder *r, uint32_t phase)
{
	size_t len;
	char *text = procfs_read(r->o.root, "proc/stat", &len);
	if (!text)
		return -errno;
	int err = 0;
	if (!phase) {	/* kept for the engine's share of steal (sample gaps) */
		uint8_t *seen = calloc(r->ncpus ? r->ncpus : 1, 1);
		r->steal0 = calloc(r->ncpus ? r->ncpus : 1, sizeof(*r->steal0));
		if (!seen || !r->steal0 || procstat_steal(text, r->steal0, seen, r->ncpus) < 0)
			err = -ENOMEM;
		free(seen);
	}
	uint32_t pre[2] = { phase, 0 };
	if (!err && r->w)
		err = rec_writer__add(r->w, REC_PROCSTAT, pre, sizeof(pre), text, len);
	if (phase && !err) {	/* the kernel's steal as the recording ends */
		free(r->end_stat);
		r->end_stat = text;
		return 0;
	}
	free(text);
	return err;
}

int recorder__start(struct recorder *r, int out_fd)
{
	int err = 0;
	if (out_fd >= 0 && !(r->w = rec_writer__new(out_fd)))
		return -errno;
	r->last_time = calloc(r->ncpus ? r->ncpus : 1, sizeof(*r->last_time));
	if (!r->last_time)
		return -ENOMEM;
	r->scope.all = r->o.all || (!r->o.npids && r->o.child <= 0);
	for (int i = 0; i < r->o.npids && !err; i++)
		err = rscope_add(&r->scope, (uint32_t)r->o.pids[i]);
	if (!err && r->o.child > 0)
		err = rscope_add(&r->scope, (uint32_t)r->o.child);
	if (!err)
		err = write_meta(r, true);
	/* its engine judges the stints at the start as a reader of the
	 * recording will, by the same start */
	if (!err && r->engine)
		engine__set_start(r->engine, r->st.start_ns);
	if (!err && r->o.accounts && r->w)	/* after META, which readers need first */
		err = rec_writer__add(r->w, REC_ACCOUNTS, r->o.accounts,
				      strlen(r->o.accounts), NULL, 0);
	if (!err)
		err = write_procstat(r, 0);
	/* The events run from here: the recording's time begins with its
	 * META. What follows (every cgroup's counters and every task's wait,
	 * then what /proc says of each task) takes milliseconds, seconds on
	 * a machine of thousands of processes; its records wait in the rings
	 * meanwhile, rather than the recording missing that time. */
	if (!err)
		err = recorder_bpf_begin(r);
	if (!err)
		err = perf_session__enable(&r->perf);
	if (!err)
		err = recorder_cgroup_start(r);
	if (!err)
		err = recorder_snapshot(r);
	/* the metadata and the first look at the tasks reach the file at
	 * once: a recording cut short later (killed, disk full) stays
	 * readable with --salvage */
	return err ? err : recorder__flush(r);
}

int recorder__flush(struct recorder *r)
{
	if (!r->w)
		return 0;
	int err = rec_writer__flush(r->w);
	r->bytes_flushed = rec_writer__bytes(r->w);
	r->flushed_ns = clock_mono_ns();
	return err;
}

int recorder__poll(struct recorder *r, int timeout_ms)
{
	if (timeout_ms)
		perf_session__wait(&r->perf, timeout_ms);
	int err = perf_session__read(&r->perf, recorder_on_record, recorder_record_time, r);
	if (!err)
		err = recorder_round(r);
	if (!err)
		err = recorder_bpf_poll(r, false);
	/* a recorder killed later, or stopped by a full disk, keeps what it
	 * flushed: at most a second or 4 MiB is lost */
	if (!err && r->w && rec_writer__bytes(r->w) != r->bytes_flushed &&
	    (rec_writer__bytes(r->w) - r->bytes_flushed > (4u << 20) ||
	     clock_mono_ns() - r->flushed_ns > NSEC_PER_SEC))
		err = recorder__flush(r);
	return err;
}

/* The end's time, /proc/stat and the cgroups' counters, read at once
 * after the BPF collector's last read of the threads' clocks, not after
 * those are handed on: a busy group's usage counter runs on meanwhile
 * (3.9 % over its runtime in one loaded CI run, likely this). */
static int end_counters(struct recorder *r)
{
	r->st.end_ns = clock_mono_ns();
	r->realtime_end = clock_real_ns();
	int err = write_procstat(r, 1);
	return err ? err : recorder_cgroup_end(r);
}

int recorder__finish(struct recorder *r)
{
	perf_session__disable(&r->perf);
	/* the threads' last figures, read before the end's time: everything
	 * the recording holds is of before its end. /proc/stat, the cgroups'
	 * counters and the tasks' waits are read before the rings' last
	 * records, as the start's were read at the start: those take a while
	 * to read (a third of a second under ASan), and a busy group's usage
	 * counter would run on meanwhile, past the recording's end */
	int err = recorder_bpf_last(r, end_counters);
	if (!r->st.end_ns) {	/* (the collector failed: the end is now) */
		r->st.end_ns = clock_mono_ns();
		r->realtime_end = clock_real_ns();
	}
	if (!err)
		err = recorder_cgroup_end_waits(r);
	if (!err)
		err = perf_session__read(&r->perf, recorder_on_record, recorder_record_time, r);
	r->prev_round_max = UINT64_MAX - 1;	/* all of it read */
	if (!err)
		err = recorder_round(r);
	if (!err)
		err = write_meta(r, false);
	for (int i = 0; i < r->perf.ncpus && !err; i++) {
		uint32_t pre[2] = { (uint32_t)r->perf.cpus[i].cpu, 0 };
		uint64_t l = perf_session__lost(&r->perf, i);
		if (r->w)
			err = rec_writer__add(r->w, REC_LOST, pre, sizeof(pre), &l, sizeof(l));
	}
	if (!err && r->w)
		err = rec_writer__finish(r->w);
	r->finished = true;
	return err;
}

void recorder__free(struct recorder *r)
{
	if (!r)
		return;
	rec_writer__free(r->w);
	recorder_bpf_release(r);
	perf_session__release(&r->perf);
	pd_layout__release(&r->layout);
	resolver__free(r->res);
	symbolizer__free(r->sy);
	rscope_release(&r->scope);
	namepool__release(&r->pool);
	strtab__release(&r->names);
	recorder_cgroup_release(r);
	for (uint32_t i = 0; i < RECORDER_TAPS; i++)
		stacktab__release(&r->taps[i].stacks);
	free(r->steal0);
	free(r->end_stat);
	free(r->described);
	free(r->last_time);
	free(r->forget);
	free(r);
}

const struct kernel_acct *recorder__kernel_acct(const struct recorder *r)
{
	return &r->acct;
}

const struct recorder_stats *recorder__stats(const struct recorder *r)
{
	struct recorder_stats *st = (struct recorder_stats *)&r->st;
	st->lost = 0;
	for (int i = 0; i < r->perf.ncpus; i++)
		st->lost += perf_session__lost(&r->perf, i);
	st->bytes = r->w ? rec_writer__bytes(r->w) : 0;
	st->items = r->w ? rec_writer__items(r->w) : 0;
	return st;
}

uint32_t recorder__ncpus(const struct recorder *r)
{
	return r->ncpus;
}

bool recorder__cpu(const struct recorder *r, uint32_t cpu, uint64_t *kernel_steal_ns,
		   uint64_t *lost)
{
	*kernel_steal_ns = *lost = 0;
	if (cpu >= r->ncpus)
		return false;
	uint64_t *steal = calloc(r->ncpus, sizeof(*steal)), *lst = calloc(r->ncpus, sizeof(*lst));
	bool *known = calloc(r->ncpus, sizeof(*known));
	bool ok = steal && lst && known && recorder__cpus(r, steal, lst, known) == 0 &&
		  known[cpu];
	if (steal && lst) {
		*kernel_steal_ns = steal[cpu];
		*lost = lst[cpu];
	}
	free(steal);
	free(lst);
	free(known);
	return ok;
}

uint64_t recorder__lost(const struct recorder *r)
{
	uint64_t n = 0;
	for (int i = 0; i < r->perf.ncpus; i++)
		n += perf_session__lost(&r->perf, i);
	return n;
}

int recorder__settle(const struct recorder *r, struct engine *e)
{
	uint32_t n = r->ncpus ? r->ncpus : 1;
	uint64_t *steal = calloc(n, sizeof(*steal)), *lost = calloc(n, sizeof(*lost));
	bool *known = calloc(n, sizeof(*known));
	int err = steal && lost && known ? recorder__cpus(r, steal, lost, known) : -ENOMEM;
	for (uint32_t c = 0; !err && c < r->ncpus; c++)
		if (known[c])
			engine__set_kernel_steal(e, c, steal[c]);
	if (!err)
		err = engine__settle(e);
	free(steal);
	free(lost);
	free(known);
	return err;
}

int recorder__cpus(const struct recorder *r, uint64_t *kernel_steal_ns, uint64_t *lost,
		   bool *known)
{
	memset(known, 0, r->ncpus * sizeof(*known));
	for (int i = 0; i < r->perf.ncpus; i++) {
		uint32_t c = (uint32_t)r->perf.cpus[i].cpu;
		if (c < r->ncpus)
			lost[c] = perf_session__lost(&r->perf, i);
	}
	/* once finished, as the recording ended (run's last figures then
	 * are a report's of its file), else now (the agent's, top's) */
	char *text = r->end_stat ? strdup(r->end_stat) : procfs_read(r->o.root, "proc/stat", NULL);
	uint64_t *now = calloc(r->ncpus ? r->ncpus : 1, sizeof(*now));
	uint8_t *seen = calloc(r->ncpus ? r->ncpus : 1, 1);
	int err = text && now && seen && r->steal0 ? 0 : -ENOMEM;
	if (!err && procstat_steal(text, now, seen, r->ncpus) < 0)
		err = -EINVAL;
	for (uint32_t c = 0; !err && c < r->ncpus; c++) {
		known[c] = seen[c] && now[c] >= r->steal0[c];
		kernel_steal_ns[c] = known[c] ? (now[c] - r->steal0[c]) * user_hz_ns() : 0;
	}
	free(text);
	free(now);
	free(seen);
	return err;
}

const char *recorder__host(const struct recorder *r)
{
	return r->host;
}

const char *recorder__boot_id(const struct recorder *r)
{
	return r->boot_id;
}

int64_t recorder__realtime_start(const struct recorder *r)
{
	return r->realtime_start;
}

recorder_wait_fn recorder__wait_hook(struct recorder *r, void **ctx)
{
	*ctx = r->bpf ? r : NULL;
	return r->bpf ? recorder__read_wait : procfs_wait_hook;
}

const struct cgstats *recorder__cgstats(const struct recorder *r)
{
	return &r->cg;
}
