/* resolve: see resolve.h. */
#include "resolve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/hindex.h"
#include "../core/regions.h"
#include "perf_regions.h"
#include "../core/banned.h"

/* A function already found in a file. */
struct range {
	uint64_t start, end;
	uint32_t name;
};

/* The functions found so far in one file, sorted by start. */
struct file_syms {
	uint32_t dso;
	struct range *v;
	uint32_t n, cap;
};

/* An account decided once for code of one (dso, function, mode). */
struct acc_entry {
	uint32_t dso, function, account;
	uint8_t flags;
};

#define MISSES_MAX (1u << 20)	/* offsets known to have no symbol */
#define ACC_RECENT 4096u	/* a power of 2 */

struct resolver {
	struct strtab *names;
	struct sym_source syms;
	bool have_syms;
	const struct account_rules *rules;
	bool rules_have_ranges;
	uint32_t unknown;
	struct regions regions;
	struct file_syms *files;
	uint32_t nfiles, files_cap;
	struct hindex file_index;
	struct hindex misses;		/* (dso, offset) hashes with no symbol */
	uint64_t *miss_keys;
	uint32_t nmisses, misses_cap;
	struct acc_entry *acc;
	uint32_t nacc, acc_cap;
	struct hindex acc_index;
	/* the accounts last decided, by hash: a sample's site is mostly one
	 * of a few hot ones, and the index and its entry are a cache miss
	 * each (account UINT32_MAX: empty) */
	struct acc_entry acc_recent[ACC_RECENT];
};

