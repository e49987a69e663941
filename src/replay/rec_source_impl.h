/*
 * rec_source_impl: the reader's state, shared by rec_source.c (opening a
 * recording, its metadata, version 1's stored functions),
 * rec_source_feed.c (version 2's items), rec_source_v1.c (version 1's
 * perf records) and rec_source_events.c (what either makes into engine
 * events). The two readers call rec_source_events.c, never each other
 * back: feed.c hands version 1's records to v1.c.
 */
#ifndef CPULEDGER_REPLAY_REC_SOURCE_IMPL_H
#define CPULEDGER_REPLAY_REC_SOURCE_IMPL_H

#include "rec_source.h"
#include "../core/cgstats.h"
#include "../resolve/resolve.h"
#include "../core/units.h"
#include "rec_split.h"

/* Beyond what the clocks can disagree by: a second. */
#define REC_SLACK_NS NSEC_PER_SEC

/* A function a version 1 recording stored (its SYMBOL items). */
struct stored_sym {
	uint32_t dso, name;	/* ids in syms_names */
	uint64_t start, end;
};

/* A frame of a REC_STACK, its names mapped to the names table's ids. */
struct file_frame {
	uint32_t function, dso;
	uint8_t flags;
};

/* A REC_STACK. Named as it is read (its leaf, the leaf's account, its
 * stack id) where accounts do not read addresses: its samples then need
 * nothing else of it. Where they do, its frames are kept, in
 * file_frames[first, first + n), and each sample is named as it comes. */
/* 12 bytes: a long recording names tens of thousands of stacks, made of
 * a few thousand frames (its leaf is one of them, in the stacks table). */
struct file_stack {
	uint32_t n : 10;	/* the frames named, RES_MAX_FRAMES at most */
	uint32_t nframes : 13;	/* as in the file (REC_MAX_FRAMES at most):
				 * its samples' addresses */
	uint32_t named : 1;	/* leaf and stack are set; else first is */
	uint32_t flags : 8;	/* named: its leaf's */
	uint32_t leaf;		/* named: its leaf's (function, dso, account),
				 * a frame id of stacks */
	union {
		uint32_t stack;	/* named, with stacks: its id in the stacks table */
		uint32_t first;	/* not named: its frames in file_frames */
	};
};
_Static_assert(RES_MAX_FRAMES < 1 << 10 && REC_MAX_FRAMES < 1 << 13,
	       "a file stack's frame counts fit its fields");
_Static_assert(sizeof(struct file_stack) == 12, "a file stack's size");

struct rec_source {
	int fd;
	struct rec_source_opts o;
	struct rec_reader *rd;
	struct rec_meta meta;
	struct strtab names;
	struct stacktab stacks;
	uint32_t unknown, no_dso_account;
	uint32_t *name_map;		/* NAME id -> names id */
	struct file_stack *fstacks;	/* REC_STACK id -> its frames */
	uint32_t nfstacks, fstacks_cap;
	struct file_frame *file_frames;
	uint32_t nfile_frames, file_frames_cap;
	uint64_t stack_budget;		/* against REC_MAX_STACK_FRAMES */
	uint32_t nmap, map_cap;
	uint64_t name_bytes;
	struct account_rules stored_rules;
	bool have_stored_rules;
	struct resolver *res;
	struct strtab syms_names;	/* version 1: stored functions */
	struct stored_sym *syms;
	uint32_t nsyms, syms_cap;
	struct source_cpu *cpus;
	uint64_t *steal0, *steal1, *last_time;
	uint8_t *seen0, *seen1;
	uint64_t now;			/* the latest event time read */
	uint64_t now_offset;		/* the item that had it */
	/* the latest time of the collector's reads (CLOCK, CPUCLOCK): of
	 * no CPU's stream, so not now, but no later than the end either */
	uint64_t clock_now, clock_now_offset;
	uint64_t first;			/* the first event time read */
	struct rec_error *err;		/* where rec_source__feed says why */
	int last_cpu;			/* version 1: to tell its rounds */
	uint64_t round_max, prev_round_max;
	uint32_t pushed;		/* events, to advance an import by */
	struct { uint32_t pid; uint64_t time; } *forget;
	uint32_t nforget, forget_cap;
	uint64_t bad_records, samples, switches, runtimes;
	uint64_t clocks;	/* REC_CLOCK items */
	uint64_t cpu_clocks;	/* REC_CPUCLOCK items */
	struct source_event events[16];
	uint32_t nevents;
	bool damaged;
	struct rec_error damage;
	struct cgstats cg;		/* CGSTAT and WAIT items */
	bool waits_sink;		/* o.waits_once: its engine sink added */
	struct source source;		/* rec_source__source */
	struct rec_error *source_err;	/* where its feed says why */
	/* the items read on a thread of their own (rec_split.h): what they
	 * do to the engine, and the waits, passed to this thread */
	struct rec_split *split;
	uint64_t split_bad;		/* bad WAIT items, found on this thread */
};

/* A thread's run-queue wait, from its clock item (REC_CLOCK). */
struct rec_clock_wait {
	uint32_t pid, tid;
	uint64_t wait_ns;
	bool first;		/* the recording's first clock item */
	bool final;		/* its last: it exited */
};

/* The symbol source of a version 1 recording: its stored functions. */
int rec_source_stored_lookup(void *ctx, const char *dso, uint64_t offset,
			     struct sym_hit *out);
/* Version 1's perf records, and its watermark at the end. */
int rec_source_v1_perf(struct rec_source *s, struct engine *e, uint32_t cpu,
		       const uint8_t *d, uint32_t len);
int rec_source_v1_advance(struct rec_source *s, struct engine *e);

/* Shared by the items' readers (rec_source_events.c). */
int rec_source_resolver(struct rec_source *s);
int rec_source_push(struct rec_source *s, struct engine *e, struct eng_event *ev);
/* The engine advanced to watermark, or told to (s->split). */
int rec_source_advance(struct rec_source *s, struct engine *e, uint64_t watermark);
/* Every CPU's stream has been read up to this time (UINT64_MAX: none). */
uint64_t rec_source_streams_read(const struct rec_source *s);
void rec_source_seen(struct rec_source *s, uint32_t cpu, uint64_t t);
int rec_source_sample(struct rec_source *s, struct engine *e, const struct res_frame *f,
		      uint32_t n, uint32_t pid, uint32_t tid, uint32_t cpu, uint64_t time);
/* A REC_STACK's frames f[0, n) (their names mapped, no address) into fs. */
int rec_source_stack(struct rec_source *s, struct file_stack *fs, const struct res_frame *f,
		     uint32_t n);
/* A REC_STACK_SAMPLE: the sample h on stack fs, with fs->nframes
 * addresses ips (NULL: not read, where no account names a range). */
int rec_source_stack_sample(struct rec_source *s, struct engine *e, struct file_stack *fs,
			    const uint8_t *ips, const struct rec_stack_sample *h);

/* The items to the file's end or the first error (rec_source_feed.c). */
int rec_source_read_items(struct rec_source *s, struct engine *e, struct rec_error *err);
/* A WAIT item's waits taken (bad counts one that is not), and a clock
 * item's wait: on the thread that has the engine. */
int rec_source_wait_item(struct rec_source *s, const uint8_t *d, uint32_t len, uint64_t *bad);
int rec_source_clock_wait(struct rec_source *s, const struct rec_clock_wait *w);

/* Sets err and returns -EINVAL. */
int rec_source_fail(struct rec_error *err, uint64_t offset, const char *msg);

#endif
