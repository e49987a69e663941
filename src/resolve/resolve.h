/*
 * resolve: where a sampled address is, in the terms reports use: its code
 * region's file (dso), the function there, and the charge account the
 * rules give it (seed 000). One module that the live recorder and the
 * reader of recordings share, so both name a sample alike:
 *
 *   regions   each process's mappings, from perf's MMAP2, FORK and exec
 *             records and /proc/PID/maps (core/regions.h);
 *   symbols   a symbol source: the symbolizer on the live files, or the
 *             functions a version 1 recording stored;
 *   accounts  the rules, decided once per (file, function, mode) unless a
 *             rule names an address range.
 *
 * Names (functions, files, accounts) are ids of a strtab the caller owns.
 * Lookups are cached by function range per file, so a hot loop costs one
 * symbol lookup, not one per sample.
 */
#ifndef CPULEDGER_RESOLVE_RESOLVE_H
#define CPULEDGER_RESOLVE_RESOLVE_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/accounts.h"
#include "../core/strtab.h"
#include "perf_decode.h"

/* A function found by a symbol source: [start, end) of file offsets (for
 * the kernel: addresses) and its name (the source's, valid until its next
 * lookup). */
struct sym_hit {
	const char *name;
	uint64_t start, end;
};

struct sym_source {
	void *ctx;
	/* 0, or -ENOENT when no function holds offset in dso */
	int (*lookup)(void *ctx, const char *dso, uint64_t offset, struct sym_hit *out);
	/* code of no file (a JIT's) at addr of process pid, with the file
	 * that named it in *dso; may be NULL */
	int (*jit)(void *ctx, uint32_t pid, uint64_t addr, struct sym_hit *out,
		   const char **dso);
};

#define RES_KERNEL 1		/* a kernel address */
#define RES_EXECUTABLE 2	/* in the process's main executable */

struct res_frame {
	uint64_t ip;		/* the address (a caller's: its return address) */
	uint64_t offset;	/* in its file (kernel: the address) */
	uint32_t function;	/* name id; the unknown id when no symbol */
	uint32_t dso;		/* name id; the unknown id when no region */
	uint8_t flags;
};

#define RES_MAX_FRAMES 512	/* deeper chains keep their leaf end */

struct resolved {
	struct res_frame frames[RES_MAX_FRAMES];	/* leaf first */
	uint32_t nframes;
};

struct resolver;

/* names: where ids go; syms: may be NULL (no functions named); rules:
 * NULL for the defaults. NULL with errno ENOMEM. */
struct resolver *resolver__new(struct strtab *names, const struct sym_source *syms,
			       const struct account_rules *rules);
void resolver__free(struct resolver *r);

/* Accounts by these rules from now on (NULL: the defaults); the caller
 * keeps them alive. */
void resolver__set_rules(struct resolver *r, const struct account_rules *rules);

/* The id of "[unknown]" in names. */
uint32_t resolver__unknown(const struct resolver *r);

/* A perf record that may change regions (MMAP, MMAP2, FORK, exec), with
 * its time. 0, -EINVAL (malformed: nothing changed), -ENOMEM. */
int resolver__record(struct resolver *r, const void *rec, size_t len);
/* /proc/PID/maps text of a process running at the start. */
int resolver__maps(struct resolver *r, uint32_t pid, const char *text, size_t len);
/* A process has gone: its regions are forgotten. */
void resolver__forget(struct resolver *r, uint32_t pid);

/* A cpu-clock sample: its own frame and, with a call chain, its callers;
 * their functions named when name says so (else their files alone).
 * 0 or -ENOMEM. */
int resolver__sample(struct resolver *r, const struct perf_ev *s, bool name,
		     struct resolved *out);

/* The account (name id) of code at (dso, function, ip) with RES_ flags,
 * by the rules; ENGINE_NONE... : UINT32_MAX when memory runs out. */
uint32_t resolver__account(struct resolver *r, uint32_t dso, uint32_t function,
			   uint64_t ip, uint8_t flags);
/* Whether an account can depend on the address (a rule names a range):
 * if not, one frame's account holds for every address in its function. */
bool resolver__reads_addresses(const struct resolver *r);

#endif
