/* perf_script: see perf_script.h. */
#include "perf_script.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "../core/grow.h"
#include "../core/units.h"
#include "../core/banned.h"

int line_splitter__feed(struct line_splitter *s, const char *buf, size_t n,
			line_fn fn, void *ctx)
{
	const char *p = buf, *end = buf + n;
	int err = 0;
	if (s->len) {	/* finish the line the last run began */
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;
		if (grow_bytes(&s->carry, &s->cap, s->len + take + 1, 256))
			return -ENOMEM;
		memcpy(s->carry + s->len, p, take);
		s->len += take;
		if (!nl)
			return 0;
		err = fn(ctx, s->carry, s->len);
		s->len = 0;
		p = nl + 1;
	}
	const char *nl;
	while (!err && p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
		err = fn(ctx, p, (size_t)(nl - p));
		p = nl + 1;
	}
	if (err || p == end)
		return err;
	if (grow_bytes(&s->carry, &s->cap, (size_t)(end - p) + 1, 256))
		return -ENOMEM;
	memcpy(s->carry, p, (size_t)(end - p));
	s->len = (size_t)(end - p);
	return 0;
}

int line_splitter__finish(struct line_splitter *s, line_fn fn, void *ctx)
{
	size_t n = s->len;
	s->len = 0;
	return n ? fn(ctx, s->carry, n) : 0;
}

void line_splitter__release(struct line_splitter *s)
{
	free(s->carry);
	memset(s, 0, sizeof(*s));
}

/* In s[from, n), the last " (" with a ')' after it: the '(' in *open,
 * and the line's last ')' in *close; false when there is none. */
static bool last_module(const char *s, size_t n, size_t from, size_t *open, size_t *close)
{
	if (n <= from)
		return false;
	const char *cp = memrchr(s + from, ')', n - from);
	if (!cp)
		return false;
	size_t c = (size_t)(cp - s);
	/* each '(' back from it (memrchr's: the path between is long) */
	for (size_t k = c; k > from + 1;) {
		const char *op = memrchr(s + from + 1, '(', k - from - 1);
		if (!op)
			return false;
		k = (size_t)(op - s);
		if (s[k - 1] == ' ') {
			*open = k;
			*close = c;
			return true;
		}
	}
	return false;
}

bool perf_script__frame_parts(const char *s, size_t n, struct frame_parts *fp)
{
	size_t i = 0;
	while (i < n && ps_is_word(s[i]))
		i++;
	if (i == 0)
		return false;
	size_t fstart = i;
	while (fstart < n && ps_is_space(s[fstart]))
		fstart++;
	size_t open, close;
	/* the module's " (" must leave a function of one character at
	 * least, or (no symbol) come right after the spaces */
	if (!last_module(s, n, fstart > i ? fstart - 1 : fstart, &open, &close))
		return false;
	fp->pc = s;
	fp->pclen = i;
	fp->gap = fstart - i;
	fp->func = s + fstart;
	fp->flen = open - 1 > fstart ? open - 1 - fstart : 0;
	fp->mod = s + open + 1;
	fp->mlen = close - open - 1;
	/* no symbol after a single space: the reference's pattern needs one
	 * character of function, which it takes from the address, and a
	 * one-character address leaves none */
	return fp->flen || fp->gap > 1 || i > 1;
}

size_t perf_script__strip_offset(const char *func, size_t flen)
{
	size_t x = flen;
	while (x && (ps_is_digit(func[x - 1]) || (func[x - 1] >= 'a' && func[x - 1] <= 'f')))
		x--;
	if (x < flen && x >= 3 && func[x - 1] == 'x' && func[x - 2] == '0' &&
	    func[x - 3] == '+')
		return x - 3;
	return flen;
}

bool perf_script__is_noise(const char *s, size_t n)
{
	static const char *const prefixes[] = {
		"Warning:", "Error:", "Failed to open", "failed to open",
		"Processed ", "Check IO/CPU overload", "Lost ", "no symbols found",
		"Kernel address maps", "Couldn't record", "Symbol resolution may",
		"Samples in kernel", "Check /proc/", "Consider ", "AUX data lost",
	};
	while (n && ps_is_space(s[n - 1]))
		n--;
	if (!n)
		return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t l = strlen(prefixes[i]);
		if (n >= l && !memcmp(s, prefixes[i], l))
			return true;
	}
	/* a source line: one word ending in ":LINE" ("??:0" when unknown) */
	if (memchr(s, ' ', n) || memchr(s, '\t', n))
		return false;
	size_t d = n;
	while (d && isdigit((unsigned char)s[d - 1]))
		d--;
	return d < n && d > 1 && s[d - 1] == ':';
}

