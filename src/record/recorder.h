/*
 * recorder: the live recording, as a component with a lifecycle (as
 * libbpf's ring_buffer): recorder__new opens the perf events (every CPU,
 * or one process tree where system-wide is not allowed), recorder__start
 * writes the recording's start and what /proc says of the processes
 * running, recorder__poll drains every ring once, recorder__finish writes
 * the end. It prints nothing and never exits: the command that drives it
 * does (cmd-record.c, cmd-run.c).
 *
 * Each record drained is decoded once (perf_decode.h) and resolved once
 * (resolve.h): samples are named as they come, while the files they ran
 * from are there. What was decoded is written as version 2 items
 * (docs/recording-format.md), and fed to an engine when one is attached
 * (collections into the ledger, run's summary), with the watermark each
 * round of draining allows: perf's rule, everything up to the latest time
 * of the round before has been read.
 */
#ifndef CPULEDGER_RECORD_RECORDER_H
#define CPULEDGER_RECORD_RECORDER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../core/accounts.h"
#include "../core/cgstats.h"
#include "../core/engine.h"
#include "../core/source.h"
#include "../core/strtab.h"

struct kernel_acct;

/* Where each thread's CPU time, steal and run-queue wait come from
 * (--source, docs/record.md). */
enum recorder_source {
	RECORDER_SOURCE_AUTO,	/* the BPF collector where it loads, else perf */
	RECORDER_SOURCE_BPF,	/* the BPF collector (src/bpf/), or fail */
	RECORDER_SOURCE_PERF,	/* perf's sched tracepoints (or sample gaps) */
};

struct recorder_opts {
	bool all;		/* -a */
	const pid_t *pids;	/* -p */
	int npids;
	pid_t child;		/* -- COMMAND, started (held) by the caller; 0: none */
	char *const *command;	/* its argv, for its command line */
	uint32_t hz;		/* -F */
	bool callchain;		/* -g (frame pointers) */
	bool no_tracepoints;	/* steal from sample gaps (auto: perf) */
	uint32_t mmap_pages;	/* per CPU ring; 0: by privilege */
	enum recorder_source source;
	uint64_t bpf_interval_ns;	/* the collector read so often; 0: 250 ms */
	bool forget_exited;	/* bpf: exited threads' waits are not kept for
				 * the end (top, the agent: memory follows the
				 * live threads) */
	const char *root;	/* for /proc and tracefs: "/" */
	const char *accounts;	/* --accounts rules text, stored; may be NULL */
	const struct account_rules *rules;	/* for the engine's accounts */
	bool hide_addresses;	/* under sudo: no kernel addresses, no other
				 * users' code addresses in the file */
	uid_t user;		/* hide_addresses: whose addresses stay */
	/* bounds for a recorder that runs for good (the agent); 0: none */
	uint32_t max_names;	/* thread names and cgroup paths held at once */
	uint32_t max_cgroups;	/* cgroup ids named (least recently used go) */
	uint32_t max_symbol_files;	/* files held open, their functions read */
	uint64_t max_symbol_bytes;	/* the bytes of those files' tables */
	uint64_t max_jit_bytes;		/* of JIT maps' (perf-PID.map) tables */
};

/* Why recorder__new failed, for the caller to say. */
enum recorder_failure {
	REC_FAIL_NOMEM,
	REC_FAIL_NOT_ALLOWED,	/* perf_event_open refused system-wide */
	REC_FAIL_PERF,		/* perf_event_open failed otherwise */
	REC_FAIL_BPF,		/* --source bpf: the collector did not load
				 * (recorder_stats.source_why says why) */
};

struct recorder_stats {
	uint64_t records, samples, lost, bytes, items;
	uint64_t symbols;		/* functions named */
	const char *steal_source;	/* "tracepoints", "sample-gaps", "unknown (...)",
					 * "bpf (what it reads)" */
	const char *source;		/* "bpf" or "perf" */
	const char *source_why;		/* "": as asked; else why not bpf (auto,
					 * or REC_FAIL_BPF) */
	bool task_only;			/* the command's own user-space samples */
	bool tracepoints_missing;	/* wanted, not there: sample gaps */
	uint64_t start_ns;		/* CLOCK_MONOTONIC, when started */
	uint64_t end_ns;		/* when the events were stopped */
	/* the BPF collector's losses (sched_clock_status): events of
	 * threads its map had no room for, and exited threads whose id was
	 * given again before a read */
	uint64_t bpf_map_full, bpf_reused;
};

struct recorder;

/* Opens the events (disabled). NULL with *fail and errno set. */
struct recorder *recorder__new(const struct recorder_opts *o, enum recorder_failure *fail);
/* After REC_FAIL_BPF: why the collector did not load (this thread's last
 * recorder__new; valid until its next). */
const char *recorder__failure_why(void);

/* Feeds events to e from now on (may be NULL). Before recorder__start. */
void recorder__attach(struct recorder *r, struct engine *e);
/* Charge accounts by these rules from now on (the agent's SIGHUP); the
 * caller keeps them alive. */
