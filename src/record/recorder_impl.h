/*
 * recorder_impl: the recorder's state, shared by recorder.c (lifecycle,
 * the perf session, metadata), recorder_events.c (each record decoded,
 * resolved, written and fed to the engine), recorder_proc.c (what /proc
 * says of processes: at the start and at each exec), recorder_cgroup.c
 * (cgroup ids, paths and statistics), recorder_bpf.c (the BPF collector's
 * reads, --source bpf) and recorder_out.c (names and events out to the
 * file, the engine and the taps). Each calls only those after it in this
 * list.
 */
#ifndef CPULEDGER_RECORD_RECORDER_IMPL_H
#define CPULEDGER_RECORD_RECORDER_IMPL_H

#include <time.h>

#include "recorder.h"
#include "../collect/cgroup.h"
#include "../collect/kernel_acct.h"
#include "../collect/perf.h"
#include "../core/hindex.h"
#include "../core/namepool.h"
#include "../resolve/perf_decode.h"
#include "../format/recording.h"
#include "../resolve/resolve.h"
#include "../symbols/symbolizer.h"
#include "../collect/clock.h"

/* The processes a -p or -- CMD recording describes: the pids and their
 * descendants, learnt from FORK records as they come. */
struct rscope {
	bool all;
	uint32_t *pids;
	uint32_t n, cap;
	struct hindex index;
};

/* A cgroup id the kernel gives, and its path (a string id); used: named
 * since the clock hand last passed (with max_cgroups). */
struct recorder_cgid {
	uint64_t id;
	uint32_t name;
	bool used;
};

/* The cgroup last written for a thread, by tid modulo the size: a thread
 * that meets another in its slot is written again (bounded memory). */
#define RECORDER_CGCACHE 4096
struct recorder_cgcache {
	uint32_t tid;
	uint64_t id;
};

/* An engine fed the same events for a while (a profile), with its own
 * call stacks. */
struct recorder_tap {
	struct engine *e;
	struct stacktab stacks;
	bool commands;		/* given command lines */
	uint32_t stack;		/* the stack of the sample being pushed */
};

struct recorder_bpf;

struct recorder {
	struct recorder_opts o;
	struct recorder_stats st;
	struct perf_session perf;
	struct tp_formats tp;
	bool tracepoints;
	struct pd_layout layout;
	struct strtab names;		/* NAME ids are these ids */
	uint32_t names_written;		/* NAME items written: ids below */
	struct resolver *res;
	struct symbolizer *sy;
	struct rscope scope;
	struct rec_writer *w;		/* NULL: no recording file */
	struct engine *engine;		/* NULL: none attached */
	struct recorder_tap taps[RECORDER_TAPS];	/* others, for a while (profiles) */
	uint32_t ntaps;
	uint32_t unknown;
	uint32_t ncpus;			/* highest CPU + 1 */
	uint64_t *steal0;		/* /proc/stat at the start, ns per CPU */
	char *end_stat;			/* /proc/stat at the end, once finished */
	uint64_t *last_time;		/* per CPU: its latest record's time */
	uint64_t round_max, prev_round_max;
	uint64_t bytes_flushed;
	uint64_t flushed_ns;	/* when the writer last flushed */
	char host[256], boot_id[64];
	struct kernel_acct acct;	/* what runtime holds, read at the start */
	int64_t realtime_start, realtime_end;
	struct { uint32_t pid; uint64_t time; } *forget;	/* exited, regions to go */
	uint32_t nforget, forget_cap;
	bool finished;
	/* recorder_cgroup.c */
	struct cgroup_fs cgfs;
	bool have_cgfs;
	struct recorder_cgid *cgids;
	uint32_t ncgids, cgids_cap;
	struct hindex cgid_index;
	uint32_t cg_hand;		/* the clock's hand over cgids */
	uint64_t cgids_evicted;
	/* recorder_events.c: users' names, bounded (max_names, no file) */
	struct namepool pool;
	bool pooled;
	uint64_t last_sweep;
	uint64_t lost_window_ns;	/* the time of lost records, every CPU */
	struct recorder_cgcache cgcache[RECORDER_CGCACHE];
	struct cgstats cg;
	/* recorder_bpf.c: NULL with perf's tracepoints (--source perf) */
	struct recorder_bpf *bpf;
	char source_why[256];		/* auto: why not the BPF collector */
	/* recorder_source.c */
	struct source source;
	struct source_cpu *described;	/* per CPU, as last described */
};

