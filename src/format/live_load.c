/* live_load: see live_load.h. */
#include "live_load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "perf_regions.h"
#include "procstat.h"
#include "../core/grow.h"
#include "../core/banned.h"

enum { K_CLOCK, K_SWITCH, K_RUNTIME, K_NONE };

struct idmap {
	uint64_t id;
	int kind;
};

struct field {
	uint32_t offset, size;
};

/* A function that the recorder found samples in (REC_SYMBOL). */
struct symrange {
	uint32_t dso;
	uint64_t start, end;
	uint32_t name;
};

/* One caller on a sample's call chain, resolved at the end like the
 * sample itself. */
struct frame {
	uint32_t event;		/* index of its sample in the live events */
	uint32_t dso;
	uint64_t offset, ip;
	uint32_t fn;		/* named already (imported), or HINDEX_NONE */
	uint8_t flags;
};

struct acc_entry;

struct loader {
	struct loaded_recording *r;
	struct acc_entry *acc_cache;
	uint32_t nacc, acc_cap;
	struct hindex acc_index;
	bool rules_have_ranges;
	struct frame *frames;
	uint32_t nframes, frames_cap;
	bool callchain;
	const struct account_rules *rules;	/* given, or stored */
	struct account_rules stored;
	struct regions regions;
	bool regions_ready;
	struct symrange *syms;
	uint32_t nsyms, syms_cap;
	uint32_t *stack_of;	/* LOAD_STACKS: per event (arrival order), its
				 * stack's id, or HINDEX_NONE */
	uint32_t *names;	/* REC_NAME id -> string id (imported) */
	uint32_t nnames, names_cap;
	uint32_t unknown_dso;
	enum steal_method method;
	uint64_t type[3];		/* sample_type per kind */
	struct idmap *ids;
	uint32_t nids;
	struct field prev_pid, next_pid, rt_pid, rt_runtime;
	uint64_t *steal0, *steal1;
	uint8_t *seen0, *seen1;
	uint64_t *last_time;	/* per CPU: its latest record's time */
	uint32_t fn_unknown;
	uint32_t child;
	uint32_t *scope_pids;
	uint32_t nscope;
	struct hindex proc_index;
};

static bool proc_eq(const void *ctx, uint32_t id)
{
	const struct { const struct loaded_recording *r; uint32_t pid; } *k = ctx;
	return k->r->procs[id].pid == k->pid;
}

static uint64_t pid_hash(uint32_t pid)
{
	return hash_mix(pid ^ 0x51ed270b27a5cb1dULL);
}

static struct loaded_process *process(struct loader *ld, uint32_t pid)
{
	struct loaded_recording *r = ld->r;
	struct { const struct loaded_recording *r; uint32_t pid; } k = { r, pid };
	uint32_t id = hindex__find(&ld->proc_index, pid_hash(pid), proc_eq, &k);
	if (id != HINDEX_NONE)
		return &r->procs[id];
	if (r->nprocs == r->procs_cap) {
		uint32_t n = r->procs_cap ? r->procs_cap * 2 : 64;
		struct loaded_process *p = realloc(r->procs, n * sizeof(*p));
		if (!p)
			return NULL;
		r->procs = p;
		r->procs_cap = n;
	}
	if (hindex__insert(&ld->proc_index, pid_hash(pid), r->nprocs))
		return NULL;
	struct loaded_process *p = &r->procs[r->nprocs++];
	*p = (struct loaded_process){ .pid = pid, .uid = -1 };
	for (uint32_t i = 0; i < ld->nscope; i++)
		if (ld->scope_pids[i] == pid)
			p->in_scope = true;
	return p;
}

/* Sets a process's command unless a command line is already known; a
 * command line (from exec or /proc) replaces a [comm]. */
