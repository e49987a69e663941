// SPDX-License-Identifier: GPL-2.0
/*
 * sched_clock.bpf: the scheduler's own clocks read at every context
 * switch, kept per thread and per CPU in maps that user space reads when
 * asked (sched_clock.c loads this; the Makefile compiles it with clang
 * -target bpf and embeds it as a bpftool skeleton).
 *
 * Per thread: wall time on a CPU; the KVM steal clock's growth in its
 * stints (per-CPU steal_time, read version / steal / version as the
 * guest's kvm_steal_clock() does); the kernel's own run time
 * (se.sum_exec_runtime) and run-queue wait (sched_info.run_delay) read
 * at its switches, so both equal /proc/PID/schedstat's growth exactly;
 * where the kernel has no sched_info, the wait timed from wakeup, or
 * switch out while still runnable, to switch in. Per CPU: idle time and
 * the steal in it. Nothing is done per event but a few loads and adds:
 * the cost does not grow with what user space reads. The task pointers
 * of tp_btf programs are the kernel's own (BTF-typed): their fields are
 * read by direct loads, relocated by CO-RE, not by helper calls.
 *
 * GPL because bpf_per_cpu_ptr and the tracing programs need it.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sched_types.h"
#include "sched_clock_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile bool want_stints = false;	/* stints to the ring buffer */
const volatile bool wait_from_events = false;	/* no sched_info: time it */
/* Where a CPU's steal_time is. Per-CPU variables sit at the same offset
 * from each CPU's base that they have in .data..percpu, by the kernel's
 * BTF (its DATASEC): the base is found once per CPU from its run queue
 * (runqueues, at rq_off) and checked by cpu_number there (at
 * cpu_number_off), then steal_time is at base + steal_off. 0: no steal clock to read. Why not `extern struct
 * kvm_steal_time steal_time __ksym` and bpf_this_cpu_ptr: the verifier
 * finds a typed ksym's address in kallsyms, which holds no data symbols
 * where the kernel is built without KALLSYMS_ALL (as here): the load
 * fails. */
const volatile __u64 steal_off = 0;
const volatile __u64 rq_off = 0;
const volatile __u64 cpu_number_off = 0;
/* The same way: the steal the kernel accounts at each tick for /proc/stat
 * (kernel_cpustat's cpustat[CPUTIME_STEAL], from whatever steal clock the
 * hypervisor gives: Xen's, VMware's, Hyper-V's...), and the IRQ time of
 * the CPU where the kernel accounts it (cpu_irqtime's total,
 * IRQ_TIME_ACCOUNTING). 0: not in this kernel. */
const volatile __u64 cpustat_off = 0;
const volatile __u64 irq_off = 0;
/* (tests: CPULEDGER_BPF_LATE_PID) the threads of this process get no
 * entry from the programs, as though their first switch out had not come
 * yet: only a read makes theirs (sched_clock.c, adopt_running). 0 in use:
 * the verifier then drops the test, so no switch pays for it. */
const volatile __u32 late_pid = 0;
/* (tests: CPULEDGER_BPF_HIDE_PID) the switches that give a CPU to this
 * process's threads are not seen, as a kernel that does not report some
 * (on this project's machines a guest agent's thread handing the CPU back
 * to a spinner): its threads run with their switch in unseen
 * (sched_flight.h). 0 in use: the verifier drops the test. */
const volatile __u32 hide_pid = 0;

struct sc_counters counters = {};
/* Set by the loader once it knows which steal is written (SC_STEAL_*):
 * until then (and for ever where none is) no switch reads one. */
__u32 steal_mode = SC_STEAL_NONE;
/* Set by the loader once it has seen the IRQ time grow. */
bool irq_live = false;
/* Set by the sampler's first run, which the loader makes once the
 * programs are attached (the kernel's CLOCK_MONOTONIC, as a task's
 * start_time, whatever the loader's time namespace): a task born since
 * ran only while they were attached, so its entry counts from its birth
 * (its run time and wait start at 0 at its fork) even where its switch in
 * was not seen. 0: not yet. */
