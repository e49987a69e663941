/*
 * script_import: see script_import.h.
 *
 * The recording's first item, META, says things known only at the end
 * (the CPUs seen, the interval, whether steal can be measured), so the
 * items are written first to an unlinked temporary recording and copied
 * after META into the output: memory stays bounded by the distinct names
 * and threads, whatever the length of the text.
 */
#include "script_import.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lines_ahead.h"
#include "perf_script.h"
#include "procstat.h"
#include "../core/grow.h"
#include "../core/strtab.h"
#include "../core/units.h"
#include "../core/banned.h"

#define MAX_FRAMES 4096		/* deeper stacks keep their leaf end */
#define INTERVAL_PROBES 4096	/* periods or gaps kept to find the interval */
#define MAX_CPUS 65536

enum sample_kind { IN_NONE, IN_SAMPLE, IN_OTHER };

/* A frame line read before, as the frame it made: taking each apart and
 * looking up its function and file again was a seventh of the
 * instructions of reading perf script text (bench/RESULTS.md, round 24;
 * callgrind). By the line's bytes past its address, which alone decide
 * the names and whether the file is the kernel's (whether the address
 * has more than one character, too: see perf_script__frame_parts): the
 * address differs where the names do not, a shared library's frames
 * being at another place in each process, so keyed with the address
 * only a third of a compile loop's frames were met again, and without
 * it five in six (round 32). The address is read each time; whether the
 * file is the sample's executable depends on the sample, and is asked
 * again. Lines of FRAME_MEMO_LINE bytes or less past the address, in
 * FRAME_MEMO slots by hash. */
#define FRAME_MEMO 4096
#define FRAME_MEMO_LINE 120
_Static_assert(FRAME_MEMO_LINE <= UINT8_MAX, "a memo's line length fits its len");
struct frame_memo {
	uint64_t hash;
	uint32_t function, dso;	/* names ids */
	uint8_t len;		/* 0: empty */
	bool long_address;	/* more than one character */
	bool kernel_file;	/* the kernel's, by its name */
	char rest[FRAME_MEMO_LINE];
};

/* A frame line's part that needs no line before it (look_frame): on
 * lines_ahead's thread, beside the rest. */
struct frame_look {
	size_t pclen;		/* the address's bytes */
	size_t rest_len;	/* the bytes past it */
	uint64_t ip;
	uint64_t hash;		/* of the bytes past it, when hashed */
	bool hashed;		/* the memo may hold it */
};

/* A thread as see_task saw it last: seen again with the same process and
 * name, it needs nothing (samples come of the few threads running, and
 * taking their ids and names to the tables again was a thirtieth of
 * reading the text). Cleared whenever a thread's name changes. */
#define TASK_MEMO 4
struct task_memo {
	uint32_t pid, tid;
	uint8_t len;		/* 0: empty */
	char comm[31];
};

struct script_parser {
	item_fn emit;
	void *emit_ctx;
	struct script_import_stats *st;
	struct line_splitter lines;
	struct ps_hints hints;		/* each event's header layout */
	struct strtab names;		/* function and file names, REC_NAME ids */
	uint32_t last_module;		/* the frame before's file, as id + 1 */
	struct strtab tids;		/* threads seen: a TASK item each */
	struct strtab comms;		/* their names */
	uint32_t *comm_of;		/* tids id -> comms id, the last seen */
	uint32_t comm_of_cap;
	char host[256];
	char *event;			/* the imported event */
	enum sample_kind in;
	struct rec_sample_head head;
	char comm[64];			/* the open sample's, for its frames */
	size_t comm_len;
	/* whether a file is the open sample's executable, by names id:
	 * comm_gen << 1 | yes, asked once per file while comm stays (a
	 * sample's files are those of the samples before it, mostly) */
	uint32_t *exe_of;
	uint32_t exe_of_cap;
	uint32_t comm_gen;		/* counts comm's changes, from 1 */
	bool cut;			/* it had more than MAX_FRAMES */
	struct rec_frame *frames;
	uint32_t nframes, frames_cap;
	uint64_t truncated;		/* samples cut to MAX_FRAMES */
	uint64_t switch_period;		/* largest sched_switch period seen */
	uint8_t *cpus;			/* seen[cpu] */
	uint32_t ncpus;
	uint64_t first_ns, last_ns;
	bool any_time;
	uint64_t sched_untimed;		/* tracepoint lines without time or cpu */
	bool no_time_seen;
	uint64_t *periods, *gaps;	/* INTERVAL_PROBES each, when needed */
	uint32_t nperiods, ngaps;
	uint64_t *cpu_last;		/* last sample time per CPU, for gaps */
	uint64_t *cpu_time;		/* last time per CPU of any line read */
	int timed;			/* 0 no line yet, 1 lines have times, -1 not */
	char *msg;
	size_t msg_size;
	struct frame_memo *memo;	/* FRAME_MEMO of them, made when needed */
	bool nul_near, nul_before;	/* a NUL in the run read, or the one before */
	struct task_memo tasks[TASK_MEMO];
	uint32_t next_task;		/* the slot the next one takes */
};