static int set_command(struct loader *ld, uint32_t pid, const char *s, size_t n,
		       bool is_cmdline)
{
	struct loaded_process *p = process(ld, pid);
	if (!p)
		return -ENOMEM;
	if (!n || (!is_cmdline && p->command && !p->command_inherited))
		return 0;
	char *c = malloc(n + 3);
	if (!c)
		return -ENOMEM;
	if (is_cmdline)
		snprintf(c, n + 3, "%.*s", (int)n, s);
	else
		snprintf(c, n + 3, "[%.*s]", (int)n, s);
	/* Text from the recorded machine: no control characters in reports. */
	for (char *q = c; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			*q = '?';
	free(p->command);
	p->command = c;
	p->command_inherited = false;
	return 0;
}

/* A new process runs its parent's program, as its user, until it execs
 * (perf shows the parent's comm too): without this, a child that never
 * execs and is gone before /proc is read would have no command, user or
 * executable at all. Anything learnt of the child itself replaces these. */
static int inherit_from_parent(struct loaded_process *child,
			       const struct loaded_process *parent)
{
	if (child->uid < 0)
		child->uid = parent->uid;
	if (!child->executable && parent->executable) {
		child->executable = strdup(parent->executable);
		if (!child->executable)
			return -ENOMEM;
	}
	if (child->command || !parent->command)
		return 0;
	child->command = strdup(parent->command);
	if (!child->command)
		return -ENOMEM;
	child->command_inherited = true;
	return 0;
}

static int cmp_proc(const void *a, const void *b)
{
	uint32_t x = ((const struct loaded_process *)a)->pid,
		 y = ((const struct loaded_process *)b)->pid;
	return (x > y) - (x < y);
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = ((const struct idmap *)a)->id, y = ((const struct idmap *)b)->id;
	return (x > y) - (x < y);
}

static int kind_of(const struct loader *ld, uint64_t id)
{
	uint32_t lo = 0, hi = ld->nids;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (ld->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ld->nids && ld->ids[lo].id == id ? ld->ids[lo].kind : K_NONE;
}

static bool parse_field(const char *v, struct field *f)
{
	return sscanf(v, "%u:%u", &f->offset, &f->size) == 2 &&
	       (f->size == 4 || f->size == 8);
}

/* The start META: what the rest of the file needs to be read. */
static int read_meta(struct loader *ld, const char *text, size_t len,
		     struct rec_error *err)
{
	struct loaded_recording *r = ld->r;
	char *copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	int e = 0;
	char *save = NULL;
	uint32_t maxcpu = 0;
	bool start = false;
	for (char *line = strtok_r(copy, "\n", &save); line && !e;
	     line = strtok_r(NULL, "\n", &save)) {
		char *v = strchr(line, '=');
		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(line, "phase"))
			start = !strcmp(v, "start");
		else if (!strcmp(line, "time_ns"))
			*(start ? &r->start_ns : &r->end_ns) = strtoull(v, NULL, 10);
		else if (!strcmp(line, "realtime_ns"))
			*(start ? &r->realtime_start_ns : &r->realtime_end_ns) =
				(int64_t)strtoull(v, NULL, 10);
		else if (!start)
			continue;
		else if (!strcmp(line, "host"))
			snprintf(r->host, sizeof(r->host), "%s", v);
		else if (!strcmp(line, "boot_id"))
			snprintf(r->boot_id, sizeof(r->boot_id), "%s", v);
		else if (!strcmp(line, "steal_source"))
			snprintf(r->steal_source, sizeof(r->steal_source), "%s", v);
		else if (!strcmp(line, "scope"))
			snprintf(r->scope, sizeof(r->scope), "%s", v);
		else if (!strcmp(line, "interval_ns"))
			r->interval_ns = strtoull(v, NULL, 10);
		else if (!strcmp(line, "clk_tck"))
			r->clk_tck = strtoull(v, NULL, 10);
		else if (!strcmp(line, "callchain"))
			ld->callchain = atoi(v) != 0;
		else if (!strcmp(line, "cpu")) {
			uint32_t c = (uint32_t)strtoul(v, NULL, 10);
			if (c >= 65536)
				e = -EINVAL;
			else if (c + 1 > maxcpu)
				maxcpu = c + 1;
		} else if (!strncmp(line, "sample_type.", 12)) {
			const char *k = line + 12;
			int i = !strcmp(k, "clock") ? 0 : !strcmp(k, "switch") ? 1 :
				!strcmp(k, "runtime") ? 2 : -1;
			if (i >= 0)
				ld->type[i] = strtoull(v, NULL, 10);
		} else if (!strncmp(line, "id.", 3)) {
			const char *k = line + 3;
			int kind = !strcmp(k, "clock") ? K_CLOCK : !strcmp(k, "switch") ?
				   K_SWITCH : !strcmp(k, "runtime") ? K_RUNTIME : K_NONE;
			struct idmap *m = realloc(ld->ids, (ld->nids + 1) * sizeof(*m));
			if (!m) {
				e = -ENOMEM;
				break;
			}
			ld->ids = m;
			ld->ids[ld->nids++] = (struct idmap){ strtoull(v, NULL, 10), kind };
		} else if (!strcmp(line, "tp.prev_pid")) {
			e = parse_field(v, &ld->prev_pid) ? 0 : -EINVAL;
		} else if (!strcmp(line, "tp.next_pid")) {
			e = parse_field(v, &ld->next_pid) ? 0 : -EINVAL;
		} else if (!strcmp(line, "tp.rt_pid")) {
			e = parse_field(v, &ld->rt_pid) ? 0 : -EINVAL;
		} else if (!strcmp(line, "tp.rt_runtime")) {
			e = parse_field(v, &ld->rt_runtime) ? 0 : -EINVAL;
		} else if (!strcmp(line, "pid") || !strcmp(line, "child")) {
			uint32_t *p = realloc(ld->scope_pids, (ld->nscope + 1) * sizeof(*p));
			if (!p) {
				e = -ENOMEM;
				break;
			}
			ld->scope_pids = p;
			ld->scope_pids[ld->nscope++] = (uint32_t)strtoul(v, NULL, 10);
		}
	}
	free(copy);
	if (e == -EINVAL) {
		snprintf(err->msg, sizeof(err->msg), "bad metadata");
		return e;
	}
	if (e || !start)
		return e;
	if (!maxcpu || !r->interval_ns || !r->clk_tck) {
		snprintf(err->msg, sizeof(err->msg), "metadata lacks cpu, interval_ns or clk_tck");
		return -EINVAL;
	}
	if (ld->nids)
		qsort(ld->ids, ld->nids, sizeof(*ld->ids), cmp_id);
	r->ncpus = maxcpu;
	r->cpus = calloc(maxcpu, sizeof(*r->cpus));
	ld->steal0 = calloc(maxcpu, sizeof(uint64_t));
	ld->steal1 = calloc(maxcpu, sizeof(uint64_t));
	ld->seen0 = calloc(maxcpu, 1);
	ld->seen1 = calloc(maxcpu, 1);
	ld->last_time = calloc(maxcpu, sizeof(uint64_t));
	if (!r->cpus || !ld->steal0 || !ld->steal1 || !ld->seen0 || !ld->seen1 ||
	    !ld->last_time)
		return -ENOMEM;
	e = live__init(&r->live, ld->method, r->interval_ns, maxcpu,
		       r->host[0] ? r->host : "localhost");
	if (e)
		return e;
	ld->fn_unknown = live__string(&r->live, "[unknown]", 9);
	ld->unknown_dso = ld->fn_unknown;
	e = regions__init(&ld->regions, &r->live.strings);
	ld->regions_ready = !e;
	return e;
}

struct sample {
	uint64_t id, ip, time, period;
	uint32_t pid, tid, cpu;
	const uint8_t *raw;
	uint32_t raw_size;
	const uint8_t *chain;	/* nr u64s, sample IP first */
	uint64_t nr;
};

#define TAKE(dst, n) do { \
		if ((size_t)(end - p) < (n)) \
			return false; \
		memcpy((dst), p, (n)); \
		p += (n); \
	} while (0)

