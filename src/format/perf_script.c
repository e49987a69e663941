/* perf_script: see perf_script.h. */
#include "perf_script.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/grow.h"
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

int read_chunks(int fd, chunk_fn feed, void *ctx,
		void (*progress)(void *ctx, uint64_t bytes), void *progress_ctx)
{
	enum { CHUNK = 1 << 20 };
	char *buf = malloc(CHUNK);
	int err = buf ? 0 : -ENOMEM;
	uint64_t total = 0;
	while (!err) {
		ssize_t n = read(fd, buf, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		err = feed(ctx, buf, (size_t)n);
		total += (uint64_t)n;
		if (progress)
			progress(progress_ctx, total);
	}
	free(buf);
	return err;
}

static bool is_word(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

bool perf_script__frame_parts(const char *s, size_t n, struct frame_parts *fp)
{
	size_t i = 0;
	while (i < n && is_word(s[i]))
		i++;
	if (i == 0)
		return false;
	fp->pc = s;
	fp->pclen = i;
	while (i < n && ps_is_space(s[i]))
		i++;
	size_t fstart = i;
	/* the last " (" after which non-spaces run to a ')' */
	for (size_t k = n; k-- > fstart + 1;) {
		if (s[k] != '(' || s[k - 1] != ' ')
			continue;
		size_t m = k + 1, close = 0;
		while (m < n && !ps_is_space(s[m])) {
			if (s[m] == ')')
				close = m;
			m++;
		}
		if (!close || k - 1 == fstart)
			continue;
		fp->func = s + fstart;
		fp->flen = k - 1 - fstart;
		fp->mod = s + k + 1;
		fp->mlen = close - k - 1;
		return true;
	}
	return false;
}

size_t perf_script__strip_offset(const char *func, size_t flen)
{
	size_t x = flen;
	while (x && isxdigit((unsigned char)func[x - 1]) &&
	       !isupper((unsigned char)func[x - 1]))
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
 * or they overflow. */
static bool digits(const char *s, size_t n, size_t *i, uint64_t *out)
{
	size_t b = *i;
	uint64_t v = 0;
	while (*i < n && isdigit((unsigned char)s[*i])) {
		uint64_t d = (uint64_t)(s[*i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		(*i)++;
	}
	*out = v;
	return *i > b;
}

static size_t skip_spaces(const char *s, size_t n, size_t i)
{
	while (i < n && ps_is_space(s[i]))
		i++;
	return i;
}

/* From i (at a non-space): the optional cpu, time and period, then the
 * event. */
static bool header_rest(const char *s, size_t n, size_t i, struct ps_header *h)
{
	uint64_t v;
	h->cpu = -1;
	if (i < n && s[i] == '[') {
		size_t j = i + 1;
		if (!digits(s, n, &j, &v) || j >= n || s[j] != ']' || v > INT32_MAX)
			return false;
		h->cpu = (int32_t)v;
		i = skip_spaces(s, n, j + 1);
	}
	/* "seconds.fraction:" */
	size_t j = i;
	if (digits(s, n, &j, &v) && j < n && s[j] == '.') {
		uint64_t sec = v, frac = 0;
		size_t f = ++j;
		while (j < n && isdigit((unsigned char)s[j])) {
			if (j - f < 9)
				frac = frac * 10 + (uint64_t)(s[j] - '0');
			j++;
		}
		if (j == f || j >= n || s[j] != ':' || sec > UINT64_MAX / 1000000000ULL - 1)
			return false;
		for (size_t k = j - f; k < 9; k++)
			frac *= 10;
		h->has_time = true;
		h->time_ns = sec * 1000000000ULL + frac;
		i = skip_spaces(s, n, j + 1);
	}
	j = i;
	if (digits(s, n, &j, &v) && j < n && ps_is_space(s[j])) {
		h->has_period = true;
		h->period = v;
		i = skip_spaces(s, n, j);
	}
	/* the event: a word that ends in ':' */
	size_t e = i;
	while (e < n && !ps_is_space(s[e]))
		e++;
	if (e - i < 2 || s[e - 1] != ':')
		return false;
	h->event = s + i;
	h->event_len = e - 1 - i;
	i = skip_spaces(s, n, e);
	size_t end = n;
	while (end > i && ps_is_space(s[end - 1]))
		end--;
	h->rest = s + i;
	h->rest_len = end - i;
	return true;
}

bool perf_script__header(const char *s, size_t n, struct ps_header *h)
{
	if (!n || ps_is_space(s[0]) || s[0] == '#')
		return false;
	/* comm is the shortest prefix followed by spaces and "[pid/]tid " */
	for (size_t i = 1; i < n; i++) {
		if (!ps_is_space(s[i]))
			continue;
		memset(h, 0, sizeof(*h));
		size_t j = skip_spaces(s, n, i);
		uint64_t a, b;
		if (!digits(s, n, &j, &a) || a > UINT32_MAX)
			continue;
		if (j < n && s[j] == '/') {
			j++;
			if (!digits(s, n, &j, &b) || b > UINT32_MAX)
				continue;
			h->has_pid = true;
			h->pid = (uint32_t)a;
			h->tid = (uint32_t)b;
		} else {
			h->pid = h->tid = (uint32_t)a;
		}
		if (j >= n || !ps_is_space(s[j]))
			continue;
		h->comm = s;
		h->comm_len = i;
		if (header_rest(s, n, skip_spaces(s, n, j), h))
			return true;
	}
	return false;
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