__u64 attached_ns = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* the loader's --max-threads */
	__type(key, __u32);
	__type(value, struct sc_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* the loader sets the CPUs' count */
	__type(key, __u32);
	__type(value, struct sc_cpu);
} cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* the loader's size when stints wanted */
} stints SEC(".maps");

#define TASK_RUNNING 0
#define TASK_DEAD 0x80

/* struct kvm_steal_time's layout is the hypervisor's ABI
 * (arch/x86/include/uapi/asm/kvm_para.h), the same on every kernel. */
#define KVM_ST_STEAL 0
#define KVM_ST_VERSION 8

/* A CPU's steal clock: the version, even and unchanged around the read,
 * says the host was not writing it. Four tries, then the last value.
 * BPF has no fences: x86 keeps loads in order, so, as the guest's own
 * virt_rmb() there, a compiler barrier is all the order needed. */
#define compiler_barrier() asm volatile("" ::: "memory")

static __always_inline __u64 read_steal(__u64 addr, __u32 *version)
{
	__u32 v = 0, v2 = 0;
	__u64 s = 0;

	for (int i = 0; i < 4; i++) {
		bpf_probe_read_kernel(&v, sizeof(v), (void *)(addr + KVM_ST_VERSION));
		compiler_barrier();
		bpf_probe_read_kernel(&s, sizeof(s), (void *)(addr + KVM_ST_STEAL));
		compiler_barrier();
		bpf_probe_read_kernel(&v2, sizeof(v2), (void *)(addr + KVM_ST_VERSION));
		if (!(v & 1) && v == v2) {
			*version = v;
			return s;
		}
	}
	__sync_fetch_and_add(&counters.torn_reads, 1);
	*version = v;
	return s;
}

/* This CPU's per-CPU base, through a task about to run on it (its
 * sched_entity's cfs_rq is this CPU's, and knows its rq), checked twice:
 * the rq's own cpu, and the CPU's number the kernel keeps per CPU. 1:
 * not found. */
static __always_inline __u64 percpu_base(struct task_struct *t, __u32 cpu)
{
	__u64 base;
	int kept = -1;

	if (!bpf_core_field_exists(t->se.cfs_rq) ||
	    !bpf_core_field_exists(((struct cfs_rq *)0)->rq))
		return 1;
	struct cfs_rq *cfs = t->se.cfs_rq;
	struct rq *rq = cfs ? cfs->rq : NULL;
	if (!rq || rq->cpu != (int)cpu)
		return 0;	/* try again at the next switch */
	base = (__u64)rq - rq_off;
	if (bpf_probe_read_kernel(&kept, sizeof(kept), (void *)(base + cpu_number_off)) ||
	    kept != (int)cpu) {
		__sync_fetch_and_add(&counters.layout_bad, 1);
		return 1;
	}
	return base;
}

/* A u64 this CPU keeps at off from its base (its own: no other CPU
 * writes it, and a switch runs with interrupts off). */
static __always_inline __u64 read_own(__u64 base, __u64 off)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (void *)(base + off));
	return v;
}

/* The steal here by the mode the loader chose, *ok when read. The CPU's
 * base is found even before steal_mode is set: the loader's sampler
 * needs it to decide. */
static __always_inline __u64 steal_here(struct sc_cpu *c, struct task_struct *next, __u32 cpu,
					bool *ok)
{
	__u32 v;

	*ok = false;
	if (!steal_off && !cpustat_off && !irq_off)
		return 0;
	if (!c->base)
		c->base = percpu_base(next, cpu);
	if (c->base <= 1 || steal_mode == SC_STEAL_NONE)
		return 0;
	*ok = true;
	if (steal_mode == SC_STEAL_CPUSTAT)
		return read_own(c->base, cpustat_off);
	return read_steal(c->base + steal_off, &v);
}

/* The CPU's IRQ time, *ok when read (steal_here found the base). */
static __always_inline __u64 irq_here(struct sc_cpu *c, bool *ok)
{
	*ok = irq_live && c->base > 1;
	return *ok ? read_own(c->base, irq_off) : 0;
}

static __always_inline __u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return t->__state;
	struct task_struct___pre514 *o = (void *)t;
	return (__u32)BPF_CORE_READ(o, state);
}

