/* metrics: see metrics.h. */
#include "metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/kthread.h"
#include "../core/units.h"
#include "../report/report.h"
#include "../core/banned.h"

struct metrics_series {
	uint32_t program, account, cgroup;	/* ids in labels */
	uint64_t cpu_ns, steal_ns;	/* counted so far */
	uint64_t wait_ns;		/* series of account wait_account */
};

/* One function's figures of the thread being handed out. */
struct metrics_part {
	uint32_t series;
	uint64_t cpu_ns, steal_ns;
};

int metrics__init(struct metrics *m, const struct strtab *names, uint32_t max_programs)
{
	memset(m, 0, sizeof(*m));
	m->names = names;
	m->max_programs = max_programs;
	m->part_tid = UINT32_MAX;
	strtab__init(&m->labels);
	strtab__init(&m->labelled);
	strtab__init(&m->labelled_cgroups);
	hindex__init(&m->index);
	tracker__init(&m->seen);
	m->other = strtab__intern(&m->labels, "other", 5);
	/* no account is named "": wait series are apart from CPU's */
	m->wait_account = strtab__intern(&m->labels, "", 0);
	return m->other == HINDEX_NONE || m->wait_account == HINDEX_NONE ? -ENOMEM : 0;
}

void metrics__release(struct metrics *m)
{
	strtab__release(&m->labels);
	strtab__release(&m->labelled);
	strtab__release(&m->labelled_cgroups);
	hindex__release(&m->index);
	tracker__release(&m->seen);
	free(m->v);
	free(m->parts);
	memset(m, 0, sizeof(*m));
}

const char *metrics_program_of(const struct eng_proc *p, const struct strtab *names,
			       char *buf, size_t size)
{
	const char *path = p ? p->executable : NULL;
	size_t n;
	if (!path && p && p->command) {
		path = p->command;
		n = strcspn(path, " ");
	} else {
		n = path ? strlen(path) : 0;
	}
	if (path && n) {
		static const char deleted[] = " (deleted)";
		size_t dl = sizeof(deleted) - 1;
		if (n > dl && !memcmp(path + n - dl, deleted, dl))
			n -= dl;	/* replaced since it started: still its name */
		const char *slash = memrchr(path, '/', n);
		const char *base = slash ? slash + 1 : path;
		snprintf(buf, size, "%.*s", (int)(n - (size_t)(base - path)), base);
		if (buf[0])
			return buf;
	}
	if (p && p->comm != ENGINE_NONE)
		return kthread_kind(strtab__str(names, p->comm), buf, size);
	return "[unknown]";
}

/* The label a program (or cgroup) is shown under: its own while there is
 * room among those labelled so. */
static uint32_t bounded_label(struct metrics *m, struct strtab *labelled, const char *value)
{
	size_t n = strlen(value);
	uint32_t before = labelled->count;
	if (before >= m->max_programs && strtab__find(labelled, value, n) == HINDEX_NONE)
		return m->other;
	if (strtab__intern(labelled, value, n) == HINDEX_NONE)
		return HINDEX_NONE;
	return strtab__intern(&m->labels, value, n);
}

struct key {
	const struct metrics *m;
	uint32_t program, account, cgroup;
};

static bool series_eq(const void *ctx, uint32_t id)
{
	const struct key *k = ctx;
	const struct metrics_series *s = &k->m->v[id];
	return s->program == k->program && s->account == k->account && s->cgroup == k->cgroup;
}

static uint32_t series(struct metrics *m, uint32_t program, uint32_t account, uint32_t cgroup)
{
	struct key k = { m, program, account, cgroup };
	uint64_t h = hash_mix(((uint64_t)program << 32 | account) ^ hash_mix(cgroup));
	uint32_t id = hindex__find(&m->index, h, series_eq, &k);
	if (id != HINDEX_NONE)
		return id;
	if (grow_array((void **)&m->v, &m->cap, m->n, sizeof(*m->v), 64) ||
	    hindex__insert(&m->index, h, m->n))
		return HINDEX_NONE;
	m->v[m->n] = (struct metrics_series){ .program = program, .account = account,
					      .cgroup = cgroup };
	return m->n++;
}

