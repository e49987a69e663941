/*
 * rec_source_feed: a recording's items made into engine events, in file
 * order, with the watermark the file allows (see rec_source.h).
 */
#include "rec_source_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../format/procstat.h"
#include "../symbols/demangle.h"
#include "../core/grow.h"
#include "../core/units.h"
#include "../core/banned.h"

/* The names id of a NAME id (REC_NO_NAME or unknown: the unknown id). */
static uint32_t name_of(const struct rec_source *s, uint32_t id)
{
	return id < s->nmap ? s->name_map[id] : s->unknown;
}

/* NAME: u32 id, u32 0, text. Ids come in order 0, 1, 2... */
static int on_name(struct rec_source *s, const uint8_t *d, uint32_t len,
		   struct rec_error *err)
{
	uint32_t pre[2];
	if (len < 8)
		return 0;
	memcpy(pre, d, 8);
	if (pre[0] != s->nmap) {
		s->bad_records++;
		return 0;
	}
	s->name_bytes += len - 8;
	if (s->nmap >= REC_MAX_NAMES || s->name_bytes > REC_MAX_NAME_BYTES)
		return rec_source_fail(err, rec_reader__offset(s->rd),
				       "more names than a reader holds (docs/robustness.md)");
	/* the file keeps what the symbol table holds; reports show what
	 * perf shows, unless asked for the raw names */
	char buf[1024];
	const char *name = (const char *)d + 8;
	const char *nice = s->o.raw_names ? NULL : demangle(name, len - 8, buf, sizeof(buf));
	uint32_t id = nice ? strtab__intern(&s->names, nice, strlen(nice)) :
			     strtab__intern(&s->names, name, len - 8);
	if (id == HINDEX_NONE || grow_array((void **)&s->name_map, &s->map_cap, s->nmap,
					    sizeof(*s->name_map), 1024))
		return -ENOMEM;
	s->name_map[s->nmap++] = id;
	return 0;
}

static int on_accounts(struct rec_source *s, const uint8_t *d, uint32_t len,
		       struct rec_error *err)
{
	if (s->o.rules || s->res)
		return 0;	/* the report's own rules win */
	size_t line;
	char msg[96];
	int e = account_rules__parse(&s->stored_rules, (const char *)d, len, &line, msg,
				     sizeof(msg));
	if (e == -EINVAL) {
		err->offset = rec_reader__offset(s->rd);
		snprintf(err->msg, sizeof(err->msg), "the stored account rules: line %zu: %s",
			 line, msg);
	}
	s->have_stored_rules = !e;
	return e;
}

/* A frame as a file names it (NAME ids, the file's flags), as the names
 * table's ids. */
static struct res_frame named_frame(const struct rec_source *s, uint64_t ip,
				    uint32_t function, uint32_t dso, uint32_t flags)
{
	return (struct res_frame){ .ip = ip, .function = name_of(s, function),
				   .dso = name_of(s, dso), .flags = (uint8_t)(flags & 3) };
}

/* What the items read on a thread of their own leave to the engine's
 * (rec_split.h): the run-queue waits, which its sinks ask for as threads
 * are handed out. */
enum { NOTE_WAIT, NOTE_CLOCK_WAIT };

/* SAMPLE: a head, then nframes frames with NAME ids, the sample's first. */
static int on_sample(struct rec_source *s, struct engine *e, const uint8_t *d,
		     uint32_t len, struct rec_error *err)
{
	static __thread struct res_frame f[RES_MAX_FRAMES];
	struct rec_sample_head h;
	struct rec_frame rf;
	if (len < sizeof(h))
		goto bad;
	memcpy(&h, d, sizeof(h));
	if (h.nframes > REC_MAX_FRAMES)
		return rec_source_fail(err, rec_reader__offset(s->rd),
				       "a sample with more frames than a reader holds");
	if (h.cpu >= s->meta.ncpus || len != sizeof(h) + h.nframes * sizeof(rf))
		goto bad;
	/* without stacks only the sample's own frame is used: naming the
	 * callers too was most of a sample's reading */
	uint32_t n = 0, want = s->o.stacks ? RES_MAX_FRAMES : 1;
	for (uint32_t i = 0; i < h.nframes && n < want; i++) {
		memcpy(&rf, d + sizeof(h) + i * sizeof(rf), sizeof(rf));
		f[n++] = named_frame(s, rf.ip, rf.function, rf.dso, rf.flags);
	}
	if (!n)	/* no frame: a function not known */
		f[n++] = (struct res_frame){ .function = s->unknown, .dso = s->unknown };
	return rec_source_sample(s, e, f, n, h.pid, h.tid, h.cpu, h.time_ns);
bad:
	s->bad_records++;
	return 0;
}

