/*
 * script_import: the text of `perf script` turned into a recording
 * (docs/recording-format.md, items NAME, SAMPLE and SCHED), so that
 * everything `report` does for a live recording it does for what perf
 * recorded: per process, thread, function, file and account, and steal
 * per on-CPU stint when the text holds sched:sched_switch and
 * sched:sched_stat_runtime lines. docs/import.md says what is read.
 *
 * The samples of one event are imported: the first seen that is not one
 * of those two tracepoints. Samples of other events are counted, not
 * imported.
 */
#ifndef CPULEDGER_FORMAT_SCRIPT_IMPORT_H
#define CPULEDGER_FORMAT_SCRIPT_IMPORT_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "recording.h"

struct script_import_stats {
	uint64_t lines, samples, frames, switches, runtimes;
	uint64_t other_samples;		/* of events not imported */
	uint64_t lost_chunks;		/* as perf's own summary lines said */
	char event[64];			/* the event imported, "" if none */
	char interval_source[64];	/* how the sample interval was found */
	uint64_t interval_ns;
	char steal_source[160];
	bool sched_unusable;		/* tracepoints without time or cpu */
	/* header lines per event, as the text names them (the first 16) */
	struct { char name[64]; uint64_t lines; } events[16];
	uint32_t nevents;
};

/* Where the parser's items go: 0 or -errno. */
typedef int (*item_fn)(void *ctx, uint32_t type, const void *a, size_t alen,
		       const void *b, size_t blen);

/*
 * The parser alone: perf script text in, items out through emit (all but
 * the META and LOST items, which need the whole text: script_import writes
 * them). msg (msg_size bytes) receives what is wrong with a bad line.
 */
struct script_parser;
struct script_parser *script_parser__new(item_fn emit, void *ctx,
					 struct script_import_stats *st,
					 char *msg, size_t msg_size);
/* Any run of bytes, cut anywhere. 0; -EBADMSG for a bad line (st->lines is
 * its number); -ENOMEM or emit's error. */
int script_parser__feed(struct script_parser *p, const char *buf, size_t n);
/* Ends the input. As script_parser__feed. */
int script_parser__finish(struct script_parser *p);
void script_parser__free(struct script_parser *p);

/* Called with the bytes read so far (may be NULL), on the thread that
 * reads them (lines_ahead.h: another than the caller's, for a file). */
typedef void (*import_progress_fn)(void *ctx, uint64_t bytes);

/*
 * The traced machine's /proc/stat, copied before and after perf recorded
 * (NUL-terminated texts, checked by the caller): the recording then holds
 * each CPU's steal as the kernel counted it, and steal found per stint is
 * scaled to it as in a live recording (docs/import.md).
 */
struct script_import_kernel {
	const char *procstat[2];	/* start, end */
};

/*
 * Reads perf script text from in_fd to its end and writes a whole
 * recording to out_fd; k (may be NULL) adds the kernel's steal;
 * read_once: the recording is read once, then let go (an import into
 * memory, report -i perf-script:FILE), so its blocks are compressed as
 * rec_writer__read_once says. 0;
 * -EBADMSG for a line that is none of perf script's (*bad_line is its
 * number, msg says what is wrong); -errno when reading or writing fails.
 * Statistics in *st in every case.
 */
int script_import(int in_fd, int out_fd, bool read_once, import_progress_fn progress,
		  void *progress_ctx, const struct script_import_kernel *k,
		  struct script_import_stats *st, uint64_t *bad_line, char *msg,
		  size_t msg_size);

#endif