/* The buffered thread's run-queue wait since its last snapshot, into the
 * wait series of its program and cgroup (those of its first function). */
static int count_wait(struct metrics *m, const struct track_key *cpu_key)
{
	uint64_t since;
	uint32_t tid = (uint32_t)cpu_key->a;
	/* (gone, or no schedstat: not counted) */
	if (!m->taking || !m->read_wait || !m->wait_start || !m->nparts ||
	    cgstats__wait_since_start(m->wait_start, m->read_wait, m->wait_ctx, m->part_pid, tid,
				      &since))
		return 0;
	struct track_key k = { cpu_key->a, cpu_key->b, 1 };
	struct track_figs fig = { (int64_t)since, 0, 0 }, d;
	if (tracker__look(&m->seen, &k, &fig, TRACK_COUNTER, &d))
		return -ENOMEM;
	const struct metrics_series *p = &m->v[m->parts[0].series];
	uint32_t s = series(m, p->program, m->wait_account, p->cgroup);
	if (s == HINDEX_NONE)
		return -ENOMEM;
	m->v[s].wait_ns += (uint64_t)d.cpu_ns;
	return 0;
}

/* What the buffered thread gained since it was last counted, split by its
 * functions' shares now. gone: its record goes too. */
static int flush(struct metrics *m, bool gone)
{
	if (m->part_tid == UINT32_MAX)
		return 0;
	uint64_t cpu = 0, steal = 0;
	uint32_t big = 0;
	for (uint32_t i = 0; i < m->nparts; i++) {
		cpu += m->parts[i].cpu_ns;
		steal += m->parts[i].steal_ns;
		if (m->parts[i].cpu_ns > m->parts[big].cpu_ns)
			big = i;
	}
	struct track_key k = { m->part_tid, m->part_first_ns, 0 };
	struct track_figs now = { (int64_t)cpu, (int64_t)steal, 0 }, d;
	m->part_tid = UINT32_MAX;
	if (tracker__look(&m->seen, &k, &now, TRACK_COUNTER, &d))
		return -ENOMEM;
	uint64_t dc = (uint64_t)d.cpu_ns, ds = (uint64_t)d.steal_ns;
	uint64_t gc = 0, gs = 0;
	for (uint32_t i = 0; i < m->nparts; i++) {
		struct metrics_series *s = &m->v[m->parts[i].series];
		uint64_t c = share_u64(dc, m->parts[i].cpu_ns, cpu);
		uint64_t st = share_u64(ds, m->parts[i].steal_ns, steal);
		s->cpu_ns += c;
		s->steal_ns += st;
		gc += c;
		gs += st;
	}
	if (m->nparts) {	/* the rounding's leftover, to its busiest */
		m->v[m->parts[big].series].cpu_ns += dc - gc;
		m->v[m->parts[big].series].steal_ns += ds - gs;
	}
	int err = count_wait(m, &k);
	if (gone) {
		tracker__forget(&m->seen, &k);
		k.c = 1;
		tracker__forget(&m->seen, &k);
	}
	m->nparts = 0;
	return err;
}

int metrics__program(struct metrics *m, const struct engine *e, const struct eng_thread *t,
		     const struct eng_figures *f, bool final)
{
	(void)final;
	if (t->tid != m->part_tid || t->first_ns != m->part_first_ns) {
		int err = flush(m, false);
		if (err)
			return err;
		m->part_tid = t->tid;
		m->part_first_ns = t->first_ns;
	}
	char buf[256];
	const struct eng_proc *p = engine__proc(e, t->proc);
	m->part_pid = p ? p->pid : t->tid;
	uint32_t program = bounded_label(m, &m->labelled,
					 metrics_program_of(p, m->names, buf, sizeof(buf)));
	const char *acc = f->account != NO_DSO ? strtab__str(m->names, f->account) : "[unknown]";
	uint32_t account = strtab__intern(&m->labels, acc, strlen(acc));
	uint32_t cg = engine__cgroup(e, t);
	uint32_t cgroup = bounded_label(m, &m->labelled_cgroups,
					cg != ENGINE_NONE ? strtab__str(m->names, cg) : "unknown");
	uint32_t s = program == HINDEX_NONE || account == HINDEX_NONE || cgroup == HINDEX_NONE ?
		     HINDEX_NONE : series(m, program, account, cgroup);
	if (s == HINDEX_NONE ||
	    grow_array((void **)&m->parts, &m->parts_cap, m->nparts, sizeof(*m->parts), 16))
		return -ENOMEM;
	m->parts[m->nparts++] = (struct metrics_part){ s, f->run_ns, f->steal_ns };
	return 0;
}

