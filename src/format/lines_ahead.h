/*
 * lines_ahead: a text file's lines, read, split and looked at on a thread
 * of their own while the caller takes the lines before them.
 *
 * Reading perf script text is one thread's work line after line, and
 * most of what it does to a line needs nothing of the lines before it:
 * the read itself, finding where the line ends, telling a header from a
 * frame, reading the header's fields, a frame's address and its hash.
 * That part (look) runs here ahead of the caller's (take), which keeps
 * what depends on order: the tables, the open sample, the errors. Only
 * a regular file, where the process may run on a second CPU (a pipe's
 * read could wait for ever once the caller stops early); otherwise both
 * run in turn on the caller's thread, the lines and results the same.
 */
#ifndef CPULEDGER_FORMAT_LINES_AHEAD_H
#define CPULEDGER_FORMAT_LINES_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What look finds of line[0, len) (without its newline), into slot
 * (slot_size bytes; NULL when 0). nul_near: whether a NUL byte is among
 * the bytes read with this line (a line's own look for one is needed
 * only then). Runs on the reading thread, the lines in order: ctx is the
 * look's alone. */
typedef void (*line_look_fn)(void *ctx, const char *line, size_t len, bool nul_near,
			     void *slot);
/* The caller's part of a line, with what look found: 0 to go on. */
typedef int (*line_take_fn)(void *ctx, const char *line, size_t len, const void *slot);

struct lines_ahead_fns {
	line_look_fn look;		/* may be NULL: lines only (slot_size 0) */
	void *look_ctx;
	size_t slot_size;
	line_take_fn take;
	void *take_ctx;
	void (*progress)(void *ctx, uint64_t bytes);	/* the bytes read; may be NULL */
	void *progress_ctx;
	bool in_turn;	/* no thread, even where one would help (tests) */
};

/* Reads fd to its end, each whole line (the last one also without a
 * newline) looked at then taken, in order. 0, take's first non-zero
 * return (no line after it is taken), -ENOMEM, or a read's -errno (after
 * the whole lines read before it are taken). */
int lines_ahead__run(int fd, const struct lines_ahead_fns *f);

/* Whether lines_ahead__run on fd would read ahead on a thread. */
bool lines_ahead__threaded(int fd);

#endif
