/*
 * engine_tasks: the engine's processes, threads, functions and stacks,
 * created as events name them and handed to the sink, then freed, when a
 * thread is gone (see engine.h). A pid or tid the kernel gives again while
 * the old task still has stints waiting is detached from the index: both
 * live until the old one is handed out.
 */
#include "engine_impl.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "units.h"
#include "banned.h"

static uint64_t pid_hash(uint32_t pid)
{
	return hash_mix(pid ^ 0x51ed270b27a5cb1dULL);
}

static uint64_t tid_hash(uint32_t tid)
{
	return hash_mix(tid ^ 0x9e3779b97f4a7c15ULL);
}

struct id_key {
	const struct engine *e;
	uint32_t id;
};

static bool proc_eq(const void *ctx, uint32_t i)
{
	const struct id_key *k = ctx;
	return k->e->procs.v[i].pid == k->id;
}

static bool thread_eq(const void *ctx, uint32_t i)
{
	const struct id_key *k = ctx;
	return k->e->threads.v[i].tid == k->id;
}

static uint32_t proc_find(const struct engine *e, uint32_t pid)
{
	struct id_key k = { e, pid };
	return hindex__find(&e->proc_index, pid_hash(pid), proc_eq, &k);
}

uint32_t eng_thread_find(const struct engine *e, uint32_t tid)
{
	struct id_key k = { e, tid };
	return hindex__find(&e->thread_index, tid_hash(tid), thread_eq, &k);
}

static void detach_proc(struct engine *e, uint32_t i)
{
	struct eng_proc *p = &e->procs.v[i];
	if (p->attached)
		hindex__remove(&e->proc_index, pid_hash(p->pid), i);
	p->attached = false;
}

static void detach_thread(struct engine *e, uint32_t i)
{
	struct eng_thread *t = &e->threads.v[i];
	if (t->attached)
		hindex__remove(&e->thread_index, tid_hash(t->tid), i);
	t->attached = false;
}

/* Process pid, created on first sight (start: its fork, or 0). */
static uint32_t proc_get(struct engine *e, uint32_t pid, uint64_t start)
{
	uint32_t i = proc_find(e, pid);
	if (i != ENGINE_NONE)
		return i;
	i = ALLOC(e->procs, hnext);
	if (i == ENGINE_NONE || hindex__insert(&e->proc_index, pid_hash(pid), i))
		return ENGINE_NONE;
	e->procs.v[i] = (struct eng_proc){ .pid = pid, .start_ns = start, .uid = -1,
					   .comm = ENGINE_NONE, .cgroup = ENGINE_NONE, .used = true,
					   .attached = true,
					   .in_scope = e->c.scope_all };
	e->st.procs_live++;
	return i;
}

static void proc_release(struct engine *e, uint32_t i)
{
	struct eng_proc *p = &e->procs.v[i];
	detach_proc(e, i);
	free(p->command);
	free(p->executable);
	*p = (struct eng_proc){ 0 };
	FREE(e->procs, hnext, i);
	e->st.procs_live--;
}

/* Moves thread t into process i. */
static void join_proc(struct engine *e, uint32_t t, uint32_t i)
{
	struct eng_thread *th = &e->threads.v[t];
	if (th->proc == i)
		return;
	if (th->proc != ENGINE_NONE) {
		struct eng_proc *old = &e->procs.v[th->proc];
		old->nthreads--;
		/* a process known only through this thread's tid */
		if (!old->nthreads && !old->command && old->pid == th->tid)
			proc_release(e, th->proc);
	}
	th->proc = i;
	e->procs.v[i].nthreads++;
}

/* The first slots of a thread's index of its programs and of its stacks:
 * 64, every index's first, held 1 KB a thread (1.7 MB of an import's
 * report of a compile loop, whose threads stay to the end); 16 grew
 * too often (task-clock 1.02 of 64 on live8), 32 as fast as 64. */
#define THREAD_INDEX_FIRST 32

