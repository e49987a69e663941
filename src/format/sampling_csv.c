/*
 * sampling_csv: read and write the sampling-data CSV (docs/sampling-data.md).
 *
 * Reading is the hot path of `analyze` (tens of millions of lines a second),
 * so fields are split eight bytes at a time, and the (vm, vcpu) and
 * (pid, tid, function) text is looked up by its bytes in small caches before
 * anything is parsed or interned. Only bytes that were once validated in
 * full ever enter a cache, so a hit is as valid as a miss. A cache key is
 * the fields' bytes with their separators: commas on a line without quotes;
 * newlines, which no field can hold, between the unquoted fields of one
 * with quotes. So no two different field lists share a key.
 */
#include "sampling_csv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "../core/banned.h"

enum { F_VM, F_VCPU, F_TIME, F_PID, F_TID, F_FUNCTION, F_STATE, NFIELDS };

static const char *const field_names[NFIELDS] = {
	"vm", "vcpu", "time_ns", "pid", "tid", "function", "state",
};

struct field {
	const char *s;
	size_t len;
};

/* Direct-mapped cache from the raw "vm,vcpu" bytes to a stream id. */
#define STREAM_CACHE_SLOTS 1024
#define STREAM_KEY_MAX 30
struct stream_slot {
	uint8_t len;		/* 0: empty */
	char key[STREAM_KEY_MAX];
	uint32_t stream;
};

/* Per stream: the raw "pid,tid,function" bytes of its last few run
 * programs (a thread goes back and forth between a few functions). */
#define PROG_KEY_MAX 46
#define PROG_CACHE_WAYS 8
struct prog_slot {
	uint32_t prog;
	uint8_t len;		/* 0: empty */
	char key[PROG_KEY_MAX];
};

struct stream_aux {
	uint64_t last_line;	/* line of the stream's previous sample */
	uint32_t next;		/* the way to replace next */
	uint32_t hit;		/* the way that matched last: tried first */
	struct prog_slot way[PROG_CACHE_WAYS];
};

struct sampling_reader {
	struct attributor *a;
	uint64_t line;		/* lines seen, the header included */
	bool failed;
	bool seen_any;		/* any byte at all */
	struct input_error err;
	char *carry;		/* a partial line left by the last feed */
	size_t carry_len;
	char *scratch;		/* unquoted fields of a slow-path line */
	struct stream_aux *aux;
	uint32_t aux_cap;
	struct stream_slot streams[STREAM_CACHE_SLOTS];
};

