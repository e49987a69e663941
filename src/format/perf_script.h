/*
 * perf_script: the pieces of `perf script` text that both its readers
 * share, the folder (fold.h, which must read lines as the reference
 * collapser does) and the importer (script_import.h, which keeps every
 * field): splitting a stream into lines, cutting a frame line into its
 * parts, telling perf's own messages from data, and reading a sample's
 * header line. docs/folded.md and docs/import.md say what is accepted.
 */
#ifndef CPULEDGER_FORMAT_PERF_SCRIPT_H
#define CPULEDGER_FORMAT_PERF_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whole lines out of runs of bytes cut anywhere. */
struct line_splitter {
	char *carry;		/* a line the last run began */
	size_t len, cap;
};

typedef int (*line_fn)(void *ctx, const char *line, size_t len);

/* Calls fn for each whole line in buf (without its newline); a line cut
 * short waits for the next run. Stops at fn's first non-zero return and
 * returns it; -ENOMEM. */
int line_splitter__feed(struct line_splitter *s, const char *buf, size_t n,
			line_fn fn, void *ctx);
/* The last line, when it had no newline. As line_splitter__feed. */
int line_splitter__finish(struct line_splitter *s, line_fn fn, void *ctx);
void line_splitter__release(struct line_splitter *s);

static inline bool ps_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* The program sets no locale, so ctype's classes are ASCII's: these are
 * they, without a table's look-up through a call each byte. */
static inline bool ps_is_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

/* c's value as a hexadecimal digit, or -1. */
static inline int ps_hex_value(char c)
{
	if (ps_is_digit(c))
		return c - '0';
	unsigned char l = (unsigned char)(c | 0x20);	/* ASCII's lower case */
	return l >= 'a' && l <= 'f' ? l - 'a' + 10 : -1;
}

/* A letter, digit or '_': what a frame's address is made of. */
static inline bool ps_is_word(char c)
{
	unsigned char l = (unsigned char)(c | 0x20);	/* ASCII's lower case */
	return ps_is_digit(c) || (l >= 'a' && l <= 'z') || c == '_';
}

/* The first byte of s[0..n) that is no ps_is_space, or n. */
size_t perf_script__skip_spaces(const char *s, size_t n);

/* Where a frame line's parts lie: "pc func+0xoff (module)". */
struct frame_parts {
	const char *pc, *func, *mod;
	size_t pclen, flen, mlen;
	size_t gap;		/* the spaces between pc and func */
};

/*
 * A frame line, leading spaces gone, cut into its parts: true, or false
 * when it is no frame at all. A frame is what the reference collapser
 * reads as one: a word (the address), spaces, the function (any text,
 * spaces too), " (", the module (any text, maybe empty), ")": the module
 * opens at the last " (" before the line's last ')', and ends there. Perf before 3.16 printed a frame
 * it could not name with an empty function ("7f1e2215d058  (/lib/libc.so)"):
 * then flen is 0, func points at the module's '(' and gap says how many
 * spaces came before it (at least one).
 */
bool perf_script__frame_parts(const char *s, size_t n, struct frame_parts *fp);

/* Length of func without a trailing "+0x1a2b" offset. */
size_t perf_script__strip_offset(const char *func, size_t flen);

/*
 * Lines perf itself writes among samples (to standard output, or to a
 * file that took both streams): its warnings and summaries, and source
 * lines (-F +srcline) under frames. Blank lines count as noise too.
 */
bool perf_script__is_noise(const char *s, size_t n);

/* The chunks a "Processed N events and lost M chunks!" line says perf
 * lost (0 for any other line). */
uint64_t perf_script__lost_chunks(const char *s, size_t n);

/*
 * A sample's header, as perf script prints it (builtin-script.c
 * perf_sample__fprintf_start and process_event), the fields in this fixed
 * order, each of them optional but the event:
 *
 *   [VM:N ][VCPU:N ]COMM PID/TID|ID [CPU] [MISC] [TOD] [TIME:] [PERIOD] EVENT: REST
 *
 * COMM may hold spaces and digits and is ":-1" for a task perf no longer
 * knows; ids are -1 for a task that had exited when the kernel wrote the
 * record; CPU is "[001]"; MISC the letters KUHGgMESp; TOD a date and a
 * time of day; TIME "seconds.fraction:" in microseconds or nanoseconds;
 * EVENT the event's name with its modifiers (cycles:u, cpu-clock:ppp,
 * sched:sched_switch). REST is a tracepoint's fields or, without call
 * chains, the sample's one frame.
 *
 * COMM followed by digits is ambiguous ("Web Content 2 4567 cpu-clock:"
 * is comm "Web Content 2" and tid 4567, or comm "Web Content", tid 2 and
 * period 4567). perf prints every header of an event with the same
 * fields, so the reader prefers the reading whose fields match the last
 * header of that event (hints); without one, the shortest comm followed
 * by an id.
 */
#define PS_ID_NONE INT64_MIN	/* the line shows no such id */

struct ps_header {
	const char *comm, *event, *rest;
	size_t comm_len, event_len, rest_len;
	int64_t pid, tid;	/* -1: an exited task; PS_ID_NONE: not shown */
	int32_t cpu;		/* -1: not shown */
	int32_t vm, vcpu;	/* -1: not shown (a host's own samples) */
	bool has_time, has_period;
	uint64_t time_ns, period;
	uint32_t layout;	/* which fields the line has (PS_F_*) */
};

/* The fields a header line has. */
enum {
	PS_F_VM = 1, PS_F_VCPU = 2, PS_F_COMM = 4, PS_F_PAIR = 8, PS_F_ID = 16,
	PS_F_CPU = 32, PS_F_MISC = 64, PS_F_TOD = 128, PS_F_TIME = 256,
	PS_F_PERIOD = 512,
};

/* The layout of the last header of each event seen (a few events). */
struct ps_hints {
	struct { uint64_t event; uint32_t layout; } v[16];
	uint32_t n, next;
};

/* true when line s[0..n) is a sample header; fills h. hints may be NULL;
 * when given, it is consulted and updated. */
bool perf_script__header(const char *s, size_t n, struct ps_hints *hints,
			 struct ps_header *h);

/* "key=value" in a tracepoint's fields: the value as a number; false when
 * the key is absent or its value is no number. */
bool perf_script__field(const char *rest, size_t n, const char *key, uint64_t *out);

#endif
