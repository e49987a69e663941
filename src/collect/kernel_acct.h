/*
 * kernel_acct: what this kernel's scheduler clock leaves out of a task's
 * runtime (steal, IRQ time), read once at the start of a recording, so
 * the engine knows where steal is to be found (docs/record.md, "What
 * each kernel gives").
 *
 * Sources: the kernel's configuration (/boot/config-RELEASE or
 * /proc/config.gz); where neither is there, its BTF
 * (/sys/kernel/btf/vmlinux, read with libbpf: struct rq has
 * prev_steal_time_rq only with PARAVIRT_TIME_ACCOUNTING, prev_irq_time
 * only with IRQ_TIME_ACCOUNTING), which says the same but takes some 40 MB
 * to parse; then the boot command line, which turns either off
 * (no-steal-acc; tsc=noirqtime). Whether the host gives a steal clock at
 * all: /proc/stat's steal since boot.
 */
#ifndef CPULEDGER_COLLECT_KERNEL_ACCT_H
#define CPULEDGER_COLLECT_KERNEL_ACCT_H

#include <stdbool.h>

#include "../core/engine.h"

/* A yes/no a source may not know: 1 yes, 0 no, -1 not known. */
struct kernel_config {
	int paravirt;		/* PARAVIRT_TIME_ACCOUNTING */
	int irq;		/* IRQ_TIME_ACCOUNTING */
	int kvm_steal_clock;	/* the steal_time variable */
};

struct kernel_acct {
	enum steal_accounting accounting;	/* ACCT_JUDGE: not known */
	char source[96];	/* how it was known: "btf", "config", ... */
	/* 1: the kernel has counted steal since boot (a steal clock); -1:
	 * none since boot (no steal clock: Hyper-V, bare metal, some
	 * hypervisors that do not give it); 0 not known */
	int steal_clock;
};

/* What BTF and the configuration say, and the command line (may be
 * NULL): the decision alone, for tests. */
void kernel_acct__decide(struct kernel_acct *k, const struct kernel_config *btf,
			 const struct kernel_config *config, const char *cmdline,
			 long long steal_since_boot);

/* Reads them from the running kernel. */
void kernel_acct__read(struct kernel_acct *k);

#endif
