/*
 * recording: the file `cpuledger record` writes and `report` reads
 * (docs/recording-format.md). A header, then blocks; each block is one zstd
 * frame with its content checksum, holding whole items (type, length,
 * payload). The last item is END, so a file cut short is told from a
 * complete one.
 */
#ifndef CPULEDGER_FORMAT_RECORDING_H
#define CPULEDGER_FORMAT_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REC_MAGIC "CPULREC"	/* 8 bytes with its NUL */
#define REC_VERSION 4	/* what the recorder writes; readers take 1 to 4 */

enum rec_item {
	REC_META = 1,		/* text: key=value lines */
	REC_PERF = 2,		/* u32 cpu, u32 0, then one perf record */
	REC_PROCSTAT = 3,	/* u32 phase (0 start, 1 end), u32 0, /proc/stat text */
	REC_TASK = 4,		/* u32 pid, u32 tid, comm (text) */
	REC_CMDLINE = 5,	/* u32 pid, u32 0, command line (NULs as spaces) */
	REC_LOST = 6,		/* u32 cpu, u32 0, u64 lost records */
	REC_END = 7,		/* u64 items before it */
	REC_MAPS = 8,		/* u32 pid, u32 0, /proc/PID/maps text at the start */
	REC_SYMBOL = 9,		/* u64 start, u64 end, u32 dso length, u32 0,
				 * dso, name: a function that samples fell in */
	REC_ACCOUNTS = 10,	/* the --accounts rules text given to record */
	REC_DSO = 11,		/* u32 path length, u32 0, path, build-id (hex):
				 * each file symbols were stored for */
	REC_PROCINFO = 12,	/* u32 pid, u32 uid, executable path */
	/* Imported from perf script (script_import.h): */
	REC_NAME = 13,		/* u32 id, u32 0, text: a function or file name */
	REC_SAMPLE = 14,	/* u32 pid, tid, cpu, nframes, u64 time, period,
				 * nframes x struct rec_frame, the sample's own first */
	REC_SCHED = 15,		/* struct rec_sched */
	/* Version 2: the recorder writes what it decoded as it drained: */
	REC_TASKEV = 16,	/* struct rec_taskev: a fork, comm or exit */
	REC_LOSTWIN = 17,	/* struct rec_lostwin: records the kernel dropped */
	REC_ROUND = 18,		/* u64 time: every item of an event up to then
				 * has been written (the readers' watermark) */
	REC_PROC = 19,		/* struct rec_proc, the command line, then the
				 * executable's path */
	REC_CGROUP = 20,	/* struct rec_cgroup: a task's cgroup */
	REC_CGSTAT = 21,	/* struct rec_cgstat, then text lines
				 * "USAGE_NS THROTTLED_NS NR_THROTTLED PATH"
				 * ("-": unknown): each cgroup's counters */
	REC_WAIT = 22,		/* struct rec_wait, then count x struct
				 * rec_wait_task: run queue waits so far */
	REC_CLOCK = 23,		/* struct rec_clock: a thread's figures read
				 * from the kernel's own clocks (BPF) */
	/* Version 3: a sample names its call stack, defined once: */
	REC_STACK = 24,		/* struct rec_stack, then nframes x struct
				 * rec_stack_frame, the leaf first */
	REC_STACK_SAMPLE = 25,	/* struct rec_stack_sample, then the stack's
				 * nframes x u64 address (version 4: those
				 * in the block's addresses instead) */
	REC_CPUCLOCK = 26,	/* struct rec_cpuclock: a CPU's steal read
				 * from its steal clock (BPF) */
};

/* A frame of a REC_SAMPLE: names are REC_NAME ids (REC_NO_NAME: none). */
struct rec_frame {
	uint64_t ip;
	uint32_t function, dso;
	uint32_t flags;		/* REC_FRAME_KERNEL, REC_FRAME_EXECUTABLE */
	uint32_t zero;
};

#define REC_NO_NAME UINT32_MAX
/* The pid and tid of a task that had exited when its record was written
 * (perf script shows -1): reports show it as -1. */
#define REC_TASK_EXITED UINT32_MAX
#define REC_FRAME_KERNEL 1
#define REC_FRAME_EXECUTABLE 2

struct rec_sample_head {
	uint32_t pid, tid, cpu, nframes;
	uint64_t time_ns, period;
};

/* REC_STACK: the names of a call stack, given ids 0, 1, 2... in order.
 * A sample's stack is written once, before the first sample on it; the
 * samples then carry its id and their own addresses (a compile loop's
 * samples share a stack by name nine times in ten, by address barely). */
struct rec_stack {
	uint32_t id, nframes;
};

struct rec_stack_frame {
	uint32_t function, dso;	/* NAME ids */
	uint32_t flags;		/* REC_FRAME_KERNEL, REC_FRAME_EXECUTABLE */
};

