/*
 * fold: see fold.h. The rules below restate, clause by clause, how the
 * reference collapser reads perf script text (its regular expressions'
 * behaviour, not its code), since byte-for-byte output is the contract.
 */
#include "fold.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/hindex.h"
#include "../core/strtab.h"
#include "../core/banned.h"

struct folder {
	struct fold_options o;
	struct strtab stacks;	/* distinct folded stacks */
	uint64_t *counts;
	uint32_t ncounts, counts_cap;
	uint32_t *offs;		/* where each frame starts in frames */
	uint32_t offs_cap;
	char *event;		/* the first event seen: others are skipped */
	bool in_sample;		/* a header was taken and not yet ended */
	char *pname;
	size_t pname_len;
	uint64_t period;
	char *frames;		/* this sample's frames, callee first, '\0' apart */
	size_t frames_len, frames_cap;
	uint32_t nframes;
};

int fold_options__parse(struct fold_options *o, const char *list)
{
	const char *p = list;
	memset(o, 0, sizeof(*o));
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n == 3 && !strncmp(p, "pid", 3))
			o->pid = true;
		else if (n == 3 && !strncmp(p, "tid", 3))
			o->tid = true;
		else if (n == 6 && !strncmp(p, "kernel", 6))
			o->kernel = true;
		else if (n == 3 && !strncmp(p, "jit", 3))
			o->jit = true;
		else if (n == 3 && !strncmp(p, "all", 3))
			o->kernel = o->jit = true;
		else if (n == 5 && !strncmp(p, "addrs", 5))
			o->addrs = true;
		else if (n)
			return -EINVAL;
		p += n + (p[n] == ',');
	}
	return 0;
}

struct folder *folder__new(const struct fold_options *o)
{
	struct folder *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->o = *o;
	strtab__init(&f->stacks);
	return f;
}