/* STACK: u32 id, u32 nframes, then each frame's function and file NAME
 * ids and flags. Ids come in order 0, 1, 2... */
static int on_stack(struct rec_source *s, const uint8_t *d, uint32_t len,
		    struct rec_error *err)
{
	struct rec_stack h;
	struct rec_stack_frame rf;
	if (len < sizeof(h))
		goto bad;
	memcpy(&h, d, sizeof(h));
	if (h.nframes > REC_MAX_FRAMES)
		return rec_source_fail(err, rec_reader__offset(s->rd),
				       "a stack with more frames than a reader holds");
	if (h.id != s->nfstacks || len != sizeof(h) + h.nframes * sizeof(rf))
		goto bad;
	/* as a sample's: the frames past RES_MAX_FRAMES are not named */
	uint32_t n = h.nframes < RES_MAX_FRAMES ? h.nframes : RES_MAX_FRAMES;
	s->stack_budget += n ? n : 1;	/* stacks without frames count too */
	if (s->stack_budget > REC_MAX_STACK_FRAMES)
		return rec_source_fail(err, rec_reader__offset(s->rd),
				       "more stacks than a reader holds (docs/robustness.md)");
	if (grow_array((void **)&s->fstacks, &s->fstacks_cap, s->nfstacks,
		       sizeof(*s->fstacks), 1024))
		return -ENOMEM;
	static __thread struct res_frame f[RES_MAX_FRAMES];
	for (uint32_t i = 0; i < n; i++) {
		memcpy(&rf, d + sizeof(h) + i * sizeof(rf), sizeof(rf));
		f[i] = named_frame(s, 0, rf.function, rf.dso, rf.flags);
	}
	struct file_stack *fs = &s->fstacks[s->nfstacks++];
	*fs = (struct file_stack){ .n = n, .nframes = h.nframes };
	return rec_source_stack(s, fs, f, n);
bad:
	s->bad_records++;
	return 0;
}

/* STACK_SAMPLE: a head naming a STACK, then an address for each of its
 * frames. */
static int on_stack_sample(struct rec_source *s, struct engine *e, const uint8_t *d,
			   uint32_t len)
{
	struct rec_stack_sample h;
	if (len < sizeof(h))
		goto bad;
	memcpy(&h, d, sizeof(h));
	if (h.cpu >= s->meta.ncpus || h.stack >= s->nfstacks)
		goto bad;
	struct file_stack *fs = &s->fstacks[h.stack];
	if (rec_reader__version(s->rd) < 4) {
		if (len != sizeof(h) + (uint64_t)fs->nframes * sizeof(uint64_t))
			goto bad;
		return rec_source_stack_sample(s, e, fs, d + sizeof(h), &h);
	}
	/* version 4: the addresses in the block's own, where they are read */
	const uint8_t *ips;
	if (len != sizeof(h) || rec_reader__addresses(s->rd, fs->nframes, &ips) < 0)
		goto bad;
	return rec_source_stack_sample(s, e, fs, ips, &h);
bad:
	s->bad_records++;
	return 0;
}