/* Thread tid, created on first sight; pid (ENGINE_NONE: not known, then
 * a process of its own until told) moves it to its process. */
uint32_t eng_thread(struct engine *e, uint32_t tid, uint32_t pid)
{
	uint32_t *hint = &e->thread_hint[tid & (ENGINE_THREAD_HINTS - 1)];
	const struct eng_thread *h = *hint < e->threads.n ? &e->threads.v[*hint] : NULL;
	/* what the index would find: one attached thread a tid */
	uint32_t t = h && h->used && h->attached && h->tid == tid ? *hint :
		     eng_thread_find(e, tid);
	bool fresh = t == ENGINE_NONE;
	if (fresh) {
		t = ALLOC(e->threads, hnext);
		if (t == ENGINE_NONE)
			return ENGINE_NONE;
		if (hindex__insert(&e->thread_index, tid_hash(tid), t)) {
			/* given back as a freed one is: zeroed (its indexes
			 * and stacks are let go at the end, slot by slot) */
			e->threads.v[t] = (struct eng_thread){ 0 };
			FREE(e->threads, hnext, t);
			return ENGINE_NONE;
		}
		e->threads.v[t] = (struct eng_thread){
			.tid = tid, .proc = ENGINE_NONE, .comm = ENGINE_NONE,
			.cgroup = ENGINE_NONE,
			.oncpu = ENGINE_NONE, .progs = ENGINE_NONE, .progs_tail = ENGINE_NONE,
			.unknown_prog = ENGINE_NONE, .last_prog = ENGINE_NONE,
			.window = ENGINE_NONE,
			.last_cpu = ENGINE_NONE,
			.used = true, .attached = true };
		hindex__init_small(&e->threads.v[t].prog_index, THREAD_INDEX_FIRST);
		hindex__init_small(&e->threads.v[t].stack_index, THREAD_INDEX_FIRST);
		e->st.threads_live++;
		if (pid == ENGINE_NONE)
			pid = tid;
	}
	*hint = t;
	/* (a thread of a task that had exited has pid and tid -1, as
	 * ENGINE_NONE: a new one still gets its process) */
	if ((fresh || pid != ENGINE_NONE) && (e->threads.v[t].proc == ENGINE_NONE ||
					      e->procs.v[e->threads.v[t].proc].pid != pid)) {
		uint32_t p = proc_get(e, pid, 0);
		if (p == ENGINE_NONE)
			return ENGINE_NONE;
		join_proc(e, t, p);
	}
	return t;
}

struct prog_key {
	const struct engine *e;
	uint32_t thread, function, dso, account, cpu;
};

static uint64_t prog_hash(const struct prog_key *k)
{
	return hash_mix(((uint64_t)k->thread << 32 | k->function) ^
			hash_mix((uint64_t)k->dso << 32 | k->account) ^ k->cpu);
}

static bool prog_eq(const void *ctx, uint32_t i)
{
	const struct prog_key *k = ctx;
	const struct eng_prog *p = &k->e->progs.v[i];
	return p->thread == k->thread && p->function == k->function && p->dso == k->dso &&
	       p->account == k->account && p->cpu == k->cpu;
}

/* Function ids up to this many are found through e->prog_owner: a
 * source's names are dense ids, and one that is not does without. */
#define PROG_OWNER_MOST (1u << 24)

/*
 * A thread's program is found by its function's id first (e->prog_owner
 * names the program made last of each function), then in its thread's
 * index, which holds the programs another took the place of there (the
 * same function run by another thread, or on another CPU or account):
 * a look-up and an insert in the index for each new program were half
 * of what a new stack cost.
 */
