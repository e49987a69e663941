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

#include "perf_script.h"
#include "../core/grow.h"
#include "../core/hindex.h"
#include "../core/strtab.h"
#include "../report/report.h"
#include "../core/banned.h"

struct folder {
	struct fold_options o;
	struct strtab stacks;	/* distinct folded stacks */
	uint64_t *counts;
	uint32_t ncounts, counts_cap;
	char *event;		/* the first event seen: others are skipped */
	bool in_sample;		/* a header was taken and not yet ended */
	char *pname;
	size_t pname_len, pname_cap;
	uint64_t period;
	/*
	 * Frame lines repeat far more than they differ, so each distinct
	 * line (its key, frame_key: past its address, with whether the
	 * process is java) is tidied once: raw_lines interns the key,
	 * tidied_of[raw id] is the frame's id in frames_tab, or FRAME_NONE
	 * for a process-name line or noise, FRAME_BAD for a line that is
	 * neither, FRAME_WHOLE for one to be known by its whole text.
	 */
	struct strtab raw_lines, frames_tab;
	uint32_t *tidied_of;
	uint32_t tidied_cap, ntidied;
	uint32_t *frame_ids;	/* this sample's frames, callee first */
	uint32_t nframes, frame_ids_cap;
	char *scratch;		/* a tidied frame, then a sample's stack */
	size_t scratch_cap;
	struct line_splitter lines;	/* folder__feed's */
	uint64_t lineno;	/* lines handed to folder__line so far */
	uint64_t unended;	/* samples with no blank line after them */
	bool oneline;		/* the open "sample" is a tracepoint's record */
	uint64_t lost_chunks;	/* as perf's "lost N chunks" lines said */
};

#define FRAME_NONE UINT32_MAX		/* a line that adds no frame */
#define FRAME_BAD (UINT32_MAX - 1)	/* a line that is no frame nor noise */
#define FRAME_WHOLE (UINT32_MAX - 2)	/* no frame: known by the whole line */

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
	strtab__init(&f->raw_lines);
	strtab__init(&f->frames_tab);
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
	strtab__release(&f->raw_lines);
	strtab__release(&f->frames_tab);
	free(f->tidied_of);
	free(f->frame_ids);
	free(f->scratch);
	line_splitter__release(&f->lines);
	free(f);
}

/* Perl truth of a captured number: absent, "" and "0" are false. */
static bool truthy(const char *s, size_t n)
{
	return n && !(n == 1 && s[0] == '0');
}

/* An id at s[j]: digits, or "-1" (perf's id of a task it no longer
 * knew: ":-1 10447/-1", a switch away from one that had exited) before a
 * slash or a space, as perf_script.c reads it. Its end (j: none). */
static size_t id_end(const char *s, size_t n, size_t j)
{
	if (j + 2 < n && s[j] == '-' && s[j + 1] == '1' &&
	    (s[j + 2] == '/' || ps_is_space(s[j + 2])))
		return j + 2;
	while (j < n && isdigit((unsigned char)s[j]))
		j++;
	return j;
}

/*
 * The header of a sample: "comm pid[/tid] ... [period] event:". comm is
 * the shortest prefix (two characters at least, the first not a space)
 * followed by spaces, an id, optional slashes and an id, and a space.
 */