uint64_t perf_script__lost_chunks(const char *s, size_t n)
{
	if (n < 10 || memcmp(s, "Processed ", 10))
		return 0;
	const char *l = memmem(s, n, " and lost ", 10);
	uint64_t lost = 0;
	for (l = l ? l + 10 : s + n; l < s + n && isdigit((unsigned char)*l); l++)
		lost = lost * 10 + (uint64_t)(*l - '0');
	return lost;
}

/* Digits at s[*i..n) as a number, *i past them; false when there are none
 * or they overflow. Nineteen digits cannot: only past them is it asked. */
static bool digits(const char *s, size_t n, size_t *i, uint64_t *out)
{
	size_t b = *i, k = b;
	uint64_t v = 0;
	for (; k < n && ps_is_digit(s[k]); k++) {
		uint64_t d = (uint64_t)(s[k] - '0');
		if (k - b >= 19 && v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*i = k;
	*out = v;
	return k > b;
}

#ifdef __SSE2__
/* Bit i: s[i] of the 16 at s is a space (ps_is_space: ' ', or \t \v \f
 * \r, the bytes 9 to 13 but the newline). */
static unsigned space_bits(const char *s)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
	__m128i blank = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
	/* 9..13 as 0..4, unsigned: at most 4 is min(x, 4) == x */
	__m128i x = _mm_sub_epi8(v, _mm_set1_epi8(9));
	__m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(4)), x);
	__m128i nl = _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'));
	return (unsigned)_mm_movemask_epi8(_mm_or_si128(blank, _mm_andnot_si128(nl, ctl)));
}
#endif

static size_t skip_spaces(const char *s, size_t n, size_t i)
{
#ifdef __SSE2__
	/* sixteen at a time: headers are padded with runs of spaces, and
	 * frames indented by them */
	for (; i + 16 <= n; i += 16) {
		unsigned word = ~space_bits(s + i) & 0xffffu;
		if (word)
			return i + (size_t)__builtin_ctz(word);
	}
#endif
	while (i < n && ps_is_space(s[i]))
		i++;
	return i;
}

size_t perf_script__skip_spaces(const char *s, size_t n)
{
	return skip_spaces(s, n, 0);
}

/* A header's words: where each starts and ends. */
enum { PS_MAX_WORDS = 64 };
struct words {
	const char *s;
	size_t n, count;
	size_t b[PS_MAX_WORDS], e[PS_MAX_WORDS];
};

/* Splitting a header was a third of reading one, byte by byte over its
 * runs of spaces (bench/RESULTS.md, round 32): sixteen bytes at a time,
 * a word's start a byte not a space after one that is, its end the
 * reverse. The last sixteen are copied out, padded with spaces, so no
 * read passes the line's end. */
static void split_words(const char *s, size_t n, struct words *w)
{
	w->s = s;
	w->n = n;
	w->count = 0;
#ifdef __SSE2__
	unsigned before = 1;	/* the byte before is a space (or no byte) */
	bool in_word = false;
	for (size_t i = 0; i < n; i += 16) {
		unsigned sp;
		if (i + 16 <= n) {
			sp = space_bits(s + i);
		} else {
			char pad[16];
			memset(pad, ' ', sizeof(pad));
			memcpy(pad, s + i, n - i);
			sp = space_bits(pad);
		}
		unsigned prev = (sp << 1 | before) & 0xffffu;	/* bit j: byte j - 1 a space */
		unsigned edges = (sp ^ prev) & 0xffffu;	/* a word starts or ends */
		before = sp >> 15 & 1;
		for (; edges; edges &= edges - 1) {
			size_t at = i + (size_t)__builtin_ctz(edges);
			if (at >= n)
				break;
			if (!in_word) {
				if (w->count == PS_MAX_WORDS)
					return;
				w->b[w->count] = at;
			} else {
				w->e[w->count++] = at;
			}
			in_word = !in_word;
		}
	}
	if (in_word)
		w->e[w->count++] = n;
#else
	for (size_t i = skip_spaces(s, n, 0); i < n && w->count < PS_MAX_WORDS;
	     i = skip_spaces(s, n, i)) {
		w->b[w->count] = i;
		while (i < n && !ps_is_space(s[i]))
			i++;
		w->e[w->count++] = i;
	}
#endif
}

static size_t wlen(const struct words *w, size_t k)
{
	return w->e[k] - w->b[k];
}

static const char *wstr(const struct words *w, size_t k)
{
	return w->s + w->b[k];
}

/* "-1" or digits, the whole of s[0..n), as a number up to UINT32_MAX. */
static bool id_value(const char *s, size_t n, int64_t *out)
{
	if (n == 2 && s[0] == '-' && s[1] == '1') {
		*out = -1;
		return true;
	}
	size_t i = 0;
	uint64_t v;
	if (!digits(s, n, &i, &v) || i != n || v > UINT32_MAX)
		return false;
	*out = (int64_t)v;
	return true;
}

