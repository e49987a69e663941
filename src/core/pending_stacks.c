/* pending_stacks: see pending_stacks.h. */
#include "pending_stacks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hindex.h"
#include "banned.h"

/* The room kept between threads (40 KB of rows, 32 KB of slots). */
#define PENDING_KEEP 1024

int pending_stacks__add(struct pending_stacks *p, uint32_t stack, uint32_t account,
			uint64_t samples, uint64_t cpu_ns, uint64_t steal_ns)
{
	if (grow_array((void **)&p->v, &p->cap, p->n, sizeof(*p->v), 64))
		return -ENOMEM;
	p->v[p->n++] = (struct pending_stack){ stack, account, samples, cpu_ns, steal_ns, 0 };
	return 0;
}

/* Each row's key looked up in a table of twice as many slots as there
 * are rows, in order: the first of a key takes its slot, a later one
 * finds it there. A sort of them took more than the rows it spared. A
 * slot another merge took is free: the table is not cleared for each
 * thread (that was half of a merge, a thread's few dozen rows in a
 * table sized for the most a thread had). */
int pending_stacks__merge(struct pending_stacks *p)
{
	uint32_t n = p->n;
	if (n < 2)
		return 0;
	size_t size = 16;
	while (size < 2 * (size_t)n)
		size *= 2;
	if (size > p->slots_cap) {
		free(p->slots);
		if (!(p->slots = malloc(size * sizeof(*p->slots)))) {
			p->slots_cap = 0;
			return -ENOMEM;
		}
		p->slots_cap = (uint32_t)size;
		p->gen = 0;
	}
	if (!p->gen || p->gen == UINT32_MAX) {	/* new slots, or every gen used */
		memset(p->slots, 0, p->slots_cap * sizeof(*p->slots));
		p->gen = 0;
	}
	uint32_t gen = ++p->gen;
	size_t mask = size - 1;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t key = (uint64_t)p->v[i].stack << 32 | p->v[i].account;
		size_t at = hash_mix(key) & mask;
		while (p->slots[at].gen == gen && p->slots[at].key != key)
			at = (at + 1) & mask;
		if (p->slots[at].gen != gen) {
			p->slots[at] = (struct pending_slot){ key, i + 1, gen };
			continue;
		}
		uint32_t first = p->slots[at].at - 1;
		struct pending_stack *to = &p->v[first], *from = &p->v[i];
		to->samples += from->samples;
		to->cpu_ns += from->cpu_ns;
		to->steal_ns += from->steal_ns;
		from->same = first + 1;
	}
	return 0;
}

void pending_stacks__clear(struct pending_stacks *p)
{
	p->n = 0;
	if (p->cap > PENDING_KEEP || p->slots_cap > 2 * PENDING_KEEP)
		pending_stacks__release(p);
}

void pending_stacks__release(struct pending_stacks *p)
{
	free(p->v);
	free(p->slots);
	memset(p, 0, sizeof(*p));
}