/* A PERF_RECORD_SAMPLE body of the given sample_type, in the ABI's order. */
static bool parse_sample(const uint8_t *p, const uint8_t *end, uint64_t type,
			 struct sample *s)
{
	uint32_t pair[2];
	memset(s, 0, sizeof(*s));
	if (type & PERF_SAMPLE_IDENTIFIER)
		TAKE(&s->id, 8);
	if (type & PERF_SAMPLE_IP)
		TAKE(&s->ip, 8);
	if (type & PERF_SAMPLE_TID) {
		TAKE(pair, 8);
		s->pid = pair[0];
		s->tid = pair[1];
	}
	if (type & PERF_SAMPLE_TIME)
		TAKE(&s->time, 8);
	if (type & PERF_SAMPLE_CPU) {
		TAKE(pair, 8);
		s->cpu = pair[0];
	}
	if (type & PERF_SAMPLE_PERIOD)
		TAKE(&s->period, 8);
	if (type & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr;
		TAKE(&nr, 8);
		if (nr > (uint64_t)(end - p) / 8)
			return false;
		s->chain = p;
		s->nr = nr;
		p += nr * 8;
	}
	if (type & PERF_SAMPLE_RAW) {
		TAKE(&s->raw_size, 4);
		if (s->raw_size > (size_t)(end - p))
			return false;
		s->raw = p;
	}
	return true;
}

static bool raw_field(const struct sample *s, struct field f, uint64_t *out)
{
	if (!s->raw || f.offset > s->raw_size || f.size > s->raw_size - f.offset)
		return false;
	if (f.size == 4) {
		uint32_t v;
		memcpy(&v, s->raw + f.offset, 4);
		*out = v;
	} else {
		memcpy(out, s->raw + f.offset, 8);
	}
	return true;
}

/* The callers of a sample (its chain past the sample IP), for inclusive
 * time; resolved like the recorder did, a return address at ip - 1. */