struct sampling_reader *sampling_reader__new(struct attributor *a)
{
	struct sampling_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->a = a;
	r->carry = malloc(SAMPLING_CSV_MAX_LINE);
	r->scratch = malloc(SAMPLING_CSV_MAX_LINE);
	if (!r->carry || !r->scratch) {
		sampling_reader__free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void sampling_reader__free(struct sampling_reader *r)
{
	if (!r)
		return;
	free(r->carry);
	free(r->scratch);
	free(r->aux);
	free(r);
}

const struct input_error *sampling_reader__error(const struct sampling_reader *r)
{
	return &r->err;
}

uint64_t sampling_reader__lines(const struct sampling_reader *r)
{
	return r->line;
}

__attribute__((format(printf, 2, 3)))
static int fail(struct sampling_reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err.msg, sizeof(r->err.msg), fmt, ap);
	va_end(ap);
	r->err.line = r->line;
	r->failed = true;
	return -EINVAL;
}

/* Writes a field's text for a message: quoted, shortened, no control
 * characters, so that a hostile line cannot garble the terminal. */
static const char *show(char *buf, size_t size, struct field f)
{
	size_t n = 0, max = size - 4;
	for (size_t i = 0; i < f.len && n < max; i++) {
		unsigned char c = (unsigned char)f.s[i];
		buf[n++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	if (f.len > max)
		buf[n++] = '.', buf[n++] = '.', buf[n++] = '.';
	buf[n] = '\0';
	return buf;
}

/* memcmp(a, b, n) == 0 for the short keys of the caches, inline: the call
 * to the library's memcmp cost more than the comparison. */
static inline bool same_bytes(const char *a, const char *b, size_t n)
{
	for (; n >= 8; a += 8, b += 8, n -= 8) {
		uint64_t x, y;
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		if (x != y)
			return false;
	}
	if (n >= 4) {	/* two overlapping 4-byte words cover 4 to 7 */
		uint32_t x, y, u, v;
		memcpy(&x, a, 4);
		memcpy(&y, b, 4);
		memcpy(&u, a + n - 4, 4);
		memcpy(&v, b + n - 4, 4);
		return x == y && u == v;
	}
	for (; n; n--)
		if (*a++ != *b++)
			return false;
	return true;
}

/* Eight ASCII digits at once (little-endian SWAR): false if any byte is
 * not a digit. Every line has a timestamp of a dozen digits or more. */
static inline bool digits8(uint64_t w, uint64_t *out)
{
	uint64_t x = w - 0x3030303030303030ULL;
	if ((w & 0xf0f0f0f0f0f0f0f0ULL) != 0x3030303030303030ULL ||
	    ((x + 0x0606060606060606ULL) & 0xf0f0f0f0f0f0f0f0ULL))
		return false;
	x = x * 10 + (x >> 8);
	x = (((x & 0x000000ff000000ffULL) * (100 + (1000000ULL << 32))) +
	     (((x >> 16) & 0x000000ff000000ffULL) * (1 + (10000ULL << 32)))) >> 32;
	*out = x;
	return true;
}

static const uint64_t pow10[8] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
};

/* A decimal field of up to 19 digits (which cannot overflow 64 bits): runs
 * of eight digits, then the last k < 8 as the eight bytes that end the
 * field with the k-8 it shares with the run before turned into '0's. */
static inline bool parse_long(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0, d, w;
	size_t i = 0;
	for (; len - i >= 8; i += 8) {
		memcpy(&w, s + i, 8);
		if (!digits8(w, &d))
			return false;
		v = v * 100000000 + d;
	}
	size_t k = len - i;
	if (k) {
		memcpy(&w, s + len - 8, 8);
		uint64_t keep = ~0ULL << (8 * (8 - k));
		if (!digits8((w & keep) | (0x3030303030303030ULL & ~keep), &d))
			return false;
		v = v * pow10[k] + d;
	}
	*out = v;
	return true;
}

static bool parse_uint(struct field f, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (f.len == 0 || f.len > 20)
		return false;
	if (f.len >= 8 && f.len <= 19) {
		if (!parse_long(f.s, f.len, &v))
			return false;
	} else {
		for (size_t i = 0; i < f.len; i++) {
			unsigned d = (unsigned char)f.s[i] - '0';
			if (d > 9 || __builtin_mul_overflow(v, 10, &v) ||
			    __builtin_add_overflow(v, d, &v))
				return false;
		}
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

static int bad_number(struct sampling_reader *r, struct field f, int which,
		      uint64_t max)
{
	char buf[48];
	if (f.len == 0)
		return fail(r, "empty %s", field_names[which]);
	return fail(r, "bad %s '%s': not an integer from 0 to %llu",
		    field_names[which], show(buf, sizeof(buf), f),
		    (unsigned long long)max);
}

static inline int number(struct sampling_reader *r, struct field f, int which,
			 uint64_t max, uint64_t *out)
{
	if (__builtin_expect(parse_uint(f, max, out), 1))
		return 0;
	return bad_number(r, f, which, max);
}

/* Text fields must be UTF-8 without control characters, so that every
 * output format (JSON above all) can carry them as they are. */
static bool valid_text(struct field f)
{
	const unsigned char *s = (const unsigned char *)f.s, *e = s + f.len;
	while (s < e) {
		unsigned c = *s;
		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f)
				return false;
			s++;
			continue;
		}
		size_t n;
		unsigned min;
		if ((c & 0xe0) == 0xc0)
			n = 1, min = 0x80, c &= 0x1f;
		else if ((c & 0xf0) == 0xe0)
			n = 2, min = 0x800, c &= 0x0f;
		else if ((c & 0xf8) == 0xf0)
			n = 3, min = 0x10000, c &= 0x07;
		else
			return false;
		if ((size_t)(e - s) <= n)
			return false;
		for (size_t i = 1; i <= n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			c = c << 6 | (s[i] & 0x3f);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			return false;
		s += n + 1;
	}
	return true;
}

static int text(struct sampling_reader *r, struct field f, int which,
		uint32_t *id)
{
	if (!valid_text(f))
		return fail(r, "%s is not UTF-8 text without control characters",
			    field_names[which]);
	*id = attributor__string(r->a, f.s, f.len);
	return *id == HINDEX_NONE ? -errno : 0;
}

static int state_of(struct sampling_reader *r, struct field f,
		    enum sample_state *st)
{
	char buf[48];
	if (f.len == 3 && memcmp(f.s, "run", 3) == 0)
		*st = SAMPLE_RUN;
	else if (f.len == 5 && memcmp(f.s, "steal", 5) == 0)
		*st = SAMPLE_STEAL;
	else if (f.len == 4 && memcmp(f.s, "idle", 4) == 0)
		*st = SAMPLE_IDLE;
	else
		return fail(r, "unknown state '%s' (expected run, steal or idle)",
			    show(buf, sizeof(buf), f));
	return 0;
}

static int grow_aux(struct sampling_reader *r, uint32_t stream)
{
	if (stream < r->aux_cap)
		return 0;
	uint32_t n = r->aux_cap ? r->aux_cap : 16;
	while (n <= stream)
		n *= 2;
	struct stream_aux *p = realloc(r->aux, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(p + r->aux_cap, 0, (n - r->aux_cap) * sizeof(*p));
	r->aux = p;
	r->aux_cap = n;
	return 0;
}

static int lookup_stream(struct sampling_reader *r, const struct field *f,
			 uint32_t *stream)
{
	uint32_t vm;
	uint64_t vcpu = 0;
	int err = text(r, f[F_VM], F_VM, &vm);
	if (err)
		return err;
	if (f[F_VM].len == 0)
		return fail(r, "empty vm");
	err = number(r, f[F_VCPU], F_VCPU, UINT32_MAX, &vcpu);
	if (err)
		return err;
	*stream = attributor__stream(r->a, vm, (uint32_t)vcpu);
	if (*stream == HINDEX_NONE)
		return -errno;
	return grow_aux(r, *stream);
}

static int lookup_program(struct sampling_reader *r, const struct field *f,
			  uint32_t vm, uint32_t *prog)
{
	uint64_t pid = 0, tid = 0;
	uint32_t function;
	if (f[F_PID].len == 0)
		return fail(r, "run sample without pid");
	if (f[F_TID].len == 0)
		return fail(r, "run sample without tid");
	int err = number(r, f[F_PID], F_PID, UINT32_MAX, &pid);
	if (!err)
		err = number(r, f[F_TID], F_TID, UINT32_MAX, &tid);
	if (!err)
		err = text(r, f[F_FUNCTION], F_FUNCTION, &function);
	if (err)
		return err;
	*prog = attributor__program(r->a, vm, (uint32_t)pid, (uint32_t)tid,
				    function);
	return *prog == HINDEX_NONE ? -errno : 0;
}

/* The program of a run line, through its stream's cache. */
static int cached_program(struct sampling_reader *r, const struct field *f,
			  uint32_t stream, uint32_t *prog)
{
	struct stream_aux *x = &r->aux[stream];
	const char *k = f[F_PID].s;
	size_t klen = (size_t)(f[F_FUNCTION].s + f[F_FUNCTION].len - k);
	/* A stream's consecutive samples are mostly of one program. */
	for (uint32_t i = 0; i < PROG_CACHE_WAYS; i++) {
		uint32_t j = (x->hit + i) % PROG_CACHE_WAYS;
		struct prog_slot *w = &x->way[j];
		if (w->len == klen && same_bytes(w->key, k, klen)) {
			x->hit = j;
			*prog = w->prog;
			return 0;
		}
	}
	int err = lookup_program(r, f, r->a->streams[stream].vm, prog);
	if (!err && klen <= PROG_KEY_MAX) {
		x->hit = x->next++ % PROG_CACHE_WAYS;
		struct prog_slot *w = &x->way[x->hit];
		memcpy(w->key, k, klen);
		w->len = (uint8_t)klen;
		w->prog = *prog;
	}
	return err;
}

/* The rest of a line once its stream is known. */
static int take_sample(struct sampling_reader *r, const struct field *f,
		       uint32_t stream)
{
	uint64_t time_ns = 0;
	enum sample_state st = SAMPLE_IDLE;
	uint32_t prog = PROG_NONE;
	int err = number(r, f[F_TIME], F_TIME, UINT64_MAX, &time_ns);
	if (!err)
		err = state_of(r, f[F_STATE], &st);
	if (err)
		return err;

	struct stream_aux *x = &r->aux[stream];
	if (st == SAMPLE_RUN) {
		err = cached_program(r, f, stream, &prog);
		if (err)
			return err;
	} else if (f[F_PID].len || f[F_TID].len || f[F_FUNCTION].len) {
		return fail(r, "%s sample with pid, tid or function (they must be empty)",
			    sample_state__name(st));
	}

	err = attributor__push(r->a, stream, time_ns, st, prog);
	if (err == -EOVERFLOW)
		return fail(r, "time_ns %llu: the samples' durations add up past 2^64 ns "
			    "(584 years)", (unsigned long long)time_ns);
	if (err == -ERANGE) {
		const struct stream *s = &r->a->streams[stream];
		return fail(r, "time_ns %llu is not after %llu, the time of line %llu in the same stream (vm '%s', vcpu %u)",
			    (unsigned long long)time_ns,
			    (unsigned long long)s->pend_time,
			    (unsigned long long)x->last_line,
			    strtab__str(&r->a->strings, s->vm), s->vcpu);
	}
	x->last_line = r->line;
	return 0;
}

static int wrong_count(struct sampling_reader *r, size_t n)
{
	return fail(r, "expected %d columns (%s), found %zu", NFIELDS,
		    SAMPLING_CSV_HEADER, n);
}

/* Splits a line with quotes: "..." with "" for a quote, per RFC 4180. The
 * unquoted fields go to r->scratch, each followed by a newline (see the
 * top of the file). */
static int split_quoted(struct sampling_reader *r, const char *p,
			const char *e, struct field *f)
{
	char *out = r->scratch;
	size_t n = 0;
	for (;;) {
		char *start = out;
		if (p < e && *p == '"') {
			p++;
			for (;;) {
				if (p == e)
					return fail(r, "unterminated quote in column %zu",
						    n + 1);
				if (*p == '"') {
					if (p + 1 < e && p[1] == '"') {
						*out++ = '"';
						p += 2;
						continue;
					}
					p++;
					break;
				}
				*out++ = *p++;
			}
			if (p < e && *p != ',')
				return fail(r, "text after the closing quote in column %zu",
					    n + 1);
		} else {
			while (p < e && *p != ',') {
				if (*p == '"')
					return fail(r, "quote inside unquoted column %zu",
						    n + 1);
				*out++ = *p++;
			}
		}
		if (n < NFIELDS)
			f[n] = (struct field){ start, (size_t)(out - start) };
		*out++ = '\n';
		n++;
		if (p == e)
			break;
		p++;	/* the comma */
	}
	return n == NFIELDS ? 0 : wrong_count(r, n);
}

static int parse_header(struct sampling_reader *r, const char *p, size_t len)
{
	char buf[80];
	static const char bom[] = "\xef\xbb\xbf";
	if (len >= 3 && memcmp(p, bom, 3) == 0)
		p += 3, len -= 3;
	if (len == strlen(SAMPLING_CSV_HEADER) &&
	    memcmp(p, SAMPLING_CSV_HEADER, len) == 0)
		return 0;
	return fail(r, "bad header '%s', expected '%s'",
		    show(buf, sizeof(buf), (struct field){ p, len }),
		    SAMPLING_CSV_HEADER);
}

/* The high bit of each byte of w that equals b (exact, no false hits). */
static inline uint64_t bytes_equal(uint64_t w, unsigned char b)
{
	const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fULL;
	uint64_t x = w ^ (0x0101010101010101ULL * b);
	return ~(((x & lo7) + lo7) | x | lo7);
}

/* Records a comma at c in the split of split_plain(). */
static inline void comma_at(const char *c, const char **q, struct field *f,
			    size_t *n)
{
	if (*n < NFIELDS)
		f[*n] = (struct field){ *q, (size_t)(c - *q) };
	(*n)++;
	*q = c + 1;
}

/* Splits an unquoted line on commas into f (the first NFIELDS fields) and
 * counts the fields in *n. Returns false if the line has a quote. Sixteen
 * (SSE2) or eight bytes at a time: lines are short, but splitting them is
 * most of analyze's work. */
static bool split_plain(const char *p, const char *e, struct field *f,
			size_t *n)
{
	const char *q = p, *c = p;
	*n = 0;
#ifdef __SSE2__
	const __m128i commas = _mm_set1_epi8(','), quotes = _mm_set1_epi8('"');
	for (; e - c >= 16; c += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)c);
		if (_mm_movemask_epi8(_mm_cmpeq_epi8(v, quotes)))
			return false;
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, commas));
		for (; m; m &= m - 1)
			comma_at(c + __builtin_ctz(m), &q, f, n);
	}
#endif
	for (; e - c >= 8; c += 8) {
		uint64_t w;
		memcpy(&w, c, 8);
		if (bytes_equal(w, '"'))
			return false;
		for (uint64_t m = bytes_equal(w, ','); m; m &= m - 1)
			comma_at(c + (__builtin_ctzll(m) >> 3), &q, f, n);
	}
	for (; c < e; c++) {
		if (*c == '"')
			return false;
		if (*c == ',')
			comma_at(c, &q, f, n);
	}
	comma_at(e, &q, f, n);	/* the end closes the last field */
	return true;
}