static int on_sched(struct rec_source *s, struct engine *e, const uint8_t *d, uint32_t len)
{
	struct rec_sched r;
	if (len != sizeof(r))
		goto bad;
	memcpy(&r, d, sizeof(r));
	if (r.cpu >= s->meta.ncpus || (r.kind != REC_SCHED_SWITCH && r.kind != REC_SCHED_RUNTIME))
		goto bad;
	rec_source_seen(s, r.cpu, r.time_ns);
	struct eng_event ev = { .time = r.time_ns, .cpu = r.cpu, .value = r.value };
	if (r.kind == REC_SCHED_SWITCH) {
		s->switches++;
		ev.kind = EK_SWITCH;
		ev.pid = r.a;
		ev.tid = r.b;
	} else {
		s->runtimes++;
		ev.kind = EK_RUNTIME;
		ev.tid = r.a;
	}
	return rec_source_push(s, e, &ev);
bad:
	s->bad_records++;
	return 0;
}

int rec_source_clock_wait(struct rec_source *s, const struct rec_clock_wait *w)
{
	/* its wait so far, for when it is handed out: the end's REC_WAIT
	 * (every thread's total) comes after a thread gone before it */
	if (w->first) {
		cgstats__waits_taken(&s->cg, 0);
		cgstats__waits_taken(&s->cg, 1);
	}
	if (cgstats__wait_grow(&s->cg, w->pid, w->tid, w->wait_ns) ||
	    (s->o.waits_once && w->final && cgstats__wait_final(&s->cg, w->pid, w->tid)))
		return -ENOMEM;
	return 0;
}

/* A read of the collector's at t: the latest, for the end's check. */
static void clock_seen(struct rec_source *s, uint64_t t)
{
	if (t > s->clock_now) {
		s->clock_now = t;
		s->clock_now_offset = rec_reader__offset(s->rd);
	}
}

/* A thread's figures read from the kernel's clocks (a recording whose
 * source is bpf), and its wait since its last. */
static int on_clock(struct rec_source *s, struct engine *e, const uint8_t *d, uint32_t len)
{
	struct rec_clock r;
	if (len != sizeof(r) || (memcpy(&r, d, sizeof(r)), r.flags & ~REC_CLOCK_FINAL)) {
		s->bad_records++;
		return 0;
	}
	struct rec_clock_wait w = { .pid = r.pid, .tid = r.tid, .wait_ns = r.wait_ns,
				    .first = !s->clocks++, .final = r.flags & REC_CLOCK_FINAL };
	int err = s->split ? rec_split__note(s->split, NOTE_CLOCK_WAIT, &w, sizeof(w)) :
		  rec_source_clock_wait(s, &w);
	if (err)
		return err;
	clock_seen(s, r.time_ns);
	struct eng_event ev = { .kind = EK_CLOCK, .time = r.time_ns, .pid = r.pid,
				.tid = r.tid, .value = r.cpu_ns, .steal = r.steal_ns,
				.flags = r.flags & REC_CLOCK_FINAL ? EF_FINAL : 0 };
	return rec_source_push(s, e, &ev);
}

/* CPUCLOCK: a CPU's steal while threads held it, since its last. */
static int on_cpuclock(struct rec_source *s, struct engine *e, const uint8_t *d, uint32_t len)
{
	struct rec_cpuclock r;
	if (len != sizeof(r) || (memcpy(&r, d, sizeof(r)), r.cpu >= s->meta.ncpus) || r.zero) {
		s->bad_records++;
		return 0;
	}
	s->cpu_clocks++;
	clock_seen(s, r.time_ns);
	struct eng_event ev = { .kind = EK_CPU_CLOCK, .time = r.time_ns, .cpu = r.cpu,
				.steal = r.busy_steal_ns };
	return rec_source_push(s, e, &ev);
}

static int on_taskev(struct rec_source *s, struct engine *e, const uint8_t *d, uint32_t len)
{
	struct rec_taskev t;
	if (len != sizeof(t) || (memcpy(&t, d, sizeof(t)), t.cpu >= s->meta.ncpus) ||
	    t.kind < REC_TASK_FORK || t.kind > REC_TASK_EXIT) {
		s->bad_records++;
		return 0;
	}
	rec_source_seen(s, t.cpu, t.time_ns);
	struct eng_event ev = {
		.kind = t.kind == REC_TASK_FORK ? EK_FORK : t.kind == REC_TASK_COMM ? EK_COMM :
			EK_EXIT,
		.time = t.time_ns, .cpu = t.cpu, .pid = t.pid, .tid = t.tid,
		.ppid = t.ppid, .ptid = t.ptid, .comm = name_of(s, t.comm),
		.flags = t.flags & REC_TASK_EXEC ? EF_EXEC : 0,
	};
	return rec_source_push(s, e, &ev);
}