void folder__free(struct folder *f)
{
	if (!f)
		return;
	strtab__release(&f->stacks);
	free(f->counts);
	free(f->event);
	free(f->pname);
	free(f->frames);
	free(f->offs);
	free(f);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_word(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Perl truth of a captured number: absent, "" and "0" are false. */
static bool truthy(const char *s, size_t n)
{
	return n && !(n == 1 && s[0] == '0');
}

/*
 * The header of a sample: "comm pid[/tid] ... [period] event:". comm is
 * the shortest prefix (two characters at least, the first not a space)
 * followed by spaces, digits, optional slashes and digits, and a space.
 */
static bool parse_header(const char *s, size_t n, size_t *comm_len,
			 const char **pid, size_t *pid_len,
			 const char **tid, size_t *tid_len)
{
	if (!n || is_space(s[0]))
		return false;
	for (size_t i = 2; i < n; i++) {
		if (!is_space(s[i]))
			continue;
		size_t j = i;
		while (j < n && is_space(s[j]))
			j++;
		size_t d = j;
		while (j < n && isdigit((unsigned char)s[j]))
			j++;
		if (j == d)
			continue;
		size_t d_end = j;
		while (j < n && s[j] == '/')
			j++;
		size_t t = j;
		while (j < n && isdigit((unsigned char)s[j]))
			j++;
		size_t t_end = j;
		/* the tid group is optional: fall back to none when it is
		 * not followed by a space but the pid is */
		if (j < n && is_space(s[j])) {
			*comm_len = i;
			*pid = s + d;
			*pid_len = d_end - d;
			*tid = s + t;
			*tid_len = t_end - t;
			return true;
		}
		if (d_end < n && is_space(s[d_end])) {
			*comm_len = i;
			*pid = s + d;
			*pid_len = d_end - d;
			*tid = NULL;
			*tid_len = 0;
			return true;
		}
	}
	return false;
}

/* ":[ ]*[digits] +event:[ ]*$" at the end of a header: the event and,
 * when given, the period. */
static bool parse_event(const char *s, size_t n, const char **ev, size_t *ev_len,
			uint64_t *period, bool *has_period)
{
	while (n && is_space(s[n - 1]))
		n--;
	if (!n || s[n - 1] != ':')
		return false;
	size_t e = n - 1, b = e;
	while (b && !is_space(s[b - 1]))
		b--;
	if (b == e)
		return false;
	size_t k = b;
	while (k && is_space(s[k - 1]))
		k--;
	if (k == b)
		return false;
	size_t dend = k;
	while (k && isdigit((unsigned char)s[k - 1]))
		k--;
	size_t dstart = k;
	while (k && is_space(s[k - 1]))
		k--;
	if (!k || s[k - 1] != ':') {
		/* the digits may have been the event's own: none of them */
		if (dstart == dend)
			return false;
		k = dend;
		while (k && is_space(s[k - 1]))
			k--;
		if (!k || s[k - 1] != ':' || k != dstart)
			return false;
		dstart = dend;
	}
	*ev = s + b;
	*ev_len = e - b;
	*has_period = dstart < dend;
	*period = 0;
	for (size_t i = dstart; i < dend; i++)
		*period = *period * 10 + (uint64_t)(s[i] - '0');
	if (*has_period && !truthy(s + dstart, dend - dstart))
		*has_period = false;
	return true;
}

static int push_frame(struct folder *f, const char *s, size_t n)
{
	if (f->frames_len + n + 1 > f->frames_cap) {
		size_t cap = f->frames_cap ? f->frames_cap * 2 : 4096;
		while (cap < f->frames_len + n + 1)
			cap *= 2;
		char *p = realloc(f->frames, cap);
		if (!p)
			return -ENOMEM;
		f->frames = p;
		f->frames_cap = cap;
	}
	if (grow_array((void **)&f->offs, &f->offs_cap, f->nframes, sizeof(*f->offs), 64))
		return -ENOMEM;
	f->offs[f->nframes] = (uint32_t)f->frames_len;
	memcpy(f->frames + f->frames_len, s, n);
	f->frames[f->frames_len + n] = '\0';
	f->frames_len += n + 1;
	f->nframes++;
	return 0;
}

/* A frame's name as the reference shows it, into out (size >= 2n + 64). */
static size_t tidy(const struct folder *f, const char *pc, size_t pclen,
		   const char *func, size_t flen, const char *mod, size_t mlen,
		   char *out)
{
	size_t o = 0;
	if (flen == 9 && !memcmp(func, "[unknown]", 9)) {
		const char *name = "unknown";
		size_t nlen = 7;
		if (!(mlen == 9 && !memcmp(mod, "[unknown]", 9))) {
			const char *slash = memrchr(mod, '/', mlen);
			name = slash ? slash + 1 : mod;
			nlen = mlen - (size_t)(name - mod);
		}
		out[o++] = '[';
		memcpy(out + o, name, nlen);
		o += nlen;
		if (f->o.addrs) {
			memcpy(out + o, " <", 2);
			o += 2;
			memcpy(out + o, pc, pclen);
			o += pclen;
			out[o++] = '>';
		}
		out[o++] = ']';
	} else {
		memcpy(out, func, flen);
		o = flen;
	}
	/* generic tidying: ';' would split the stack; argument lists go,
	 * unless the name looks like "x.(...).y" or the parenthesis opens
	 * "(anonymous namespace)"; quotes go */
	for (size_t i = 0; i < o; i++)
		if (out[i] == ';')
			out[i] = ':';
	bool dotted = false;
	for (size_t i = 0; i + 1 < o && !dotted; i++)
		if (out[i] == '.' && out[i + 1] == '(')
			for (size_t j = o; j-- > i + 2;)
				if (out[j] == '.' && out[j - 1] == ')') {
					dotted = true;
					break;
				}
	if (!dotted)
		for (size_t i = 0; i < o; i++)
			if (out[i] == '(' &&
			    !(o - i - 1 >= 20 && !memcmp(out + i + 1, "anonymous namespace)", 20))) {
				o = i;
				break;
			}
	size_t w = 0;
	for (size_t i = 0; i < o; i++)
		if (out[i] != '"' && out[i] != '\'')
			out[w++] = out[i];
	o = w;
	/* java: class names lose their L */
	if (f->pname_len == 4 && !memcmp(f->pname, "java", 4) && o && out[0] == 'L' &&
	    memchr(out, '/', o)) {
		memmove(out, out + 1, o - 1);
		o--;
	}
	/* annotations */
	bool unknown_mod = memmem(mod, mlen, "unknown", 7) != NULL;
	bool kernel_mod = mlen && (mod[0] == '[' ||
		(mlen >= 7 && !memcmp(mod + mlen - 7, "vmlinux", 7)));
	bool jit_mod = false;
	for (const char *p = mod; (p = memmem(p, mlen - (size_t)(p - mod), "/tmp/perf-", 10));) {
		const char *q = p + 10;
		const char *e = mod + mlen;
		const char *d = q;
		while (d < e && isdigit((unsigned char)*d))
			d++;
		if (d > q && e - d >= 4 && !memcmp(d, ".map", 4)) {
			jit_mod = true;
			break;
		}
		p++;
	}
	if (f->o.kernel && kernel_mod && !unknown_mod) {
		memcpy(out + o, "_[k]", 4);
		o += 4;
	} else if (f->o.jit && jit_mod && !memmem(out, o, "_[j]", 4)) {
		memcpy(out + o, "_[j]", 4);
		o += 4;
	}
	return o;
}

/* A stack line: "  pc func (module)". */
static int stack_line(struct folder *f, const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && is_space(s[i]))
		i++;
	size_t pc = i;
	while (i < n && is_word(s[i]))
		i++;
	if (i == pc)
		return 1;
	size_t pclen = i - pc;
	while (i < n && is_space(s[i]))
		i++;
	size_t fstart = i;
	/* the last " (" after which non-spaces run to a ')' */
	for (size_t k = n; k-- > fstart + 1;) {
		if (s[k] != '(' || s[k - 1] != ' ')
			continue;
		size_t m = k + 1, close = 0;
		while (m < n && !is_space(s[m])) {
			if (s[m] == ')')
				close = m;
			m++;
		}
		if (!close)
			continue;
		size_t flen = k - 1 - fstart;
		if (!flen)
			continue;
		if (!f->in_sample)
			return 0;	/* a filtered sample's frame */
		const char *func = s + fstart;
		/* "+0x1a2b" offsets are dropped */
		size_t x = flen;
		while (x && isxdigit((unsigned char)func[x - 1]) &&
		       !isupper((unsigned char)func[x - 1]))
			x--;
		if (x < flen && x >= 3 && func[x - 1] == 'x' && func[x - 2] == '0' &&
		    func[x - 3] == '+')
			flen = x - 3;
		if (flen && func[0] == '(')
			return 0;	/* a process name */
		char *buf = malloc(2 * flen + pclen + (close - k) + 64);
		if (!buf)
			return -ENOMEM;
		size_t blen = tidy(f, s + pc, pclen, func, flen, s + k + 1, close - k - 1, buf);
		int err = push_frame(f, buf, blen);
		free(buf);
		return err;
	}
	return 1;
}

static int end_sample(struct folder *f)
{
	if (!f->in_sample)
		return 0;
	f->in_sample = false;
	/* the process, then the frames from the root down */
	size_t len = f->pname_len + f->frames_len + 1;
	char *key = malloc(len + 1);
	if (!key)
		return -ENOMEM;
	memcpy(key, f->pname, f->pname_len);
	size_t k = f->pname_len;
	for (uint32_t i = f->nframes; i-- > 0;) {
		const char *fr = f->frames + f->offs[i];
		size_t n = strlen(fr);
		key[k++] = ';';
		memcpy(key + k, fr, n);
		k += n;
	}
	uint32_t id = strtab__intern(&f->stacks, key, k);
	free(key);
	f->frames_len = 0;
	f->nframes = 0;
	if (id == HINDEX_NONE)
		return -ENOMEM;
	if (id == f->ncounts) {	/* a new stack */
		if (grow_array((void **)&f->counts, &f->counts_cap, f->ncounts,
			       sizeof(*f->counts), 1024))
			return -ENOMEM;
		f->counts[f->ncounts++] = 0;
	}
	f->counts[id] += f->period;
	return 0;
}

int folder__line(struct folder *f, const char *s, size_t n)
{
	if (n && s[0] == '#')
		return 0;
	if (n == 0)
		return end_sample(f);
	size_t comm_len, pid_len, tid_len;
	const char *pid, *tid;
	if (parse_header(s, n, &comm_len, &pid, &pid_len, &tid, &tid_len)) {
		const char *ev;
		size_t ev_len;
		uint64_t period = 0;
		bool has_period = false;
		if (parse_event(s, n, &ev, &ev_len, &period, &has_period)) {
			if (!f->event) {
				f->event = strndup(ev, ev_len);
				if (!f->event)
					return -ENOMEM;
			} else if (strlen(f->event) != ev_len || memcmp(f->event, ev, ev_len)) {
				return 0;	/* another event: skipped, as is its stack */
			}
		}
		/* "comm tid" without a pid: the pid is "?" */
		const char *p = pid, *t = tid;
		size_t pl = pid_len, tl = tid_len;
		if (!truthy(t, tl)) {
			t = pid;
			tl = pid_len;
			p = "?";
			pl = 1;
		}
		free(f->pname);
		f->pname = malloc(comm_len + pl + tl + 4);
		if (!f->pname)
			return -ENOMEM;
		size_t k = 0;
		memcpy(f->pname, s, comm_len);
		k = comm_len;
		if (f->o.tid || f->o.pid) {
			f->pname[k++] = '-';
			memcpy(f->pname + k, p, pl);
			k += pl;
			if (f->o.tid) {
				f->pname[k++] = '/';
				memcpy(f->pname + k, t, tl);
				k += tl;
			}
		}
		for (size_t i = 0; i < k; i++)
			if (f->pname[i] == ' ')
				f->pname[i] = '_';
		f->pname_len = k;
		f->period = has_period ? period : 1;
		f->in_sample = true;
		f->frames_len = 0;
		f->nframes = 0;
		return 0;
	}
	int r = stack_line(f, s, n);
	return r < 0 ? r : 0;	/* other lines are perf noise: skipped */
}

static const struct folder *sort_ctx;

static int cmp_stack(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct strtab *t = &sort_ctx->stacks;
	size_t lx = strtab__len(t, x), ly = strtab__len(t, y);
	int c = memcmp(strtab__str(t, x), strtab__str(t, y), lx < ly ? lx : ly);
	return c ? c : (lx > ly) - (lx < ly);
}

int folder__write(struct folder *f, FILE *out)
{
	uint32_t n = f->stacks.count;
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	sort_ctx = f;
	qsort(order, n, sizeof(*order), cmp_stack);
	for (uint32_t i = 0; i < n; i++) {
		fwrite(strtab__str(&f->stacks, order[i]), 1, strtab__len(&f->stacks, order[i]), out);
		fprintf(out, " %llu\n", (unsigned long long)f->counts[order[i]]);
	}
	free(order);
	return ferror(out) ? -EIO : 0;
}