static int add_frames(struct loader *ld, const struct sample *s, bool kernel)
{
	struct live *l = &ld->r->live;
	bool kmode = kernel;
	for (uint64_t i = 1; i < s->nr; i++) {
		uint64_t ip;
		memcpy(&ip, s->chain + 8 * i, 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			kmode = ip == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		struct frame f = { .event = l->nevents, .ip = ip - 1, .fn = HINDEX_NONE,
				   .flags = kmode ? LIVE_KERNEL : 0 };
		if (!regions__find(&ld->regions, s->pid, ip - 1, kmode, &f.dso, &f.offset))
			continue;
		if (f.dso == regions__exe(&ld->regions, s->pid))
			f.flags |= LIVE_EXECUTABLE;
		if (grow_array((void **)&ld->frames, &ld->frames_cap, ld->nframes,
			       sizeof(*ld->frames), 4096))
			return -ENOMEM;
		ld->frames[ld->nframes++] = f;
	}
	return 0;
}

/* Thread tid belongs to process pid from time t on. */
static int add_task(struct loaded_recording *r, uint32_t cpu, uint32_t pid,
		    uint32_t tid, uint64_t t)
{
	struct live_event e = { .kind = LIVE_TASK, .a = pid, .b = tid,
				.time_ns = t, .cpu = (uint16_t)cpu };
	return live__add(&r->live, &e);
}

static int on_perf(struct loader *ld, uint32_t cpu, const uint8_t *data,
		   uint32_t len)
{
	struct loaded_recording *r = ld->r;
	struct perf_event_header h;
	if (len < sizeof(h) || cpu >= r->ncpus)
		goto bad;
	memcpy(&h, data, sizeof(h));
	if (h.size != len)
		goto bad;
	const uint8_t *body = data + sizeof(h), *end = data + len;
	size_t blen = len - sizeof(h);
	struct live_event e = { .cpu = (uint16_t)cpu };
	r->records++;
	int rerr = perf_regions__apply(&ld->regions, (const void *)data, len);
	if (rerr == -ENOMEM)
		return rerr;
	if (rerr)
		r->bad_records++;
	/* A non-sample record's time, from its sample_id_all trailer. */
	uint64_t rec_time = h.type == PERF_RECORD_SAMPLE ? 0 : perf_record_time(body, blen);
	if (rec_time && h.type != PERF_RECORD_LOST)
		ld->last_time[cpu] = rec_time;

	switch (h.type) {
	case PERF_RECORD_SAMPLE: {
		uint64_t id;
		if (blen < 8)
			goto bad;
		memcpy(&id, body, 8);
		int kind = kind_of(ld, id);
		struct sample s;
		if (kind == K_NONE || !parse_sample(body, end, ld->type[kind], &s))
			goto bad;
		e.time_ns = s.time;
		ld->last_time[cpu] = s.time;
		if (kind == K_CLOCK) {
			r->samples++;
			e.kind = LIVE_SAMPLE;	/* tid 0, the idle task, included */
			e.a = s.pid;
			e.b = s.tid;
			e.value = s.period;
			uint16_t mode = h.misc & PERF_RECORD_MISC_CPUMODE_MASK;
			bool kernel = mode == PERF_RECORD_MISC_KERNEL;
			/* The function is looked up once the symbols, stored at
			 * the end, are read; until then the offset rides in the
			 * event. No symbol: [unknown], its dso says where. */
			e.function = ld->fn_unknown;
			e.ip = s.ip;
			e.flags = kernel ? LIVE_KERNEL : 0;
			if (!regions__find(&ld->regions, s.pid, s.ip, kernel,
					   &e.dso, &e.value))
				e.dso = ld->unknown_dso;
			else if (e.dso == regions__exe(&ld->regions, s.pid))
				e.flags |= LIVE_EXECUTABLE;
			int ferr = add_frames(ld, &s, kernel);
			if (ferr)
				return ferr;
		} else if (kind == K_SWITCH) {
			uint64_t prev, next;
			if (!raw_field(&s, ld->prev_pid, &prev) ||
			    !raw_field(&s, ld->next_pid, &next))
				goto bad;
			e.kind = LIVE_SWITCH;
			e.a = (uint32_t)prev;
			e.b = (uint32_t)next;
		} else {
			uint64_t pid, rt;
			if (!raw_field(&s, ld->rt_pid, &pid) ||
			    !raw_field(&s, ld->rt_runtime, &rt))
				goto bad;
			e.kind = LIVE_RUNTIME;
			e.a = (uint32_t)pid;
			e.value = rt;
		}
		return live__add(&r->live, &e);
	}
	case PERF_RECORD_COMM: {
		uint32_t ids[2];
		if (blen < 8 + 32)
			goto bad;
		memcpy(ids, body, 8);
		size_t n = strnlen((const char *)body + 8, blen - 8 - 32);
		if (ids[0] == ids[1]) {
			int err = set_command(ld, ids[0], (const char *)body + 8, n, false);
			if (err)
				return err;
		}
		return add_task(r, cpu, ids[0], ids[1], rec_time);
	}
	case PERF_RECORD_FORK: {
		uint32_t ids[4];	/* pid, ppid, tid, ptid */
		if (blen < 16 + 32)
			goto bad;
		memcpy(ids, body, 16);
		struct loaded_process *parent = process(ld, ids[1]);
		struct loaded_process *child = process(ld, ids[0]);
		if (!parent || !child)
			return -ENOMEM;
		parent = process(ld, ids[1]);	/* the array may have moved */
		if (parent->in_scope)
			child->in_scope = true;
		if (ids[0] != ids[1]) {
			int err = inherit_from_parent(child, parent);
			if (err)
				return err;
		}
		return add_task(r, cpu, ids[0], ids[2], rec_time);
	}
	case PERF_RECORD_LOST: {
		uint64_t v[2];
		if (blen < 16)
			goto bad;
		memcpy(v, body, 16);
		r->cpus[cpu].lost += v[1];
		/* What was dropped lies between this CPU's last record and
		 * now: the stints there cannot be measured. */
		e.kind = LIVE_LOST;
		e.time_ns = rec_time;
		e.value = ld->last_time[cpu];
		return e.time_ns ? live__add(&r->live, &e) : 0;
	}
	default:
		return 0;	/* EXIT, MMAP, MMAP2...: not needed yet */
	}
bad:
	r->bad_records++;
	return 0;
}

static int add_symbol(struct loader *ld, const uint8_t *d, uint32_t len)
{
	struct { uint64_t start, end; uint32_t dso_len, zero; } head;
	if (len < sizeof(head))
		return 0;
	memcpy(&head, d, sizeof(head));
	if (head.dso_len > len - sizeof(head) || head.end <= head.start)
		return 0;
	const char *text = (const char *)d + sizeof(head);
	uint32_t dso = live__string(&ld->r->live, text, head.dso_len);
	uint32_t name = live__string(&ld->r->live, text + head.dso_len,
				     len - sizeof(head) - head.dso_len);
	if (dso == HINDEX_NONE || name == HINDEX_NONE ||
	    grow_array((void **)&ld->syms, &ld->syms_cap, ld->nsyms,
		       sizeof(*ld->syms), 1024))
		return -ENOMEM;
	ld->syms[ld->nsyms++] = (struct symrange){ dso, head.start, head.end, name };
	return 0;
}

static int cmp_sym(const void *pa, const void *pb)
{
	const struct symrange *a = pa, *b = pb;
	if (a->dso != b->dso)
		return a->dso < b->dso ? -1 : 1;
	return (a->start > b->start) - (a->start < b->start);
}

/* The stored function of (dso, offset), or HINDEX_NONE. */
static uint32_t function_at(const struct loader *ld, uint32_t dso, uint64_t offset)
{
	uint32_t lo = 0, hi = ld->nsyms;	/* first range after it */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const struct symrange *m = &ld->syms[mid];
		if (m->dso < dso || (m->dso == dso && m->start <= offset))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && ld->syms[lo - 1].dso == dso && offset < ld->syms[lo - 1].end)
		return ld->syms[lo - 1].name;
	return HINDEX_NONE;
}

/* An account decided once for code of one (dso, function, mode): the rules
 * are matched per region and function, not per sample. Rules with address
 * ranges are decided per sample. */
struct acc_entry {
	uint32_t dso, function, account;
	uint8_t flags;
};

static bool acc_eq(const void *ctx, uint32_t id)
{
	const struct { const struct loader *ld; struct acc_entry k; } *q = ctx;
	const struct acc_entry *e = &q->ld->acc_cache[id];
	return e->dso == q->k.dso && e->function == q->k.function && e->flags == q->k.flags;
}

static uint32_t account_match(struct loader *ld, uint32_t dso, uint32_t function,
			      uint64_t ip, uint8_t flags);