/* "PID/TID" or one id. */
static bool id_word(const char *s, size_t n, struct ps_header *h)
{
	const char *slash = memchr(s, '/', n);
	if (!slash)
		return id_value(s, n, &h->tid) && (h->pid = PS_ID_NONE, true);
	return id_value(s, (size_t)(slash - s), &h->pid) &&
	       id_value(slash + 1, n - (size_t)(slash - s) - 1, &h->tid);
}

/* "[CPU]" */
static bool cpu_word(const char *s, size_t n, struct ps_header *h)
{
	size_t i = 1;
	uint64_t v;
	if (n < 3 || s[0] != '[' || s[n - 1] != ']' || !digits(s, n - 1, &i, &v) ||
	    i != n - 1 || v > INT32_MAX)
		return false;
	h->cpu = (int32_t)v;
	return true;
}

/* perf's MISC letters: cpu mode, mmap data, exec, switch out, preempted. */
static bool misc_word(const char *s, size_t n)
{
	if (n > 6)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("KUHGgMESp", s[i]))
			return false;
	return n > 0;
}

/* The time of day, "YYYY-MM-DD" "HH:MM:SS[.frac]" (two words). */
static bool tod_words(const struct words *w, size_t k)
{
	if (k + 1 >= w->count || wlen(w, k) != 10 || wlen(w, k + 1) < 8)
		return false;
	const char *d = wstr(w, k), *t = wstr(w, k + 1);
	for (size_t i = 0; i < 10; i++)
		if (i == 4 || i == 7 ? d[i] != '-' : !ps_is_digit(d[i]))
			return false;
	return ps_is_digit(t[0]) && ps_is_digit(t[1]) && t[2] == ':' &&
	       t[5] == ':' && t[wlen(w, k + 1) - 1] != ':';
}

/* "seconds.fraction:", microseconds or nanoseconds (any digits). */
static bool time_word(const char *s, size_t n, struct ps_header *h)
{
	size_t i = 0;
	uint64_t sec;
	if (n < 4 || s[n - 1] != ':' || !digits(s, n, &i, &sec) || i >= n || s[i] != '.')
		return false;
	size_t f = ++i;
	uint64_t frac = 0;
	for (; i < n - 1; i++) {
		if (!ps_is_digit(s[i]))
			return false;
		if (i - f < 9)
			frac = frac * 10 + (uint64_t)(s[i] - '0');
	}
	if (i == f || sec > UINT64_MAX / NSEC_PER_SEC - 1)
		return false;
	for (size_t k = i - f; k < 9; k++)
		frac *= 10;
	h->has_time = true;
	h->time_ns = sec * NSEC_PER_SEC + frac;
	return true;
}

/* An event: a word that ends in ':' (its modifiers, too, end in one). */
static bool event_word(const char *s, size_t n)
{
	return n >= 2 && s[n - 1] == ':' && s[0] != ':';
}

/*
 * The fields after COMM, from word k on, in perf's order. A digit word
 * right after COMM is the id (want_id), and a digit word before the event
 * the period. true with h filled when an event ends them.
 */
static bool fields_from(const struct words *w, size_t k, bool want_id,
			struct ps_header *h)
{
	if (want_id) {
		if (k >= w->count || !id_word(wstr(w, k), wlen(w, k), h))
			return false;
		h->layout |= h->pid == PS_ID_NONE ? PS_F_ID : PS_F_PAIR;
		k++;
	}
	if (k < w->count && cpu_word(wstr(w, k), wlen(w, k), h)) {
		h->layout |= PS_F_CPU;
		k++;
	}
	if (k + 1 < w->count && misc_word(wstr(w, k), wlen(w, k))) {
		h->layout |= PS_F_MISC;
		k++;
	}
	if (tod_words(w, k)) {
		h->layout |= PS_F_TOD;
		k += 2;
	}
	if (k < w->count && time_word(wstr(w, k), wlen(w, k), h)) {
		h->layout |= PS_F_TIME;
		k++;
	}
	size_t i = 0;
	uint64_t v;
	if (k + 1 < w->count && digits(wstr(w, k), wlen(w, k), &i, &v) &&
	    i == wlen(w, k)) {
		h->has_period = true;
		h->period = v;
		h->layout |= PS_F_PERIOD;
		k++;
	}
	if (k >= w->count || !event_word(wstr(w, k), wlen(w, k)))
		return false;
	h->event = wstr(w, k);
	h->event_len = wlen(w, k) - 1;
	size_t end = w->n;
	while (end > w->e[k] && ps_is_space(w->s[end - 1]))
		end--;
	size_t rest = skip_spaces(w->s, end, w->e[k]);
	h->rest = w->s + rest;
	h->rest_len = end - rest;
	return true;
}