int metrics__thread_gone(struct metrics *m, const struct engine *e, const struct eng_thread *t)
{
	(void)e;
	if (t->tid != m->part_tid || t->first_ns != m->part_first_ns) {
		int err = flush(m, false);	/* someone else's */
		if (err)
			return err;
		m->part_tid = t->tid;	/* handed out nothing: forgotten */
		m->part_first_ns = t->first_ns;
	}
	return flush(m, true);
}

static int walk_program(void *ctx, const struct engine *e, const struct eng_thread *t,
			const struct eng_figures *f, bool final)
{
	return metrics__program(ctx, e, t, f, final);
}

int metrics__take(struct metrics *m, struct engine *e)
{
	struct engine_sink walk = { m, walk_program, NULL, NULL };
	m->taking = m->wait_every < 2 || m->takes++ % m->wait_every == 0;
	int err = engine__walk(e, &walk);
	if (!err)
		err = flush(m, false);
	m->taking = false;
	return err;
}

static int sink_gone(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	return metrics__thread_gone(ctx, e, t);
}

struct engine_sink metrics__sink(struct metrics *m)
{
	return (struct engine_sink){ m, walk_program, NULL, sink_gone };
}

/* A family's HELP and TYPE; OpenMetrics names a counter without _total. */
static void family(FILE *f, const char *name, const char *type, const char *help, bool om)
{
	size_t n = strlen(name);
	bool total = !strcmp(type, "counter") && n > 6 && !strcmp(name + n - 6, "_total");
	bool info = om && !strcmp(type, "info");
	int shown = (int)(n - (om && total ? 6 : 0) - (info ? 5 : 0));
	/* the text format 0.0.4 has no info type: a gauge of 1 */
	fprintf(f, "# HELP %.*s %s\n# TYPE %.*s %s\n", shown, name, help, shown, name,
		!om && !strcmp(type, "info") ? "gauge" : type);
}

static void per_program(FILE *f, const struct metrics *m, bool steal, bool om)
{
	const char *name = steal ? "cpuledger_steal_seconds_total" : "cpuledger_cpu_seconds_total";
	family(f, name, "counter", steal ? "Time the hypervisor stole while the program "
	       "held a CPU, since the agent started." : "CPU time the program ran, steal "
	       "taken out (the corrected time), since the agent started.", om);
	for (uint32_t i = 0; i < m->n; i++) {
		const struct metrics_series *s = &m->v[i];
		bool first = true;
		if (s->account == m->wait_account)
			continue;
		fputs(name, f);
		putc('{', f);
		om_put_label(f, &first, "program", strtab__str(&m->labels, s->program));
		om_put_label(f, &first, "account", strtab__str(&m->labels, s->account));
		om_put_label(f, &first, "cgroup", strtab__str(&m->labels, s->cgroup));
		fprintf(f, "} %.9f\n", (double)(steal ? s->steal_ns : s->cpu_ns) / NSEC_PER_SEC);
	}
}