/* The account of code at (dso, function, ip), by the rules. */
static uint32_t account_at(struct loader *ld, uint32_t dso, uint32_t function,
			   uint64_t ip, uint8_t flags)
{
	if (ld->rules_have_ranges)
		return account_match(ld, dso, function, ip, flags);
	struct { const struct loader *ld; struct acc_entry k; } q =
		{ ld, { dso, function, 0, flags } };
	uint64_t h = hash_mix(((uint64_t)dso << 32 | function) ^ hash_mix(flags));
	uint32_t id = hindex__find(&ld->acc_index, h, acc_eq, &q);
	if (id != HINDEX_NONE)
		return ld->acc_cache[id].account;
	q.k.account = account_match(ld, dso, function, ip, flags);
	if (q.k.account == HINDEX_NONE ||
	    grow_array((void **)&ld->acc_cache, &ld->acc_cap, ld->nacc,
		       sizeof(*ld->acc_cache), 256) ||
	    hindex__insert(&ld->acc_index, h, ld->nacc))
		return HINDEX_NONE;
	ld->acc_cache[ld->nacc++] = q.k;
	return q.k.account;
}

static uint32_t account_match(struct loader *ld, uint32_t dso, uint32_t function,
			      uint64_t ip, uint8_t flags)
{
	struct live *l = &ld->r->live;
	struct code_site site = {
		.dso = strtab__str(&l->strings, dso),
		.symbol = function != HINDEX_NONE ? strtab__str(&l->strings, function) : NULL,
		.ip = ip,
		.kernel = flags & LIVE_KERNEL,
		.executable = flags & LIVE_EXECUTABLE,
	};
	const char *acc = account_rules__match(ld->rules, &site);
	return live__string(l, acc, strlen(acc));
}

struct on_stack {
	uint32_t fn, dso, acc;
};

/* Each sample's function from the stored symbols (none: [unknown]) and
 * its account; with call chains, every distinct function on its stack
 * gains a sample of inclusive time. */
static int name_samples(struct loader *ld)
{
	struct live *l = &ld->r->live;
	if (ld->nsyms)
		qsort(ld->syms, ld->nsyms, sizeof(*ld->syms), cmp_sym);
	for (size_t i = 0; ld->rules && i < ld->rules->n; i++)
		ld->rules_have_ranges |= ld->rules->v[i].match == MATCH_RANGE;
	uint32_t fr = 0;
	for (uint32_t i = 0; i < l->nevents; i++) {
		struct live_event *e = &l->events[i];
		if (e->kind != LIVE_SAMPLE)
			continue;
		uint32_t fn = function_at(ld, e->dso, e->value);
		if (fn != HINDEX_NONE)
			e->function = fn;
		else if (e->function != ld->fn_unknown)
			fn = e->function;	/* imported with its name */
		e->value = 0;	/* it held the offset; periods are not used */
		if (!e->b)
			continue;	/* the idle task is nobody's account */
		e->account = account_at(ld, e->dso, fn, e->ip, e->flags);
		if (e->account == HINDEX_NONE)
			return -ENOMEM;
		if (!ld->callchain)
			continue;
		/* distinct (function, dso) on the stack, the sample's own first */
		struct on_stack seen[128];
		uint32_t nseen = 0;
		seen[nseen++] = (struct on_stack){ e->function, e->dso, e->account };
		for (; fr < ld->nframes && ld->frames[fr].event < i; fr++)
			;
		for (; fr < ld->nframes && ld->frames[fr].event == i; fr++) {
			const struct frame *f = &ld->frames[fr];
			uint32_t ffn = f->fn != HINDEX_NONE ? f->fn :
				       function_at(ld, f->dso, f->offset);
			uint32_t name = ffn;
			if (ffn == HINDEX_NONE || ffn == ld->fn_unknown)
				continue;	/* an unnamed caller adds nothing */
			bool dup = false;
			for (uint32_t k = 0; k < nseen && !dup; k++)
				dup = seen[k].fn == name && seen[k].dso == f->dso;
			if (dup || nseen == 128)
				continue;
			uint32_t acc = account_at(ld, f->dso, ffn, f->ip, f->flags);
			if (acc == HINDEX_NONE)
				return -ENOMEM;
			seen[nseen++] = (struct on_stack){ name, f->dso, acc };
		}
		for (uint32_t k = 0; k < nseen; k++) {
			int err = live__add_inclusive(l, e->a, e->b, seen[k].fn,
						      seen[k].dso, seen[k].acc);
			if (err)
				return err;
		}
	}
	return 0;
}

/* REC_NAME: ids come in order 0, 1, 2... */
static int add_name(struct loader *ld, const uint8_t *d, uint32_t len)
{
	uint32_t pre[2];
	if (len < 8)
		return 0;
	memcpy(pre, d, 8);
	if (pre[0] != ld->nnames) {
		ld->r->bad_records++;
		return 0;
	}
	uint32_t id = live__string(&ld->r->live, (const char *)d + 8, len - 8);
	if (id == HINDEX_NONE || grow_array((void **)&ld->names, &ld->names_cap,
					    ld->nnames, sizeof(*ld->names), 1024))
		return -ENOMEM;
	ld->names[ld->nnames++] = id;
	return 0;
}

static uint32_t name_of(const struct loader *ld, uint32_t id, uint32_t none)
{
	return id < ld->nnames ? ld->names[id] : none;
}

static uint8_t live_flags(uint32_t rec_flags)
{
	return (rec_flags & REC_FRAME_KERNEL ? LIVE_KERNEL : 0) |
	       (rec_flags & REC_FRAME_EXECUTABLE ? LIVE_EXECUTABLE : 0);
}

