/*
 * stacks: CPU time and steal per distinct call stack and thread, for
 * outputs that draw stacks (pprof). A stack is a run of (function, dso)
 * string-id pairs, leaf first, interned in keys; its time is its thread's
 * time in proportion to samples, its steal that of its leaf function's
 * program in proportion to samples, as for the rows of a table.
 */
#ifndef CPULEDGER_CORE_STACKS_H
#define CPULEDGER_CORE_STACKS_H

#include <stdint.h>

#include "strtab.h"

struct stack_sample {
	uint32_t stack;		/* id in keys */
	uint32_t pid, tid;
	uint32_t account;	/* string id of the leaf's account, or NO_DSO */
	uint64_t samples, cpu_ns, steal_ns;
};

struct stack_set {
	const struct strtab *names;	/* what the pairs' ids name */
	struct strtab keys;		/* each stack: uint32_t pairs */
	struct stack_sample *v;
	uint32_t n, cap;
};

#endif
