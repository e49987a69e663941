/* cgstats: see cgstats.h. */
#include "cgstats.h"

#include <errno.h>
#include <string.h>

#include "grow.h"
#include "banned.h"

void cgstats__init(struct cgstats *s)
{
	memset(s, 0, sizeof(*s));
	hindex__init(&s->group_index);
	hindex__init(&s->wait_index);
}

void cgstats__release(struct cgstats *s)
{
	free(s->groups);
	free(s->waits);
	free(s->handed);
	hindex__release(&s->group_index);
	hindex__release(&s->wait_index);
	memset(s, 0, sizeof(*s));
}

struct group_key {
	const struct cgstats *s;
	uint32_t name;
};

static bool group_eq(const void *ctx, uint32_t id)
{
	const struct group_key *k = ctx;
	return k->s->groups[id].name == k->name;
}

static uint32_t group_find(const struct cgstats *s, uint32_t name)
{
	struct group_key k = { s, name };
	return hindex__find(&s->group_index, hash_mix(name), group_eq, &k);
}

int cgstats__counters(struct cgstats *s, int phase, uint32_t name,
		      const struct cg_counters *c)
{
	uint32_t id = group_find(s, name);
	if (id == HINDEX_NONE) {
		if (grow_array((void **)&s->groups, &s->groups_cap, s->ngroups,
			       sizeof(*s->groups), 16) ||
		    hindex__insert(&s->group_index, hash_mix(name), s->ngroups))
			return -ENOMEM;
		id = s->ngroups++;
		s->groups[id] = (struct cg_entry){ .name = name };
	}
	s->groups[id].seen[phase != 0] = true;
	s->groups[id].c[phase != 0] = *c;
	return 0;
}

struct wait_key {
	const struct cgstats *s;
	uint32_t pid, tid;
};

static bool wait_eq(const void *ctx, uint32_t id)
{
	const struct wait_key *k = ctx;
	return k->s->waits[id].tid == k->tid && k->s->waits[id].pid == k->pid;
}

static uint64_t wait_hash(uint32_t pid, uint32_t tid)
{
	return hash_mix((uint64_t)pid << 32 | tid);
}

static uint32_t wait_find(const struct cgstats *s, uint32_t pid, uint32_t tid)
{
	struct wait_key k = { s, pid, tid };
	return hindex__find(&s->wait_index, wait_hash(pid, tid), wait_eq, &k);
}

/* Thread tid's entry, made on first sight: its id, or HINDEX_NONE. */
static uint32_t wait_entry(struct cgstats *s, uint32_t pid, uint32_t tid)
{
	uint32_t id = wait_find(s, pid, tid);
	if (id != HINDEX_NONE)
		return id;
	if (grow_array((void **)&s->waits, &s->waits_cap, s->nwaits, sizeof(*s->waits), 64) ||
	    hindex__insert(&s->wait_index, wait_hash(pid, tid), s->nwaits))
		return HINDEX_NONE;
	s->waits[s->nwaits] = (struct cg_wait){ .pid = pid, .tid = tid };
	return s->nwaits++;
}

int cgstats__wait(struct cgstats *s, int phase, uint32_t pid, uint32_t tid, uint64_t ns)
{
	uint32_t id = wait_entry(s, pid, tid);
	if (id == HINDEX_NONE)
		return -ENOMEM;
	s->waits[id].seen[phase != 0] = true;
	s->waits[id].ns[phase != 0] = ns;
	return 0;
}

int cgstats__wait_grow(struct cgstats *s, uint32_t pid, uint32_t tid, uint64_t ns)
{
	uint32_t id = wait_entry(s, pid, tid);
	if (id == HINDEX_NONE)
		return -ENOMEM;
	s->waits[id].seen[1] = true;
	s->waits[id].ns[1] += ns;
	s->waits[id].final = false;	/* (after its last: a new thread's) */
	s->waits[id].grown = true;
	return 0;
}

bool cgstats__wait_counted(const struct cgstats *s, uint32_t pid, uint32_t tid)
{
	uint32_t id = wait_find(s, pid, tid);
	return id != HINDEX_NONE && s->waits[id].grown;
}

int cgstats__wait_final(struct cgstats *s, uint32_t pid, uint32_t tid)
{
	uint32_t id = wait_entry(s, pid, tid);
	if (id == HINDEX_NONE)
		return -ENOMEM;
	s->waits[id].final = true;
	return 0;
}