/* REC_SAMPLE: a sample imported with its functions named. */
static int imported_sample(struct loader *ld, const uint8_t *d, uint32_t len)
{
	struct loaded_recording *r = ld->r;
	struct rec_sample_head h;
	struct rec_frame f;
	r->records++;
	if (len < sizeof(h))
		goto bad;
	memcpy(&h, d, sizeof(h));
	if (h.cpu >= r->ncpus || h.nframes > (len - sizeof(h)) / sizeof(f) ||
	    len != sizeof(h) + h.nframes * sizeof(f))
		goto bad;
	r->samples++;
	r->cpus[h.cpu].present = true;
	struct live_event e = { .kind = LIVE_SAMPLE, .a = h.pid, .b = h.tid,
				.time_ns = h.time_ns, .cpu = (uint16_t)h.cpu,
				.function = ld->fn_unknown, .dso = ld->unknown_dso };
	const uint8_t *p = d + sizeof(h);
	for (uint32_t i = 0; i < h.nframes; i++, p += sizeof(f)) {
		memcpy(&f, p, sizeof(f));
		if (i == 0) {
			e.function = name_of(ld, f.function, ld->fn_unknown);
			e.dso = name_of(ld, f.dso, ld->unknown_dso);
			e.ip = f.ip;
			e.flags = live_flags(f.flags);
			continue;
		}
		if (grow_array((void **)&ld->frames, &ld->frames_cap, ld->nframes,
			       sizeof(*ld->frames), 4096))
			return -ENOMEM;
		ld->frames[ld->nframes++] = (struct frame){
			.event = r->live.nevents, .ip = f.ip,
			.dso = name_of(ld, f.dso, ld->unknown_dso),
			.fn = name_of(ld, f.function, ld->fn_unknown),
			.flags = live_flags(f.flags),
		};
	}
	return live__add(&r->live, &e);
bad:
	r->bad_records++;
	return 0;
}

/* REC_SCHED: a sched_switch or sched_stat_runtime line of perf script. */
static int imported_sched(struct loader *ld, const uint8_t *d, uint32_t len)
{
	struct loaded_recording *r = ld->r;
	struct rec_sched s;
	r->records++;
	if (len != sizeof(s)) {
		r->bad_records++;
		return 0;
	}
	memcpy(&s, d, sizeof(s));
	if (s.cpu >= r->ncpus || (s.kind != REC_SCHED_SWITCH && s.kind != REC_SCHED_RUNTIME)) {
		r->bad_records++;
		return 0;
	}
	r->cpus[s.cpu].present = true;
	struct live_event e = { .time_ns = s.time_ns, .cpu = (uint16_t)s.cpu,
				.a = s.a, .b = s.b, .value = s.value,
				.kind = s.kind == REC_SCHED_SWITCH ? LIVE_SWITCH : LIVE_RUNTIME };
	return live__add(&r->live, &e);
}

/* LOAD_STACKS, before the events are sorted: each sample's stack,
 * (function, dso) pairs from the leaf out, an unnamed caller as [unknown]. */
static int stack_of_samples(struct loader *ld)
{
	struct live *l = &ld->r->live;
	struct stack_set *st = &ld->r->stacks;
	enum { DEPTH = 512 };
	uint32_t key[2 * DEPTH];
	ld->r->has_stacks = true;
	st->names = &l->strings;
	strtab__init(&st->keys);
	ld->stack_of = malloc((l->nevents ? l->nevents : 1) * sizeof(*ld->stack_of));
	if (!ld->stack_of)
		return -ENOMEM;
	uint32_t fr = 0;
	for (uint32_t i = 0; i < l->nevents; i++) {
		const struct live_event *e = &l->events[i];
		ld->stack_of[i] = HINDEX_NONE;
		for (; fr < ld->nframes && ld->frames[fr].event < i; fr++)
			;
		if (e->kind != LIVE_SAMPLE || !e->b)
			continue;
		uint32_t n = 0;
		key[n++] = e->function;
		key[n++] = e->dso;
		for (; fr < ld->nframes && ld->frames[fr].event == i; fr++) {
			const struct frame *f = &ld->frames[fr];
			uint32_t fn = f->fn != HINDEX_NONE ? f->fn :
				      function_at(ld, f->dso, f->offset);
			if (n == 2 * DEPTH)
				continue;	/* deeper: the leaf end is kept */
			key[n++] = fn != HINDEX_NONE ? fn : ld->fn_unknown;
			key[n++] = f->dso;
		}
		ld->stack_of[i] = strtab__intern(&st->keys, (const char *)key,
						 n * sizeof(*key));
		if (ld->stack_of[i] == HINDEX_NONE)
			return -ENOMEM;
	}
	return 0;
}

/* LOAD_STACKS, after live__finish: samples per (stack, thread), and their
 * time and steal as the rows have theirs. */