/* Hash of the first len bytes of a line ending at e: one load of 16 bytes
 * when the line is that long, as almost all are. */
static inline uint64_t short_hash(const char *p, size_t len, const char *e)
{
	if (len > 16 || e - p < 16)
		return hash_bytes(p, len, 0);
	uint64_t a, b;
	memcpy(&a, p, 8);
	memcpy(&b, p + 8, 8);
	if (len < 8) {
		a &= (1ULL << (len * 8)) - 1;
		b = 0;
	} else if (len < 16) {
		b &= len == 8 ? 0 : (1ULL << ((len - 8) * 8)) - 1;
	}
	return hash_mix(a ^ hash_mix(b ^ len));
}

/* The stream of a line, through the cache. */
static int cached_stream(struct sampling_reader *r, const struct field *f,
			 uint32_t *stream)
{
	const char *p = f[F_VM].s;
	size_t klen = (size_t)(f[F_VCPU].s + f[F_VCPU].len - p);
	uint64_t h = short_hash(p, klen, f[NFIELDS - 1].s + f[NFIELDS - 1].len);
	struct stream_slot *slot = &r->streams[h & (STREAM_CACHE_SLOTS - 1)];
	if (slot->len == klen && same_bytes(slot->key, p, klen)) {
		*stream = slot->stream;
		return 0;
	}
	int err = lookup_stream(r, f, stream);
	if (!err && klen <= STREAM_KEY_MAX) {
		slot->len = (uint8_t)klen;
		memcpy(slot->key, p, klen);
		slot->stream = *stream;
	}
	return err;
}