static __always_inline __u64 run_delay(struct task_struct *t)
{
	if (bpf_core_field_exists(t->sched_info.run_delay))
		return t->sched_info.run_delay;
	return 0;
}

/* The entry of a live thread, made at its first sight with the kernel's
 * counters as they stood when its stint began (rt, delay). NULL when the
 * map is full (counted). An entry marked exited is a dead thread's whose
 * id a new one took before user space read it: its figures go (counted). */
static __always_inline struct sc_thread *thread_of(struct task_struct *t, __u32 tid,
						    __u32 flags, __u64 rt, __u64 delay, __u64 now)
{
	struct sc_thread *th = bpf_map_lookup_elem(&threads, &tid);
	if (th && !(th->flags & SC_EXITED))
		return th;
	if (th) {
		__sync_fetch_and_add(&counters.reused, 1);
		bpf_map_delete_elem(&threads, &tid);
	}
	struct sc_thread init = {};
	init.pid = t->tgid;
	if (late_pid && init.pid == late_pid)
		return NULL;
	init.flags = flags;
	init.rt_base = init.rt_last = rt;
	init.delay_base = init.delay_last = delay;
	init.born_ns = now;
	bpf_probe_read_kernel_str(init.comm, sizeof(init.comm), t->comm);
	if (bpf_map_update_elem(&threads, &tid, &init, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&threads, &tid)) {
		__sync_fetch_and_add(&counters.map_full, 1);
		return NULL;
	}
	return bpf_map_lookup_elem(&threads, &tid);
}

static __always_inline void emit_stint(__u32 tid, __u32 pid, __u32 cpu, __u32 flags,
				       __u64 start, __u64 end, __u64 steal, __u64 rt)
{
	struct sc_stint *s = bpf_ringbuf_reserve(&stints, sizeof(*s), 0);
	if (!s) {
		__sync_fetch_and_add(&counters.ring_lost, 1);
		return;
	}
	s->tid = tid;
	s->pid = pid;
	s->cpu = cpu;
	s->flags = flags;
	s->start_ns = start;
	s->end_ns = end;
	s->steal_ns = steal;
	s->runtime_ns = rt;
	bpf_ringbuf_submit(s, 0);
}

/* The clocks read at one switch. */
struct reading {
	__u64 now, steal, irq;
	bool steal_ok, irq_ok, rq_clock;
};

/*
 * Now, for a stint's wall time: the run queue's clock where this CPU's
 * is known, which __schedule() has just updated (sched_clock's ns, the
 * clock sum_exec_runtime is counted by), a load instead of a clock read:
 * on a KVM guest (kvm-clock) bpf_ktime_get_ns costs about as much as all
 * the rest of a switch here. Stints through the ring buffer and waits
 * timed from wakeups compare times across CPUs: they keep
 * CLOCK_MONOTONIC.
 */
static __always_inline __u64 now_here(const struct sc_cpu *c, bool *rq_clock)
{
	__u64 t = 0;

	*rq_clock = !want_stints && !wait_from_events && c->base > 1 &&
		    bpf_core_field_exists(((struct rq *)0)->clock);
	if (!*rq_clock)
		return bpf_ktime_get_ns();
	bpf_probe_read_kernel(&t, sizeof(t), (void *)(c->base + rq_off +
						       bpf_core_field_offset(struct rq, clock)));
	return t;
}

/* A thread other than its process's leader exec'd, taking the leader's
 * id tid from old: its entry under old is closed, and the dead leader's
 * under tid (not read yet, it is lost as any id taken again is: made
 * again for the thread, counted in reused); the CPU's switch in, where
 * it was the thread's, is under tid now, so that its switch out is
 * seen. */
static __always_inline void exec_closes(struct sc_cpu *c, __u32 old, __u32 tid)
{
	struct sc_thread *th = bpf_map_lookup_elem(&threads, &old);
	if (th)
		th->flags |= SC_EXITED;
	th = bpf_map_lookup_elem(&threads, &tid);
	if (th)
		th->flags |= SC_EXITED;
	if (c && c->tid_in == old)
		c->tid_in = tid;
}

