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

/* Reads fd to its end in 1 MiB runs, handing each to feed and the bytes
 * read so far to progress (may be NULL). 0, feed's first error, -ENOMEM
 * or -errno. */
typedef int (*chunk_fn)(void *ctx, const char *buf, size_t n);
int read_chunks(int fd, chunk_fn feed, void *ctx,
		void (*progress)(void *ctx, uint64_t bytes), void *progress_ctx);

static inline bool ps_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Where a frame line's parts lie: "pc func+0xoff (module)". */
struct frame_parts {
	const char *pc, *func, *mod;
	size_t pclen, flen, mlen;
};

/* A frame line, leading spaces gone, cut into its parts: true, or false
 * when it is no frame at all. */
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
 * A sample's header: "comm [pid/]tid [cpu] [time:] [period] event: rest",
 * the fields in brackets optional, as perf script prints them by default
 * or with -F. comm may hold spaces; rest is what follows the event (a
 * tracepoint's fields, or the one frame of a sample without -g).
 */
struct ps_header {
	const char *comm, *event, *rest;
	size_t comm_len, event_len, rest_len;
	uint32_t pid, tid;
	bool has_pid;		/* "pid/tid": otherwise pid is unknown */
	int32_t cpu;		/* -1: not shown */
	bool has_time, has_period;
	uint64_t time_ns, period;
};

/* true when line s[0..n) is a sample header; fills h. */
bool perf_script__header(const char *s, size_t n, struct ps_header *h);

/* "key=value" in a tracepoint's fields: the value as a number; false when
 * the key is absent or its value is no number. */
bool perf_script__field(const char *rest, size_t n, const char *key, uint64_t *out);

#endif