/* Bit i of each mask: byte i of a 64-byte block is a newline, comma or
 * quote. */
struct line_masks {
	uint64_t newline, comma, quote;
};

#ifdef __SSE2__
/* Classifies the 64 bytes at p, which must all be readable. */
static inline void scan64(const char *p, struct line_masks *m)
{
	const __m128i nl = _mm_set1_epi8('\n'), cm = _mm_set1_epi8(','),
		      qt = _mm_set1_epi8('"');
	m->newline = m->comma = m->quote = 0;
	for (int i = 0; i < 4; i++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
		m->newline |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) << (16 * i);
		m->comma |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, cm)) << (16 * i);
		m->quote |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, qt)) << (16 * i);
	}
}
#endif

/* Splits a line of fewer than 64 bytes whose commas are known, taking
 * NFIELDS - 1 of them in a loop of fixed length (a predictable branch; and
 * no popcount, which baseline x86-64 lacks). False if there are not
 * exactly that many. */
static inline bool split_masked(const char *p, const char *e, uint64_t commas,
				struct field *f)
{
	const char *q = p;
	for (int i = 0; i < NFIELDS - 1; i++) {
		if (!commas)
			return false;
		const char *c = p + __builtin_ctzll(commas);
		commas &= commas - 1;
		f[i] = (struct field){ q, (size_t)(c - q) };
		q = c + 1;
	}
	f[NFIELDS - 1] = (struct field){ q, (size_t)(e - q) };
	return commas == 0;
}

