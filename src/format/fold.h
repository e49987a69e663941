/*
 * fold: the text of `perf script` folded into stacks for the flame-graph
 * tools, one "frame;frame;... count" line per distinct stack, as the
 * reference collapser (FlameGraph's stackcollapse-perf.pl) folds them, so
 * the tools people already use read cpuledger's output unchanged. The
 * options mean what that collapser's options of the same names mean
 * (docs/folded.md). Memory grows with the number of distinct stacks.
 */
#ifndef CPULEDGER_FORMAT_FOLD_H
#define CPULEDGER_FORMAT_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fold_options {
	bool pid;	/* name processes comm-pid */
	bool tid;	/* comm-pid/tid */
	bool kernel;	/* annotate kernel frames _[k] */
	bool jit;	/* annotate JIT frames _[j] */
	bool addrs;	/* unknown frames carry their address */
};

/* "pid,tid,kernel,jit,all,addrs" in any combination; 0 or -EINVAL. */
int fold_options__parse(struct fold_options *o, const char *list);

struct folder;

struct folder *folder__new(const struct fold_options *o);
void folder__free(struct folder *f);

/*
 * One line of perf script output, without its newline. 0, -ENOMEM, or
 * -EBADMSG for a line that is no sample header, frame, comment nor known
 * perf noise; folder__lineno then says which line it was.
 */
int folder__line(struct folder *f, const char *line, size_t len);

/*
 * Any run of perf script bytes, cut anywhere: whole lines go to
 * folder__line, a line cut short waits for the next run. As folder__line.
 */
int folder__feed(struct folder *f, const char *buf, size_t len);

/* Ends the input: a last line without a newline is read. As folder__line. */
int folder__finish(struct folder *f);

/*
 * What was read but is not in the folded stacks: samples no blank line
 * ended (the reference drops them too), and the chunks perf's own
 * "Processed N events and lost M chunks!" lines said it lost.
 */
void folder__losses(const struct folder *f, uint64_t *unended, uint64_t *lost_chunks);

/* The number of lines read so far (the bad one, after -EBADMSG). */
uint64_t folder__lineno(const struct folder *f);

/* Ends the input (folder__finish) and writes the folded stacks, sorted,
 * to out. 0 or -EIO / -ENOMEM / -EBADMSG. */
int folder__write(struct folder *f, FILE *out);

#endif
