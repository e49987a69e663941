/* report: the table of writers, and the escaping and numbers they share. */
#include "report.h"

#include <inttypes.h>
#include <pwd.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../core/banned.h"

static const struct report_writer *const writers[] = {
	&report_text, &report_csv, &report_json, &report_openmetrics,
	&report_pprof, &report_folded, &report_html,
};

const struct report_writer *report_writer__find(const char *name)
{
	for (size_t i = 0; i < sizeof(writers) / sizeof(*writers); i++)
		if (strcmp(writers[i]->name, name) == 0)
			return writers[i];
	return NULL;
}

const char *report_writer__names(void)
{
	return "text|csv|json|openmetrics|pprof|folded|html";
}

size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
		     c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong three- and four-byte forms, surrogates, past U+10FFFF */
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
		return 0;
	return len;
}

char *utf8_dup_clean(const char *s)
{
	size_t n = strlen(s), out = 0;
	char *d = malloc(3 * n + 1);
	if (!d)
		return NULL;
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq(p + i, n - i);
		if (!len) {
			memcpy(d + out, "\xef\xbf\xbd", 3);	/* U+FFFD */
			out += 3;
			i++;
			continue;
		}
		memcpy(d + out, p + i, len);
		out += len;
		i += len;
	}
	d[out] = '\0';
	return d;
}

/* Writes p[from, to): the bytes a writer passes on as they are, a run
 * at a time (an fwrite for each byte was 6 % of folded's time). */
static void put_run(FILE *out, const unsigned char *p, size_t from, size_t to)
{
	if (to > from)
		fwrite(p + from, 1, to - from, out);
}

/* v's digits (after a minus sign when minus) into buf, as report_fmt_u64. */
static size_t fmt_digits(char *buf, uint64_t v, bool minus)
{
	/* two digits a step: a JSON row's dozen numbers of nanoseconds were
	 * a third of its making, a digit a step */
	static const char pairs[201] =
		"00010203040506070809101112131415161718192021222324"
		"25262728293031323334353637383940414243444546474849"
		"50515253545556575859606162636465666768697071727374"
		"75767778798081828384858687888990919293949596979899";
	char tmp[REPORT_NUM_MAX], *p = tmp + sizeof(tmp);
	while (v >= 10) {
		unsigned d = (unsigned)(v % 100);
		v /= 100;
		p -= 2;
		memcpy(p, pairs + 2 * d, 2);
	}
	if (v || p == tmp + sizeof(tmp))
		*--p = (char)('0' + v);
	if (minus)
		*--p = '-';
	size_t len = (size_t)(tmp + sizeof(tmp) - p);
	memcpy(buf, p, len);
	buf[len] = '\0';
	return len;
}

size_t report_fmt_u64(char *buf, uint64_t v)
{
	return fmt_digits(buf, v, false);
}

size_t report_fmt_i64(char *buf, int64_t v)
{
	/* the magnitude in unsigned arithmetic: -INT64_MIN does not fit */
	return v < 0 ? fmt_digits(buf, 0 - (uint64_t)v, true) : fmt_digits(buf, (uint64_t)v, false);
}

void report_put_u64(FILE *out, uint64_t v)
{
	char buf[REPORT_NUM_MAX];
	fwrite(buf, 1, report_fmt_u64(buf, v), out);
}

void report_put_i64(FILE *out, int64_t v)
{
	char buf[REPORT_NUM_MAX];
	fwrite(buf, 1, report_fmt_i64(buf, v), out);
}

void json_out__flush(struct json_out *o)
{
	if (o->len)
		fwrite(o->buf, 1, o->len, o->f);
	o->len = 0;
}

void json_out__put(struct json_out *o, const void *d, size_t n)
{
	if (n > o->cap - o->len) {
		json_out__flush(o);
		if (n > o->cap) {	/* a long command line */
			fwrite(d, 1, n, o->f);
			return;
		}
	}
	memcpy(o->buf + o->len, d, n);
	o->len += n;
}

static void out_char(struct json_out *o, char c)
{
	if (o->len == o->cap)
		json_out__flush(o);
	o->buf[o->len++] = c;
}

/* Whether the 8 bytes of w are all printable ASCII but quote and
 * backslash: what a JSON string holds as it is, most of what is written
 * (command lines), looked at a word at a time. */
static bool plain8(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t q = w ^ ones * '"', b = w ^ ones * '\\', del = w ^ ones * 0x7f;
	uint64_t below = (w - ones * 0x20) & ~w;	/* a byte under 0x20 */
	uint64_t zero = ((q - ones) & ~q) | ((b - ones) & ~b) | ((del - ones) & ~del);
	return !((below | zero | w) & highs);
}

