/*
 * procfs: what a recording keeps from /proc and /sys. Every path is under
 * a root directory ("/" normally) so tests can point it at a captured tree.
 */
#ifndef CPULEDGER_COLLECT_PROCFS_H
#define CPULEDGER_COLLECT_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Reads root/rel into a new NUL-terminated buffer (*len bytes without the
 * NUL); NULL with errno set. The caller frees it.
 */
char *procfs_read(const char *root, const char *rel, size_t *len);

/* Calls fn for every task (pid, tid, comm) under root/proc; tasks that
 * vanish while it reads are skipped. Returns 0, -errno, or fn's error. */
int procfs_tasks(const char *root,
		 int (*fn)(void *ctx, pid_t pid, pid_t tid, const char *comm),
		 void *ctx);

/* root/proc/PID/cmdline with NULs as spaces, in buf; "" when the process
 * is gone or a kernel thread. Returns whether it was cut to fit. */
bool procfs_cmdline(const char *root, pid_t pid, char *buf, size_t size);

/* Task tid's schedstat: its run time (sum_exec_runtime, brought up to
 * date by the read) and run-queue wait so far. 0 or -errno, as below. */
int procfs_schedstat(const char *root, pid_t pid, pid_t tid, unsigned long long *run,
		     unsigned long long *delay);

/* Task tid's run-queue wait so far (root/proc/PID/task/TID/schedstat's
 * second field, run_delay) into *ns: 0, or -errno (-ENOENT gone; -ENODATA
 * no schedstat in this kernel). */
int procfs_run_delay(const char *root, pid_t pid, pid_t tid, unsigned long long *ns);

/* The same for this machine's /proc, in the shape of the read_wait hooks
 * the live consumers take (metrics, topview, the ledger's collector);
 * ctx is not used. */
int procfs_wait_hook(void *ctx, uint32_t pid, uint32_t tid, uint64_t *ns);

#endif