/* One line, [p, e) without its newline. m, when not NULL, holds the line's
 * commas and quotes (the line is then shorter than 64 bytes). */
static int parse_line(struct sampling_reader *r, const char *p, const char *e,
		      const struct line_masks *m)
{
	struct field f[NFIELDS];
	uint32_t stream;
	size_t n;
	int err;
	bool plain;

	r->line++;
	if (e - p >= SAMPLING_CSV_MAX_LINE)
		return fail(r, "line longer than %d bytes", SAMPLING_CSV_MAX_LINE);
	if (e > p && e[-1] == '\r')
		e--;
	if (__builtin_expect(r->line == 1, 0))
		return parse_header(r, p, (size_t)(e - p));
	if (p == e)
		return 0;	/* blank lines carry nothing: skipped */

	if (m && !m->quote && split_masked(p, e, m->comma & ((1ULL << (e - p)) - 1), f)) {
		plain = true;
	} else {
		/* Quotes, or a wrong count: the general split says which. */
		plain = split_plain(p, e, f, &n);
		if (plain && n != NFIELDS)
			return wrong_count(r, n);
	}
	if (!plain) {
		err = split_quoted(r, p, e, f);
		if (err)
			return err;
	}
	err = cached_stream(r, f, &stream);
	return err ? err : take_sample(r, f, stream);
}