static int on_lostwin(struct rec_source *s, struct engine *e, const uint8_t *d, uint32_t len)
{
	struct rec_lostwin w;
	if (len != sizeof(w) || (memcpy(&w, d, sizeof(w)), w.cpu >= s->meta.ncpus)) {
		s->bad_records++;
		return 0;
	}
	rec_source_seen(s, w.cpu, w.to_ns);
	struct eng_event ev = { .kind = EK_LOST, .time = w.to_ns, .cpu = w.cpu,
				.value = w.from_ns };
	return rec_source_push(s, e, &ev);
}

static inline unsigned is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* A copy of text (n bytes) with control characters made '?': text from
 * the recorded machine goes into reports. cut marks it as cut short. */
static char *clean_text(const char *text, size_t n, bool cut)
{
	char *c = malloc(n + 8);
	if (!c)
		return NULL;
	/* control characters are rare: sixteen bytes at a time are checked
	 * (a loop the compiler makes vector code of) and copied, and from
	 * the first sixteen holding one, byte by byte (a compile loop's
	 * command lines, byte by byte, were 2 % of a report's time) */
	const unsigned char *t = (const unsigned char *)text;
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		unsigned bad = 0;
		for (int j = 0; j < 16; j++)
			bad |= is_control(t[i + j]);
		if (bad)
			break;
		memcpy(c + i, t + i, 16);
	}
	for (; i < n; i++)
		c[i] = (char)(is_control(t[i]) ? '?' : t[i]);
	memcpy(c + n, cut ? " [...]" : "", cut ? 7 : 1);
	return c;
}

/* A command line and executable, for process pid. */
static int proc_event(struct rec_source *s, struct engine *e, uint64_t time, uint32_t pid,
		      const char *cmd, size_t cmd_len, bool cut, const char *exe,
		      size_t exe_len, int64_t uid)
{
	struct eng_event ev = { .kind = EK_PROC, .time = time, .pid = pid, .uid = uid };
	if (cmd_len && !(ev.text = clean_text(cmd, cmd_len, cut)))
		return -ENOMEM;
	if (exe_len && !(ev.exe = clean_text(exe, exe_len, false))) {
		free(ev.text);
		return -ENOMEM;
	}
	return rec_source_push(s, e, &ev);
}

static int on_proc(struct rec_source *s, struct engine *e, const uint8_t *d, uint32_t len)
{
	struct rec_proc p;
	if (len < sizeof(p) || (memcpy(&p, d, sizeof(p)),
				(uint64_t)p.command_len + p.exe_len != len - sizeof(p))) {
		s->bad_records++;
		return 0;
	}
	const char *text = (const char *)d + sizeof(p);
	return proc_event(s, e, p.time_ns, p.pid, text, p.command_len, p.flags & REC_PROC_CUT,
			  text + p.command_len, p.exe_len,
			  p.uid == REC_PROC_NO_UID ? -1 : (int64_t)p.uid);
}

static int on_cgroup(struct rec_source *s, struct engine *e, const uint8_t *d, uint32_t len)
{
	struct rec_cgroup c;
	if (len != sizeof(c) || (memcpy(&c, d, sizeof(c)), c.name >= s->nmap)) {
		s->bad_records++;
		return 0;
	}
	struct eng_event ev = { .kind = EK_CGROUP, .time = c.time_ns ? c.time_ns : s->now,
				.pid = c.pid, .tid = c.tid, .cgroup = name_of(s, c.name) };
	return rec_source_push(s, e, &ev);
}

