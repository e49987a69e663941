/*
 * output: files the commands write (reports, exports, recordings), each
 * appearing whole or not at all. Nothing here prints: what went wrong is
 * said through the function the command gives (outfile_set_say; the CLI
 * gives cli_error), as libbpf's libbpf_set_print does.
 */
#ifndef CPULEDGER_OUTPUT_OUTFILE_H
#define CPULEDGER_OUTPUT_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

/* Where messages go: fn(fmt, ...) says one line (no newline in fmt);
 * NULL, the start, says nothing. */
void outfile_set_say(void (*fn)(const char *fmt, ...));
/* The mode new files get (default 0600): $CPULEDGER_FILE_MODE, as the
 * CLI checked it. */
void outfile_set_mode(unsigned mode);

/*
 * An output file (reports, exports, recordings) that appears whole or not
 * at all: written under a temporary name beside it, created 0600 (or the
 * octal mode in $CPULEDGER_FILE_MODE), and renamed into place by
 * outfile__commit(). Never through a symbolic link; never over a file of
 * another user (under sudo, a root file at the path stays untouched); a
 * device or FIFO at the path is written in place, never replaced. A path
 * of NULL or "-" is standard output.
 */
struct outfile {
	const char *path;
	char *tmp;		/* the temporary name, or NULL */
	FILE *f;
	char *buf;		/* f's buffer, when ours */
	int fd;
	bool in_place;		/* a device or FIFO */
};

/* 0, or -errno with a message said. */
int outfile__open(struct outfile *o, const char *path);
/* A recording's file: PATH.part, locked so that a second recorder into
 * the same path is refused while the first runs (-EBUSY, said). A .part
 * a killed recorder left is kept as PATH.killed. */
int outfile__open_recording(struct outfile *o, const char *path);
/* Flushes, checks for write errors, renames into place. 0 or -errno, with a
 * message said; the temporary file is gone either way. */
int outfile__commit(struct outfile *o);
/* Removes the temporary file; accepts a never-opened outfile. */
void outfile__abort(struct outfile *o);
/* A recording that failed part way (a full disk): its temporary file is
 * kept for report --salvage, and said where; what was at the path stays. */
void outfile__keep_partial(struct outfile *o);

/* True, having said so, when out is the same file as in (or, neither
 * there yet, the same path); role names in: "the input", "the ledger". */
bool outfile__is_input(const char *out, const char *in, const char *role);

#endif