uint32_t eng_prog(struct engine *e, uint32_t thread, uint32_t function, uint32_t dso,
		  uint32_t account, uint32_t cpu)
{
	struct prog_key k = { e, thread, function, dso, account, e->c.by_cpu ? cpu : ENGINE_NONE };
	/* a thread's samples run in one function for a while: its last one
	 * first, before a lookup that misses the cache twice (the index,
	 * then the program it names) */
	uint32_t last = e->threads.v[thread].last_prog;
	if (last != ENGINE_NONE && prog_eq(&k, last))
		return last;
	uint32_t *owner = NULL;
	if (function < PROG_OWNER_MOST) {
		if (grow_array_to((void **)&e->prog_owner, &e->prog_owner_cap, function,
				  sizeof(*e->prog_owner), 1024))
			return ENGINE_NONE;
		owner = &e->prog_owner[function];
		if (*owner && prog_eq(&k, *owner - 1))
			return *owner - 1;
	}
	struct eng_thread *t = &e->threads.v[thread];	/* (taking a program
							 * moves no thread) */
	uint32_t i = t->prog_index.count ?
		     hindex__find(&t->prog_index, prog_hash(&k), prog_eq, &k) : ENGINE_NONE;
	if (i != ENGINE_NONE)
		return i;
	i = ALLOC(e->progs, next);
	if (i == ENGINE_NONE)
		return ENGINE_NONE;
	/* the program named before goes into its thread's index (a
	 * program let go has no thread) */
	const struct eng_prog *was = owner && *owner ? &e->progs.v[*owner - 1] : NULL;
	if (was && was->thread != ENGINE_NONE && was->function == function) {
		struct prog_key wk = { e, was->thread, was->function, was->dso, was->account,
				       was->cpu };
		if (hindex__insert(&e->threads.v[was->thread].prog_index, prog_hash(&wk),
				   *owner - 1))
			return ENGINE_NONE;	/* (i is lost to the pool, as
						 * an insert's failure always
						 * left it) */
	}
	if (owner)
		*owner = i + 1;
	else if (hindex__insert(&t->prog_index, prog_hash(&k), i))
		return ENGINE_NONE;
	e->progs.v[i] = (struct eng_prog){ .thread = thread, .function = function,
					   .dso = dso, .account = account, .cpu = k.cpu,
					   .nth = t->nprogs++, .next = ENGINE_NONE,
					   .window_next = ENGINE_NONE };
	/* appended: rounding leftovers go to the last of the busiest, as
	 * they always have */
	if (t->progs_tail == ENGINE_NONE)
		t->progs = i;
	else
		e->progs.v[t->progs_tail].next = i;
	t->progs_tail = i;
	return i;
}

uint32_t eng_unknown_prog(struct engine *e, uint32_t thread)
{
	struct eng_thread *t = &e->threads.v[thread];
	if (t->unknown_prog == ENGINE_NONE) {
		uint32_t p = eng_prog(e, thread, e->c.unknown_fn, NO_DSO, NO_DSO, ENGINE_NONE);
		e->threads.v[thread].unknown_prog = p;
	}
	return e->threads.v[thread].unknown_prog;
}

struct stack_key {
	const struct eng_stack *v;
	uint32_t stack;
	struct prog_key prog;
};

static bool stack_eq(const void *ctx, uint32_t i)
{
	const struct stack_key *k = ctx;
	const struct eng_stack *v = &k->v[i];
	return v->stack == k->stack && v->function == k->prog.function && v->dso == k->prog.dso &&
	       v->account == k->prog.account && v->cpu == k->prog.cpu;
}

/* The entry o names as the one for stack, where it is one: its
 * thread's place in its stack_v, or HINDEX_NONE. */
static uint32_t owner_at(const struct engine *e, const struct eng_stack_owner *o,
			 uint32_t thread, uint32_t stack)
{
	if (!o->at1 || o->thread >= e->threads.n)
		return HINDEX_NONE;
	const struct eng_thread *t = &e->threads.v[o->thread];
	uint32_t at = o->at1 - 1;
	return (thread == ENGINE_NONE || thread == o->thread) && t->used && at < t->nstacks &&
	       t->stack_v[at].stack == stack ? at : HINDEX_NONE;
}

static uint64_t stack_hash(uint32_t stack, uint32_t cpu)
{
	return hash_mix((uint64_t)stack << 32 ^ cpu);
}

