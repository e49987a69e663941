/* regions: see regions.h. Tables are small (tens of code mappings a
 * process), so sorted arrays with memmove beat anything cleverer. */
#include "regions.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "banned.h"

/* Kernel text lives in the upper half of the address space on every 64-bit
 * Linux architecture cpuledger runs on. */
#define KERNEL_START 0xffff000000000000ULL

int regions__init(struct regions *t, struct strtab *strings)
{
	memset(t, 0, sizeof(*t));
	t->strings = strings;
	hindex__init(&t->index);
	t->kernel_dso = strtab__intern(strings, "[kernel.kallsyms]", 17);
	return t->kernel_dso == HINDEX_NONE ? -ENOMEM : 0;
}

void regions__release(struct regions *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->nprocs; i++)
		free(t->procs[i].r);
	free(t->procs);
	hindex__release(&t->index);
	memset(t, 0, sizeof(*t));
}

struct pid_key {
	const struct regions *t;
	uint32_t pid;
};

static bool pid_eq(const void *ctx, uint32_t id)
{
	const struct pid_key *k = ctx;
	return k->t->procs[id].pid == k->pid;
}

static uint64_t pid_hash(uint32_t pid)
{
	return hash_mix(pid ^ 0x7f4a7c159e3779b9ULL);
}

static struct proc_regions *lookup(const struct regions *t, uint32_t pid)
{
	struct pid_key k = { t, pid };
	uint32_t id = hindex__find(&t->index, pid_hash(pid), pid_eq, &k);
	return id == HINDEX_NONE ? NULL : &t->procs[id];
}

static struct proc_regions *proc(struct regions *t, uint32_t pid)
{
	struct proc_regions *p = lookup(t, pid);
	if (p)
		return p;
	if (grow_array((void **)&t->procs, &t->procs_cap, t->nprocs,
		       sizeof(*t->procs), 64) ||
	    hindex__insert(&t->index, pid_hash(pid), t->nprocs))
		return NULL;
	p = &t->procs[t->nprocs++];
	*p = (struct proc_regions){ .pid = pid, .exe = UINT32_MAX };
	return p;
}

void regions__forget(struct regions *t, uint32_t pid)
{
	struct pid_key k = { t, pid };
	uint32_t id = hindex__find(&t->index, pid_hash(pid), pid_eq, &k);
	if (id == HINDEX_NONE)
		return;
	hindex__remove(&t->index, pid_hash(pid), id);
	free(t->procs[id].r);
	uint32_t last = --t->nprocs;
	if (id != last) {	/* the last moves into the hole */
		hindex__remove(&t->index, pid_hash(t->procs[last].pid), last);
		t->procs[id] = t->procs[last];
		hindex__insert(&t->index, pid_hash(t->procs[id].pid), id);	/* no growth */
	}
}

static int insert_at(struct proc_regions *p, uint32_t at, struct region r)
{
	if (grow_array((void **)&p->r, &p->cap, p->n, sizeof(*p->r), 16))
		return -ENOMEM;
	memmove(&p->r[at + 1], &p->r[at], (p->n - at) * sizeof(*p->r));
	p->r[at] = r;
	p->n++;
	return 0;
}

/* Cuts [s, e) out of p's regions, as a new mapping over them does. */
static int unmap(struct proc_regions *p, uint64_t s, uint64_t e)
{
	for (uint32_t i = 0; i < p->n;) {
		struct region *r = &p->r[i];
		if (r->end <= s || r->start >= e) {
			i++;
			continue;
		}
		if (r->start < s && r->end > e) {	/* split in two */
			struct region tail = *r;
			tail.pgoff += e - r->start;
			tail.start = e;
			r->end = s;
			return insert_at(p, i + 1, tail);
		}
		if (r->start < s) {
			r->end = s;
			i++;
		} else if (r->end > e) {
			r->pgoff += e - r->start;
			r->start = e;
			i++;
		} else {
			memmove(r, r + 1, (p->n - i - 1) * sizeof(*r));
			p->n--;
		}
	}
	return 0;
}

/* A name for what has no file: perf's "//anon" and an empty maps path are
 * anonymous memory (JIT code among it). */
static uint32_t dso_of(struct regions *t, const char *path, size_t plen)
{
	if (plen == 0 || (plen >= 6 && memcmp(path, "//anon", 6) == 0))
		return strtab__intern(t->strings, "[anon]", 6);
	return strtab__intern(t->strings, path, plen);
}

static bool is_file(const struct regions *t, uint32_t dso)
{
	return strtab__str(t->strings, dso)[0] == '/';
}

/* The main executable is the first file mapped after the exec (the kernel
 * maps the program before its interpreter), whatever order they came in. */
static void note_exe(const struct regions *t, struct proc_regions *p,
		     uint32_t dso, uint64_t time)
{
	if (is_file(t, dso) && (p->exe == UINT32_MAX || time < p->exe_time)) {
		p->exe = dso;
		p->exe_time = time;
	}
}