/* A counter of a CGSTAT line: "-" is unknown. */
static bool counter(const char **p, uint64_t *v)
{
	if (**p == '-') {
		*p += 1 + ((*p)[1] == ' ');
		return false;
	}
	char *end;
	*v = strtoull(*p, &end, 10);
	*p = end + (*end == ' ');
	return true;
}

/* CGSTAT: "USAGE_NS THROTTLED_NS NR_THROTTLED PATH" per line. */
static int on_cgstat(struct rec_source *s, const uint8_t *d, uint32_t len)
{
	struct rec_cgstat h;
	if (len < sizeof(h) || (memcpy(&h, d, sizeof(h)), h.phase > REC_PHASE_END)) {
		s->bad_records++;
		return 0;
	}
	const char *p = (const char *)d + sizeof(h), *end = (const char *)d + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		char line[4200];
		size_t n = (size_t)(nl - p);
		if (n >= sizeof(line)) {
			s->bad_records++;
			p = nl + 1;
			continue;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p = nl + 1;
		struct cg_counters c = { 0 };
		const char *q = line;
		c.usage_known = counter(&q, &c.usage_ns);
		c.throttled_known = counter(&q, &c.throttled_ns);
		c.throttled_known &= counter(&q, &c.nr_throttled);
		if (*q != '/') {
			s->bad_records++;
			continue;
		}
		uint32_t name = strtab__intern(&s->names, q, strlen(q));
		if (name == HINDEX_NONE || cgstats__counters(&s->cg, (int)h.phase, name, &c))
			return -ENOMEM;
	}
	return 0;
}

/* WAIT: each task's run-queue wait so far. */
int rec_source_wait_item(struct rec_source *s, const uint8_t *d, uint32_t len, uint64_t *bad)
{
	struct rec_wait h;
	if (len < sizeof(h) || (memcpy(&h, d, sizeof(h)), h.phase > REC_PHASE_END) ||
	    (len - sizeof(h)) / sizeof(struct rec_wait_task) != h.count ||
	    (len - sizeof(h)) % sizeof(struct rec_wait_task)) {
		(*bad)++;
		return 0;
	}
	for (uint32_t i = 0; i < h.count; i++) {
		struct rec_wait_task t;
		memcpy(&t, d + sizeof(h) + i * sizeof(t), sizeof(t));
		if (cgstats__wait(&s->cg, (int)h.phase, t.pid, t.tid, t.wait_ns))
			return -ENOMEM;
	}
	cgstats__waits_taken(&s->cg, (int)h.phase);
	return 0;
}

static int on_wait(struct rec_source *s, const uint8_t *d, uint32_t len)
{
	return s->split ? rec_split__note(s->split, NOTE_WAIT, d, len) :
	       rec_source_wait_item(s, d, len, &s->bad_records);
}

/* TASK: a thread alive at the start, with its name. */
static int on_task(struct rec_source *s, struct engine *e, const uint32_t *pre,
		   const uint8_t *text, uint32_t n)
{
	/* an empty name (the thread was exiting as it was read): none, not
	 * a failed intern (ENGINE_NONE and HINDEX_NONE are the same value) */
	uint32_t comm = ENGINE_NONE;
	if (n && (comm = strtab__intern(&s->names, (const char *)text, n)) == HINDEX_NONE)
		return -ENOMEM;
	struct eng_event ev = { .kind = EK_TASK, .time = s->now, .pid = pre[0],
				.tid = pre[1], .comm = comm };
	return rec_source_push(s, e, &ev);
}

static int on_procstat(struct rec_source *s, uint32_t phase, const uint8_t *d,
		       uint32_t len, struct rec_error *err)
{
	char *text = malloc(len + 1);
	if (!text)
		return -ENOMEM;
	memcpy(text, d, len);
	text[len] = '\0';
	int n = phase ? procstat_steal(text, s->steal1, s->seen1, s->meta.ncpus) :
			procstat_steal(text, s->steal0, s->seen0, s->meta.ncpus);
	free(text);
	return n < 0 ? rec_source_fail(err, rec_reader__offset(s->rd),
				       "bad /proc/stat snapshot") : 0;
}