struct rec_stack_sample {
	uint32_t pid, tid, cpu, stack;
	uint64_t time_ns, period;
};

/* REC_TASKEV: what perf's COMM, FORK and EXIT records say. */
enum { REC_TASK_FORK = 1, REC_TASK_COMM = 2, REC_TASK_EXIT = 3 };
#define REC_TASK_EXEC 1		/* flags: a COMM from an exec */
struct rec_taskev {
	uint32_t kind, cpu;
	uint64_t time_ns;
	uint32_t pid, tid, ppid, ptid;
	uint32_t comm;		/* a NAME id (COMM), else REC_NO_NAME */
	uint32_t flags;
};

/* REC_LOSTWIN: the kernel dropped count records of a CPU between its last
 * record before (from) and saying so (to). */
struct rec_lostwin {
	uint32_t cpu, zero;
	uint64_t from_ns, to_ns, count;
};

/* REC_PROC: a process's command line and executable, at the start and at
 * each exec. */
#define REC_PROC_NO_UID UINT32_MAX
#define REC_PROC_CUT 1		/* flags: the command line was cut short */
struct rec_proc {
	uint64_t time_ns;
	uint32_t pid, uid;
	uint32_t command_len, exe_len;
	uint32_t flags, zero;
};

/* REC_CGROUP: from time on, thread tid (0: every thread of process pid)
 * is in the cgroup whose path is NAME id name. */
struct rec_cgroup {
	uint64_t time_ns;
	uint32_t pid, tid;
	uint32_t name, zero;
};

/* REC_CGSTAT and REC_WAIT: read at the start (phase 0) and the end (1). */
enum { REC_PHASE_START = 0, REC_PHASE_END = 1 };
struct rec_cgstat {
	uint32_t phase, zero;
	uint64_t time_ns;
};

struct rec_wait {
	uint32_t phase, count;
	uint64_t time_ns;
};

/* schedstat's run_delay: the time a task has waited on a run queue. */
struct rec_wait_task {
	uint32_t pid, tid;
	uint64_t wait_ns;
};

/* REC_CLOCK: what thread tid of pid did since its last REC_CLOCK (since
 * the collector first saw it, the first time), as the BPF collector read
 * it at time_ns (src/bpf/sched_clock.h): cpu_ns ran (steal already out),
 * steal_ns lost to the hypervisor in its stints, wait_ns waited on a run
 * queue. REC_CLOCK_FINAL: it exited; these are its last. A recording
 * with them has meta source=bpf (engine's STEAL_GIVEN). */
#define REC_CLOCK_FINAL 1
struct rec_clock {
	uint64_t time_ns;
	uint32_t pid, tid;
	uint64_t cpu_ns, steal_ns, wait_ns;
	uint32_t flags, zero;
};

/* REC_CPUCLOCK: what CPU cpu's steal clock grew by since its last
 * REC_CPUCLOCK (since the recording began, the first time), as the BPF
 * collector read it at time_ns: busy_steal_ns while a thread held the CPU,
 * idle_steal_ns while its idle task did, idle_ns the idle task's time on
 * it. Written at each read where steal is known; a recording with them
 * has meta cpu_clock=steal, and its per-CPU steal is theirs, not its
 * threads' (a thread's REC_CLOCK is one sum over the CPUs it ran on). */
struct rec_cpuclock {
	uint64_t time_ns;
	uint32_t cpu, zero;
	uint64_t busy_steal_ns, idle_steal_ns, idle_ns;
};

/* A scheduler tracepoint of a REC_SCHED item. */
enum { REC_SCHED_SWITCH = 1, REC_SCHED_RUNTIME = 2 };
struct rec_sched {
	uint32_t kind, cpu;
	uint64_t time_ns;
	uint32_t a, b;		/* switch: prev tid, next tid; runtime: tid, 0 */
	uint64_t value;		/* runtime: ns */
};

struct rec_writer;

/* A writer on fd (not closed by it); writes the file header. NULL with
 * errno set. */
struct rec_writer *rec_writer__new(int fd);
/* Blocks for a recording read once and let go (an import into memory):
 * zstd's level 1, literals still raw, where rec_writer__new's level 3 is
 * for a file read again and again: written faster, read as fast, an
 * eighth larger (bench/RESULTS.md, rounds 22 and 24). */
void rec_writer__read_once(struct rec_writer *w);	/* before rec_writer__behind */
/* The writer's work done by a second thread: the items added are kept
 * and handed over a MiB at a time, and that thread makes them, names the
 * samples' stacks and compresses and writes the blocks (an import: that
 * was a third of reading perf script text, bench/RESULTS.md round 32).
 * Not when the process may run on one CPU only. An error there is said
 * by a later add, flush or finish; flush and finish return once all is
 * written, and bytes and items are then exact. true when the thread
 * runs. */