int cgstats__wait_handed(struct cgstats *s, uint32_t pid, uint32_t tid)
{
	uint32_t id = wait_find(s, pid, tid);
	if (id == HINDEX_NONE || !s->waits[id].final)
		return 0;
	if (grow_array((void **)&s->handed, &s->handed_cap, s->nhanded, sizeof(*s->handed), 64))
		return -ENOMEM;
	s->handed[s->nhanded++] = (struct cg_thread_id){ pid, tid };
	return 0;
}

void cgstats__wait_forget(struct cgstats *s, uint32_t pid, uint32_t tid)
{
	uint32_t id = wait_find(s, pid, tid);
	if (id == HINDEX_NONE)
		return;
	struct cg_wait *w = s->waits;
	/* ids are dense: the last entry takes the freed one's place */
	hindex__remove(&s->wait_index, wait_hash(pid, tid), id);
	uint32_t last = --s->nwaits;
	if (id == last)
		return;
	hindex__remove(&s->wait_index, wait_hash(w[last].pid, w[last].tid), last);
	w[id] = w[last];
	/* (no allocation: the slot freed above has room) */
	hindex__insert(&s->wait_index, wait_hash(w[id].pid, w[id].tid), id);
}

void cgstats__wait_sweep(struct cgstats *s, void (*fn)(void *ctx, uint32_t pid, uint32_t tid),
			 void *ctx)
{
	for (uint32_t i = 0; i < s->nhanded; i++) {
		const struct cg_thread_id *h = &s->handed[i];
		uint32_t id = wait_find(s, h->pid, h->tid);
		if (id == HINDEX_NONE || !s->waits[id].final)
			continue;	/* forgotten already, or a new thread's */
		cgstats__wait_forget(s, h->pid, h->tid);
		if (fn)
			fn(ctx, h->pid, h->tid);
	}
	s->nhanded = 0;
	/* a storm of exits handed out at once leaves no big list behind */
	if (s->handed_cap > 4096) {
		free(s->handed);
		s->handed = NULL;
		s->handed_cap = 0;
	}
}

void cgstats__waits_taken(struct cgstats *s, int phase)
{
	s->have_waits[phase != 0] = true;
}

static uint64_t since(uint64_t end, uint64_t start)
{
	return end > start ? end - start : 0;
}

bool cgstats__change(const struct cgstats *s, uint32_t name, struct cg_counters *out)
{
	memset(out, 0, sizeof(*out));
	uint32_t id = group_find(s, name);
	if (id == HINDEX_NONE || !s->groups[id].seen[1])
		return false;
	const struct cg_entry *g = &s->groups[id];
	struct cg_counters zero = { .usage_known = true, .throttled_known = true };
	const struct cg_counters *a = g->seen[0] ? &g->c[0] : &zero, *b = &g->c[1];
	out->usage_known = a->usage_known && b->usage_known;
	out->throttled_known = a->throttled_known && b->throttled_known;
	out->usage_ns = out->usage_known ? since(b->usage_ns, a->usage_ns) : 0;
	out->throttled_ns = out->throttled_known ? since(b->throttled_ns, a->throttled_ns) : 0;
	out->nr_throttled = out->throttled_known ? since(b->nr_throttled, a->nr_throttled) : 0;
	return out->usage_known || out->throttled_known;
}

bool cgstats__thread_wait(const struct cgstats *s, uint32_t pid, uint32_t tid, uint64_t *ns)
{
	*ns = 0;
	if (!s->have_waits[1])
		return false;
	uint32_t id = wait_find(s, pid, tid);
	if (id == HINDEX_NONE || !s->waits[id].seen[1])
		return false;
	const struct cg_wait *w = &s->waits[id];
	/* not there at the start: born during the recording, or the start
	 * was not read (then not known) */
	if (!w->seen[0] && !s->have_waits[0])
		return false;
	*ns = since(w->ns[1], w->seen[0] ? w->ns[0] : 0);
	return true;
}

/* Thread tid's wait at the start: false when it was not read then (born
 * since, or no start snapshot). */
static bool start_wait(const struct cgstats *s, uint32_t pid, uint32_t tid, uint64_t *ns)
{
	uint32_t id = wait_find(s, pid, tid);
	*ns = 0;
	if (id == HINDEX_NONE || !s->waits[id].seen[0])
		return false;
	*ns = s->waits[id].ns[0];
	return true;
}

int cgstats__wait_since_start(const struct cgstats *s,
			      int (*read)(void *ctx, uint32_t pid, uint32_t tid, uint64_t *ns),
			      void *ctx, uint32_t pid, uint32_t tid, uint64_t *ns)
{
	uint64_t now, base = 0;
	int err = read(ctx, pid, tid, &now);
	if (err)
		return err;
	if (!s || !start_wait(s, pid, tid, &base) || base > now)
		base = 0;
	*ns = now - base;
	return 0;
}