static bool parse_header(const char *s, size_t n, size_t *comm_len,
			 const char **pid, size_t *pid_len,
			 const char **tid, size_t *tid_len)
{
	if (!n || ps_is_space(s[0]))
		return false;
	for (size_t i = 2; i < n; i++) {
		if (!ps_is_space(s[i]))
			continue;
		size_t j = i;
		while (j < n && ps_is_space(s[j]))
			j++;
		size_t d = j;
		j = id_end(s, n, j);
		if (j == d)
			continue;
		size_t d_end = j;
		while (j < n && s[j] == '/')
			j++;
		size_t t = j;
		j = id_end(s, n, j);
		size_t t_end = j;
		/* the tid group is optional: fall back to none when it is
		 * not followed by a space but the pid is */
		if (j < n && ps_is_space(s[j])) {
			*comm_len = i;
			*pid = s + d;
			*pid_len = d_end - d;
			*tid = s + t;
			*tid_len = t_end - t;
			return true;
		}
		if (d_end < n && ps_is_space(s[d_end])) {
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
	while (n && ps_is_space(s[n - 1]))
		n--;
	if (!n || s[n - 1] != ':')
		return false;
	size_t e = n - 1, b = e;
	while (b && !ps_is_space(s[b - 1]))
		b--;
	if (b == e)
		return false;
	size_t k = b;
	while (k && ps_is_space(s[k - 1]))
		k--;
	if (k == b)
		return false;
	size_t dend = k;
	while (k && isdigit((unsigned char)s[k - 1]))
		k--;
	size_t dstart = k;
	while (k && ps_is_space(s[k - 1]))
		k--;
	if (!k || s[k - 1] != ':') {
		/* the digits may have been the event's own: none of them */
		if (dstart == dend)
			return false;
		k = dend;
		while (k && ps_is_space(s[k - 1]))
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

/* The folder's buffers are small and reused: a line, a stack, a name. */
static int reserve(char **buf, size_t *cap, size_t need)
{
	return grow_bytes(buf, cap, need, 256);
}

static int push_frame(struct folder *f, uint32_t id)
{
	if (grow_array((void **)&f->frame_ids, &f->frame_ids_cap, f->nframes,
		       sizeof(*f->frame_ids), 64))
		return -ENOMEM;
	f->frame_ids[f->nframes++] = id;
	return 0;
}

/* An unknown function's name as the reference shows it: its module's
 * base name (or "unknown") in brackets, with the address under --addrs. */
static size_t tidy_unknown(const struct folder *f, const char *pc, size_t pclen,
			   const char *mod, size_t mlen, char *out)
{
	const char *name = "unknown";
	size_t nlen = 7, o = 0;
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
	return o;
}

/* The generic tidying, in place: ';' would split the stack; argument
 * lists go, unless the name looks like "x.(...).y" or the parenthesis
 * opens "(anonymous namespace)"; quotes go. Returns the new length. */
static size_t tidy_generic(char *out, size_t o)
{
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
	return w;
}

/* Whether a module names a JIT's map, /tmp/perf-PID.map. */
static bool jit_module(const char *mod, size_t mlen)
{
	for (const char *p = mod; (p = memmem(p, mlen - (size_t)(p - mod), "/tmp/perf-", 10));) {
		const char *q = p + 10;
		const char *e = mod + mlen;
		const char *d = q;
		while (d < e && isdigit((unsigned char)*d))
			d++;
		if (d > q && e - d >= 4 && !memcmp(d, ".map", 4))
			return true;
		p++;
	}
	return false;
}

/* A frame's name as the reference shows it, into out (size >= 2n + 64
 * + pclen + mlen); inlined: a part of "a->b" after the first. */
static size_t tidy(const struct folder *f, const char *pc, size_t pclen,
		   const char *func, size_t flen, const char *mod, size_t mlen,
		   char *out, bool inlined)
{
	size_t o;
	if (flen == 9 && !memcmp(func, "[unknown]", 9)) {
		o = tidy_unknown(f, pc, pclen, mod, mlen, out);
	} else {
		memcpy(out, func, flen);
		o = flen;
	}
	o = tidy_generic(out, o);
	/* java: class names lose their L */
	if (f->pname_len == 4 && !memcmp(f->pname, "java", 4) && o && out[0] == 'L' &&
	    memchr(out, '/', o)) {
		memmove(out, out + 1, o - 1);
		o--;
	}
	/* annotations: an inlined part is marked whatever the options, and
	 * then as nothing else */
	if (inlined) {
		if (!memmem(out, o, "_[i]", 4)) {
			memcpy(out + o, "_[i]", 4);
			o += 4;
		}
		return o;
	}
	if (!f->o.kernel && !f->o.jit)
		return o;
	bool unknown_mod = memmem(mod, mlen, "unknown", 7) != NULL;
	bool kernel_mod = mlen && (mod[0] == '[' ||
		(mlen >= 7 && !memcmp(mod + mlen - 7, "vmlinux", 7)));
	if (f->o.kernel && kernel_mod && !unknown_mod) {
		memcpy(out + o, "_[k]", 4);
		o += 4;
	} else if (f->o.jit && jit_module(mod, mlen) && !memmem(out, o, "_[j]", 4)) {
		memcpy(out + o, "_[j]", 4);
		o += 4;
	}
	return o;
}

/*
 * A stack line, leading spaces gone: its tidied frame's id in *id, or
 * FRAME_NONE for a process name or perf noise; 0, -EBADMSG when it is
 * neither a frame nor noise, or -ENOMEM.
 */
static int tidy_line(struct folder *f, const char *s, size_t n, uint32_t *id,
		     bool *no_frame)
{
	struct frame_parts fp;
	*id = FRAME_NONE;
	*no_frame = !perf_script__frame_parts(s, n, &fp);
	if (*no_frame)
		return perf_script__is_noise(s, n) ? 0 : -EBADMSG;
	/* no symbol ("7f1e2215d058  (/lib/libc.so)"): the reference's
	 * pattern wants a character of function before " (", and takes the
	 * one before that space (a space, or the address's last digit) */
	if (!fp.flen) {
		fp.func -= 2;
		fp.flen = 1;
		fp.pclen -= fp.gap == 1;
	}
	/* "+0x1a2b" offsets are dropped */
	size_t flen = perf_script__strip_offset(fp.func, fp.flen);
	if (flen && fp.func[0] == '(')
		return 0;	/* a process name */
	/* "caller->inlined->...": a frame each, the inlined ones marked
	 * _[i]; empty parts at the end are none (as Perl's split leaves
	 * them), so "->" alone is no frame */
	const char *end = fp.func + flen;
	while (end - fp.func >= 2 && !memcmp(end - 2, "->", 2))
		end -= 2;
	if (end == fp.func && flen)
		return 0;
	size_t parts = 1;
	for (const char *a = fp.func; (a = memmem(a, (size_t)(end - a), "->", 2)); a += 2)
		parts++;
	if (reserve(&f->scratch, &f->scratch_cap,
		    2 * flen + parts * (fp.pclen + fp.mlen + 64 + 1)))
		return -ENOMEM;
	size_t blen = 0;
	for (const char *p = fp.func;; blen++) {
		const char *arrow = memmem(p, (size_t)(end - p), "->", 2);
		const char *e = arrow ? arrow : end;
		blen += tidy(f, fp.pc, fp.pclen, p, (size_t)(e - p), fp.mod, fp.mlen,
			     f->scratch + blen, p != fp.func);
		if (!arrow)
			break;
		f->scratch[blen] = ';';
		p = arrow + 2;
	}
	*id = strtab__intern(&f->frames_tab, f->scratch, blen);
	return *id == HINDEX_NONE ? -ENOMEM : 0;
}

/* The id of frame line s[0, n) (leading spaces gone) tidied, found by the
 * key in f->scratch (klen bytes): tidied the first time the key is met.
 * by_rest: the key holds the line past its address only, so a line that
 * is no frame (known by the whole line: perf's noise) gets FRAME_WHOLE. */
static int tidied(struct folder *f, size_t klen, const char *s, size_t n, bool by_rest,
		  uint32_t *id)
{
	uint32_t raw = strtab__intern(&f->raw_lines, f->scratch, klen);
	if (raw == HINDEX_NONE)
		return -ENOMEM;
	if (raw < f->ntidied) {
		*id = f->tidied_of[raw];
		return 0;
	}
	bool no_frame;
	int r = tidy_line(f, s, n, id, &no_frame);
	if (r == -EBADMSG)
		*id = FRAME_BAD;
	else if (r < 0)
		return r;
	if (by_rest && no_frame)
		*id = FRAME_WHOLE;
	if (grow_array((void **)&f->tidied_of, &f->tidied_cap, raw,
		       sizeof(*f->tidied_of), 1024))
		return -ENOMEM;
	f->tidied_of[raw] = *id;
	f->ntidied = raw + 1;
	return 0;
}

/* A frame line's key for tidied, into f->scratch: whether the process is
 * java (tidying differs), then the line past its address, unless the
 * address is shown (--folded addrs) or there is none: then the whole line
 * ('W'). Past the address, all that perf_script__frame_parts and tidying
 * take of it is whether it has more than one character ('L', 'S') and
 * its last one (a nameless frame's function). A shared library is at
 * another address in each process: by the whole line, a minute of a
 * compile loop's text had four times as many (132 704, against 33 704),
 * each tidied once, in a table four times as large (bench/RESULTS.md,
 * round 33). Its length; *by_rest: the key is the line past its address. */
static size_t frame_key(struct folder *f, const char *s, size_t n, bool java, bool whole,
			bool *by_rest)
{
	size_t a = 0;
	while (!whole && a < n && ps_is_word(s[a]))
		a++;
	char *k = f->scratch;
	k[0] = java ? 'j' : '-';
	*by_rest = !whole && a;
	if (!*by_rest) {
		k[1] = 'W';
		memcpy(k + 2, s, n);
		return n + 2;
	}
	k[1] = a > 1 ? 'L' : 'S';
	k[2] = s[a - 1];
	memcpy(k + 3, s + a, n - a);
	return n - a + 3;
}

static int stack_line(struct folder *f, const char *s, size_t n)
{
	size_t lead = perf_script__skip_spaces(s, n);
	s += lead;
	n -= lead;
	if (!f->in_sample) {	/* a filtered sample's frame, or noise */
		struct frame_parts fp;
		return perf_script__frame_parts(s, n, &fp) || perf_script__is_noise(s, n) ? 0 : -EBADMSG;
	}
	bool java = f->pname_len == 4 && !memcmp(f->pname, "java", 4);
	if (reserve(&f->scratch, &f->scratch_cap, n + 3))
		return -ENOMEM;
	uint32_t id;
	bool by_rest;
	size_t klen = frame_key(f, s, n, java, f->o.addrs, &by_rest);
	int err = tidied(f, klen, s, n, by_rest, &id);
	if (!err && id == FRAME_WHOLE) {	/* no frame: known by the whole line */
		klen = frame_key(f, s, n, java, true, &by_rest);
		err = tidied(f, klen, s, n, by_rest, &id);
	}
	if (err)
		return err;
	if (id == FRAME_BAD)
		return -EBADMSG;
	return id == FRAME_NONE ? 0 : push_frame(f, id);
}

static int end_sample(struct folder *f)
{
	if (!f->in_sample)
		return 0;
	f->in_sample = false;
	/* the process, then the frames from the root down */
	size_t len = f->pname_len + 1;
	for (uint32_t i = 0; i < f->nframes; i++)
		len += strtab__len(&f->frames_tab, f->frame_ids[i]) + 1;
	if (reserve(&f->scratch, &f->scratch_cap, len))
		return -ENOMEM;
	char *key = f->scratch;
	memcpy(key, f->pname, f->pname_len);
	size_t k = f->pname_len;
	for (uint32_t i = f->nframes; i-- > 0;) {
		uint32_t fr = f->frame_ids[i];
		size_t n = strtab__len(&f->frames_tab, fr);
		key[k++] = ';';
		memcpy(key + k, strtab__str(&f->frames_tab, fr), n);
		k += n;
	}
	uint32_t id = strtab__intern(&f->stacks, key, k);
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

void folder__losses(const struct folder *f, uint64_t *unended, uint64_t *lost_chunks)
{
	*unended = f->unended;
	*lost_chunks = f->lost_chunks;
}

uint64_t folder__lineno(const struct folder *f)
{
	return f->lineno;
}

static bool ends_in_paren(const char *s, size_t n)
{
	while (n && ps_is_space(s[n - 1]))
		n--;
	return n && s[n - 1] == ')';
}

/*
 * A tracepoint's record without a stack ("... 577.849: sched:sched_switch:
 * prev_comm=..."): the event name, subsystem:name, then its fields on the
 * same line. perf ends no such record with a blank line; it is no sample
 * left open, so nothing to warn of when the next header comes.
 */
static bool tracepoint_record(const char *s, size_t n)
{
	for (const char *c = s; n > 2 && (c = memchr(c, ':', n - 2 - (size_t)(c - s))); c++) {
		size_t i = (size_t)(c - s);
		if (s[i + 1] != ' ')
			continue;
		size_t j = i + 1, a, b;
		while (j < n && s[j] == ' ')
			j++;
		for (a = j; a < n && (isalnum((unsigned char)s[a]) || s[a] == '_'); a++)
			;
		if (a == j || a >= n || s[a] != ':')
			continue;
		for (b = a + 1; b < n && (isalnum((unsigned char)s[b]) || s[b] == '_'); b++)
			;
		if (b > a + 1 && b < n && s[b] == ':' && b + 1 < n)
			return true;	/* fields follow the event's colon */
	}
	return false;
}

int folder__line(struct folder *f, const char *s, size_t n)
{
	f->lineno++;
	if (n && s[0] == '#')
		return 0;
	if (n == 0)
		return end_sample(f);
	/* perf right-aligns comm in some layouts (-F with pid): a line that
	 * starts with spaces is read as a header when it can be one and is
	 * no frame (frames end in ')') */
	if (ps_is_space(s[0]) && !ends_in_paren(s, n))
		while (n && ps_is_space(s[0]))
			s++, n--;	/* stack_line would drop them too */
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
		} else if (perf_script__is_noise(s, n)) {
			/* "Processed 10 events and lost 1 chunks!" has a
			 * header's shape but is perf's message, no sample
			 * (the reference folds it as one); what it says was
			 * lost is counted */
			f->lost_chunks += perf_script__lost_chunks(s, n);
			return 0;
		}
		if (f->in_sample && (f->nframes || !f->oneline))
			f->unended++;	/* dropped: see docs/folded.md */
		f->oneline = tracepoint_record(s, n);
		/* "comm tid" without a pid: the pid is "?" */
		const char *p = pid, *t = tid;
		size_t pl = pid_len, tl = tid_len;
		if (!truthy(t, tl)) {
			t = pid;
			tl = pid_len;
			p = "?";
			pl = 1;
		}
		if (reserve(&f->pname, &f->pname_cap, comm_len + pl + tl + 4))
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
		f->nframes = 0;
		return 0;
	}
	return stack_line(f, s, n);
}

static int fold_line(void *ctx, const char *line, size_t len)
{
	return folder__line(ctx, line, len);
}

int folder__feed(struct folder *f, const char *buf, size_t n)
{
	return line_splitter__feed(&f->lines, buf, n, fold_line, f);
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

int folder__finish(struct folder *f)
{
	int err = line_splitter__finish(&f->lines, fold_line, f);
	if (!err && f->in_sample) {
		f->in_sample = false;	/* not counted, as by the reference */
		if (f->nframes || !f->oneline)
			f->unended++;
	}
	return err;
}

int folder__write(struct folder *f, FILE *out)
{
	int err = folder__finish(f);
	if (err)
		return err;
	uint32_t n = f->stacks.count;
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	sort_ctx = f;
	qsort(order, n, sizeof(*order), cmp_stack);
	for (uint32_t i = 0; i < n; i++) {
		/* the text's names may hold control characters (perf prints a
		 * comm's bytes as they are): shown as report's text shows them */
		text_put(out, strtab__str(&f->stacks, order[i]), 0, 0);
		fprintf(out, " %llu\n", (unsigned long long)f->counts[order[i]]);
	}
	free(order);
	return ferror(out) ? -EIO : 0;
}