/* The old leader of a process whose other thread exec'd, once the exec
 * made that thread the leader (fs/exec.c de_thread): the thread took the
 * leader's id and start time, and the old leader's group_leader points
 * at it, last. No other task has a leader other than itself born at its
 * own start time (a thread is made after its leader). A leader already
 * freed (a thread's leader is not held) reads as another start time, or
 * 0 (a BTF read that faults): false, as it should be. */
static __always_inline bool replaced_leader(struct task_struct *p)
{
	struct task_struct *g = p->group_leader;
	return g && g != p && g->start_time == p->start_time;
}

/* prev leaves the CPU: its stint's wall time, steal and IRQ time, its
 * counters. */
static __always_inline void switch_out(struct sc_cpu *c, __u32 cpu, struct task_struct *prev,
				       const struct reading *r)
{
	__u32 tid = prev->pid;
	__u64 now = r->now, steal = r->steal;
	/* The dead leader's last switch out is left alone, under whatever id
	 * it comes: the thread's old one since 5.8 (the two swap ids), its
	 * own before, which the thread took. It would count the leader's run
	 * time on the thread's entry. Preempted after it became a zombie, it
	 * can even have switched in under the id it leaves with. */
	if (prev->exit_state && replaced_leader(prev))
		return;
	/* The task switched in under another id: an exec by a thread other
	 * than the leader gave it the leader's id in its stint. That is its
	 * exec's, seen before sched_process_exec (which may come after a
	 * switch: the exec reads the program): done here, as on_exec does
	 * it. A thread whose exec failed after it took the leader's id dies
	 * under that id, the process's: its stint is counted so, and its
	 * entry ends. A zombie under another id is the dead leader caught
	 * while de_thread runs: its id swapped, its group_leader not yet. */
	__u32 exec_from = 0;
	if (tid && c->tid_in && c->tid_in != tid && c->task_in == (__u64)(unsigned long)prev) {
		if (prev->exit_state && tid != (__u32)prev->tgid)
			return;
		exec_from = c->tid_in;
		exec_closes(c, exec_from, tid);
	}
	bool seen = (c->seen_in & SEEN_TIME) && c->tid_in == tid &&
		    !(c->seen_in & SEEN_RQ_CLOCK) == !r->rq_clock;
	bool steal_seen = seen && r->steal_ok && (c->seen_in & SEEN_STEAL);
	bool irq_seen = seen && r->irq_ok && (c->seen_in & SEEN_IRQ);

	if (tid == 0) {
		if (seen) {
			c->idle_ns += now - c->t_in;
			c->idle_steal_ns += steal_seen ? steal - c->steal_in : 0;
		}
		return;
	}
	__u64 rt = prev->se.sum_exec_runtime;
	/* its entry's base, where this switch makes it: its birth, else its
	 * switch in, else (neither seen) now (three calls: one with the bases
	 * chosen first has clang merge the loads from the map and the task,
	 * which the verifier refuses) */
	bool born = !exec_from && sc_born_since(attached_ns, prev->start_time);
	struct sc_thread *th = born ? thread_of(prev, tid, 0, 0, 0, now)
			       : seen ? thread_of(prev, tid, 0, c->rt_in, c->delay_in, now)
			       : thread_of(prev, tid, SC_PARTIAL, rt, run_delay(prev), now);
	if (!th)
		return;
	if (exec_from)
		th->exec_from = exec_from;
	__u32 state = task_state(prev);
	__u64 rt_before = th->rt_last;
	__u64 st = 0;
	if (!seen)
		__sync_fetch_and_add(&counters.unseen, 1);
	if (seen) {
		st = steal_seen ? steal - c->steal_in : 0;
		th->on_ns += now - c->t_in;
		th->rt_seen += rt - c->rt_in;
		th->steal_ns += st;
		th->irq_ns += irq_seen ? r->irq - c->irq_in : 0;
		th->stints++;
	}
	th->rt_last = rt;
	th->delay_last = run_delay(prev);
	if (state & TASK_DEAD) {
		th->flags |= SC_EXITED;
		bpf_probe_read_kernel_str(th->comm, sizeof(th->comm), prev->comm);
	}
	if (wait_from_events && state == TASK_RUNNING)
		th->wait_start = now;	/* preempted: it waits from now */
	/* A switch out whose switch in was not seen (some kernels do not
	 * report every switch: here, a guest agent's) still gives the run
	 * time since the last one: a record without a start, so that the
	 * records' run times add up to the thread's. */
	if (want_stints)
		emit_stint(tid, th->pid, cpu, state & TASK_DEAD ? SC_EXITED : 0,
			   seen ? c->t_in : 0, now, st, rt - rt_before);
}