/* Items that start with two u32s. */
static int on_prefixed(struct rec_source *s, struct engine *e, uint32_t type,
		       const uint8_t *d, uint32_t len, struct rec_error *err)
{
	uint32_t pre[2];
	if (len < 8)
		return 0;	/* too short to be one: skipped */
	memcpy(pre, d, 8);
	const uint8_t *rest = d + 8;
	uint32_t n = len - 8;
	switch (type) {
	case REC_PERF:
		return rec_source_v1_perf(s, e, pre[0], rest, n);
	case REC_TASK:
		return on_task(s, e, pre, rest, n);
	case REC_CMDLINE:
		return proc_event(s, e, s->now, pre[0], (const char *)rest, n, false, NULL, 0, -1);
	case REC_PROCINFO:
		return proc_event(s, e, s->now, pre[0], NULL, 0, false, (const char *)rest, n,
				  pre[1] == UINT32_MAX ? -1 : (int64_t)pre[1]);
	case REC_PROCSTAT:
		return on_procstat(s, pre[0], rest, n, err);
	case REC_MAPS: {
		int r = rec_source_resolver(s);
		return r ? r : resolver__maps(s->res, pre[0], (const char *)rest, n);
	}
	case REC_LOST:
		if (n >= 8 && pre[0] < s->meta.ncpus) {
			uint64_t v;
			memcpy(&v, rest, 8);
			/* the ring's own count covers what PERF_RECORD_LOST
			 * said: keep the larger */
			if (v > s->cpus[pre[0]].lost)
				s->cpus[pre[0]].lost = v;
		}
		return 0;
	}
	return 0;
}

static int on_item(struct rec_source *s, struct engine *e, uint32_t type,
		   const uint8_t *d, uint32_t len, struct rec_error *err)
{
	switch (type) {
	case REC_META: {
		char msg[160];
		int r = rec_meta__parse(&s->meta, (const char *)d, len, msg, sizeof(msg));
		if (r == -EINVAL)
			return rec_source_fail(err, rec_reader__offset(s->rd), msg);
		bool clock = s->clock_now > s->now;
		uint64_t latest = clock ? s->clock_now : s->now;
		if (!r && s->meta.end_ns && latest > s->meta.end_ns + REC_SLACK_NS) {
			snprintf(msg, sizeof(msg), "an event at %llu ns, after the recording "
				 "ended (%llu ns)", (unsigned long long)latest,
				 (unsigned long long)s->meta.end_ns);
			return rec_source_fail(err, clock ? s->clock_now_offset : s->now_offset,
					       msg);
		}
		return r;
	}
	case REC_ACCOUNTS:
		return on_accounts(s, d, len, err);
	case REC_NAME:
		return on_name(s, d, len, err);
	case REC_SAMPLE:
		return on_sample(s, e, d, len, err);
	case REC_STACK:
		return on_stack(s, d, len, err);
	case REC_STACK_SAMPLE:
		return on_stack_sample(s, e, d, len);
	case REC_SCHED:
		return on_sched(s, e, d, len);
	case REC_TASKEV:
		return on_taskev(s, e, d, len);
	case REC_LOSTWIN:
		return on_lostwin(s, e, d, len);
	case REC_PROC:
		return on_proc(s, e, d, len);
	case REC_CGROUP:
		return on_cgroup(s, e, d, len);
	case REC_CGSTAT:
		return on_cgstat(s, d, len);
	case REC_WAIT:
		return on_wait(s, d, len);
	case REC_CLOCK:
		return on_clock(s, e, d, len);
	case REC_CPUCLOCK:
		return on_cpuclock(s, e, d, len);
	case REC_ROUND: {
		uint64_t t;
		if (len < 8)
			return 0;
		memcpy(&t, d, 8);
		return rec_source_advance(s, e, t);
	}
	case REC_SYMBOL:
	case REC_DSO:
		return 0;	/* read first (version 1), or for people */
	default:
		return on_prefixed(s, e, type, d, len, err);
	}
}