/* Run-queue wait by program and cgroup, where the agent reads it. */
static void per_program_wait(FILE *f, const struct metrics *m, bool om)
{
	const char *name = "cpuledger_wait_seconds_total";
	if (!m->read_wait)
		return;
	family(f, name, "counter", "Time the program's threads were runnable but waited "
	       "on a run queue (schedstat run_delay: other tasks, and its cgroup's quota), "
	       "since the agent started.", om);
	for (uint32_t i = 0; i < m->n; i++) {
		const struct metrics_series *s = &m->v[i];
		bool first = true;
		if (s->account != m->wait_account)
			continue;
		fputs(name, f);
		putc('{', f);
		om_put_label(f, &first, "program", strtab__str(&m->labels, s->program));
		om_put_label(f, &first, "cgroup", strtab__str(&m->labels, s->cgroup));
		fprintf(f, "} %.9f\n", (double)s->wait_ns / NSEC_PER_SEC);
	}
}

/* One sample of family name per CPU, where v (and known[cpu], if given)
 * says it is known: unknown is absent, not zero. */
static void per_cpu(FILE *f, const struct metrics_extra *x, const char *name, const char *help,
		    const uint64_t *v, const bool *known, bool om)
{
	if (!v)
		return;
	family(f, name, "counter", help, om);
	for (uint32_t c = 0; c < x->ncpus; c++)
		if (!known || known[c])
			fprintf(f, "%s{cpu=\"%u\"} %.9f\n", name, c, (double)v[c] / NSEC_PER_SEC);
}

/* One sample of family name per bounded table. */
static void per_cache(FILE *f, const char *name, const char *const cache[4],
		      const uint64_t v[4])
{
	for (int i = 0; i < 4; i++)
		fprintf(f, "%s{cache=\"%s\"} %" PRIu64 "\n", name, cache[i], v[i]);
}

/* Lost records as the figures' error, and the bounded tables. */
static void bounds(FILE *f, const struct metrics_extra *x, bool om)
{
	static const char *const cache[] = { "names", "cgroups", "symbol_files", "jit_entries" };
	family(f, "cpuledger_lost_seconds_total", "counter", "CPU time (summed over CPUs) "
	       "between the last record read and the records the kernel dropped: its "
	       "steal was not judged, and the figures may be off by up to this much.", om);
	fprintf(f, "cpuledger_lost_seconds_total %.9f\n", (double)x->lost_window_ns / NSEC_PER_SEC);
	family(f, "cpuledger_lossy_stints_total", "counter", "Stints whose records were "
	       "partly lost (not judged for steal).", om);
	fprintf(f, "cpuledger_lossy_stints_total %" PRIu64 "\n", x->lossy_stints);
	family(f, "cpuledger_cache_entries", "gauge", "Entries held in each bounded table "
	       "(names: thread names and cgroup paths; cgroups: cgroup ids named; "
	       "symbol_files: files open with their functions; jit_entries: perf map "
	       "functions).", om);
	per_cache(f, "cpuledger_cache_entries", cache, x->cache_entries);
	family(f, "cpuledger_cache_bytes", "gauge", "Memory each bounded table holds (names: "
	       "their slots; cgroups: the ids' entries; symbol_files: the function tables; "
	       "jit_entries: the maps' tables).", om);
	per_cache(f, "cpuledger_cache_bytes", cache, x->cache_bytes);
	family(f, "cpuledger_cache_evictions_total", "counter", "Entries a bounded table "
	       "let go (names recycled once unused; the rest least recently used first).", om);
	per_cache(f, "cpuledger_cache_evictions_total", cache, x->cache_evicted);
	family(f, "cpuledger_names_dropped_total", "counter", "Thread names and cgroup paths "
	       "not kept: the name table was full of names in use (the thread kept its "
	       "name before; the cgroup is unnamed).", om);
	fprintf(f, "cpuledger_names_dropped_total %" PRIu64 "\n", x->names_refused);
}

/* Throttling per cgroup: the group's own counter, not a sum of ours
 * (throttled time is time its tasks did not run), for the cgroups the
 * program series name. */