void recorder__set_rules(struct recorder *r, const struct account_rules *rules);
/* Feeds events to e as well, from now on, until recorder__untap (a
 * profile of some seconds beside the main engine); up to RECORDER_TAPS
 * at once. e gets copies of the strings (command lines only with
 * commands), and its samples call stacks: ids of the table returned
 * (frames of (function, dso, account)), the recorder's until untapped.
 * NULL with errno EBUSY (as many taps as can be). */
#define RECORDER_TAPS 4
struct stacktab *recorder__tap(struct recorder *r, struct engine *e, bool commands);
/* e is fed no more; its stacks move to *stacks (the caller's to release). */
void recorder__untap(struct recorder *r, struct engine *e, struct stacktab *stacks);
/* The names the engine's events refer to (functions, files, comms). */
struct strtab *recorder__names(struct recorder *r);
/* The engine's configuration for this recording (the method is the
 * caller's to set: analysis/pipeline). */
void recorder__config(struct recorder *r, struct engine_config *c);
/* r as an event source (core/source.h), valid while r is: its feed
 * attaches the engine (before recorder__start), its description is of
 * the recording up to the end asked (0: recorder__finish's). */
struct source *recorder__source(struct recorder *r);

/* Writes the start to out_fd (-1: no recording file), starts the events,
 * and reads /proc. 0 or -errno. */
int recorder__start(struct recorder *r, int out_fd);
/* Waits for data up to timeout_ms, then drains every ring once. 0 or -errno. */
int recorder__poll(struct recorder *r, int timeout_ms);
/* Flushes what is written to the file so far (for a recorder killed later). */
int recorder__flush(struct recorder *r);
/* Stops, drains what is left, writes the end. 0 or -errno. */
int recorder__finish(struct recorder *r);
void recorder__free(struct recorder *r);

const struct recorder_stats *recorder__stats(const struct recorder *r);
/* The read_wait hook of the live consumers (analysis/collector.h,
 * metrics, topview) for a recorder of source bpf, ctx the recorder: a
 * thread's run-queue wait since the collector first saw it, from the
 * collector's last read. -ENOENT: not seen, or gone. */
int recorder__read_wait(void *ctx, uint32_t pid, uint32_t tid, uint64_t *ns);
/* That hook where the source is bpf, else procfs_wait_hook (schedstat's
 * run_delay now), with its ctx. */
typedef int (*recorder_wait_fn)(void *ctx, uint32_t pid, uint32_t tid, uint64_t *ns);
recorder_wait_fn recorder__wait_hook(struct recorder *r, void **ctx);

/* Per CPU: /proc/stat's steal from the start to now, or to the end once
 * recorder__finish has read it there (for the engine and reports), and
 * the records lost. */
uint32_t recorder__ncpus(const struct recorder *r);
bool recorder__cpu(const struct recorder *r, uint32_t cpu, uint64_t *kernel_steal_ns,
		   uint64_t *lost);
/* The same for every CPU at once (arrays of recorder__ncpus), /proc/stat
 * read once; known says where the kernel's figure is. 0 or -errno. */
int recorder__cpus(const struct recorder *r, uint64_t *kernel_steal_ns, uint64_t *lost,
		   bool *known);
/* With the BPF collector, where it reads steal: CPU cpu's steal while a
 * thread held it (busy_ns), and while its idle task did (idle_ns), from
 * the start to its last read (each thread's steal is read as one sum over
 * the CPUs it ran on: the engine puts it on the CPU it saw last). Their
 * sum is the steal clock's growth, what /proc/stat counts. false: not
 * known. */
bool recorder__cpu_steal(const struct recorder *r, uint32_t cpu, uint64_t *busy_ns,
			 uint64_t *idle_ns);
/* Records the kernel dropped so far, every CPU's (no /proc read). */
uint64_t recorder__lost(const struct recorder *r);
/* Shares out the steal e weighed so far as each CPU's /proc/stat steal
 * since the start says (engine__settle; where the kernel has a steal
 * clock, steal is the kernel's): before each collection, refresh or
 * scrape. 0, -errno, or the sink's error. */
int recorder__settle(const struct recorder *r, struct engine *e);
/* What the recording's metadata says (host, times), for reports. */
const char *recorder__host(const struct recorder *r);
/* What the kernel's runtime holds, read at the start (collect/kernel_acct). */
const struct kernel_acct *recorder__kernel_acct(const struct recorder *r);
const char *recorder__boot_id(const struct recorder *r);
int64_t recorder__realtime_start(const struct recorder *r);

/* The cgroups' counters and the threads' run-queue waits read at the
 * start and (after recorder__finish) the end. */
const struct cgstats *recorder__cgstats(const struct recorder *r);

/* What the bounds above held back (counters, for /metrics). */
struct recorder_bounds {
	uint64_t names, name_slots, name_bytes;	/* pooled names now, their room */
	uint64_t names_recycled, names_refused;	/* aged out; no room (dropped) */
	uint64_t cgroups, cgroups_evicted;	/* cgroup ids named now; forgotten */
	uint64_t symbol_files, symbol_files_evicted;	/* function tables */
	uint64_t jit_entries, jit_entries_evicted;	/* perf map functions */
	uint64_t lost_window_ns;	/* from each CPU's last record to its lost ones */
	uint64_t cgroup_bytes, symbol_bytes, jit_bytes;	/* what those tables hold */
};
void recorder__bounds(const struct recorder *r, struct recorder_bounds *b);

#endif