/* next takes the CPU: the stint starts, with its counters as they stand
 * (its entry is made at its switch out: one map lookup a switch); a
 * timed wait ends. */
static __always_inline void switch_in(struct sc_cpu *c, struct task_struct *next,
				      const struct reading *r)
{
	__u32 tid = next->pid;
	__u64 now = r->now;

	c->tid_in = tid;
	c->task_in = (__u64)(unsigned long)next;
	c->t_in = now;
	c->steal_in = r->steal;
	c->irq_in = r->irq;
	c->seen_in = SEEN_TIME | (r->steal_ok ? SEEN_STEAL : 0) | (r->irq_ok ? SEEN_IRQ : 0) |
		     (r->rq_clock ? SEEN_RQ_CLOCK : 0);
	if (tid == 0)
		return;
	c->rt_in = next->se.sum_exec_runtime;
	c->delay_in = run_delay(next);
	if (!wait_from_events)
		return;
	struct sc_thread *th = thread_of(next, tid, 0, c->rt_in, c->delay_in, now);
	if (th && th->wait_start) {
		if (now > th->wait_start)
			th->wait_ns += now - th->wait_start;
		th->wait_start = 0;
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct sc_cpu *c = bpf_map_lookup_elem(&cpus, &cpu);
	if (!c || (hide_pid && next->tgid == hide_pid))
		return 0;
	struct reading r;

	r.steal = steal_here(c, next, cpu, &r.steal_ok);
	r.now = now_here(c, &r.rq_clock);
	r.irq = irq_here(c, &r.irq_ok);
	c->switches++;
	switch_out(c, cpu, prev, &r);
	switch_in(c, next, &r);
	return 0;
}

/* A thread's task freed (after its parent reaped it): its counters are
 * final, even where the kernel did not report its last switch. Only
 * threads already in the map: a thread never seen ran no stint here. */
SEC("tp_btf/sched_process_free")
int BPF_PROG(on_free, struct task_struct *p)
{
	__u32 tid = p->pid;
	/* a leader replaced by an exec: freed under the exec'ing thread's
	 * old id since 5.8 (that entry closed by the exec), before that
	 * under its own, which the thread took and runs under (the leader's
	 * counters would end the thread's entry) */
	if (replaced_leader(p))
		return 0;
	struct sc_thread *th = bpf_map_lookup_elem(&threads, &tid);
	/* an entry already exited has its final figures */
	if (!th || (th->flags & SC_EXITED))
		return 0;
	__u64 rt = p->se.sum_exec_runtime;
	if (want_stints && rt != th->rt_last)	/* a last switch not seen */
		emit_stint(tid, th->pid, bpf_get_smp_processor_id(), SC_EXITED, 0,
			   bpf_ktime_get_ns(), 0, rt - th->rt_last);
	th->rt_last = rt;
	th->delay_last = run_delay(p);
	th->flags |= SC_EXITED;
	return 0;
}

/*
 * An exec by a thread other than its process's leader: the thread takes
 * the leader's id (and its start_time) and runs on. Its entry under its
 * old id is closed, what it ran until its last switch out there; the
 * stint in progress goes under the new id, made here (the dead leader's
 * entry replaced, as any id taken again: counted in reused): from its
 * switch in where seen (the CPU's switch in renamed, so that its switch
 * out is seen), else from now. Without this its switch out under the new
 * id would make an entry counting from its birth, the leader's, and
 * count again all it ran before the exec. A switch out of the thread
 * between its taking the id and this (the exec reads the program) does
 * it first (switch_out), and this leaves it. (The old leader's task
 * ends under the thread's old id since 5.8, under its own before:
 * switch_out and on_free know it by replaced_leader and leave it.)
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, int old_pid, struct linux_binprm *bprm)
{
	__u32 tid = p->pid, old = (__u32)old_pid;
	if (old == tid)
		return 0;
	/* done at a switch out since its id changed (switch_out) */
	struct sc_thread *th = bpf_map_lookup_elem(&threads, &tid);
	if (th && th->exec_from == old && !(th->flags & SC_EXITED))
		return 0;
	__u32 cpu = bpf_get_smp_processor_id();
	struct sc_cpu *c = bpf_map_lookup_elem(&cpus, &cpu);
	bool seen = c && c->tid_in == old && (c->seen_in & SEEN_TIME);
	exec_closes(c, old, tid);
	__u64 now = bpf_ktime_get_ns();
	if (seen)
		thread_of(p, tid, 0, c->rt_in, c->delay_in, now);
	else
		thread_of(p, tid, SC_PARTIAL, p->se.sum_exec_runtime, run_delay(p), now);
	return 0;
}