bool rec_writer__behind(struct rec_writer *w);
/* Adds an item whose payload is a[0..alen) then b[0..blen). 0 or -errno. */
int rec_writer__add(struct rec_writer *w, uint32_t type, const void *a,
		    size_t alen, const void *b, size_t blen);
/*
 * Adds a sample of h->nframes frames f: as REC_STACK_SAMPLE, with its
 * stack as REC_STACK before it when new; as REC_SAMPLE (its frames
 * inline) when it has none, or once the stacks written take
 * REC_WRITER_STACK_BYTES (the writer's memory stays bounded). 0 or
 * -errno.
 */
#define REC_WRITER_STACK_BYTES (16u << 20)
int rec_writer__sample(struct rec_writer *w, const struct rec_sample_head *h,
		       const struct rec_frame *f);
/* Adds the REC_STACK_SAMPLE s with its stack's n addresses ips, as
 * another writer wrote it (an item copied: its REC_STACK copied before
 * it). 0 or -errno. */
int rec_writer__stack_sample(struct rec_writer *w, const struct rec_stack_sample *s,
			     const void *ips, uint32_t n);
/* Writes END and the last block. 0 or -errno. */
int rec_writer__finish(struct rec_writer *w);
/* Flushes the current block (for a recorder that may be killed). */
int rec_writer__flush(struct rec_writer *w);
/*
 * After w's items so far, the blocks of the recording in fd as they are
 * (another writer's, flushed, with no END: it holds items items): an
 * import's items go behind the META that its end decides without being
 * read and compressed again. 0 or -errno.
 */
int rec_writer__append(struct rec_writer *w, int fd, uint64_t items);
/* Written so far, and items added. A writer behind (rec_writer__behind)
 * is asked only after flush or finish: its thread is changing them. */
uint64_t rec_writer__bytes(const struct rec_writer *w);
uint64_t rec_writer__items(const struct rec_writer *w);
void rec_writer__free(struct rec_writer *w);

struct rec_reader;

struct rec_error {
	uint64_t offset;	/* where in the file the damage starts */
	char msg[160];
};

/* A reader of fd (not closed by it). NULL with errno set; EINVAL: not a
 * recording (err says why). */
struct rec_reader *rec_reader__new(int fd, struct rec_error *err);
/*
 * The next item: 1 with *type, *data, *len set (data valid until the next
 * call); 0 at END; -EINVAL when the file is damaged or cut short (err says
 * where); -errno when reading fails.
 */
int rec_reader__next(struct rec_reader *r, uint32_t *type,
		     const uint8_t **data, uint32_t *len, struct rec_error *err);
void rec_reader__free(struct rec_reader *r);
/* The item after the one next returned, when it is in the same block: 1
 * with *type and *data (at least len bytes of it) set, else 0. Unchecked:
 * for a reader to fetch ahead what it will need, never to act on. */
int rec_reader__peek(const struct rec_reader *r, uint32_t *type,
		     const uint8_t **data, uint32_t len);

/* Reads the blocks after the current one in a thread of their own,
 * decompressing the next while this one's items are handled (a quarter
 * of a report's time is zstd's): where the file is a regular one and the
 * process may run on more than one CPU; else, or if no thread can be
 * made, reading goes on as before. Items and errors are the same.
 * Whether a thread reads ahead. */
bool rec_reader__read_ahead(struct rec_reader *r);
/* Whether it could be read ahead (a whole regular file, not read to an
 * end or an error, more than one CPU to run on): and so read on a thread
 * of its own. */
bool rec_reader__may_read_ahead(const struct rec_reader *r);

/* The file's format version (1 to 4). */
uint32_t rec_reader__version(const struct rec_reader *r);
/* The offset of the block the last item came from, for messages. */
uint64_t rec_reader__offset(const struct rec_reader *r);

/* Accept a file that ends at a block boundary without its END item: the
 * recorder reading back what it has written so far. */
void rec_reader__set_partial(struct rec_reader *r);

/* Salvage a damaged or cut-short file: the first damage ends it (next
 * returns 0), and rec_reader__damage() then says where and what it was. */
void rec_reader__set_salvage(struct rec_reader *r);
bool rec_reader__damage(const struct rec_reader *r, struct rec_error *err);
/*
 * Version 4 keeps the samples' addresses (a STACK_SAMPLE's) apart from
 * the items, in a zstd frame of their own in each block, read only by a
 * reader that needs them: a report whose accounts name no address ranges
 * does not. From the next block read on, their frames are passed over,
 * neither decompressed nor checked.
 */
void rec_reader__skip_addresses(struct rec_reader *r);
/* The current block's next n addresses (u64 each, the samples' in item
 * order): 1 with *ips set (valid as next's data is), 0 when the block's
 * were passed over, -EINVAL when fewer than n are left. */
int rec_reader__addresses(struct rec_reader *r, uint32_t n, const uint8_t **ips);

#endif
