/*
 * pending_stacks: a gone thread's stack rows as the engine handed them
 * out, waiting to be made rows and handed on in that order. Two of them
 * are one row when their stack and account are: the engine's stacks of a
 * thread are apart by their leaf's program, which a stack's leaf frame
 * names, so none are in what the sources give today, but a row table
 * made them one before and a profile must not change. Finding that in a
 * table of keys made once for the thread's whole list, not a row table's
 * index kept as each row came, spares a profile a tenth of its making.
 */
#ifndef CPULEDGER_CORE_PENDING_STACKS_H
#define CPULEDGER_CORE_PENDING_STACKS_H

#include <stdint.h>

struct pending_stack {
	uint32_t stack;
	uint32_t account;	/* a name id; alike ids are alike accounts */
	uint64_t samples, cpu_ns, steal_ns;
	/* pending_stacks__merge: the first of its row, as its index + 1,
	 * when that is another (its figures are in that one's); else 0 */
	uint32_t same;
};

struct pending_slot {
	uint64_t key;		/* stack << 32 | account */
	uint32_t at;		/* the first with it, as its index + 1 */
	uint32_t gen;		/* the merge that took it: another's is free */
};

struct pending_stacks {
	struct pending_stack *v;
	uint32_t n, cap;
	struct pending_slot *slots;	/* pending_stacks__merge's */
	uint32_t slots_cap;
	uint32_t gen;			/* the last merge's (0: none yet) */
};

/* Adds one after the others; 0 or -ENOMEM. */
int pending_stacks__add(struct pending_stacks *p, uint32_t stack, uint32_t account,
			uint64_t samples, uint64_t cpu_ns, uint64_t steal_ns);

/* Each one whose stack and account an earlier one has: its figures added
 * to the first such, and its same set to that. 0 or -ENOMEM. */
int pending_stacks__merge(struct pending_stacks *p);

/* Empties p for the next thread, keeping room for a thousand. */
void pending_stacks__clear(struct pending_stacks *p);
void pending_stacks__release(struct pending_stacks *p);

#endif
