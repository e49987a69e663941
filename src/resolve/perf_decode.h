/*
 * perf_decode: one perf record, as the kernel writes it into a ring, read
 * into the fields cpuledger uses. The only place that knows the layout of
 * the records a cpuledger session asks for (docs/recording-format.md):
 * the live recorder reads its rings through it, and the reader of a
 * version 1 recording (which kept the records themselves) reads them
 * through it too. Every record is bounds-checked: a recording is input
 * like any other.
 */
#ifndef CPULEDGER_RESOLVE_PERF_DECODE_H
#define CPULEDGER_RESOLVE_PERF_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pd_event { PE_CLOCK, PE_SWITCH, PE_RUNTIME, PE_EVENTS };

/* Where a tracepoint field sits in a sample's RAW data. */
struct pd_field {
	uint32_t offset, size;
};

/* What reading a session's records needs: each event's sample_type, which
 * event each id is, the tracepoints' field offsets. */
struct pd_layout {
	uint64_t sample_type[PE_EVENTS];
	struct { uint64_t id; uint32_t event; } *ids;	/* sorted by id */
	uint32_t nids, ids_cap;
	struct pd_field prev_pid, next_pid, rt_pid, rt_runtime;
};

/* Notes that records with this id are of event ev. 0 or -ENOMEM. */
int pd_layout__add_id(struct pd_layout *l, uint64_t id, enum pd_event ev);
/* Sorts the ids; call once they are all added. */
void pd_layout__ready(struct pd_layout *l);
void pd_layout__release(struct pd_layout *l);

enum pd_kind {
	PD_SAMPLE,	/* a cpu-clock sample */
	PD_SWITCH,	/* sched_switch: a = prev tid, b = next tid */
	PD_RUNTIME,	/* sched_stat_runtime: a = tid, value = ns */
	PD_COMM,	/* pid, tid, name (exec says it was an exec) */
	PD_FORK,	/* pid, tid, ppid, ptid */
	PD_EXIT,	/* pid, tid, ppid, ptid */
	PD_MMAP,	/* a mapping: for the regions (perf_regions.h) */
	PD_LOST,	/* value records dropped */
	PD_CGROUP,	/* a new cgroup: value = its id, name = its path */
	PD_OTHER,	/* a record cpuledger does not use */
};

struct perf_ev {
	enum pd_kind kind;
	uint64_t time;		/* 0: the record carried none */
	uint32_t pid, tid, ppid, ptid;
	uint32_t a, b;
	uint64_t value;
	/* PD_SAMPLE */
	uint64_t ip, period;
	bool kernel;		/* taken in kernel mode */
	const uint8_t *chain;	/* nr u64s (unaligned), or NULL */
	uint64_t nr;
	uint64_t cgroup;	/* its task's cgroup id (0: not sampled) */
	/* PD_COMM, PD_CGROUP */
	const char *name;
	size_t name_len;
	bool exec;
};

/* Decodes the record rec[0..len). 0, or -EINVAL for one too short for
 * what it says it holds, or of an event id not in the layout. */
int perf_decode(const struct pd_layout *l, const void *rec, size_t len,
		struct perf_ev *out);

/* A record's time, as perf_decode would give it, without the rest: for
 * taking several rings' records in time order. 0 where it has none. */
uint64_t perf_record_time(const struct pd_layout *l, const void *rec, size_t len);

/*
 * The frames of a sample's call chain, leaf first, up to max, into ips and
 * kernel (whether each is a kernel address). The kernel's chain starts
 * with a PERF_CONTEXT_* marker, not an address, and such markers switch
 * between kernel and user frames; they are left out. The first frame is
 * the sampled address itself, the others are return addresses. Returns
 * how many.
 */
uint32_t perf_chain_frames(const struct perf_ev *s, uint64_t *ips, bool *kernel,
			   uint32_t max);

#endif