/* What the end of the file says per CPU: the kernel's steal, losses. */
static void finish_cpus(struct rec_source *s, struct engine *e)
{
	for (uint32_t c = 0; c < s->meta.ncpus; c++) {
		struct source_cpu *ci = &s->cpus[c];
		ci->present |= s->seen0[c] || ci->lost;
		if (s->seen0[c] && s->seen1[c] && s->steal1[c] >= s->steal0[c]) {
			ci->kernel_known = true;
			ci->kernel_steal_ns = (s->steal1[c] - s->steal0[c]) *
					      (NSEC_PER_SEC / s->meta.clk_tck);
			engine__set_kernel_steal(e, c, ci->kernel_steal_ns);
		}
	}
}

static void count_events(struct rec_source *s)
{
	const struct rec_meta *m = &s->meta;
	/* an import's META counts every event of the text */
	for (uint32_t i = 0; i < m->nevents && s->nevents < 16; i++)
		s->events[s->nevents++] = m->events[i];
	if (m->nevents)
		return;
	struct source_event own[] = {
		{ "cpu-clock", s->samples }, { "sched:sched_switch", s->switches },
		{ "sched:sched_stat_runtime", s->runtimes },
		{ "bpf:thread-clocks", s->clocks }, { "bpf:cpu-clocks", s->cpu_clocks },
	};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (own[i].samples || !i)
			s->events[s->nevents++] = own[i];
}

/* The engine has handed a thread out to every sink (o.waits_once): a
 * gone one's wait is forgotten at the next item (cgstats__wait_sweep). */
static int on_handed(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	struct rec_source *s = ctx;
	const struct eng_proc *p = engine__proc(e, t->proc);
	return p ? cgstats__wait_handed(&s->cg, p->pid, t->tid) : 0;
}

/* The next item's stack, when it is a STACK_SAMPLE, fetched into the
 * cache while this item is handled: a recording's stacks are many (tens
 * of thousands at 8 minutes), and finding a sample's was a miss of the
 * cache a sample (half of on_item). */
static void fetch_next_stack(const struct rec_source *s)
{
	uint32_t type;
	const uint8_t *d;
	if (!rec_reader__peek(s->rd, &type, &d, sizeof(struct rec_stack_sample)) ||
	    type != REC_STACK_SAMPLE)
		return;
	uint32_t id;
	memcpy(&id, d + offsetof(struct rec_stack_sample, stack), sizeof(id));
	if (id < s->nfstacks)
		__builtin_prefetch(&s->fstacks[id]);
}

int rec_source_read_items(struct rec_source *s, struct engine *e, struct rec_error *err)
{
	int r = 0;
	while (!r) {
		/* set anyway: built whole, GCC did not see that a read that
		 * returns 1 sets them, and warned */
		uint32_t type = 0, len = 0;
		const uint8_t *d = NULL;
		r = rec_reader__next(s->rd, &type, &d, &len, err);
		if (r <= 0)
			break;
		fetch_next_stack(s);
		r = on_item(s, e, type, d, len, err);
		/* read on a thread of their own, the waits are the engine's
		 * thread's (rec_split.c) */
		if (!s->split && s->cg.nhanded)
			cgstats__wait_sweep(&s->cg, NULL, NULL);
	}
	return r;
}

static int split_read(void *ctx, struct rec_error *err)
{
	struct rec_source *s = ctx;
	s->err = err;	/* the reading thread's until it ends */
	return rec_source_read_items(s, NULL, err);
}

static int split_note(void *ctx, uint32_t kind, const uint8_t *d, uint32_t len)
{
	struct rec_source *s = ctx;
	if (kind == NOTE_WAIT)
		return rec_source_wait_item(s, d, len, &s->split_bad);
	struct rec_clock_wait w;
	memcpy(&w, d, sizeof(w));
	return rec_source_clock_wait(s, &w);
}

static uint64_t split_streams_read(void *ctx)
{
	return rec_source_streams_read(ctx);
}

/* As after each item read here: a gone thread's wait is forgotten. */
static void split_after(void *ctx)
{
	struct rec_source *s = ctx;
	if (s->cg.nhanded)
		cgstats__wait_sweep(&s->cg, NULL, NULL);
}

