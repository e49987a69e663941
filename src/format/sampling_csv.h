/*
 * sampling_csv: the sampling-data CSV of docs/sampling-data.md.
 *
 * The reader is a push parser: feed it bytes in pieces of any size and it
 * hands every complete line to the attributor, keeping only a partial last
 * line, so a file of any length is read in constant memory. It does no I/O;
 * sampling_csv__read_fd() is the loop that reads a descriptor into it.
 * The writer formats samples for the simulator.
 */
#ifndef CPULEDGER_FORMAT_SAMPLING_CSV_H
#define CPULEDGER_FORMAT_SAMPLING_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/attribute.h"

#define SAMPLING_CSV_HEADER "vm,vcpu,time_ns,pid,tid,function,state"

/* Longest line accepted; longer is an input error, not a reason to grow. */
#define SAMPLING_CSV_MAX_LINE (64 * 1024)

struct input_error {
	uint64_t line;		/* 1-based; the header is line 1 */
	char msg[256];
};

struct sampling_reader;

/* A reader feeding a; a is borrowed and must outlive the reader. Returns
 * NULL with errno ENOMEM. Free with sampling_reader__free(). */
struct sampling_reader *sampling_reader__new(struct attributor *a);
void sampling_reader__free(struct sampling_reader *r);

/*
 * Parses the complete lines in buf[0..len) (with what an earlier call left).
 * Returns 0; -EINVAL on bad input, with sampling_reader__error() saying
 * where and what (the reader then refuses further input); -ENOMEM.
 */
int sampling_reader__feed(struct sampling_reader *r, const char *buf,
			  size_t len);

/* Ends the input: parses a last line without a newline, and rejects an
 * empty input. Returns as sampling_reader__feed(). Does not finish the
 * attributor. */
int sampling_reader__finish(struct sampling_reader *r);

const struct input_error *sampling_reader__error(const struct sampling_reader *r);

/* Lines read so far (the header included). */
uint64_t sampling_reader__lines(const struct sampling_reader *r);

/* Called now and then with the bytes read so far; may be NULL. */
typedef void (*progress_fn)(void *ctx, uint64_t bytes);

/*
 * Reads fd to its end into r and finishes it. Returns as
 * sampling_reader__feed(), or -errno of a failed read().
 */
int sampling_csv__read_fd(struct sampling_reader *r, int fd,
			  progress_fn progress, void *ctx);

/* One sample to write; pid, tid and function are ignored unless state is
 * SAMPLE_RUN. Text fields are quoted when they need it. */
struct csv_sample {
	const char *vm;
	uint32_t vcpu;
	uint64_t time_ns;
	uint32_t pid, tid;
	const char *function;
	enum sample_state state;
};

/* Appends the line of s to out; returns its length. out must hold
 * sampling_csv__line_max(s) bytes. */
size_t sampling_csv__format(char *out, const struct csv_sample *s);
size_t sampling_csv__line_max(const struct csv_sample *s);

#endif