__attribute__((format(printf, 2, 3)))
static int bad(struct script_parser *im, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(im->msg, im->msg_size, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

static int see_cpu(struct script_parser *im, int32_t cpu)
{
	uint32_t c = cpu < 0 ? 0 : (uint32_t)cpu;
	if (c >= MAX_CPUS)
		return bad(im, "CPU number out of range");
	if (c >= im->ncpus) {
		uint32_t n = c + 1 > im->ncpus * 2 ? c + 1 : im->ncpus * 2;
		uint8_t *p = realloc(im->cpus, n);
		uint64_t *q = realloc(im->cpu_last, n * sizeof(*q));
		if (p)
			im->cpus = p;
		if (q)
			im->cpu_last = q;
		uint64_t *t = p && q ? realloc(im->cpu_time, n * sizeof(*t)) : NULL;
		if (t)
			im->cpu_time = t;
		if (!t)
			return -ENOMEM;
		memset(im->cpus + im->ncpus, 0, n - im->ncpus);
		memset(im->cpu_last + im->ncpus, 0, (n - im->ncpus) * sizeof(*q));
		memset(im->cpu_time + im->ncpus, 0, (n - im->ncpus) * sizeof(*t));
		im->ncpus = n;
	}
	im->cpus[c] = 1;
	return 0;
}

/*
 * A line read into the recording, in the text's order: perf script prints
 * each CPU's events in time order (one ring per CPU; only CPUs' rings
 * interleave out of order), so a time before the last on its CPU, or a
 * line without a time among lines with times, is a text joined to another
 * or to itself, which would count time twice or outside the recording.
 * Equal times are perf's own (microseconds, a switch and a sample). Call
 * after see_cpu.
 */
static int in_order(struct script_parser *im, const struct ps_header *h)
{
	int timed = h->has_time ? 1 : -1;
	if (im->timed && im->timed != timed)
		return bad(im, "a line %s a time among lines %s one (texts joined? "
			   "import each on its own)", h->has_time ? "with" : "without",
			   h->has_time ? "without" : "with");
	im->timed = timed;
	uint32_t cpu = h->cpu < 0 ? 0 : (uint32_t)h->cpu;
	if (!h->has_time)
		return 0;
	uint64_t last = im->cpu_time[cpu];
	if (h->time_ns < last)
		return bad(im, "time %llu.%09llu is before the last on CPU %u (%llu.%09llu): "
			   "times go backwards (texts joined, or one repeated? import each "
			   "on its own)", (unsigned long long)(h->time_ns / NSEC_PER_SEC),
			   (unsigned long long)(h->time_ns % NSEC_PER_SEC), cpu,
			   (unsigned long long)(last / NSEC_PER_SEC),
			   (unsigned long long)(last % NSEC_PER_SEC));
	im->cpu_time[cpu] = h->time_ns;
	return 0;
}

static void see_time(struct script_parser *im, uint64_t t)
{
	if (!im->any_time || t < im->first_ns)
		im->first_ns = t;
	if (!im->any_time || t > im->last_ns)
		im->last_ns = t;
	im->any_time = true;
}

/* The REC_NAME id of s[0..n), writing the item when it is new. */
static int name_id(struct script_parser *im, const char *s, size_t n, uint32_t *id)
{
	uint32_t before = im->names.count;
	*id = strtab__intern(&im->names, s, n);
	if (*id == HINDEX_NONE)
		return -ENOMEM;
	if (im->names.count == before)
		return 0;
	uint32_t pre[2] = { *id, 0 };
	return im->emit(im->emit_ctx, REC_NAME, pre, sizeof(pre), s, n);
}

/* name_id of a frame's file: the frame before's, most often (a stack's
 * frames run in one file after another), found without hashing its
 * path again. */
static int module_id(struct script_parser *im, const char *s, size_t n, uint32_t *id)
{
	uint32_t last = im->last_module;
	if (last && strtab__len(&im->names, last - 1) == n &&
	    !memcmp(strtab__str(&im->names, last - 1), s, n)) {
		*id = last - 1;
		return 0;
	}
	int err = name_id(im, s, n, id);
	if (!err)
		im->last_module = *id + 1;
	return err;
}

/* A TASK item the first time a thread is seen, naming it; its process
 * is named after it when not seen itself. */
static int see_task(struct script_parser *im, uint32_t pid, uint32_t tid,
		    const char *comm, size_t comm_len)
{
	if (pid != tid) {
		int err = see_task(im, pid, pid, comm, comm_len);
		if (err)
			return err;
	}
	uint32_t before = im->tids.count;
	uint32_t t = strtab__intern(&im->tids, (const char *)&tid, sizeof(tid));
	uint32_t c = strtab__intern(&im->comms, comm, comm_len);
	if (t == HINDEX_NONE || c == HINDEX_NONE ||
	    grow_array((void **)&im->comm_of, &im->comm_of_cap, t,
		       sizeof(*im->comm_of), 256))
		return -ENOMEM;
	uint32_t pre[2] = { pid, tid };
	if (im->tids.count != before) {
		im->comm_of[t] = c;
		return im->emit(im->emit_ctx, REC_TASK, pre, sizeof(pre), comm, comm_len);
	}
	if (im->comm_of[t] == c || pid != tid)
		return 0;
	/* the process exec'd: it goes by its new name */
	im->comm_of[t] = c;
	memset(im->tasks, 0, sizeof(im->tasks));
	pre[1] = 0;
	char name[80];
	int n = snprintf(name, sizeof(name), "[%.*s]", (int)comm_len, comm);
	return im->emit(im->emit_ctx, REC_CMDLINE, pre, sizeof(pre), name,
			       (size_t)n < sizeof(name) ? (size_t)n : sizeof(name) - 1);
}

/* see_task, unless the thread was seen so lately. */
static int see_task_again(struct script_parser *im, uint32_t pid, uint32_t tid,
			  const char *comm, size_t comm_len)
{
	bool fits = comm_len && comm_len < sizeof(im->tasks[0].comm);
	for (uint32_t i = 0; fits && i < TASK_MEMO; i++) {
		const struct task_memo *m = &im->tasks[i];
		if (m->tid == tid && m->pid == pid && m->len == comm_len &&
		    !memcmp(m->comm, comm, comm_len))
			return 0;
	}
	int err = see_task(im, pid, tid, comm, comm_len);
	if (err || !fits)
		return err;
	struct task_memo *m = &im->tasks[im->next_task++ % TASK_MEMO];
	*m = (struct task_memo){ .pid = pid, .tid = tid, .len = (uint8_t)comm_len };
	memcpy(m->comm, comm, comm_len);
	return 0;
}

/* The text of field key (as "prev_comm") up to " stop=" (as "prev_pid"):
 * perf prints comm=%s, so a name may hold spaces but not that. */
static bool text_field(const char *rest, size_t n, const char *key, const char *stop,
		       const char **v, size_t *vlen)
{
	size_t kl = strlen(key), sl = strlen(stop);
	for (size_t i = 0; i + kl < n; i++) {
		if ((i && rest[i - 1] != ' ') || memcmp(rest + i, key, kl) || rest[i + kl] != '=')
			continue;
		size_t b = i + kl + 1;
		for (size_t j = b; j + sl + 2 <= n; j++)
			if (rest[j] == ' ' && !memcmp(rest + j + 1, stop, sl) && rest[j + 1 + sl] == '=') {
				*v = rest + b;
				*vlen = j - b;
				return true;
			}
		return false;
	}
	return false;
}

/* A thread a tracepoint names (comm=, prev_comm=, next_comm=): named so,
 * unless it was seen before. Its process is not known: taken to be itself,
 * as the engine takes it, until a sample says otherwise. */
static int name_thread(struct script_parser *im, const struct ps_header *h,
		       const char *key, const char *stop, uint64_t tid)
{
	const char *v;
	size_t vl;
	uint32_t t = (uint32_t)tid;
	if (!tid || tid > UINT32_MAX || !text_field(h->rest, h->rest_len, key, stop, &v, &vl) ||
	    strtab__find(&im->tids, (const char *)&t, sizeof(t)) != HINDEX_NONE)
		return 0;
	return see_task(im, t, t, v, vl);
}

/* perf truncates comm to 15 characters: a file whose name starts with the
 * sample's comm is taken as its program's executable. */
static bool is_executable(const struct script_parser *im, const char *mod, size_t mlen)
{
	const char *slash = memrchr(mod, '/', mlen);
	const char *base = slash ? slash + 1 : mod;
	size_t blen = mlen - (size_t)(base - mod);
	return slash && im->comm_len && blen >= im->comm_len &&
	       !memcmp(base, im->comm, im->comm_len);
}

/* The last occurrence of needle in hay[0, n), or NULL. */
static const char *memmem_last(const char *hay, size_t n, const char *needle, size_t k)
{
	for (size_t i = n >= k ? n - k + 1 : 0; i-- > 0;)
		if (!memcmp(hay + i, needle, k))
			return hay + i;
	return NULL;
}

/* is_executable of names id dso, remembered while comm stays. */
static int executable(struct script_parser *im, uint32_t dso, bool *yes)
{
	if (grow_array_to((void **)&im->exe_of, &im->exe_of_cap, dso, sizeof(*im->exe_of), 256))
		return -ENOMEM;
	uint32_t *e = &im->exe_of[dso];
	if (*e >> 1 != im->comm_gen)
		*e = im->comm_gen << 1 |
		     is_executable(im, strtab__str(&im->names, dso), strtab__len(&im->names, dso));
	*yes = *e & 1;
	return 0;
}

/* Frame f (its file's name: the dso id's) put in the open sample. */
static int put_frame(struct script_parser *im, struct rec_frame f, bool kernel)
{
	bool exe = false;
	if (kernel)
		f.flags |= REC_FRAME_KERNEL;
	else if (executable(im, f.dso, &exe))
		return -ENOMEM;
	else if (exe)
		f.flags |= REC_FRAME_EXECUTABLE;
	if (grow_array((void **)&im->frames, &im->frames_cap, im->nframes,
		       sizeof(*im->frames), 64))
		return -ENOMEM;
	im->frames[im->nframes++] = f;
	im->st->frames++;
	return 0;
}

/* Whether the open sample takes another frame: not where none is open,
 * nor past MAX_FRAMES (the sample then counted as cut short). */
static bool takes_frame(struct script_parser *im)
{
	if (im->in != IN_SAMPLE)
		return false;
	if (im->nframes == MAX_FRAMES) {
		im->truncated += !im->cut;
		im->cut = true;
		return false;
	}
	return true;
}

/* The memo's slot for a frame line's part past its address, as looked at
 * (struct frame_look), and whether it holds it. NULL: no slot (too long;
 * out of memory). */
static struct frame_memo *frame_memo(struct script_parser *im, const char *rest,
				     const struct frame_look *fl, bool *hit)
{
	*hit = false;
	if (!fl->hashed || (!im->memo && !(im->memo = calloc(FRAME_MEMO, sizeof(*im->memo)))))
		return NULL;
	struct frame_memo *m = &im->memo[fl->hash % FRAME_MEMO];
	size_t n = fl->rest_len;
	*hit = m->len == n && m->hash == fl->hash && m->long_address == (fl->pclen > 1) &&
	       !memcmp(m->rest, rest, n);
	return m;
}

static bool kernel_file(const char *mod, size_t mlen)
{
	return (mlen >= 7 && !memcmp(mod, "[kernel", 7)) ||
	       (mlen >= 13 && !memcmp(mod, "[guest.kernel", 13));
}

static bool kernel_address(uint64_t ip)
{
	return ip >= 0xffff800000000000ULL;
}

/* Each byte's class for frame_address: 0 none of an address's, a
 * hexadecimal digit's value + 1, or W, another letter or '_': one
 * look-up a byte, where tests of ranges made the address a fifth of the
 * lines' thread's time (perf record; bench/RESULTS.md, round 33). */
#define W 17
static const uint8_t address_class[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6,
	['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12,
	['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
	['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16, ['g'] = W, ['h'] = W,
	['i'] = W, ['j'] = W, ['k'] = W, ['l'] = W, ['m'] = W, ['n'] = W,
	['o'] = W, ['p'] = W, ['q'] = W, ['r'] = W, ['s'] = W, ['t'] = W,
	['u'] = W, ['v'] = W, ['w'] = W, ['x'] = W, ['y'] = W, ['z'] = W,
	['G'] = W, ['H'] = W, ['I'] = W, ['J'] = W, ['K'] = W, ['L'] = W,
	['M'] = W, ['N'] = W, ['O'] = W, ['P'] = W, ['Q'] = W, ['R'] = W,
	['S'] = W, ['T'] = W, ['U'] = W, ['V'] = W, ['W'] = W, ['X'] = W,
	['Y'] = W, ['Z'] = W, ['_'] = W
};
#undef W

/* A frame line's address: the bytes its word takes (letters, digits
 * and '_', as perf_script__frame_parts reads it), and in *ip the value
 * of its hexadecimal digits up to the first that is none. */
static size_t frame_address(const char *s, size_t n, uint64_t *ip)
{
	uint64_t v = 0;
	size_t i = 0;
	for (uint8_t d; i < n && (d = address_class[(unsigned char)s[i]]) && d <= 16; i++)
		v = v << 4 | (uint64_t)(d - 1);
	while (i < n && address_class[(unsigned char)s[i]])
		i++;
	*ip = v;
	return i;
}

/* What a frame line (leading spaces gone) is, apart from the lines
 * before it: its address, and the hash of the part past it. */
static void look_frame(const char *s, size_t n, struct frame_look *fl)
{
	fl->pclen = frame_address(s, n, &fl->ip);
	fl->rest_len = n - fl->pclen;
	fl->hashed = fl->pclen && fl->rest_len <= FRAME_MEMO_LINE;
	fl->hash = fl->hashed ? hash_bytes(s + fl->pclen, fl->rest_len, fl->pclen > 1) : 0;
}

/* Frame line s[0, n) (leading spaces gone), as fl looked at it, in the
 * open sample. */
static int take_frame(struct script_parser *im, const char *s, size_t n,
		      const struct frame_look *fl)
{
	bool hit = false;
	size_t pclen = fl->pclen;
	uint64_t ip = fl->ip;
	struct frame_memo *m = frame_memo(im, s + pclen, fl, &hit);
	if (hit) {
		if (!takes_frame(im))
			return 0;
		im->last_module = m->dso + 1;
		return put_frame(im, (struct rec_frame){ .ip = ip, .function = m->function,
							 .dso = m->dso },
				 m->kernel_file || kernel_address(ip));
	}
	struct frame_parts fp;
	if (!perf_script__frame_parts(s, n, &fp))
		return perf_script__is_noise(s, n) ? 0 :
			bad(im, "not a frame (\"ADDRESS SYMBOL (FILE)\") nor known perf noise");
	if (!takes_frame(im))
		return 0;
	/* a file deleted since it was mapped: perf prints "(PATH (deleted))",
	 * which reads as the module "deleted)" */
	const char *open = fp.mlen == 8 && !memcmp(fp.mod, "deleted)", 8) ?
		memmem_last(fp.func, fp.flen, " (", 2) : NULL;
	if (open) {
		fp.mlen = (size_t)(fp.mod + fp.mlen - (open + 2));
		fp.mod = open + 2;
		fp.flen = (size_t)(open - fp.func);
	}
	struct rec_frame f = { .ip = ip };	/* (fp.pc is s, fp.pclen pclen) */
	size_t flen = perf_script__strip_offset(fp.func, fp.flen);
	/* perf before 3.16 printed nothing for a function it could not
	 * name, where later versions print "[unknown]" */
	int err = flen ? name_id(im, fp.func, flen, &f.function) :
		name_id(im, "[unknown]", 9, &f.function);
	if (!err)
		err = module_id(im, fp.mod, fp.mlen, &f.dso);
	if (err)
		return err;
	bool kfile = kernel_file(fp.mod, fp.mlen);
	if (m) {
		*m = (struct frame_memo){ .hash = fl->hash, .function = f.function, .dso = f.dso,
					  .len = (uint8_t)(n - pclen), .long_address = pclen > 1,
					  .kernel_file = kfile };
		memcpy(m->rest, s + pclen, n - pclen);
	}
	return put_frame(im, f, kfile || kernel_address(f.ip));
}

/* One frame line (leading spaces gone) of the open sample. */
static int add_frame(struct script_parser *im, const char *s, size_t n)
{
	struct frame_look fl;
	look_frame(s, n, &fl);
	return take_frame(im, s, n, &fl);
}

static int probe(uint64_t **v, uint32_t *n, uint64_t x)
{
	if (!*v && !(*v = malloc(INTERVAL_PROBES * sizeof(**v))))
		return -ENOMEM;
	if (*n < INTERVAL_PROBES)
		(*v)[(*n)++] = x;
	return 0;
}

/* Writes the open sample, if any. */
static int end_sample(struct script_parser *im)
{
	enum sample_kind in = im->in;
	im->in = IN_NONE;
	if (in != IN_SAMPLE)
		return 0;
	im->head.nframes = im->nframes;
	size_t fl = (size_t)im->nframes * sizeof(*im->frames);
	im->st->samples++;
	return im->emit(im->emit_ctx, REC_SAMPLE, &im->head, sizeof(im->head),
			       im->frames, fl);
}

/* "prev_pid=A ... next_pid=B", or perf's older "comm:A [prio] S ==> comm:B [prio]". */
static bool switch_tids(const struct ps_header *h, uint64_t *prev, uint64_t *next)
{
	if (perf_script__field(h->rest, h->rest_len, "prev_pid", prev) &&
	    perf_script__field(h->rest, h->rest_len, "next_pid", next))
		return true;
	const char *arrow = memmem(h->rest, h->rest_len, "==>", 3);
	if (!arrow)
		return false;
	const char *parts[2][2] = { { h->rest, arrow }, { arrow + 3, h->rest + h->rest_len } };
	uint64_t *out[2] = { prev, next };
	for (int k = 0; k < 2; k++) {
		const char *b = parts[k][0], *e = parts[k][1];
		const char *open = NULL;	/* the first " [" : the pid ends there */
		for (const char *p = b; p + 1 < e && !open; p++)
			if (p[0] == ' ' && p[1] == '[')
				open = p;
		if (!open)
			return false;
		const char *d = open;
		while (d > b && isdigit((unsigned char)d[-1]))
			d--;
		if (d == open || d == b || d[-1] != ':')
			return false;
		uint64_t v = 0;
		for (const char *p = d; p < open; p++)
			v = v * 10 + (uint64_t)(*p - '0');
		*out[k] = v;
	}
	return true;
}

static int sched_line(struct script_parser *im, const struct ps_header *h, bool is_switch)
{
	if (!h->has_time || h->cpu < 0) {
		/* no stint can be placed without them: the samples are read
		 * all the same, steal is unknown (and said why) */
		if (!h->has_time && in_order(im, h))
			return -EBADMSG;
		im->sched_untimed++;
		im->no_time_seen |= !h->has_time;
		im->in = IN_OTHER;
		return 0;
	}
	struct rec_sched s = { .cpu = (uint32_t)h->cpu, .time_ns = h->time_ns };
	uint64_t a, b = 0;
	if (is_switch) {
		if (!switch_tids(h, &a, &b) || a > UINT32_MAX || b > UINT32_MAX)
			return bad(im, "sched_switch without prev_pid and next_pid");
		s.kind = REC_SCHED_SWITCH;
		im->st->switches++;
		/* -F or -c on the command line samples tracepoints too: one
		 * switch in N is no basis for stints */
		if (h->has_period && h->period > im->switch_period)
			im->switch_period = h->period;
	} else {
		if (!perf_script__field(h->rest, h->rest_len, "pid", &a) || a > UINT32_MAX ||
		    !perf_script__field(h->rest, h->rest_len, "runtime", &s.value))
			return bad(im, "sched_stat_runtime without pid and runtime");
		/* no thread runs longer than the text covers (a second of
		 * slack for what it ran before the first line) */
		uint64_t first = im->any_time && im->first_ns < h->time_ns ? im->first_ns :
				 h->time_ns;
		if (s.value > NSEC_PER_SEC && s.value - NSEC_PER_SEC > h->time_ns - first)
			return bad(im, "runtime=%llu ns is longer than the text covers up to "
				   "it (%llu ns)", (unsigned long long)s.value,
				   (unsigned long long)(h->time_ns - first));
		s.kind = REC_SCHED_RUNTIME;
		im->st->runtimes++;
	}
	s.a = (uint32_t)a;
	s.b = (uint32_t)b;
	int err = see_cpu(im, h->cpu);
	if (!err)
		err = in_order(im, h);
	/* the task on the CPU, by the header; the ones the fields name */
	if (!err && h->tid > 0)
		err = see_task_again(im, h->pid == PS_ID_NONE || h->pid < 0 ? (uint32_t)h->tid :
			       (uint32_t)h->pid, (uint32_t)h->tid, h->comm ? h->comm : "",
			       h->comm_len);
	if (!err && is_switch)
		err = name_thread(im, h, "prev_comm", "prev_pid", a);
	if (!err && is_switch)
		err = name_thread(im, h, "next_comm", "next_pid", b);
	if (!err && !is_switch)
		err = name_thread(im, h, "comm", "pid", a);
	if (err)
		return err;
	see_time(im, h->time_ns);
	return im->emit(im->emit_ctx, REC_SCHED, &s, sizeof(s), NULL, 0);
}

/* Header lines per event, for the recording's metadata (events.NAME=N)
 * and so for reports: what the text held, imported or not. */
static void count_event(struct script_import_stats *st, const char *ev, size_t n)
{
	for (uint32_t i = 0; i < st->nevents; i++)
		if (strlen(st->events[i].name) == n && !memcmp(st->events[i].name, ev, n)) {
			st->events[i].lines++;
			return;
		}
	if (st->nevents == sizeof(st->events) / sizeof(*st->events) ||
	    n >= sizeof(st->events[0].name))
		return;
	memcpy(st->events[st->nevents].name, ev, n);
	st->events[st->nevents].name[n] = '\0';
	st->events[st->nevents++].lines = 1;
}

static int header_line(struct script_parser *im, const struct ps_header *h)
{
	int err = end_sample(im);
	if (err)
		return err;
	count_event(im->st, h->event, h->event_len);
	bool sw = h->event_len == 18 && !memcmp(h->event, "sched:sched_switch", 18);
	bool rt = h->event_len == 24 && !memcmp(h->event, "sched:sched_stat_runtime", 24);
	if (sw || rt) {
		im->in = IN_OTHER;	/* its call chain, if any, is not needed */
		return sched_line(im, h, sw);
	}
	if (!im->event) {
		im->event = strndup(h->event, h->event_len);
		if (!im->event)
			return -ENOMEM;
		snprintf(im->st->event, sizeof(im->st->event), "%s", im->event);
	}
	if (strlen(im->event) != h->event_len || memcmp(im->event, h->event, h->event_len)) {
		im->in = IN_OTHER;
		im->st->other_samples++;
		return 0;
	}
	/* A task that had exited shows -1 (comm ":-1"): its samples are run
	 * time of an unknown thread, TASK_EXITED, never dropped. Without a
	 * pid, each thread counts as a process of its own. */
	uint32_t tid = h->tid < 0 ? REC_TASK_EXITED : (uint32_t)h->tid;
	uint32_t pid = h->pid == PS_ID_NONE ? tid :
		       h->pid < 0 ? REC_TASK_EXITED : (uint32_t)h->pid;
	if ((err = see_cpu(im, h->cpu)) || (err = in_order(im, h)) ||
	    (err = see_task_again(im, pid, tid, h->comm ? h->comm : "", h->comm_len)))
		return err;
	uint32_t cpu = h->cpu < 0 ? 0 : (uint32_t)h->cpu;
	/* without times, samples keep their order */
	uint64_t t = h->has_time ? h->time_ns : im->st->samples;
	if (h->has_time) {
		see_time(im, t);
		if (im->cpu_last[cpu] && t > im->cpu_last[cpu] &&
		    probe(&im->gaps, &im->ngaps, t - im->cpu_last[cpu]))
			return -ENOMEM;
		im->cpu_last[cpu] = t;
	}
	if (h->has_period && probe(&im->periods, &im->nperiods, h->period))
		return -ENOMEM;
	im->head = (struct rec_sample_head){ .pid = pid, .tid = tid, .cpu = cpu,
					     .time_ns = t, .period = h->period };
	size_t comm_len = h->comm_len < sizeof(im->comm) ? h->comm_len : sizeof(im->comm);
	if (!im->comm_gen || comm_len != im->comm_len ||
	    (comm_len && memcmp(im->comm, h->comm, comm_len))) {
		im->comm_gen = (im->comm_gen + 1) & (UINT32_MAX >> 1);
		if (!im->comm_gen) {	/* wrapped: what was remembered is forgotten */
			if (im->exe_of)
				memset(im->exe_of, 0, im->exe_of_cap * sizeof(*im->exe_of));
			im->comm_gen = 1;
		}
		im->comm_len = comm_len;
		if (comm_len)
			memcpy(im->comm, h->comm, comm_len);
	}
	im->nframes = 0;
	im->cut = false;
	im->in = IN_SAMPLE;
	/* without -g the sample's one frame follows the event */
	return h->rest_len ? add_frame(im, h->rest, h->rest_len) : 0;
}

/* What a line is, found apart from the lines before it (look_line), and
 * what it holds: a header's fields, a frame's address and hash. */
enum line_kind {
	LINE_NUL, LINE_COMMENT, LINE_BLANK, LINE_HEADER, LINE_FRAME, LINE_NOISE, LINE_BAD
};

struct line_look {
	enum line_kind kind;
	size_t len;		/* without the '\r's that ended it */
	size_t lead;		/* a frame's leading spaces */
	union {
		struct ps_header header;
		struct frame_look frame;
		uint64_t lost_chunks;	/* a noise line's */
	};
};

/* A line s[0, n) without its newline (lines_ahead's look): what it is,
 * with hints, each event's header layout, the lines' own (only this
 * thread's). */
static void look_line(void *hints, const char *s, size_t n, bool nul_near, void *slot)
{
	struct line_look *l = slot;
	while (n && s[n - 1] == '\r')
		n--;
	l->len = n;
	l->lead = 0;
	/* perf prints no NUL; one would cut a name short without a word
	 * (looked for line by line only in a batch of lines that holds one) */
	if (nul_near && memchr(s, '\0', n)) {
		l->kind = LINE_NUL;
		return;
	}
	if (n && s[0] == '#') {
		l->kind = LINE_COMMENT;
		return;
	}
	size_t lead = perf_script__skip_spaces(s, n);
	if (lead == n) {
		l->kind = LINE_BLANK;
		return;
	}
	/* perf right-aligns comm in some layouts (-F with pid), so a line
	 * that starts with spaces may be a header: no frame reads as one,
	 * a frame's second word being a symbol, never a number */
	if (perf_script__header(s + lead, n - lead, hints, &l->header)) {
		l->kind = LINE_HEADER;
		return;
	}
	struct frame_parts fp;
	if (lead) {
		l->kind = LINE_FRAME;
	} else if (perf_script__is_noise(s, n)) {
		l->kind = LINE_NOISE;
		l->lost_chunks = perf_script__lost_chunks(s, n);
		return;
	} else if (perf_script__frame_parts(s, n, &fp)) {
		/* a frame with no indentation (text that went through a tool
		 * that strips lines): the reference collapser reads it as a
		 * frame too */
		l->kind = LINE_FRAME;
	} else {
		l->kind = LINE_BAD;
		return;
	}
	l->lead = lead;
	look_frame(s + lead, n - lead, &l->frame);
}

/* The line look_line looked at, in order (lines_ahead's take). */
static int take_line(void *ctx, const char *s, size_t raw_len, const void *slot)
{
	struct script_parser *im = ctx;
	const struct line_look *l = slot;
	size_t n = l->len;
	(void)raw_len;
	im->st->lines++;
	switch (l->kind) {
	case LINE_NUL:
		return bad(im, "a NUL byte in the line (perf script prints none)");
	case LINE_COMMENT: {
		static const char key[] = "# hostname : ";
		if (n > sizeof(key) - 1 && !memcmp(s, key, sizeof(key) - 1))
			snprintf(im->host, sizeof(im->host), "%.*s",
				 (int)(n - (sizeof(key) - 1)), s + sizeof(key) - 1);
		return 0;
	}
	case LINE_BLANK:
		return end_sample(im);
	case LINE_HEADER:
		return header_line(im, &l->header);
	case LINE_FRAME:
		return take_frame(im, s + l->lead, n - l->lead, &l->frame);
	case LINE_NOISE:
		im->st->lost_chunks += l->lost_chunks;
		return 0;
	case LINE_BAD:
		break;
	}
	return bad(im, "not a perf script line: no sample header "
		   "(\"comm [pid/]tid [cpu] time: [period] event:\"), frame, "
		   "comment or known perf noise");
}

/* A line of script_parser__feed's, looked at and taken here. */
static int on_line(void *ctx, const char *s, size_t n)
{
	struct script_parser *im = ctx;
	struct line_look l;
	look_line(&im->hints, s, n, im->nul_near, &l);
	return take_line(im, s, n, &l);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static uint64_t median(uint64_t *v, uint32_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

/* The sample interval: a clock event's period is in ns; otherwise the
 * samples' spacing on a CPU tells the rate. */
static void find_interval(struct script_parser *im)
{
	struct script_import_stats *st = im->st;
	bool clock = im->event && (!strncmp(im->event, "cpu-clock", 9) ||
				   !strncmp(im->event, "task-clock", 10));
	if (clock && im->nperiods) {
		st->interval_ns = median(im->periods, im->nperiods);
		snprintf(st->interval_source, sizeof(st->interval_source), "period");
	} else if (im->ngaps) {
		st->interval_ns = median(im->gaps, im->ngaps);
		snprintf(st->interval_source, sizeof(st->interval_source), "sample-gaps");
	}
	if (!st->interval_ns) {
		st->interval_ns = 1000000;
		snprintf(st->interval_source, sizeof(st->interval_source),
			 "assumed (no times or clock periods)");
	}
}

/* "yes" where the kernel counted steal (since boot, or while perf
 * recorded), "none" where it counted none on any CPU: no steal clock, no
 * reference (as a live recording says it). */
static const char *steal_clock_of(const struct script_parser *im,
				  const struct script_import_kernel *k)
{
	uint32_t n = im->ncpus ? im->ncpus : 1;
	uint64_t *steal = calloc(2 * (size_t)n, sizeof(*steal));
	uint8_t *seen = calloc(2 * (size_t)n, 1);
	bool counted = false;
	if (steal && seen && procstat_steal(k->procstat[0], steal, seen, n) >= 0 &&
	    procstat_steal(k->procstat[1], steal + n, seen + n, n) >= 0)
		for (uint32_t c = 0; c < 2 * n; c++)
			counted |= steal[c] > 0;
	free(steal);
	free(seen);
	return counted ? "yes" : "none";
}

static int write_meta(struct script_parser *im, const struct script_import_kernel *k,
		      item_fn emit, void *ctx)
{
	struct script_import_stats *st = im->st;
	st->sched_unusable = im->sched_untimed > 0;
	if (im->sched_untimed)
		snprintf(st->steal_source, sizeof(st->steal_source), "unknown "
			 "(perf script without %s: the scheduler tracepoints cannot place "
			 "stints; perf script -F +time,+cpu)",
			 im->no_time_seen ? "time" : "[cpu]");
	else if (im->switch_period > 1)
		snprintf(st->steal_source, sizeof(st->steal_source), "unknown "
			 "(sched_switch sampled 1 in %llu, not each: see docs/import.md)",
			 (unsigned long long)im->switch_period);
	else if (st->switches && st->runtimes)
		snprintf(st->steal_source, sizeof(st->steal_source), "tracepoints");
	else
		snprintf(st->steal_source, sizeof(st->steal_source), "unknown (perf "
			 "script without sched_switch and sched_stat_runtime)");
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m)
		return -ENOMEM;
	fprintf(m, "phase=start\nsource=perf-script\nhost=%s\nevent=%s\n"
		"interval_ns=%llu\ninterval_source=%s\nclk_tck=100\ncallchain=%d\n"
		"steal_source=%s\nscope=all\ntime_ns=%llu\n",
		im->host[0] ? im->host : "unknown", st->event,
		(unsigned long long)st->interval_ns, st->interval_source,
		st->frames > st->samples, st->steal_source,
		(unsigned long long)im->first_ns);
	bool any = false;
	for (uint32_t c = 0; c < im->ncpus; c++)
		if (im->cpus[c]) {
			fprintf(m, "cpu=%u\n", c);
			any = true;
		}
	if (!any)
		fputs("cpu=0\n", m);
	if (k)
		fprintf(m, "steal_clock=%s\n", steal_clock_of(im, k));
	for (uint32_t i = 0; i < st->nevents; i++) {
		/* a name that would break the line is left out */
		const char *n = st->events[i].name;
		if (!strchr(n, '\n') && n[0])
			fprintf(m, "events.%s=%llu\n", n, (unsigned long long)st->events[i].lines);
	}
	int err = ferror(m) ? -ENOMEM : 0;
	fclose(m);
	if (!err)
		err = emit(ctx, REC_META, text, len, NULL, 0);
	free(text);
	return err;
}

static int add_to_writer(void *ctx, uint32_t type, const void *a, size_t alen,
			 const void *b, size_t blen);

/* The output: META, the items kept in body, what was lost, the end. */
/* A /proc/stat copy as the recorder writes it (phase 0 start, 1 end). */
static int add_procstat(struct rec_writer *w, uint32_t phase, const char *text)
{
	uint32_t pre[2] = { phase, 0 };
	return rec_writer__add(w, REC_PROCSTAT, pre, sizeof(pre), text, strlen(text));
}

/* The body's items into w: its blocks as they are, unless switches
 * sampled by a period are to be left out (a reader's, item by item). */
static int copy_body(struct script_parser *im, struct rec_writer *body, int body_fd,
		     struct rec_writer *w)
{
	if (im->switch_period <= 1)
		return rec_writer__append(w, body_fd, rec_writer__items(body));
	struct rec_error rerr;
	struct rec_reader *r = NULL;
	int err = rec_writer__finish(body);
	if (!err && lseek(body_fd, 0, SEEK_SET) < 0)
		err = -errno;
	if (!err && !(r = rec_reader__new(body_fd, &rerr)))
		err = -errno;
	uint32_t *nframes = NULL, nstacks = 0, cap = 0;	/* the stacks', by id */
	for (;;) {
		uint32_t type, len;
		const uint8_t *d;
		if (err || (err = rec_reader__next(r, &type, &d, &len, &rerr)) <= 0)
			break;
		err = 0;
		if (type == REC_SCHED)
			continue;
		if (type == REC_STACK_SAMPLE) {	/* with its addresses, read apart */
			struct rec_stack_sample h;
			const uint8_t *ips;
			memcpy(&h, d, sizeof(h));
			uint32_t n = h.stack < nstacks ? nframes[h.stack] : UINT32_MAX;
			err = n == UINT32_MAX || rec_reader__addresses(r, n, &ips) != 1 ? -EIO :
			      rec_writer__stack_sample(w, &h, ips, n);
			continue;
		}
		if (type == REC_STACK) {
			struct rec_stack st;
			memcpy(&st, d, sizeof(st));
			if (grow_array((void **)&nframes, &cap, nstacks, sizeof(*nframes), 1024)) {
				err = -ENOMEM;
				continue;
			}
			nframes[nstacks++] = st.nframes;
		}
		err = rec_writer__add(w, type, d, len, NULL, 0);
	}
	free(nframes);
	rec_reader__free(r);
	return err;
}

static int write_output(struct script_parser *im, const struct script_import_kernel *k,
			struct rec_writer *body, int body_fd, int out_fd)
{
	struct rec_writer *w = rec_writer__new(out_fd);
	if (!w)
		return -errno;
	int err = write_meta(im, k, add_to_writer, w);
	if (!err && k)
		err = add_procstat(w, 0, k->procstat[0]);
	if (!err)
		err = copy_body(im, body, body_fd, w);
	if (!err && k)
		err = add_procstat(w, 1, k->procstat[1]);
	if (!err && im->st->lost_chunks) {
		uint32_t pre[2] = { 0, 0 };
		err = rec_writer__add(w, REC_LOST, pre, sizeof(pre), &im->st->lost_chunks, 8);
	}
	if (!err) {
		char end[64];
		int n = snprintf(end, sizeof(end), "phase=end\ntime_ns=%llu\n",
				 (unsigned long long)im->last_ns);
		err = rec_writer__add(w, REC_META, end, (size_t)n, NULL, 0);
	}
	if (!err)
		err = rec_writer__finish(w);
	rec_writer__free(w);
	return err;
}

struct script_parser *script_parser__new(item_fn emit, void *ctx,
					 struct script_import_stats *st,
					 char *msg, size_t msg_size)
{
	struct script_parser *im = calloc(1, sizeof(*im));
	if (!im)
		return NULL;
	*im = (struct script_parser){ .emit = emit, .emit_ctx = ctx, .st = st,
				      .msg = msg, .msg_size = msg_size };
	memset(st, 0, sizeof(*st));
	strtab__init(&im->names);
	strtab__init(&im->tids);
	strtab__init(&im->comms);
	return im;
}

int script_parser__feed(struct script_parser *im, const char *buf, size_t n)
{
	/* a line may begin in a run before: the one left unfinished began
	 * in this one, or before it when none ended here */
	bool nul = memchr(buf, '\0', n) != NULL;
	im->nul_near = nul || im->nul_before;
	im->nul_before = nul || (im->nul_before && !memchr(buf, '\n', n));
	return line_splitter__feed(&im->lines, buf, n, on_line, im);
}

/* The text's end: the open sample written, the interval found. */
static int parser_end(struct script_parser *im)
{
	int err = end_sample(im);
	if (err)
		return err;
	find_interval(im);
	if (im->truncated)
		snprintf(im->msg, im->msg_size, "%llu sample(s) deeper than %d frames "
			 "kept their %d nearest the leaf",
			 (unsigned long long)im->truncated, MAX_FRAMES, MAX_FRAMES);
	return 0;
}

int script_parser__finish(struct script_parser *im)
{
	im->nul_near |= im->nul_before;
	int err = line_splitter__finish(&im->lines, on_line, im);
	return err ? err : parser_end(im);
}

void script_parser__free(struct script_parser *im)
{
	if (!im)
		return;
	free(im->event);
	free(im->frames);
	free(im->cpus);
	free(im->cpu_last);
	free(im->cpu_time);
	free(im->periods);
	free(im->gaps);
	line_splitter__release(&im->lines);
	free(im->memo);
	strtab__release(&im->names);
	strtab__release(&im->tids);
	strtab__release(&im->comms);
	free(im->comm_of);
	free(im->exe_of);
	free(im);
}

static int add_to_writer(void *ctx, uint32_t type, const void *a, size_t alen,
			 const void *b, size_t blen)
{
	if (type == REC_SAMPLE && alen == sizeof(struct rec_sample_head))
		return rec_writer__sample(ctx, a, b);	/* its stack named once */
	return rec_writer__add(ctx, type, a, alen, b, blen);
}

int script_import(int in_fd, int out_fd, bool read_once, import_progress_fn progress,
		  void *progress_ctx, const struct script_import_kernel *k,
		  struct script_import_stats *st, uint64_t *bad_line, char *msg,
		  size_t msg_size)
{
	*bad_line = 0;
	FILE *tmp = tmpfile();
	/* the body's blocks become the output's (copy_body) */
	struct rec_writer *body = tmp ? rec_writer__new(fileno(tmp)) : NULL;
	if (body && read_once)
		rec_writer__read_once(body);
	if (body)
		rec_writer__behind(body);	/* the writer's work beside the parser */
	struct script_parser *im = script_parser__new(add_to_writer, body, st, msg,
						      msg_size);
	int err = tmp && body && im ? 0 : -ENOMEM;
	/* the lines read and looked at on a thread ahead, where one helps */
	struct lines_ahead_fns f = {
		.look = look_line, .look_ctx = im ? &im->hints : NULL,
		.slot_size = sizeof(struct line_look),
		.take = take_line, .take_ctx = im,
		.progress = progress, .progress_ctx = progress_ctx,
	};
	if (!err)
		err = lines_ahead__run(in_fd, &f);
	if (!err)
		err = parser_end(im);
	if (err == -EBADMSG)
		*bad_line = st->lines;
	if (!err)
		err = rec_writer__flush(body);
	if (!err)
		err = write_output(im, k, body, fileno(tmp), out_fd);
	script_parser__free(im);
	rec_writer__free(body);
	if (tmp)
		fclose(tmp);
	return err;
}