struct resolver *resolver__new(struct strtab *names, const struct sym_source *syms,
			       const struct account_rules *rules)
{
	struct resolver *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->names = names;
	if (syms) {
		r->syms = *syms;
		r->have_syms = true;
	}
	r->rules = rules;
	for (size_t i = 0; rules && i < rules->n; i++)
		r->rules_have_ranges |= rules->v[i].match == MATCH_RANGE;
	hindex__init(&r->file_index);
	hindex__init(&r->misses);
	hindex__init(&r->acc_index);
	memset(r->acc_recent, 0xff, sizeof(r->acc_recent));
	r->unknown = strtab__intern(names, "[unknown]", 9);
	if (r->unknown == HINDEX_NONE || regions__init(&r->regions, names)) {
		resolver__free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void resolver__free(struct resolver *r)
{
	if (!r)
		return;
	regions__release(&r->regions);
	for (uint32_t i = 0; i < r->nfiles; i++)
		free(r->files[i].v);
	free(r->files);
	free(r->miss_keys);
	free(r->acc);
	hindex__release(&r->file_index);
	hindex__release(&r->misses);
	hindex__release(&r->acc_index);
	free(r);
}

void resolver__set_rules(struct resolver *r, const struct account_rules *rules)
{
	r->rules = rules;
	r->rules_have_ranges = false;
	for (size_t i = 0; rules && i < rules->n; i++)
		r->rules_have_ranges |= rules->v[i].match == MATCH_RANGE;
	/* each account is decided again, by the new rules */
	hindex__release(&r->acc_index);
	hindex__init(&r->acc_index);
	memset(r->acc_recent, 0xff, sizeof(r->acc_recent));
	r->nacc = 0;
}

uint32_t resolver__unknown(const struct resolver *r)
{
	return r->unknown;
}

int resolver__record(struct resolver *r, const void *rec, size_t len)
{
	return perf_regions__apply(&r->regions, rec, len);
}

int resolver__maps(struct resolver *r, uint32_t pid, const char *text, size_t len)
{
	int err = perf_regions__maps(&r->regions, pid, text, len);
	return err == -EINVAL ? 0 : err;	/* a line we cannot read maps nothing */
}

void resolver__forget(struct resolver *r, uint32_t pid)
{
	regions__forget(&r->regions, pid);
}

struct file_key {
	const struct resolver *r;
	uint32_t dso;
};

static bool file_eq(const void *ctx, uint32_t id)
{
	const struct file_key *k = ctx;
	return k->r->files[id].dso == k->dso;
}

static struct file_syms *file_syms(struct resolver *r, uint32_t dso)
{
	struct file_key k = { r, dso };
	uint64_t h = hash_mix(dso ^ 0x3c6ef372fe94f82bULL);
	uint32_t id = hindex__find(&r->file_index, h, file_eq, &k);
	if (id != HINDEX_NONE)
		return &r->files[id];
	if (grow_array((void **)&r->files, &r->files_cap, r->nfiles, sizeof(*r->files), 64) ||
	    hindex__insert(&r->file_index, h, r->nfiles))
		return NULL;
	r->files[r->nfiles] = (struct file_syms){ .dso = dso };
	return &r->files[r->nfiles++];
}

/* The range holding offset, or NULL; *at: where one would be inserted. */
static const struct range *find_range(const struct file_syms *f, uint64_t offset,
				      uint32_t *at)
{
	uint32_t lo = 0, hi = f->n;	/* first range starting after offset */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (f->v[mid].start <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo && offset < f->v[lo - 1].end ? &f->v[lo - 1] : NULL;
}

static bool miss_eq(const void *ctx, uint32_t id)
{
	const struct { const struct resolver *r; uint64_t key; } *k = ctx;
	return k->r->miss_keys[id] == k->key;
}

/* Whether (dso, offset) is known to have no symbol; notes it if add. */
static bool missed(struct resolver *r, uint32_t dso, uint64_t offset, bool add)
{
	uint64_t key = hash_mix(offset) ^ ((uint64_t)dso << 40 | dso);
	struct { const struct resolver *r; uint64_t key; } k = { r, key };
	uint64_t h = hash_mix(key);
	if (!add)
		return hindex__find(&r->misses, h, miss_eq, &k) != HINDEX_NONE;
	if (r->nmisses >= MISSES_MAX) {	/* bounded: start over */
		hindex__release(&r->misses);
		hindex__init(&r->misses);
		r->nmisses = 0;
	}
	if (!grow_array((void **)&r->miss_keys, &r->misses_cap, r->nmisses,
			sizeof(*r->miss_keys), 1024) &&
	    !hindex__insert(&r->misses, h, r->nmisses))
		r->miss_keys[r->nmisses++] = key;
	return true;
}

/* The function (name id) at offset in dso, or the unknown id. */
static uint32_t function_at(struct resolver *r, uint32_t dso, uint64_t offset)
{
	if (!r->have_syms || dso == r->unknown)
		return r->unknown;
	struct file_syms *f = file_syms(r, dso);
	uint32_t at;
	const struct range *hit = f ? find_range(f, offset, &at) : NULL;
	if (hit)
		return hit->name;
	if (!f || missed(r, dso, offset, false))
		return r->unknown;
	struct sym_hit s;
	if (r->syms.lookup(r->syms.ctx, strtab__str(r->names, dso), offset, &s) ||
	    s.end <= s.start || offset < s.start || offset >= s.end) {
		missed(r, dso, offset, true);
		return r->unknown;
	}
	uint32_t name = strtab__intern(r->names, s.name, strlen(s.name));
	if (name == HINDEX_NONE)
		return r->unknown;
	f = file_syms(r, dso);	/* names may have grown, not files */
	find_range(f, offset, &at);
	/* a range overlapping the next one (a size-0 symbol's guess) is cut */
	if (at < f->n && s.end > f->v[at].start)
		s.end = f->v[at].start;
	if (!grow_array((void **)&f->v, &f->cap, f->n, sizeof(*f->v), 64)) {
		memmove(&f->v[at + 1], &f->v[at], (f->n - at) * sizeof(*f->v));
		f->v[at] = (struct range){ s.start, s.end, name };
		f->n++;
	}
	return name;
}

/* Whether a region is code of no file: anonymous memory, a memfd. */
static bool anonymous(const char *dso)
{
	return !strncmp(dso, "//anon", 6) || !strncmp(dso, "[anon", 5) ||
	       !strncmp(dso, "/memfd:", 7);
}

/* Code a JIT made: named by the process's perf map, if it has one. */
static bool jit_code(struct resolver *r, uint32_t pid, uint64_t ip, struct res_frame *fr)
{
	struct sym_hit s;
	const char *file;
	if (!r->have_syms || !r->syms.jit || r->syms.jit(r->syms.ctx, pid, ip, &s, &file))
		return false;
	uint32_t f = strtab__intern(r->names, s.name, strlen(s.name));
	uint32_t d = strtab__intern(r->names, file, strlen(file));
	if (f == HINDEX_NONE || d == HINDEX_NONE)
		return false;
	fr->function = f;
	fr->dso = d;
	fr->offset = ip;
	return true;
}

static void resolve_one(struct resolver *r, uint32_t pid, uint64_t ip, bool kernel,
			bool name, struct res_frame *fr)
{
	fr->ip = ip;
	fr->flags = kernel ? RES_KERNEL : 0;
	bool found = regions__find(&r->regions, pid, ip, kernel, &fr->dso, &fr->offset);
	if (!kernel && name && (!found || anonymous(strtab__str(r->names, fr->dso))) &&
	    jit_code(r, pid, ip, fr))
		return;
	if (!found) {
		fr->dso = r->unknown;
		fr->offset = ip;
		fr->function = r->unknown;
		return;
	}
	if (fr->dso == regions__exe(&r->regions, pid))
		fr->flags |= RES_EXECUTABLE;
	fr->function = name ? function_at(r, fr->dso, fr->offset) : r->unknown;
}

int resolver__sample(struct resolver *r, const struct perf_ev *s, bool name,
		     struct resolved *out)
{
	static __thread uint64_t ips[RES_MAX_FRAMES];
	static __thread bool kern[RES_MAX_FRAMES];
	resolve_one(r, s->pid, s->ip, s->kernel, name, &out->frames[0]);
	out->nframes = 1;
	uint32_t n = s->chain ? perf_chain_frames(s, ips, kern, RES_MAX_FRAMES) : 0;
	/* the chain's first frame is the sampled address: the sample's own */
	for (uint32_t i = n && ips[0] == s->ip ? 1 : 0; i < n; i++) {
		if (out->nframes == RES_MAX_FRAMES)
			break;
		/* a return address: the call is the byte before it */
		struct res_frame *fr = &out->frames[out->nframes++];
		resolve_one(r, s->pid, ips[i] - 1, kern[i], name, fr);
		fr->ip = ips[i];
	}
	return 0;
}

static bool acc_eq(const void *ctx, uint32_t id)
{
	const struct { const struct resolver *r; struct acc_entry k; } *q = ctx;
	const struct acc_entry *e = &q->r->acc[id];
	return e->dso == q->k.dso && e->function == q->k.function && e->flags == q->k.flags;
}

static uint32_t account_match(struct resolver *r, uint32_t dso, uint32_t function,
			      uint64_t ip, uint8_t flags)
{
	struct code_site site = {
		.dso = strtab__str(r->names, dso),
		.symbol = function != r->unknown ? strtab__str(r->names, function) : NULL,
		.ip = ip,
		.kernel = flags & RES_KERNEL,
		.executable = flags & RES_EXECUTABLE,
	};
	const char *acc = account_rules__match(r->rules, &site);
	return strtab__intern(r->names, acc, strlen(acc));
}

bool resolver__reads_addresses(const struct resolver *r)
{
	return r->rules_have_ranges;
}

uint32_t resolver__account(struct resolver *r, uint32_t dso, uint32_t function,
			   uint64_t ip, uint8_t flags)
{
	if (r->rules_have_ranges)
		return account_match(r, dso, function, ip, flags);
	struct { const struct resolver *r; struct acc_entry k; } q =
		{ r, { dso, function, 0, flags } };
	uint64_t h = hash_mix(((uint64_t)dso << 32 | function) ^ hash_mix(flags));
	struct acc_entry *c = &r->acc_recent[h & (ACC_RECENT - 1)];
	if (c->dso == dso && c->function == function && c->flags == flags &&
	    c->account != UINT32_MAX)
		return c->account;
	uint32_t id = hindex__find(&r->acc_index, h, acc_eq, &q);
	if (id != HINDEX_NONE) {
		*c = r->acc[id];
		return c->account;
	}
	q.k.account = account_match(r, dso, function, ip, flags);
	if (q.k.account == HINDEX_NONE ||
	    grow_array((void **)&r->acc, &r->acc_cap, r->nacc, sizeof(*r->acc), 256) ||
	    hindex__insert(&r->acc_index, h, r->nacc))
		return UINT32_MAX;
	r->acc[r->nacc++] = q.k;
	*c = q.k;
	return q.k.account;
}
