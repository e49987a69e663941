/*
 * attribute: seed 001's steal attribution over sampling data.
 *
 * Samples arrive one at a time, streams (one per VM and vCPU) interleaved.
 * Each stream keeps one sample back, because with timestamps a sample's
 * duration is only known when the next one of its stream arrives, and one
 * open steal run, because the bracketed method needs the sample after it.
 * So memory grows with the number of streams and programs, never with the
 * number of samples.
 *
 * A steal run (maximal sequence of steal samples in a stream) is labelled:
 *   preceding  with the program of the run sample just before it;
 *   bracketed  only if the run samples just before and after are the same
 *              program (pid, tid and function);
 *   ratio      as preceding; the share is computed per row by table.c.
 * Otherwise it stays unattributed. Nothing here reads or writes anything.
 */
#ifndef CPULEDGER_CORE_ATTRIBUTE_H
#define CPULEDGER_CORE_ATTRIBUTE_H

#include <stdbool.h>
#include <stdint.h>

#include "hindex.h"
#include "strtab.h"

#define PROG_NONE UINT32_MAX

enum sample_state { SAMPLE_RUN, SAMPLE_STEAL, SAMPLE_IDLE };

enum steal_method { METHOD_PRECEDING, METHOD_BRACKETED, METHOD_RATIO };

/* "preceding", "bracketed", "ratio"; parse returns 0 or -EINVAL. */
const char *steal_method__name(enum steal_method m);
int steal_method__parse(const char *s, enum steal_method *out);
const char *sample_state__name(enum sample_state s);

/* One program: a (vm, pid, tid, function) as seen in run samples. */
struct program {
	uint32_t vm, pid, tid, function;	/* vm, function: string ids */
	uint64_t samples;	/* run samples */
	uint64_t steal_samples;	/* steal samples labelled with it */
	uint64_t run_ns;	/* durations of its run samples */
	uint64_t steal_ns;	/* durations of its labelled steal samples */
	uint32_t dso;		/* string id of its code region's file, or
				 * NO_DSO (sampling data has none) */
	uint32_t account;	/* string id of its charge account, or NO_DSO */
	uint64_t inclusive_samples;	/* samples with it on the stack (-g) */
	uint64_t inclusive_ns;
};

#define NO_DSO UINT32_MAX

struct stream {
	uint32_t vm, vcpu;
	bool pending;		/* a sample is held back (see above) */
	enum sample_state pend_state;
	uint32_t pend_prog;
	uint64_t pend_time;
	uint32_t before;	/* program of the last non-steal sample */
	uint64_t run_samples, run_ns;	/* the open steal run */
};

struct attrib_totals {
	uint64_t samples, steal_samples, idle_samples;
	uint64_t run_ns, steal_ns, idle_ns;
	uint64_t labelled_steal_ns;	/* steal given to some program */
	uint64_t steal_runs, labelled_runs;
};

struct attributor {
	enum steal_method method;
	uint64_t interval_ns;
	bool timestamps;	/* durations from time differences */
	struct strtab strings;
	struct program *progs;
	uint32_t nprogs, progs_cap;
	struct hindex prog_index;
	struct stream *streams;
	uint32_t nstreams, streams_cap;
	struct hindex stream_index;
	struct attrib_totals totals;
	uint64_t time_ns;	/* every sample's duration so far, to keep sums
				 * from passing 2^64 */
};

void attributor__init(struct attributor *a, enum steal_method method,
		      uint64_t interval_ns, bool timestamps);
void attributor__release(struct attributor *a);

/* Interned string id, or HINDEX_NONE with errno set (see strtab). */
static inline uint32_t attributor__string(struct attributor *a, const char *s,
					  size_t len)
{
	return strtab__intern(&a->strings, s, len);
}

/* Stream / program id for a key, created on first use; HINDEX_NONE with
 * errno ENOMEM when memory runs out. */
uint32_t attributor__stream(struct attributor *a, uint32_t vm, uint32_t vcpu);
uint32_t attributor__program(struct attributor *a, uint32_t vm, uint32_t pid,
			     uint32_t tid, uint32_t function);

/*
 * Feeds one sample of a stream; prog is PROG_NONE unless state is RUN.
 * Returns 0, or -ERANGE when time_ns does not increase within the stream,
 * -EOVERFLOW when the durations would add up past 2^64 ns (the sample is
 * then ignored and the state is unchanged).
 */
int attributor__push(struct attributor *a, uint32_t stream, uint64_t time_ns,
		     enum sample_state state, uint32_t prog);

/* Ends every stream: releases held samples and closes open steal runs.
 * Call once after the last push. */
void attributor__finish(struct attributor *a);

#endif
