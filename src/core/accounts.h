/*
 * accounts: seed 000's charging identifiers. A rules table tags code with
 * the account (the timer) its CPU time is charged to: one rule a line,
 * first match wins (docs/accounts.md):
 *
 *     ACCOUNT path GLOB       the region's file (fnmatch, '*' spans '/')
 *     ACCOUNT symbol GLOB     the function's name
 *     ACCOUNT range LO-HI     an address range (hex), down to a page
 *     ACCOUNT kernel          the kernel and its modules
 *     ACCOUNT executable      the process's main executable
 *     # a comment
 *
 * Code no rule matches falls to the defaults: kernel -> "kernel", the
 * process's executable -> "program", anything else -> "library".
 */
#ifndef CPULEDGER_CORE_ACCOUNTS_H
#define CPULEDGER_CORE_ACCOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum account_match { MATCH_PATH, MATCH_SYMBOL, MATCH_RANGE, MATCH_KERNEL,
		     MATCH_EXECUTABLE };

struct account_rule {
	enum account_match match;
	char *account;
	char *pattern;		/* path and symbol */
	uint64_t lo, hi;	/* range: [lo, hi] */
};

struct account_rules {
	struct account_rule *v;
	size_t n;
};

/* What a sample is: where it ran, as far as is known. */
struct code_site {
	const char *dso;	/* a path, or [kernel.kallsyms], [anon], ... */
	const char *symbol;	/* NULL when unknown */
	uint64_t ip;
	bool kernel;
	bool executable;	/* dso is the process's main executable */
};

/*
 * Parses rules text (len bytes). Returns 0; -EINVAL with *line (1-based)
 * and msg set; -ENOMEM. Release with account_rules__release() in every case.
 */
int account_rules__parse(struct account_rules *r, const char *text, size_t len,
			 size_t *line, char *msg, size_t msg_size);
void account_rules__release(struct account_rules *r);

/* The account of a site: the first rule that matches, else the default.
 * The string is owned by r (or static). */
const char *account_rules__match(const struct account_rules *r,
				 const struct code_site *s);

#endif