int sampling_reader__feed(struct sampling_reader *r, const char *buf,
			  size_t len)
{
	if (r->failed)
		return -EINVAL;
	if (len)
		r->seen_any = true;
	const char *p = buf, *end = buf + len;

	if (r->carry_len) {
		/* Complete the line the last piece cut off. */
		const char *nl = memchr(p, '\n', len);
		size_t take = nl ? (size_t)(nl - p) : len;
		if (r->carry_len + take >= SAMPLING_CSV_MAX_LINE) {
			r->line++;
			return fail(r, "line longer than %d bytes",
				    SAMPLING_CSV_MAX_LINE);
		}
		memcpy(r->carry + r->carry_len, p, take);
		r->carry_len += take;
		if (!nl)
			return 0;
		int err = parse_line(r, r->carry, r->carry + r->carry_len, NULL);
		r->carry_len = 0;
		if (err)
			return err;
		p = nl + 1;
	}

	for (;;) {
		int err;
#ifdef __SSE2__
		/* Most lines are short: one pass over 64 bytes finds the
		 * line's end, commas and quotes at once. */
		if (end - p >= 64) {
			struct line_masks m;
			scan64(p, &m);
			if (m.newline) {
				const char *nl = p + __builtin_ctzll(m.newline);
				err = parse_line(r, p, nl, &m);
				if (err)
					return err;
				p = nl + 1;
				continue;
			}
		}
#endif
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		err = parse_line(r, p, nl, NULL);
		if (err)
			return err;
		p = nl + 1;
	}

	size_t rest = (size_t)(end - p);
	if (rest >= SAMPLING_CSV_MAX_LINE) {
		r->line++;
		return fail(r, "line longer than %d bytes", SAMPLING_CSV_MAX_LINE);
	}
	memcpy(r->carry, p, rest);
	r->carry_len = rest;
	return 0;
}

