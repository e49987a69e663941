/*
 * live_load: a recording (docs/recording-format.md) read into the live
 * steal engine (core/stint.h), with what the report shows beside it: the
 * host, the steal source, per CPU the kernel's steal and lost records, and
 * each process's command line. Every perf record is bounds-checked: a
 * recording is input like any other.
 */
#ifndef CPULEDGER_FORMAT_LIVE_LOAD_H
#define CPULEDGER_FORMAT_LIVE_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "recording.h"
#include "../core/accounts.h"
#include "../core/stacks.h"
#include "../core/stint.h"

struct loaded_cpu {
	bool present;
	bool kernel_known;	/* /proc/stat at both ends */
	uint64_t kernel_steal_ns;
	uint64_t lost;
};

struct loaded_process {
	uint32_t pid;
	char *command;		/* command line, or [comm] */
	bool command_inherited;	/* the parent's, until it execs */
	bool in_scope;
	int64_t uid;		/* -1 unknown */
	char *executable;	/* NULL unknown */
};

struct loaded_recording {
	struct live live;
	char host[256];
	char boot_id[64];
	int64_t realtime_start_ns, realtime_end_ns;	/* 0 unknown */
	char steal_source[128];
	bool steal_known;	/* false: recorded without the means to measure it */
	char scope[16];		/* all, pids, command */
	uint64_t interval_ns, clk_tck, start_ns, end_ns;
	uint32_t ncpus;		/* highest CPU number + 1 */
	struct loaded_cpu *cpus;
	struct loaded_process *procs;
	uint32_t nprocs, procs_cap;
	uint64_t records, samples, lost;
	uint64_t bad_records;	/* perf records too short to parse */
	bool has_stacks;	/* loaded with LOAD_STACKS */
	bool damaged;		/* LOAD_SALVAGE: the file ended at damage */
	struct rec_error damage;
	struct stack_set stacks;
};

#define LOAD_STACKS 1	/* also time per call stack (stacks.h) */
#define LOAD_SALVAGE 2	/* a damaged or cut-short file: what comes before
			 * the damage (damaged, damage say where) */

/*
 * Reads fd into out, placing steal by method and charging samples to the
 * accounts of rules (NULL: the rules stored in the recording, if any, else
 * the defaults). 0; -EINVAL with err set when the file is not a recording
 * or is damaged; -errno otherwise. Release out with
 * loaded_recording__release() in every case.
 */
int recording__load(int fd, enum steal_method method,
		    const struct account_rules *rules,
		    struct loaded_recording *out, struct rec_error *err);

/* recording__load, with LOAD_ flags. */
int recording__load_with(int fd, enum steal_method method,
			 const struct account_rules *rules, unsigned flags,
			 struct loaded_recording *out, struct rec_error *err);

/* The same for a recording still being written: what it holds so far
 * (up to its last whole block). */
int recording__load_partial(int fd, enum steal_method method,
			    struct loaded_recording *out, struct rec_error *err);
void loaded_recording__release(struct loaded_recording *r);

/* The process pid, or NULL. */
const struct loaded_process *loaded_recording__process(
	const struct loaded_recording *r, uint32_t pid);

#endif