static int sum_stacks(struct loader *ld)
{
	struct live *l = &ld->r->live;
	struct stack_set *st = &ld->r->stacks;
	struct strtab index;	/* (stack, tid) -> entry */
	uint32_t *prog_of = NULL, prog_cap = 0;	/* entry -> its leaf's program */
	strtab__init(&index);
	int err = 0;
	for (uint32_t i = 0; i < l->nevents && !err; i++) {
		const struct live_event *e = &l->events[i];
		uint32_t stack = ld->stack_of[e->seq];
		if (stack == HINDEX_NONE)
			continue;
		uint32_t key[2] = { stack, e->b };
		uint32_t id = strtab__intern(&index, (const char *)key, sizeof(key));
		if (id == HINDEX_NONE ||
		    (id == st->n && grow_array((void **)&st->v, &st->cap, st->n,
					       sizeof(*st->v), 256))) {
			err = -ENOMEM;
			break;
		}
		if (id == st->n) {
			const struct program *p = live__program_of(l, e);
			if (grow_array((void **)&prog_of, &prog_cap, st->n,
				       sizeof(*prog_of), 256)) {
				err = -ENOMEM;
				break;
			}
			prog_of[st->n] = p ? (uint32_t)(p - l->progs) : HINDEX_NONE;
			st->v[st->n++] = (struct stack_sample){ .stack = stack,
				.pid = e->a, .tid = e->b, .account = e->account };
		}
		st->v[id].samples++;
	}
	/* shares of the thread's time and the leaf program's steal, as the
	 * rows have theirs */
	for (uint32_t i = 0; i < st->n && !err; i++) {
		struct stack_sample *s = &st->v[i];
		const struct live_thread *th = live__thread(l, s->tid);
		if (th && th->samples) {
			s->pid = th->pid;
			s->cpu_ns = (uint64_t)((unsigned __int128)th->cpu_ns * s->samples /
					       th->samples);
		}
		const struct program *p = prog_of[i] != HINDEX_NONE ?
					  &l->progs[prog_of[i]] : NULL;
		if (p && p->samples)
			s->steal_ns = (uint64_t)((unsigned __int128)p->steal_ns * s->samples /
						 p->samples);
	}
	free(prog_of);
	/* time and steal of programs never sampled (a thread's runtime with
	 * no sample, steal no gap placed) stand as stacks of their own */
	for (uint32_t i = 0; i < l->nprogs && !err; i++) {
		const struct program *p = &l->progs[i];
		if (p->samples || (!p->run_ns && !p->steal_ns))
			continue;
		uint32_t key[2] = { p->function, p->dso != NO_DSO ? p->dso : ld->unknown_dso };
		uint32_t stack = strtab__intern(&st->keys, (const char *)key, sizeof(key));
		if (stack == HINDEX_NONE || grow_array((void **)&st->v, &st->cap, st->n,
						       sizeof(*st->v), 256)) {
			err = -ENOMEM;
			break;
		}
		st->v[st->n++] = (struct stack_sample){ .stack = stack, .pid = p->pid,
			.tid = p->tid, .account = p->account, .cpu_ns = p->run_ns,
			.steal_ns = p->steal_ns };
	}
	strtab__release(&index);
	return err;
}

static int on_item(struct loader *ld, uint32_t type, const uint8_t *d,
		   uint32_t len, struct rec_error *err)
{
	struct loaded_recording *r = ld->r;
	uint32_t pre[2] = { 0, 0 };
	/* These items start with two u32s (docs/recording-format.md). */
	bool prefixed = type == REC_PERF || type == REC_PROCSTAT || type == REC_TASK ||
			type == REC_CMDLINE || type == REC_LOST || type == REC_MAPS ||
			type == REC_PROCINFO;
	if (prefixed && len < 8)
		return 0;	/* too short to be one: skipped */
	if (prefixed)
		memcpy(pre, d, 8);
	if (type != REC_META && !r->cpus) {
		snprintf(err->msg, sizeof(err->msg), "the recording does not start with its metadata");
		return -EINVAL;
	}
	switch (type) {
	case REC_META:
		return read_meta(ld, (const char *)d, len, err);
	case REC_PERF:
		return on_perf(ld, pre[0], d + 8, len - 8);
	case REC_TASK: {
		int e = 0;
		if (pre[0] == pre[1])
			e = set_command(ld, pre[0], (const char *)d + 8, len - 8, false);
		return e ? e : add_task(r, 0, pre[0], pre[1], r->start_ns);
	}
	case REC_CMDLINE:
		return set_command(ld, pre[0], (const char *)d + 8, len - 8, true);
	case REC_PROCINFO: {
		struct loaded_process *p = process(ld, pre[0]);
		if (!p)
			return -ENOMEM;
		p->uid = pre[1] == UINT32_MAX ? -1 : (int64_t)pre[1];
		if (len > 8) {
			char *exe = malloc(len - 8 + 1);
			if (!exe)
				return -ENOMEM;
			memcpy(exe, d + 8, len - 8);
			exe[len - 8] = '\0';
			free(p->executable);
			p->executable = exe;
		}
		return 0;
	}
	case REC_PROCSTAT: {
		char *text = malloc(len - 8 + 1);
		if (!text)
			return -ENOMEM;
		memcpy(text, d + 8, len - 8);
		text[len - 8] = '\0';
		int n = pre[0] ? procstat_steal(text, ld->steal1, ld->seen1, r->ncpus)
			       : procstat_steal(text, ld->steal0, ld->seen0, r->ncpus);
		free(text);
		if (n < 0) {
			snprintf(err->msg, sizeof(err->msg), "bad /proc/stat snapshot");
			return -EINVAL;
		}
		return 0;
	}
	case REC_MAPS: {
		int e = perf_regions__maps(&ld->regions, pre[0], (const char *)d + 8, len - 8);
		return e == -EINVAL ? 0 : e;	/* a line we cannot read maps nothing */
	}
	case REC_SYMBOL:
		return add_symbol(ld, d, len);
	case REC_ACCOUNTS: {
		if (ld->rules)
			return 0;	/* the report's own rules win */
		size_t line;
		char msg[96];
		int e = account_rules__parse(&ld->stored, (const char *)d, len,
					     &line, msg, sizeof(msg));
		if (e == -EINVAL)
			snprintf(err->msg, sizeof(err->msg),
				 "the stored account rules: line %zu: %s", line, msg);
		if (!e)
			ld->rules = &ld->stored;
		return e;
	}
	case REC_NAME:
		return add_name(ld, d, len);
	case REC_SAMPLE:
		return imported_sample(ld, d, len);
	case REC_SCHED:
		return imported_sched(ld, d, len);
	case REC_LOST:
		if (len >= 16 && pre[0] < r->ncpus) {
			uint64_t v;
			memcpy(&v, d + 8, 8);
			/* The ring's own count covers what PERF_RECORD_LOST
			 * said; keep the larger. */
			if (v > r->cpus[pre[0]].lost)
				r->cpus[pre[0]].lost = v;
		}
		return 0;
	default:
		return 0;	/* newer items: skipped */
	}
}