/*
 * Whether address space is free: the pinned tables reserve 17 GiB of it
 * (pinned.h), which takes no memory, but counts against an address-space
 * or data limit (ulimit -v, -d) and, under strict overcommit, against
 * the memory the system commits to: a report that needs 100 MB would
 * fail there. Then the items are read as before.
 */
static bool room_is_free(void)
{
	struct rlimit as, data;
	if (getrlimit(RLIMIT_AS, &as) || as.rlim_cur != RLIM_INFINITY ||
	    getrlimit(RLIMIT_DATA, &data) || data.rlim_cur != RLIM_INFINITY)
		return false;
	FILE *f = fopen("/proc/sys/vm/overcommit_memory", "re");
	int mode = 2;	/* unknown: as strict */
	if (f) {
		if (fscanf(f, "%d", &mode) != 1)
			mode = 2;
		fclose(f);
	}
	return mode != 2;
}

/*
 * The items read on a thread of their own where that helps (o.split:
 * the report's half of the work is the heavier), e fed here
 * (rec_split.h); 1 when they are not. The names and stacks tables are
 * that thread's, read here for the ids given (pinned: their arrays do
 * not move as they grow); the stacks, that a report adds to too (a
 * program no sample placed is a stack of its function alone), take a
 * lock to add to.
 *
 * Not so for version 1's records (they forget processes by the
 * watermark, in the resolver, as the engine advances) nor for an import
 * of perf script text: a few threads, the engine's work light, it is the
 * reading that takes an import's time, and its blocks read ahead with
 * the rest here took 0.14 s where split took 0.18 (bench/RESULTS.md,
 * round 18).
 */
static int feed_split(struct rec_source *s, struct engine *e, struct rec_error *err)
{
	if (!s->o.split || s->meta.version < 2 || s->meta.imported ||
	    !rec_reader__may_read_ahead(s->rd) || !room_is_free())
		return 1;
	if (strtab__pin(&s->names))
		return 1;
	if (stacktab__pin(&s->stacks))
		return strtab__unpin(&s->names) ? -ENOMEM : 1;
	struct rec_split_client c = { s, split_read, split_note, split_after,
				      split_streams_read };
	pthread_mutex_t lock;
	if (pthread_mutex_init(&lock, NULL))
		return 1;
	struct rec_split *sp = rec_split__new(s->meta.ncpus, &c);
	int r = 1;
	if (sp) {
		stacktab__share(&s->stacks, &lock);
		s->split = sp;
		r = rec_split__run(sp, e, err);
		s->split = NULL;
		s->err = err;
		stacktab__share(&s->stacks, NULL);
		s->bad_records += s->split_bad;
		s->split_bad = 0;
		rec_split__free(sp);
	}
	pthread_mutex_destroy(&lock);
	return r;
}

int rec_source__feed(struct rec_source *s, struct engine *e, struct rec_error *err)
{
	int r = 0;
	s->err = err;
	if (s->o.waits_once && !s->waits_sink) {
		/* the last sink: every other one has asked when it is called */
		struct engine_sink sink = { .ctx = s, .thread_gone = on_handed };
		if ((r = engine__add_sink(e, &sink)))
			return r;
		s->waits_sink = true;
	}
	for (uint32_t i = 0; i < s->meta.nscope && s->meta.scope != SCOPE_ALL && !r; i++)
		r = engine__scope(e, s->meta.scope_pids[i]);
	if (!r && (r = feed_split(s, e, err)) == 1) {
		rec_reader__read_ahead(s->rd);
		r = rec_source_read_items(s, e, err);
	}
	if (r)
		return r;
	s->damaged = rec_reader__damage(s->rd, &s->damage);
	finish_cpus(s, e);
	count_events(s);
	r = rec_source_v1_advance(s, e);
	/* read to its end: the blocks' buffers (1.3 MB) are not wanted
	 * while the rows are made and written */
	rec_reader__free(s->rd);
	s->rd = NULL;
	return r;
}