/*
 * A thread's entry for a stack is found by the stack's id first
 * (e->stack_owner): a compile loop's threads are short, most of their
 * samples' stacks new to them, and a look-up and an insert in the
 * thread's index for each were a tenth of the engine's instructions.
 * The entry made last for each stack is named there; one whose place
 * another took (the same stack sampled by another thread, or on another
 * CPU or in another program) goes into its thread's index, which is
 * looked in only when it holds any.
 */
uint32_t eng_stack_sample(struct engine *e, uint32_t thread, uint32_t stack, uint32_t function,
			  uint32_t dso, uint32_t account, uint32_t cpu)
{
	if (grow_array_to((void **)&e->stack_owner, &e->stack_owner_cap, stack,
			  sizeof(*e->stack_owner), 1024))
		return ENGINE_NONE;
	struct eng_thread *t = &e->threads.v[thread];
	struct stack_key k = { t->stack_v, stack,
			       { e, thread, function, dso, account,
				 e->c.by_cpu ? cpu : ENGINE_NONE } };
	/* by its stack (and CPU, by CPU): a stack's samples are of one
	 * program (its leaf's) but where an account's ranges part a function */
	struct eng_stack_owner *o = &e->stack_owner[stack];
	uint32_t i = owner_at(e, o, thread, stack);
	if (i == HINDEX_NONE || !stack_eq(&k, i))
		i = t->stack_index.count ?
		    hindex__find(&t->stack_index, stack_hash(stack, k.prog.cpu), stack_eq, &k) :
		    HINDEX_NONE;
	if (i == HINDEX_NONE) {
		uint32_t p = eng_prog(e, thread, function, dso, account, cpu);
		if (p == ENGINE_NONE || grow_array((void **)&t->stack_v, &t->stacks_cap,
						   t->nstacks, sizeof(*t->stack_v), 16))
			return ENGINE_NONE;
		/* the entry named before (its thread's, or this one's for
		 * another CPU or program) is found by its thread's index now */
		uint32_t was = owner_at(e, o, ENGINE_NONE, stack);
		if (was != HINDEX_NONE) {
			struct eng_thread *ot = &e->threads.v[o->thread];
			if (hindex__insert(&ot->stack_index, stack_hash(stack, ot->stack_v[was].cpu),
					   was))
				return ENGINE_NONE;
		}
		i = t->nstacks++;
		t->stack_v[i] = (struct eng_stack){
			.stack = stack, .leaf = p, .function = function, .dso = dso,
			.account = account, .cpu = k.prog.cpu };
		*o = (struct eng_stack_owner){ thread, i + 1 };
	}
	t->stack_v[i].samples++;
	return t->stack_v[i].leaf;
}

