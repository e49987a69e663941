/* accounts: see accounts.h. */
#include "accounts.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"

/* core has no stdio: messages are built by hand. */
static void say(char *msg, size_t size, const char *a, const char *b,
		size_t blen, const char *c)
{
	size_t n = 0;
	const char *parts[3] = { a, b, c };
	size_t lens[3] = { strlen(a), b ? blen : 0, strlen(c) };
	for (int i = 0; i < 3; i++) {
		size_t k = lens[i] < size - 1 - n ? lens[i] : size - 1 - n;
		if (parts[i])
			memcpy(msg + n, parts[i], k);
		n += k;
	}
	msg[n] = '\0';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The next whitespace-separated word of [*p, e). */
static bool word(const char **p, const char *e, const char **w, size_t *n)
{
	while (*p < e && is_space(**p))
		(*p)++;
	if (*p == e || **p == '#')
		return false;
	*w = *p;
	while (*p < e && !is_space(**p))
		(*p)++;
	*n = (size_t)(*p - *w);
	return true;
}

static char *dup(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static bool parse_hex(const char *s, size_t n, uint64_t *v)
{
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2, n -= 2;
	if (!n || n > 16)
		return false;
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') :
			     c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) :
			     c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;
		if (d > 15)
			return false;
		*v = *v << 4 | d;
	}
	return true;
}

static int parse_line(struct account_rule *rule, const char *p, const char *e,
		      char *msg, size_t size)
{
	const char *acc, *m, *pat, *extra;
	size_t nacc, nm, npat, nextra;
	word(&p, e, &acc, &nacc);
	if (!word(&p, e, &m, &nm)) {
		say(msg, size, "account '", acc, nacc, "' has no match (path, symbol, range, kernel or executable)");
		return -EINVAL;
	}
	bool has_pat = word(&p, e, &pat, &npat);
	static const struct { const char *name; enum account_match m; bool pat; } kinds[] = {
		{ "path", MATCH_PATH, true }, { "symbol", MATCH_SYMBOL, true },
		{ "range", MATCH_RANGE, true }, { "kernel", MATCH_KERNEL, false },
		{ "executable", MATCH_EXECUTABLE, false },
	};
	size_t k = 0;
	while (k < 5 && (strlen(kinds[k].name) != nm || memcmp(kinds[k].name, m, nm)))
		k++;
	if (k == 5) {
		say(msg, size, "unknown match '", m, nm, "' (path, symbol, range, kernel or executable)");
		return -EINVAL;
	}
	if (kinds[k].pat && !has_pat) {
		say(msg, size, "'", m, nm, "' needs a pattern");
		return -EINVAL;
	}
	if (!kinds[k].pat && has_pat) {
		say(msg, size, "'", m, nm, "' takes no pattern");
		return -EINVAL;
	}
	if (has_pat && word(&p, e, &extra, &nextra)) {
		say(msg, size, "unexpected '", extra, nextra, "' after the pattern");
		return -EINVAL;
	}
	rule->match = kinds[k].m;
	if (rule->match == MATCH_RANGE) {
		const char *dash = memchr(pat, '-', npat);
		if (!dash || !parse_hex(pat, (size_t)(dash - pat), &rule->lo) ||
		    !parse_hex(dash + 1, (size_t)(pat + npat - dash - 1), &rule->hi) ||
		    rule->hi < rule->lo) {
			say(msg, size, "bad range '", pat, npat, "' (LO-HI in hex, LO <= HI)");
			return -EINVAL;
		}
	} else if (has_pat) {
		rule->pattern = dup(pat, npat);
		if (!rule->pattern)
			return -ENOMEM;
	}
	rule->account = dup(acc, nacc);
	return rule->account ? 0 : -ENOMEM;
}

int account_rules__parse(struct account_rules *r, const char *text, size_t len,
			 size_t *line, char *msg, size_t msg_size)
{
	const char *p = text, *e = text + len;
	size_t cap = 0;
	r->v = NULL;
	r->n = 0;
	*line = 0;
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		const char *end = nl ? nl : e, *q = p, *w;
		size_t n;
		(*line)++;
		if (memchr(p, '\0', (size_t)(end - p))) {
			say(msg, msg_size, "a NUL byte in the line", NULL, 0, "");
			return -EINVAL;
		}
		if (word(&q, end, &w, &n)) {
			if (r->n == cap) {
				cap = cap ? cap * 2 : 16;
				struct account_rule *v = realloc(r->v, cap * sizeof(*v));
				if (!v)
					return -ENOMEM;
				r->v = v;
			}
			memset(&r->v[r->n], 0, sizeof(r->v[r->n]));
			int err = parse_line(&r->v[r->n], p, end, msg, msg_size);
			r->n++;	/* released even when half built */
			if (err)
				return err;
		}
		p = nl ? nl + 1 : e;
	}
	return 0;
}

void account_rules__release(struct account_rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].account);
		free(r->v[i].pattern);
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

static bool rule_matches(const struct account_rule *r, const struct code_site *s)
{
	switch (r->match) {
	case MATCH_PATH:
		return s->dso && fnmatch(r->pattern, s->dso, 0) == 0;
	case MATCH_SYMBOL:
		return s->symbol && fnmatch(r->pattern, s->symbol, 0) == 0;
	case MATCH_RANGE:
		return s->ip >= r->lo && s->ip <= r->hi;
	case MATCH_KERNEL:
		return s->kernel;
	case MATCH_EXECUTABLE:
		return s->executable;
	}
	return false;
}

const char *account_rules__match(const struct account_rules *r,
				 const struct code_site *s)
{
	for (size_t i = 0; r && i < r->n; i++)
		if (rule_matches(&r->v[i], s))
			return r->v[i].account;
	if (s->kernel)
		return "kernel";
	return s->executable ? "program" : "library";
}