/* "VM:  N " and "VCPU:NNN " before COMM (guest samples of a host). */
static size_t guest_prefix(const struct words *w, struct ps_header *h)
{
	size_t k = 0;
	int64_t v;
	if (k < w->count && wlen(w, k) >= 3 && !memcmp(wstr(w, k), "VM:", 3)) {
		const char *s = wstr(w, k) + 3;
		size_t n = wlen(w, k) - 3;
		if (!n && k + 1 < w->count)	/* "VM:%5d": the number apart */
			s = wstr(w, ++k), n = wlen(w, k);
		if (!id_value(s, n, &v) || v < 0)
			return 0;
		h->vm = (int32_t)v;
		h->layout |= PS_F_VM;
		k++;
	}
	if (k < w->count && wlen(w, k) > 5 && !memcmp(wstr(w, k), "VCPU:", 5) &&
	    id_value(wstr(w, k) + 5, wlen(w, k) - 5, &v) && v >= 0) {
		h->vcpu = (int32_t)v;
		h->layout |= PS_F_VCPU;
		k++;
	}
	return k;
}

/* One reading: COMM is words [first, first + ncomm), then the fields. */
static bool reading(const struct words *w, size_t ncomm, bool want_id,
		    struct ps_header *h)
{
	memset(h, 0, sizeof(*h));
	h->pid = h->tid = PS_ID_NONE;
	h->cpu = h->vm = h->vcpu = -1;
	size_t first = guest_prefix(w, h);
	if (first + ncomm > w->count)
		return false;
	if (ncomm) {
		h->comm = wstr(w, first);
		h->comm_len = w->e[first + ncomm - 1] - w->b[first];
		h->layout |= PS_F_COMM;
	}
	return fields_from(w, first + ncomm, want_id, h);
}

static uint64_t event_hash(const char *s, size_t n)
{
	uint64_t x = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		x = (x ^ (unsigned char)s[i]) * 1099511628211ULL;
	return x;
}

static int hint_of(const struct ps_hints *hints, uint64_t event)
{
	for (uint32_t i = 0; hints && i < hints->n; i++)
		if (hints->v[i].event == event)
			return (int)hints->v[i].layout;
	return -1;
}

static void remember(struct ps_hints *hints, uint64_t event, uint32_t layout)
{
	if (!hints)
		return;
	for (uint32_t i = 0; i < hints->n; i++)
		if (hints->v[i].event == event) {
			hints->v[i].layout = layout;
			return;
		}
	uint32_t slot = hints->n < 16 ? hints->n++ : hints->next++ % 16;
	hints->v[slot].event = event;
	hints->v[slot].layout = layout;
}

/* Whether a word of s[0..n) ends in ':', as every reading's event does
 * (its time too): most lines are a stack's frames, and none of theirs
 * does, so they are no header without being split and read six ways
 * (that was a third of reading perf script text). */
static bool has_colon_word(const char *s, size_t n)
{
	for (const char *p = s, *end = s + n; (p = memchr(p, ':', (size_t)(end - p))); p++)
		if (p + 1 == end || ps_is_space(p[1]))
			return true;
	return false;
}

bool perf_script__header(const char *s, size_t n, struct ps_hints *hints,
			 struct ps_header *h)
{
	struct words w;
	struct ps_header cand, first = { 0 };
	bool have_first = false;
	if (!n || s[0] == '#' || !has_colon_word(s, n))
		return false;
	split_words(s, n, &w);
	/* Readings in order of preference: a comm of 1, 2... words with an
	 * id after it; no comm, an id; a comm without an id. The first whose
	 * fields match the event's last header wins, else the first found. */
	for (int pass = 0; pass < 3; pass++) {
		size_t lo = pass == 1 ? 0 : 1, hi = pass == 1 ? 0 : w.count;
		for (size_t k = lo; k <= hi; k++) {
			if (!reading(&w, k, pass != 2, &cand))
				continue;
			uint64_t ev = event_hash(cand.event, cand.event_len);
			int hint = hint_of(hints, ev);
			if (hint < 0 || (uint32_t)hint == cand.layout) {
				*h = cand;
				remember(hints, ev, h->layout);
				return true;
			}
			if (!have_first) {
				first = cand;
				have_first = true;
			}
		}
	}
	if (!have_first)
		return false;
	*h = first;
	remember(hints, event_hash(h->event, h->event_len), h->layout);
	return true;
}

bool perf_script__field(const char *rest, size_t n, const char *key, uint64_t *out)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i + kl < n; i++) {
		if ((i && !ps_is_space(rest[i - 1])) || memcmp(rest + i, key, kl) ||
		    rest[i + kl] != '=')
			continue;
		size_t j = i + kl + 1;
		return digits(rest, n, &j, out) && (j == n || ps_is_space(rest[j]));
	}
	return false;
}