void json_out__string(struct json_out *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, run = 0;	/* p[run, i) waits to be written */
	out_char(o, '"');
	while (i < n) {
		uint64_t w;
		if (n - i >= sizeof(w) && (memcpy(&w, p + i, sizeof(w)), plain8(w))) {
			i += sizeof(w);
			continue;
		}
		unsigned char c = p[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			i++;	/* printable ASCII */
			continue;
		}
		size_t len = utf8_seq(p + i, n - i);
		if (len && c != '"' && c != '\\' && c >= 0x20 && c != 0x7f) {
			i += len;
			continue;
		}
		json_out__put(o, p + run, i - run);
		run = i + 1;
		if (!len) {
			json_out__put(o, "\\ufffd", 6);	/* not UTF-8: replaced */
		} else if (c == '"' || c == '\\') {
			out_char(o, '\\');	/* the character follows with the run */
			run = i;
		} else {	/* C0 or DEL, as printf's "\\u%04x" */
			char u[] = { '\\', 'u', '0', '0', "0123456789abcdef"[c >> 4],
				     "0123456789abcdef"[c & 0xf] };
			json_out__put(o, u, sizeof(u));
		}
		i++;
	}
	json_out__put(o, p + run, i - run);
	out_char(o, '"');
}

/* ,"key": (no comma when *first) and then the n bytes of v, written in
 * place where they fit (keys are the writers' own short names). */
static void out_member(struct json_out *o, bool *first, const char *key, const char *v,
		       size_t n)
{
	size_t k = strlen(key), need = k + n + 4;
	if (need > o->cap - o->len)
		json_out__flush(o);
	if (need > o->cap) {
		json_out__put(o, *first ? "\"" : ",\"", *first ? 1 : 2);
		json_out__put(o, key, k);
		json_out__put(o, "\":", 2);
		json_out__put(o, v, n);
	} else {
		char *p = o->buf + o->len;
		if (!*first)
			*p++ = ',';
		*p++ = '"';
		memcpy(p, key, k);
		p += k;
		*p++ = '"';
		*p++ = ':';
		memcpy(p, v, n);
		o->len = (size_t)(p + n - o->buf);
	}
	*first = false;
}

void json_out__member(struct json_out *o, bool *first, const char *key)
{
	out_member(o, first, key, "", 0);
}

void json_out__str_member(struct json_out *o, bool *first, const char *key, const char *v)
{
	json_out__member(o, first, key);
	if (v)
		json_out__string(o, v);
	else
		json_out__put(o, "null", 4);
}

void json_out__num_member(struct json_out *o, bool *first, const char *key, bool known,
			  int64_t v)
{
	char num[REPORT_NUM_MAX];
	if (known)
		out_member(o, first, key, num, report_fmt_i64(num, v));
	else
		out_member(o, first, key, "null", 4);
}

/* The json_put_*: a json_out of a few hundred bytes, written at once. */
#define JSON_PUT(out, call)                                              \
	do {                                                             \
		char buf_[256];                                          \
		struct json_out o_ = json_out__make(out, buf_, sizeof(buf_)); \
		call;                                                    \
		json_out__flush(&o_);                                    \
	} while (0)

void json_put_string(FILE *out, const char *s)
{
	JSON_PUT(out, json_out__string(&o_, s));
}

void json_put_string_or_null(FILE *out, const char *s)
{
	if (s)
		json_put_string(out, s);
	else
		fputs("null", out);
}

void json_put_member(FILE *out, bool *first, const char *key)
{
	JSON_PUT(out, json_out__member(&o_, first, key));
}

void json_put_str_member(FILE *out, bool *first, const char *key, const char *v)
{
	JSON_PUT(out, json_out__str_member(&o_, first, key, v));
}

void json_put_num_member(FILE *out, bool *first, const char *key, bool known, int64_t v)
{
	JSON_PUT(out, json_out__num_member(&o_, first, key, known, v));
}

void csv_put_field(FILE *out, const char *s)
{
	/* what a spreadsheet would run as a formula is kept as text */
	bool formula = strchr("=+-@\t\r", s[0]) && s[0];
	bool quote = formula || strpbrk(s, ",\"\n\r");
	if (quote)
		putc('"', out);
	if (formula)
		putc('\'', out);
	/* written a run at a time: an fwrite a character was a sixth of a
	 * CSV report's instructions (command lines are long) */
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), run = 0;	/* p[run, i) waits to be written */
	for (size_t i = 0; i < n;) {
		if (p[i] < 0x80) {
			if (p[i] == '"') {	/* doubled: this one, then the run's */
				put_run(out, p, run, i + 1);
				run = i;
			}
			i++;
			continue;
		}
		size_t len = utf8_seq(p + i, n - i);
		if (!len) {	/* not UTF-8: replaced, as in JSON */
			put_run(out, p, run, i);
			fputs("\xef\xbf\xbd", out);
			run = ++i;
			continue;
		}
		i += len;
	}
	put_run(out, p, run, n);
	if (quote)
		putc('"', out);
}