static int load(int fd, enum steal_method method, const struct account_rules *rules,
		bool partial, unsigned flags, struct loaded_recording *r,
		struct rec_error *err);

int recording__load(int fd, enum steal_method method,
		    const struct account_rules *rules,
		    struct loaded_recording *r, struct rec_error *err)
{
	return load(fd, method, rules, false, 0, r, err);
}

int recording__load_with(int fd, enum steal_method method,
			 const struct account_rules *rules, unsigned flags,
			 struct loaded_recording *r, struct rec_error *err)
{
	return load(fd, method, rules, false, flags, r, err);
}

int recording__load_partial(int fd, enum steal_method method,
			    struct loaded_recording *r, struct rec_error *err)
{
	return load(fd, method, NULL, true, 0, r, err);
}

static int load(int fd, enum steal_method method, const struct account_rules *rules,
		bool partial, unsigned flags, struct loaded_recording *r,
		struct rec_error *err)
{
	struct loader ld = { .r = r, .method = method, .rules = rules };
	memset(r, 0, sizeof(*r));
	memset(err, 0, sizeof(*err));
	hindex__init(&ld.proc_index);
	snprintf(r->steal_source, sizeof(r->steal_source), "unknown");
	snprintf(r->scope, sizeof(r->scope), "all");
	int e = 0;
	struct rec_reader *rd = rec_reader__new(fd, err);
	if (!rd)
		return -errno;
	if (partial)
		rec_reader__set_partial(rd);
	if (flags & LOAD_SALVAGE)
		rec_reader__set_salvage(rd);
	for (;;) {
		uint32_t type, len;
		const uint8_t *d;
		e = rec_reader__next(rd, &type, &d, &len, err);
		if (e <= 0)
			break;
		e = on_item(&ld, type, d, len, err);
		if (e)
			break;
	}
	if (!e)
		r->damaged = rec_reader__damage(rd, &r->damage);
	if (!e && !r->cpus) {
		snprintf(err->msg, sizeof(err->msg), "the recording has no metadata");
		e = -EINVAL;
	}
	if (!e) {
		for (uint32_t c = 0; c < r->ncpus; c++) {
			r->cpus[c].present |= ld.seen0[c] || r->cpus[c].lost;
			r->lost += r->cpus[c].lost;
			if (ld.seen0[c] && ld.seen1[c] && ld.steal1[c] >= ld.steal0[c]) {
				r->cpus[c].kernel_known = true;
				r->cpus[c].kernel_steal_ns = (ld.steal1[c] - ld.steal0[c]) *
							     (1000000000ULL / r->clk_tck);
			}
		}
		if (!strcmp(r->scope, "all"))
			for (uint32_t i = 0; i < r->nprocs; i++)
				r->procs[i].in_scope = true;
		r->steal_known = strncmp(r->steal_source, "unknown", 7) != 0;
		if (!strcmp(r->steal_source, "tracepoints")) {
			live__set_mode(&r->live, LIVE_STINTS);
		} else if (!strcmp(r->steal_source, "sample-gaps")) {
			live__set_mode(&r->live, LIVE_GAPS);
			for (uint32_t c = 0; c < r->ncpus; c++)
				live__set_kernel_steal(&r->live, c, r->cpus[c].kernel_steal_ns);
		} else {
			live__set_mode(&r->live, LIVE_NO_STEAL);
		}
		e = name_samples(&ld);
		if (!e && (flags & LOAD_STACKS))
			e = stack_of_samples(&ld);
		if (!e)
			e = live__finish(&r->live);
		if (!e && (flags & LOAD_STACKS))
			e = sum_stacks(&ld);
	}
	rec_reader__free(rd);
	free(ld.ids);
	free(ld.steal0);
	free(ld.steal1);
	free(ld.seen0);
	free(ld.seen1);
	free(ld.last_time);
	free(ld.scope_pids);
	free(ld.syms);
	free(ld.names);
	free(ld.stack_of);
	free(ld.frames);
	free(ld.acc_cache);
	hindex__release(&ld.acc_index);
	account_rules__release(&ld.stored);
	if (ld.regions_ready)
		regions__release(&ld.regions);
	hindex__release(&ld.proc_index);
	/* Lookups after loading go through the array sorted by pid. */
	if (r->nprocs)	/* procs is NULL when none came */
		qsort(r->procs, r->nprocs, sizeof(*r->procs), cmp_proc);
	return e;
}

const struct loaded_process *loaded_recording__process(
	const struct loaded_recording *r, uint32_t pid)
{
	struct loaded_process key = { .pid = pid };
	if (!r->nprocs)
		return NULL;
	return bsearch(&key, r->procs, r->nprocs, sizeof(*r->procs), cmp_proc);
}

void loaded_recording__release(struct loaded_recording *r)
{
	if (!r)
		return;
	if (r->has_stacks) {
		strtab__release(&r->stacks.keys);
		free(r->stacks.v);
	}
	live__release(&r->live);
	for (uint32_t i = 0; i < r->nprocs; i++) {
		free(r->procs[i].command);
		free(r->procs[i].executable);
	}
	free(r->procs);
	free(r->cpus);
	memset(r, 0, sizeof(*r));
}
