/*
 * sched_types: the few kernel structures the BPF programs read, declared
 * here with preserve_access_index instead of a vmlinux.h dumped from the
 * build machine's kernel. Why: the build then needs no /sys/kernel/btf
 * (containers, package builders, CI without BTF) and gives the same
 * object everywhere; libbpf relocates each field to its offset in the
 * running kernel's BTF at load (CO-RE), so only the names matter here,
 * not the layout, and a field some kernel lacks is asked for with
 * bpf_core_field_exists() before it is read.
 */
#ifndef CPULEDGER_BPF_SCHED_TYPES_H
#define CPULEDGER_BPF_SCHED_TYPES_H

#include <linux/types.h>

struct cfs_rq;
struct linux_binprm;

struct sched_entity {
	__u64 sum_exec_runtime;
	struct cfs_rq *cfs_rq;
} __attribute__((preserve_access_index));

/* CONFIG_SCHED_INFO (schedstats or delay accounting): what
 * /proc/PID/schedstat's second field prints. */
struct sched_info {
	unsigned long long run_delay;
} __attribute__((preserve_access_index));

struct rq {
	int cpu;
	__u64 clock;	/* updated at every __schedule(), before the switch */
} __attribute__((preserve_access_index));

/* CONFIG_FAIR_GROUP_SCHED: each CPU's queue of a group knows its rq. */
struct cfs_rq {
	struct rq *rq;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	unsigned int __state;
	char comm[16];
	__u64 start_time;	/* its fork's CLOCK_MONOTONIC ns */
	int exit_state;		/* a zombie or dead task's: not 0 */
	struct task_struct *group_leader;	/* its process's leader */
	struct sched_entity se;
	struct sched_info sched_info;
} __attribute__((preserve_access_index));

/* Before 5.14 the state was a long named state. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

#endif