void om_put_label(FILE *out, bool *first, const char *name, const char *v)
{
	if (!*first)
		putc(',', out);
	*first = false;
	fputs(name, out);
	fputs("=\"", out);
	/* a run at a time, as csv_put_field */
	const unsigned char *p = (const unsigned char *)(v ? v : "");
	size_t n = strlen((const char *)p), run = 0;	/* p[run, i) waits */
	for (size_t i = 0; i < n;) {
		size_t len = p[i] < 0x80 ? 1 : utf8_seq(p + i, n - i);
		if (len && p[i] != '\\' && p[i] != '"' && p[i] != '\n') {
			i += len;
			continue;
		}
		put_run(out, p, run, i);
		if (!len) {
			fputs("\xef\xbf\xbd", out);
			run = i + 1;
		} else if (p[i] == '\n') {
			fputs("\\n", out);
			run = i + 1;
		} else {
			putc('\\', out);	/* the character follows with the run */
			run = i;
		}
		i++;
	}
	put_run(out, p, run, n);
	putc('"', out);
}

size_t text_char(const unsigned char *s, size_t n, const char **show)
{
	size_t len = utf8_seq(s, n);
	*show = NULL;
	if (!len) {
		/* a raw 0x80-0x9F is C1 to a terminal in an 8-bit mode (0x9B
		 * is CSI); other stray bytes are only not UTF-8 */
		*show = s[0] <= 0x9f ? "?" : "\xef\xbf\xbd";
		return 1;
	}
	/* C0, DEL, C1 (U+0080-U+009F is 0xC2 0x80-0x9F): not for a terminal */
	if (s[0] < 0x20 || s[0] == 0x7f || (len == 2 && s[0] == 0xc2 && s[1] < 0xa0))
		*show = "?";
	return len;
}

int text_put(FILE *out, const char *s, int max, int pad)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), run = 0, i = 0;	/* p[run, i) waits */
	int cols = 0;
	while (i < n) {
		if (!max && p[i] >= 0x20 && p[i] < 0x7f) {
			i++;	/* printable ASCII, as text_char finds it */
			cols++;
			continue;
		}
		const char *show;
		size_t len = text_char(p + i, n - i, &show);
		if (max && cols == max - 1 && i + len < n) {
			put_run(out, p, run, i);
			run = i;
			putc('+', out);	/* more than fits */
			cols++;
			break;
		}
		if (show) {
			put_run(out, p, run, i);
			fputs(show, out);
			run = i + len;
		}
		i += len;
		cols++;
	}
	put_run(out, p, run, i);
	for (; cols < pad; cols++)
		putc(' ', out);
	return cols;
}

size_t text_clean(char *buf, size_t size, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), out = 0;
	if (!size)
		return 0;
	for (size_t i = 0; i < n;) {
		const char *show;
		size_t len = text_char(p + i, n - i, &show);
		size_t w = show ? strlen(show) : len;
		if (out + w >= size)
			break;	/* cut at a character */
		memcpy(buf + out, show ? show : (const char *)p + i, w);
		out += w;
		i += len;
	}
	buf[out] = '\0';
	return out;
}

void report_keys(const struct row_keys *k, enum report_after after,
		 void (*fn)(void *ctx, enum row_field f, bool with), void *ctx)
{
	uint32_t shown = 0;
	for (uint8_t i = 0; i < k->n; i++) {
		enum row_field f = k->v[i];
		const struct key_entry *e = key_entry(f);
		if (!e->text && !e->number)
			continue;	/* no value in a row: a stack's id */
		if (e->before != RF_COUNT && !(shown & RF_BIT(e->before))) {
			fn(ctx, e->before, true);
			shown |= RF_BIT(e->before);
		}
		if (!(shown & RF_BIT(f)))
			fn(ctx, f, false);
		shown |= RF_BIT(f);
		if (e->after != RF_COUNT && (after == REPORT_AFTER_ALWAYS ||
		    (after == REPORT_AFTER_UNLESS_KEY && !row_keys__has(k, e->after))))
			fn(ctx, e->after, true);
	}
}

const char *report_user(int64_t uid, char *buf, size_t size)
{
	if (uid < 0) {
		snprintf(buf, size, "?");
		return buf;
	}
	struct passwd *pw = getpwuid((uid_t)uid);
	if (pw)
		snprintf(buf, size, "%lld (%s)", (long long)uid, pw->pw_name);
	else
		snprintf(buf, size, "%lld", (long long)uid);
	return buf;
}

bool report_cpus_to_spare(void)
{
	cpu_set_t set;
	return !sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 1;
}