/* recorder_proc.c */
bool rscope_has(const struct rscope *s, uint32_t pid);
int rscope_add(struct rscope *s, uint32_t pid);
void rscope_release(struct rscope *s);
int recorder_snapshot(struct recorder *r);
int recorder_proc_item(struct recorder *r, uint32_t pid, uint64_t time);
bool recorder_parent_in_scope(struct recorder *r, uint32_t pid);
bool recorder_own(struct recorder *r, uint32_t pid);

/* recorder_cgroup.c */
int recorder_cgroup_start(struct recorder *r);
/* The end's counters of every cgroup (CGSTAT), then, once the BPF
 * collector's last figures are handed on, every thread's wait (WAIT). */
int recorder_cgroup_end(struct recorder *r);
int recorder_cgroup_end_waits(struct recorder *r);
int recorder_cgroup_proc(struct recorder *r, uint32_t pid, uint64_t time);
int recorder_cgroup_sample(struct recorder *r, const struct perf_ev *p);
int recorder_cgroup_new(struct recorder *r, const struct perf_ev *p);
void recorder_cgroup_release(struct recorder *r);

/* recorder_events.c */
int recorder_on_record(void *ctx, int cpu, const struct perf_event_header *h);
uint64_t recorder_record_time(void *ctx, const struct perf_event_header *h);
int recorder_round(struct recorder *r);

/* recorder_bpf.c */
/* Loads the collector; 0, or -errno with why said in why. */
int recorder_bpf_open(struct recorder *r, char *why, size_t whylen);
const char *recorder_bpf_steal_source(const struct recorder *r);
/* Whether steal is measured: true without the collector (perf's own
 * rules then), else where it reads a steal clock or the kernel's. */
bool recorder_bpf_steal_known(const struct recorder *r);
/* The collector reads each CPU's steal (REC_CPUCLOCK, EK_CPU_CLOCK):
 * BPF as the source, with steal known. */
bool recorder_bpf_cpu_clocks(const struct recorder *r);
/* The time between two reads (0: no collector). */
uint64_t recorder_bpf_interval(const struct recorder *r);
/* At the start: the figures from here on. 0 or -errno. */
int recorder_bpf_begin(struct recorder *r);
/* Reads the threads' figures when an interval has passed (now: at once)
 * and hands them on (REC_CLOCK, EK_CLOCK). 0 or -errno. */
int recorder_bpf_poll(struct recorder *r, bool now);
/* The last read: the threads' figures read, then(r) run at once (the
 * other counters of the end, read at the same moment: a busy thread runs
 * on while the figures are handed on, which takes a while on a loaded
 * machine), then the figures handed on. Without the collector, then(r)
 * alone. 0 or -errno. */
int recorder_bpf_last(struct recorder *r, int (*then)(struct recorder *r));
/* Every thread's run-queue wait since the collector first saw it (the
 * start): the live ones, and exited ones the engine has not handed out
 * yet (forget_exited: live ones), as schedstat's of every task. fn's
 * error stops. */
int recorder_bpf_each_wait(const struct recorder *r,
			   int (*fn)(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns),
			   void *ctx);
void recorder_bpf_release(struct recorder *r);

/* recorder_out.c */
void recorder_pool_sweep(struct recorder *r, uint64_t watermark);
int recorder_names_out(struct recorder *r, uint32_t upto);
int recorder_push(struct recorder *r, struct eng_event *ev);
void recorder_bounds_init(struct recorder *r);
enum user_name { UN_RENAME, UN_EXEC, UN_CGROUP };
uint32_t recorder_user_name(struct recorder *r, const char *s, size_t len, uint64_t time,
			    enum user_name kind);

#endif