int eng_on_task(struct engine *e, const struct eng_event *ev)
{
	uint32_t t = eng_thread(e, ev->tid, ev->pid);
	if (t == ENGINE_NONE)
		return -ENOMEM;
	struct eng_thread *th = &e->threads.v[t];
	if (ev->comm != ENGINE_NONE) {
		th->comm = ev->comm;
		if (ev->pid == ev->tid && th->proc != ENGINE_NONE)
			e->procs.v[th->proc].comm = ev->comm;
	}
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* A new process runs its parent's program, as its user, until it execs
 * (perf shows the parent's comm too). */
static int inherit(struct engine *e, uint32_t child, uint32_t parent)
{
	struct eng_proc *c = &e->procs.v[child];
	const struct eng_proc *p = &e->procs.v[parent];
	c->in_scope |= p->in_scope;
	c->uid = p->uid;
	c->comm = p->comm;
	c->cgroup = p->cgroup;
	c->command = dup_or_null(p->command);
	c->command_inherited = p->command != NULL;
	c->executable = dup_or_null(p->executable);
	return (p->command && !c->command) || (p->executable && !c->executable) ?
	       -ENOMEM : 0;
}

/* The kernel gave tid (and, for a process, pid) again: what held it
 * before is gone, though stints of it may still wait. */
static int reused(struct engine *e, const struct eng_event *ev)
{
	uint32_t t = eng_thread_find(e, ev->tid);
	if (t != ENGINE_NONE) {
		e->threads.v[t].exited = e->threads.v[t].done = true;
		detach_thread(e, t);
		int err = eng_maybe_gone(e, t);
		if (err)
			return err;
	}
	uint32_t p = ev->pid == ev->tid ? proc_find(e, ev->pid) : ENGINE_NONE;
	if (p != ENGINE_NONE) {
		e->procs.v[p].exited = true;
		detach_proc(e, p);
		if (!e->procs.v[p].nthreads)
			proc_release(e, p);
	}
	return 0;
}

int eng_on_fork(struct engine *e, const struct eng_event *ev)
{
	int err = reused(e, ev);
	if (err)
		return err;
	bool process = ev->pid == ev->tid;
	uint32_t parent = ev->ppid != ev->pid || process ? proc_find(e, ev->ppid) : ENGINE_NONE;
	uint32_t p = proc_get(e, ev->pid, process ? ev->time : 0);
	if (p == ENGINE_NONE)
		return -ENOMEM;
	if (process && parent != ENGINE_NONE && parent != p) {
		err = inherit(e, p, parent);
		if (err)
			return err;
	}
	uint32_t t = eng_thread(e, ev->tid, ev->pid);
	if (t == ENGINE_NONE)
		return -ENOMEM;
	e->threads.v[t].start_ns = ev->time;
	/* its name and cgroup are its parent thread's until it says otherwise */
	uint32_t pt = eng_thread_find(e, ev->ptid);
	if (pt != ENGINE_NONE) {
		e->threads.v[t].comm = e->threads.v[pt].comm;
		e->threads.v[t].cgroup = e->threads.v[pt].cgroup;
	}
	return 0;
}

/* A process's cgroup (tid 0: what /proc said at the start or an exec), or
 * a thread's (what its samples carried): a thread's own wins. */
int eng_on_cgroup(struct engine *e, const struct eng_event *ev)
{
	if (!ev->tid) {
		uint32_t p = proc_get(e, ev->pid, 0);
		if (p == ENGINE_NONE)
			return -ENOMEM;
		e->procs.v[p].cgroup = ev->cgroup;
		return 0;
	}
	uint32_t t = eng_thread(e, ev->tid, ev->pid);
	if (t == ENGINE_NONE)
		return -ENOMEM;
	e->threads.v[t].cgroup = ev->cgroup;
	return 0;
}

uint32_t engine__cgroup(const struct engine *e, const struct eng_thread *t)
{
	if (t->cgroup != ENGINE_NONE || t->proc == ENGINE_NONE)
		return t->cgroup;
	return e->procs.v[t->proc].cgroup;
}

int eng_on_comm(struct engine *e, const struct eng_event *ev)
{
	uint32_t t = eng_thread(e, ev->tid, ev->pid);
	if (t == ENGINE_NONE)
		return -ENOMEM;
	struct eng_thread *th = &e->threads.v[t];
	th->comm = ev->comm;
	if (th->proc == ENGINE_NONE)
		return 0;
	struct eng_proc *p = &e->procs.v[th->proc];
	if (ev->pid == ev->tid)
		p->comm = ev->comm;
	/* an exec: the parent's command line no longer says what it runs */
	if ((ev->flags & EF_EXEC) && p->command_inherited) {
		free(p->command);
		p->command = NULL;
		p->command_inherited = false;
	}
	return 0;
}

int eng_on_exit(struct engine *e, const struct eng_event *ev)
{
	uint32_t t = eng_thread_find(e, ev->tid);
	if (t == ENGINE_NONE)
		return 0;	/* never seen doing anything */
	struct eng_thread *th = &e->threads.v[t];
	if (th->exited)
		return 0;
	th->exited = true;
	th->exit_ns = ev->time;
	if (ev->pid == ev->tid && th->proc != ENGINE_NONE)
		e->procs.v[th->proc].exited = true;
	/* done at its last switch out, or when the grace has passed */
	if (e->exiting_len == e->exiting_cap) {
		uint32_t cap = e->exiting_cap ? 2 * e->exiting_cap : 256;
		struct eng_exiting *v = malloc((size_t)cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (uint32_t i = 0; i < e->exiting_len; i++)
			v[i] = e->exiting[(e->exiting_head + i) % e->exiting_cap];
		free(e->exiting);
		e->exiting = v;
		e->exiting_cap = cap;
		e->exiting_head = 0;
	}
	e->exiting[(e->exiting_head + e->exiting_len++) % e->exiting_cap] =
		(struct eng_exiting){ t, ev->tid, ev->time };
	return 0;
}

/* Threads whose exit is ENGINE_EXIT_GRACE_NS behind what was processed are
 * done, whether or not their last switch out was seen. */
int eng_exits_due(struct engine *e)
{
	while (e->exiting_len) {
		const struct eng_exiting *x = &e->exiting[e->exiting_head];
		uint64_t grace = e->c.exit_grace_ns ? e->c.exit_grace_ns : ENGINE_EXIT_GRACE_NS;
		if (x->exit_ns + grace > e->processed)
			return 0;
		struct eng_thread *th = &e->threads.v[x->thread];
		bool same = th->used && th->tid == x->tid && th->exited &&
			    th->exit_ns == x->exit_ns;
		uint32_t t = x->thread;
		e->exiting_head = (e->exiting_head + 1) % e->exiting_cap;
		e->exiting_len--;
		if (same && !th->done) {
			th->done = true;
			int err = eng_maybe_gone(e, t);
			if (err)
				return err;
		}
	}
	return 0;
}

int eng_on_proc(struct engine *e, struct eng_event *ev)
{
	uint32_t p = proc_get(e, ev->pid, 0);
	if (p == ENGINE_NONE)
		return -ENOMEM;
	struct eng_proc *pr = &e->procs.v[p];
	if (ev->text) {
		free(pr->command);
		pr->command = ev->text;
		pr->command_inherited = false;
		ev->text = NULL;
	}
	if (ev->exe) {
		free(pr->executable);
		pr->executable = ev->exe;
		ev->exe = NULL;
	}
	if (ev->uid >= 0)
		pr->uid = ev->uid;
	return 0;
}

/* A thread's figures, function by function: its runtime split by samples,
 * the rounding leftover to the last of its busiest functions. */
static int hand_out_progs(struct engine *e, const struct engine_sink *sink,
			  const struct eng_thread *t, bool final)
{
	uint64_t given = 0, best = 0;
	uint32_t busiest = ENGINE_NONE;
	for (uint32_t p = t->progs; p != ENGINE_NONE; p = e->progs.v[p].next) {
		const struct eng_prog *pr = &e->progs.v[p];
		given += t->samples ? share_u64(t->cpu_ns, pr->samples, t->samples) :
			 p == t->unknown_prog ? t->cpu_ns : 0;
		if (busiest == ENGINE_NONE || pr->samples >= best) {
			busiest = p;
			best = pr->samples;
		}
	}
	for (uint32_t p = t->progs; p != ENGINE_NONE; p = e->progs.v[p].next) {
		const struct eng_prog *pr = &e->progs.v[p];
		struct eng_figures f = {
			.function = pr->function, .dso = pr->dso, .account = pr->account,
			.cpu = pr->cpu, .samples = pr->samples,
			.steal_samples = pr->steal_samples, .steal_ns = pr->steal_ns,
			.run_ns = t->samples ? share_u64(t->cpu_ns, pr->samples, t->samples) :
				  p == t->unknown_prog ? t->cpu_ns : 0,
		};
		if (p == busiest)
			f.run_ns += t->cpu_ns - given;
		if (!f.run_ns && !f.steal_ns && !f.samples && !f.steal_samples)
			continue;
		int err = sink->program ? sink->program(sink->ctx, e, t, &f, final) : 0;
		if (err)
			return err;
	}
	return 0;
}

/* Time and steal no sample placed (a program without samples), as a
 * stack of its own function: in a profile, every nanosecond is somewhere. */
static int unsampled_stacks(struct engine *e, const struct engine_sink *sink,
			    const struct eng_thread *t)
{
	for (uint32_t p = t->progs; p != ENGINE_NONE; p = e->progs.v[p].next) {
		const struct eng_prog *pr = &e->progs.v[p];
		uint64_t run = !t->samples && p == t->unknown_prog ? t->cpu_ns : 0;
		if (pr->samples || (!run && !pr->steal_ns))
			continue;
		struct eng_stack_figures f = {
			.stack = ENGINE_NONE, .account = pr->account, .function = pr->function,
			.dso = pr->dso, .cpu_ns = run, .steal_ns = pr->steal_ns,
		};
		int err = sink->stack(sink->ctx, e, t, &f);
		if (err)
			return err;
	}
	return 0;
}

static int hand_out_stacks(struct engine *e, const struct engine_sink *sink,
			   const struct eng_thread *t)
{
	int u = unsampled_stacks(e, sink, t);
	if (u)
		return u;
	/* the newest first, as they always came */
	for (uint32_t s = t->nstacks; s-- > 0;) {
		const struct eng_stack *st = &t->stack_v[s];
		const struct eng_prog *leaf = &e->progs.v[st->leaf];
		struct eng_stack_figures f = {
			.stack = st->stack, .account = leaf->account, .samples = st->samples,
			.cpu_ns = share_u64(t->cpu_ns, st->samples, t->samples),
			.steal_ns = share_u64(leaf->steal_ns, st->samples, leaf->samples),
		};
		int err = sink->stack(sink->ctx, e, t, &f);
		if (err)
			return err;
	}
	return 0;
}

int eng_hand_out(struct engine *e, const struct engine_sink *sink, uint32_t thread,
		 bool final)
{
	struct eng_thread *t = &e->threads.v[thread];
	/* a thread that ran and was never sampled: one program of its own */
	if (t->cpu_ns && !t->samples && eng_unknown_prog(e, thread) == ENGINE_NONE)
		return -ENOMEM;
	t = &e->threads.v[thread];
	if (t->proc == ENGINE_NONE) {
		uint32_t p = proc_get(e, t->tid, 0);
		if (p == ENGINE_NONE)
			return -ENOMEM;
		join_proc(e, thread, p);
	}
	int err = sink->thread_begin ? sink->thread_begin(sink->ctx, e, t) : 0;
	if (!err)
		err = hand_out_progs(e, sink, t, final);
	if (!err && sink->stack)
		err = hand_out_stacks(e, sink, t);
	if (!err && final && sink->thread_gone)
		err = sink->thread_gone(sink->ctx, e, t);
	return err;
}

/* Frees a thread handed out for the last time, and its process when it
 * was the last of it. */
static void thread_release(struct engine *e, uint32_t thread)
{
	struct eng_thread *t = &e->threads.v[thread];
	for (uint32_t p = t->progs; p != ENGINE_NONE;) {
		uint32_t next = e->progs.v[p].next;
		e->progs.v[p].thread = ENGINE_NONE;	/* let go: no prog_owner's */
		FREE(e->progs, next, p);
		p = next;
	}
	free(t->stack_v);
	hindex__release(&t->prog_index);
	hindex__release(&t->stack_index);
	uint32_t proc = t->proc;
	detach_thread(e, thread);
	*t = (struct eng_thread){ 0 };
	FREE(e->threads, hnext, thread);
	e->st.threads_live--;
	e->st.threads_gone++;
	if (proc != ENGINE_NONE) {
		struct eng_proc *p = &e->procs.v[proc];
		p->nthreads--;
		if (!p->nthreads && (p->exited || !p->attached || e->finished))
			proc_release(e, proc);
	}
}

/* A thread's last figures, to every sink in turn (each a consumer of its
 * own: the order among them changes nothing). */
static int hand_out_final(struct engine *e, uint32_t thread)
{
	int err = 0;
	for (uint32_t i = 0; i < e->nsinks && !err; i++)
		err = eng_hand_out(e, &e->sinks[i], thread, true);
	return err;
}

int eng_maybe_gone(struct engine *e, uint32_t thread)
{
	struct eng_thread *t = &e->threads.v[thread];
	if (!t->done || t->refs || t->oncpu != ENGINE_NONE || e->c.keep_all)
		return 0;
	int err = hand_out_final(e, thread);
	if (!err)
		thread_release(e, thread);
	return err;
}

int eng_hand_out_all(struct engine *e)
{
	for (uint32_t i = 0; i < e->threads.n; i++) {
		if (!e->threads.v[i].used)
			continue;
		int err = hand_out_final(e, i);
		if (err)
			return err;
		thread_release(e, i);
	}
	for (uint32_t i = 0; i < e->procs.n; i++)
		if (e->procs.v[i].used)
			proc_release(e, i);
	return 0;
}

int engine__walk(struct engine *e, const struct engine_sink *sink)
{
	for (uint32_t i = 0; i < e->threads.n; i++) {
		if (!e->threads.v[i].used)
			continue;
		int err = eng_hand_out(e, sink, i, false);
		if (err)
			return err;
	}
	return 0;
}

int engine__each_thread(const struct engine *e,
			int (*fn)(void *ctx, const struct eng_proc *p, const struct eng_thread *t),
			void *ctx)
{
	for (uint32_t i = 0; i < e->threads.n; i++) {
		const struct eng_thread *t = &e->threads.v[i];
		if (!t->used || !t->attached || t->exited)
			continue;
		int err = fn(ctx, engine__proc(e, t->proc), t);
		if (err)
			return err;
	}
	return 0;
}

void engine__each_name(const struct engine *e, void (*fn)(void *ctx, uint32_t id), void *ctx)
{
	for (uint32_t i = 0; i < e->threads.n; i++) {
		const struct eng_thread *t = &e->threads.v[i];
		if (!t->used)
			continue;
		if (t->comm != ENGINE_NONE)
			fn(ctx, t->comm);
		if (t->cgroup != ENGINE_NONE)
			fn(ctx, t->cgroup);
	}
	for (uint32_t i = 0; i < e->procs.n; i++) {
		const struct eng_proc *p = &e->procs.v[i];
		if (!p->used)
			continue;
		if (p->comm != ENGINE_NONE)
			fn(ctx, p->comm);
		if (p->cgroup != ENGINE_NONE)
			fn(ctx, p->cgroup);
	}
}

const struct eng_proc *engine__proc(const struct engine *e, uint32_t index)
{
	return index < e->procs.n && e->procs.v[index].used ? &e->procs.v[index] : NULL;
}

const struct eng_proc *engine__find_proc(const struct engine *e, uint32_t pid)
{
	uint32_t i = proc_find(e, pid);
	return i == ENGINE_NONE ? NULL : &e->procs.v[i];
}

int engine__scope(struct engine *e, uint32_t pid)
{
	uint32_t p = proc_get(e, pid, 0);
	if (p == ENGINE_NONE)
		return -ENOMEM;
	e->procs.v[p].in_scope = true;
	return 0;
}

void eng_tasks_release(struct engine *e)
{
	for (uint32_t i = 0; i < e->procs.n; i++) {
		free(e->procs.v[i].command);
		free(e->procs.v[i].executable);
	}
	for (uint32_t i = 0; i < e->threads.n; i++) {
		hindex__release(&e->threads.v[i].prog_index);
		hindex__release(&e->threads.v[i].stack_index);
		free(e->threads.v[i].stack_v);
	}
	free(e->procs.v);
	free(e->threads.v);
	free(e->progs.v);
	free(e->exiting);
	hindex__release(&e->proc_index);
	hindex__release(&e->thread_index);
	free(e->stack_owner);
	free(e->prog_owner);
}