static void per_cgroup(FILE *f, const struct metrics *m, const struct metrics_extra *x, bool om)
{
	const char *name = "cpuledger_cgroup_throttled_seconds_total";
	family(f, name, "counter", "Time the cgroup's CPU quota held its tasks off, as its "
	       "cpu.stat counts it (since the cgroup was made).", om);
	for (uint32_t i = 0; i < x->ncgroups && i < m->labelled_cgroups.count; i++) {
		if (!x->cgroup_throttled_known[i])
			continue;	/* unknown: absent, not zero */
		bool first = true;
		fputs(name, f);
		putc('{', f);
		om_put_label(f, &first, "cgroup", strtab__str(&m->labelled_cgroups, i));
		fprintf(f, "} %.9f\n", (double)x->cgroup_throttled_ns[i] / NSEC_PER_SEC);
	}
}

int metrics__write(const struct metrics *m, const struct metrics_extra *x, bool om,
		   char **text, size_t *len)
{
	*text = NULL;
	FILE *f = open_memstream(text, len);
	if (!f)
		return -ENOMEM;
	per_program(f, m, false, om);
	per_program(f, m, true, om);
	per_program_wait(f, m, om);
	per_cpu(f, x, "cpuledger_cpu_steal_seconds_total", "Steal of each CPU that cpuledger "
		"attributed to the programs on it, since the agent started.", x->cpu_steal_ns,
		NULL, om);
	per_cpu(f, x, "cpuledger_cpu_idle_steal_seconds_total", "Steal of each CPU while it "
		"ran its idle task (a CPU woken from idle waits for the hypervisor before it "
		"runs): nobody's, part of the kernel's, since the agent started. Where the BPF "
		"collector reads the steal clock.", x->idle_steal_ns, NULL, om);
	per_cpu(f, x, "cpuledger_kernel_steal_seconds_total", "Steal of each CPU as the "
		"kernel counts it (/proc/stat), since the agent started.", x->kernel_steal_ns,
		x->kernel_known, om);
	per_cgroup(f, m, x, om);
	family(f, "cpuledger_lost_records_total", "counter", "Records the kernel dropped "
	       "before the agent read them (their time is in no figure).", om);
	fprintf(f, "cpuledger_lost_records_total %" PRIu64 "\n", x->lost);
	bounds(f, x, om);
	family(f, "cpuledger_collections_total", "counter", "Collections written to the "
	       "ledger.", om);
	fprintf(f, "cpuledger_collections_total %" PRIu64 "\n", x->collections);
	family(f, "cpuledger_collections_waiting", "gauge", "Collections waiting in memory "
	       "for the ledger.", om);
	fprintf(f, "cpuledger_collections_waiting %" PRIu64 "\n", x->collections_waiting);
	family(f, "process_cpu_seconds_total", "counter", "CPU time of the agent itself.", om);
	fprintf(f, "process_cpu_seconds_total %.6f\n", x->own_cpu_s);
	family(f, "process_resident_memory_bytes", "gauge", "Resident memory of the agent.", om);
	fprintf(f, "process_resident_memory_bytes %" PRIu64 "\n", x->own_rss_bytes);
	family(f, "cpuledger_steal_source_info", "info", "Where steal comes from: the "
	       "method, what the kernel's runtime holds, how that was known.", om);
	bool sfirst = true;
	fputs("cpuledger_steal_source_info{", f);
	om_put_label(f, &sfirst, "method", x->steal_method ? x->steal_method : "");
	om_put_label(f, &sfirst, "kernel_accounting",
		     x->kernel_accounting ? x->kernel_accounting : "");
	om_put_label(f, &sfirst, "known_by", x->accounting_source ? x->accounting_source : "");
	om_put_label(f, &sfirst, "scaled_to_kernel", x->steal_scaled ? "true" : "false");
	fputs("} 1\n", f);
	family(f, "cpuledger_build_info", "info", "The agent's version.", om);
	bool first = true;
	fputs("cpuledger_build_info{", f);
	om_put_label(f, &first, "version", x->version);
	fputs("} 1\n", f);
	if (om)
		fputs("# EOF\n", f);
	int err = ferror(f) ? -ENOMEM : 0;
	if (fclose(f) || err) {
		free(*text);
		*text = NULL;
		return -ENOMEM;
	}
	return 0;
}