static int place(struct proc_regions *p, struct region r)
{
	int err = unmap(p, r.start, r.end);
	if (err)
		return err;
	uint32_t at = 0;
	while (at < p->n && p->r[at].start < r.start)
		at++;
	return insert_at(p, at, r);
}

int regions__map(struct regions *t, uint32_t pid, uint64_t start,
		 uint64_t len, uint64_t pgoff, const char *path, size_t plen,
		 uint64_t time)
{
	if (!len || start + len < start)
		return 0;
	struct proc_regions *p = proc(t, pid);
	uint32_t dso = dso_of(t, path, plen);
	if (!p || dso == HINDEX_NONE)
		return -ENOMEM;
	if (time && time < p->exec_time)
		return 0;	/* the program before an exec already seen */
	note_exe(t, p, dso, time);
	return place(p, (struct region){ start, start + len, pgoff, time, dso });
}

int regions__fork(struct regions *t, uint32_t child, uint32_t parent,
		  uint64_t time)
{
	if (child == parent || !lookup(t, parent))
		return 0;
	struct proc_regions *c = proc(t, child);	/* may move the parent's */
	if (!c)
		return -ENOMEM;
	if (time && c->exec_time > time)
		return 0;	/* its exec came first: nothing of the parent's left */
	const struct proc_regions *pp = lookup(t, parent);
	/* The parent's table, then whatever the child mapped after the fork
	 * that was read before it. */
	struct region *later = c->r;
	uint32_t nlater = c->n;
	c->r = malloc((pp->n ? pp->n : 1) * sizeof(*c->r));
	if (!c->r) {
		c->r = later;
		return -ENOMEM;
	}
	memcpy(c->r, pp->r, pp->n * sizeof(*c->r));
	c->n = pp->n;
	c->cap = pp->n ? pp->n : 1;
	c->exe = pp->exe;
	c->exe_time = pp->exe_time;
	int err = 0;
	for (uint32_t i = 0; i < nlater && !err; i++)
		if (!time || later[i].time > time)
			err = place(c, later[i]);
	free(later);
	return err;
}

int regions__exec(struct regions *t, uint32_t pid, uint64_t time)
{
	struct proc_regions *p = proc(t, pid);
	if (!p)
		return -ENOMEM;
	if (time && time < p->exec_time)
		return 0;	/* an older exec, read after a newer one */
	uint32_t kept = 0;
	p->exe = UINT32_MAX;
	p->exe_time = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		if (!time || p->r[i].time <= time)
			continue;	/* the old program's */
		p->r[kept++] = p->r[i];
		note_exe(t, p, p->r[i].dso, p->r[i].time);
	}
	p->n = kept;
	p->exec_time = time;
	return 0;
}

uint32_t regions__exe(const struct regions *t, uint32_t pid)
{
	const struct proc_regions *p = lookup(t, pid);
	return p ? p->exe : UINT32_MAX;
}

bool regions__find(const struct regions *t, uint32_t pid, uint64_t ip,
		   bool kernel, uint32_t *dso, uint64_t *offset)
{
	if (kernel || ip >= KERNEL_START) {
		*dso = t->kernel_dso;
		*offset = ip;
		return true;
	}
	const struct proc_regions *p = lookup(t, pid);
	if (!p || !p->n)
		return false;
	uint32_t lo = 0, hi = p->n;	/* first region starting after ip */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (p->r[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || ip >= p->r[lo - 1].end)
		return false;
	const struct region *r = &p->r[lo - 1];
	*dso = r->dso;
	*offset = ip - r->start + r->pgoff;
	return true;
}

static bool hex(const char **s, const char *e, uint64_t *v)
{
	const char *p = *s;
	*v = 0;
	while (p < e) {
		unsigned c = (unsigned char)*p, d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			break;
		if (*v >> 60)
			return false;
		*v = *v << 4 | d;
		p++;
	}
	if (p == *s)
		return false;
	*s = p;
	return true;
}

static const char *skip_field(const char *p, const char *e)
{
	while (p < e && *p != ' ')
		p++;
	while (p < e && *p == ' ')
		p++;
	return p;
}

int regions__maps_line(struct regions *t, uint32_t pid, const char *line,
		       size_t len)
{
	const char *p = line, *e = line + len;
	uint64_t start, end, off;
	if (e > p && e[-1] == '\n')
		e--;
	if (!hex(&p, e, &start) || p >= e || *p++ != '-' || !hex(&p, e, &end) ||
	    p >= e || *p++ != ' ' || e - p < 5)
		return -EINVAL;
	bool exec = p[2] == 'x';
	p = skip_field(p, e);	/* perms */
	if (!hex(&p, e, &off))
		return -EINVAL;
	p = skip_field(p, e);	/* offset */
	p = skip_field(p, e);	/* dev */
	p = skip_field(p, e);	/* inode */
	if (!exec || end <= start)
		return 0;
	size_t plen = (size_t)(e - p);
	static const char deleted[] = " (deleted)";
	if (plen > sizeof(deleted) - 1 &&
	    !memcmp(e - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1))
		plen -= sizeof(deleted) - 1;
	return regions__map(t, pid, start, end - start, off, p, plen, 0);
}