/*
 * A thread named anew (its exec, prctl(PR_SET_NAME), a write to its comm
 * file): its entry takes the new name, as perf's COMM record gives it;
 * a read before its end showed the name its entry was made with. The
 * tracepoint runs before the name is copied in: it is read from the
 * argument. (An exec by a thread other than the leader names it under
 * the leader's id, the dead leader's entry: on_exec makes that one again
 * from the task, named by then.)
 */
SEC("tp_btf/task_rename")
int BPF_PROG(on_rename, struct task_struct *p, const char *comm)
{
	__u32 tid = p->pid;
	struct sc_thread *th = bpf_map_lookup_elem(&threads, &tid);
	if (th && !(th->flags & SC_EXITED))
		bpf_probe_read_kernel_str(th->comm, sizeof(th->comm), comm);
	return 0;
}

/* Wakeups, only where the wait is timed by events: it waits from now
 * (unless already waiting: a wakeup of a runnable thread). */
static __always_inline void woken(struct task_struct *p)
{
	__u32 tid = p->pid;
	if (tid == 0)
		return;
	__u64 now = bpf_ktime_get_ns();
	struct sc_thread *th = thread_of(p, tid, 0, p->se.sum_exec_runtime, run_delay(p), now);
	if (th && !th->wait_start)
		th->wait_start = now;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct *p)
{
	woken(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_wakeup_new, struct task_struct *p)
{
	woken(p);
	return 0;
}

/*
 * The sampler, run by the loader (BPF_PROG_TEST_RUN, once per CPU, the
 * CPU's number its first argument, the second 1 where it runs on that
 * CPU) at each read, never attached: the task running there, and the CPU's
 * steal clock, kernel_cpustat's steal and IRQ time now, at the base its
 * switches found (another CPU's: a value a tick old at worst, as
 * /proc/stat reads it).
 */
SEC("raw_tp")
int sample(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 cpu = (__u32)ctx->args[0];
	struct sc_cpu *c = bpf_map_lookup_elem(&cpus, &cpu);
	__u32 v;

	if (!c)
		return 0;
	/* run on that CPU (BPF_F_TEST_RUN_ON_CPU, from an interrupt there,
	 * or by the loader itself on its own): who runs there now, whose
	 * stint in progress the loader counts (sched_clock.c, in_flight) */
	__u64 id = (__u32)ctx->args[1] ? bpf_get_current_pid_tgid() : 0;
	c->curr_now = (__u32)id;
	c->curr_pid_now = (__u32)(id >> 32);
	struct task_struct *curr = (struct task_struct *)bpf_get_current_task();
	c->curr_start_now = id ? BPF_CORE_READ(curr, start_time) : 0;
	if (!attached_ns)
		attached_ns = bpf_ktime_get_ns();
	c->switches_now = c->switches;
	if (c->base <= 1)
		return 0;
	if (steal_off) {
		c->steal_now = read_steal(c->base + steal_off, &v);
		c->version_now = v;
	}
	if (cpustat_off)
		c->cpustat_now = read_own(c->base, cpustat_off);
	if (irq_off)
		c->irq_now = read_own(c->base, irq_off);
	return 0;
}