int sampling_reader__finish(struct sampling_reader *r)
{
	if (r->failed)
		return -EINVAL;
	if (!r->seen_any) {
		r->line = 1;
		return fail(r, "empty file, expected the header '%s'",
			    SAMPLING_CSV_HEADER);
	}
	if (r->carry_len) {
		int err = parse_line(r, r->carry, r->carry + r->carry_len, NULL);
		r->carry_len = 0;
		if (err)
			return err;
	}
	return 0;
}

/* Feeds a regular file through read-only mappings of one window at a
 * time: analyze reads at hundreds of MB/s, and copying every byte out of
 * the page cache cost more than a tenth of its time. Mapping a window, not
 * the file, keeps the resident size flat however long the file is.
 * Returns -ENODEV when fd cannot be mapped. */
static int feed_mapped(struct sampling_reader *r, int fd, progress_fn progress,
		       void *ctx)
{
	enum { WINDOW = 8 << 20 };	/* a multiple of any page size */
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return -ENODEV;
	size_t size = (size_t)st.st_size;
	int err = 0;
	for (size_t off = 0; off < size && !err; off += WINDOW) {
		size_t n = size - off < WINDOW ? size - off : WINDOW;
		void *map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, (off_t)off);
		if (map == MAP_FAILED)
			return off ? -errno : -ENODEV;
		madvise(map, n, MADV_WILLNEED);	/* fault the window in at once */
		err = sampling_reader__feed(r, map, n);
		munmap(map, n);
		if (progress)
			progress(ctx, off + n);
	}
	return err ? err : sampling_reader__finish(r);
}

int sampling_csv__read_fd(struct sampling_reader *r, int fd,
			  progress_fn progress, void *ctx)
{
	enum { CHUNK = 1 << 20 };
	int err = feed_mapped(r, fd, progress, ctx);
	if (err != -ENODEV)
		return err;

	char *buf = malloc(CHUNK);
	uint64_t total = 0;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf, CHUNK);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0) {
			err = sampling_reader__finish(r);
			break;
		}
		err = sampling_reader__feed(r, buf, (size_t)n);
		if (err)
			break;
		total += (uint64_t)n;
		if (progress)
			progress(ctx, total);
	}
	free(buf);
	return err;
}

static bool needs_quotes(const char *s)
{
	return strpbrk(s, ",\"") != NULL;
}

size_t sampling_csv__line_max(const struct csv_sample *s)
{
	/* Every text byte may double when quoted; numbers take at most 20
	 * digits; plus quotes, commas, state and newline. */
	size_t n = 2 * strlen(s->vm) + 128;
	if (s->state == SAMPLE_RUN && s->function)
		n += 2 * strlen(s->function);
	return n;
}

static char *put_text(char *o, const char *s)
{
	if (!needs_quotes(s)) {
		size_t n = strlen(s);
		memcpy(o, s, n);
		return o + n;
	}
	*o++ = '"';
	for (; *s; s++) {
		if (*s == '"')
			*o++ = '"';
		*o++ = *s;
	}
	*o++ = '"';
	return o;
}

static char *put_uint(char *o, uint64_t v)
{
	char tmp[20];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*o++ = tmp[--n];
	return o;
}

size_t sampling_csv__format(char *out, const struct csv_sample *s)
{
	char *o = put_text(out, s->vm);
	*o++ = ',';
	o = put_uint(o, s->vcpu);
	*o++ = ',';
	o = put_uint(o, s->time_ns);
	*o++ = ',';
	if (s->state == SAMPLE_RUN) {
		o = put_uint(o, s->pid);
		*o++ = ',';
		o = put_uint(o, s->tid);
		*o++ = ',';
		o = put_text(o, s->function ? s->function : "");
		*o++ = ',';
	} else {
		memcpy(o, ",,,", 3);
		o += 3;
	}
	const char *st = sample_state__name(s->state);
	size_t n = strlen(st);
	memcpy(o, st, n);
	o += n;
	*o++ = '\n';
	return (size_t)(o - out);
}
