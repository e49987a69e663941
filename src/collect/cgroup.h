/*
 * cgroup: which control group a process is in, and what the group's own
 * counters say of its CPU (docs/cgroups.md).
 *
 * A cgroup is named by its path in the unified (v2) hierarchy, as the
 * "0::" line of /proc/PID/cgroup shows it, wherever there is one: on pure
 * v2 hosts (most production ones) and on hybrid hosts (v1 controllers,
 * and a v2 mount without them, as systemd sets up) alike; the kernel's
 * PERF_SAMPLE_CGROUP ids are of that hierarchy too. A host with v1 alone
 * names it by its cpu controller's path.
 *
 * Counters: usage from v2 cpu.stat usage_usec (present whether or not the
 * cpu controller is on), else v1 cpuacct.usage; throttling from v2
 * cpu.stat throttled_usec and nr_throttled (where the cpu controller is
 * on), else v1 cpu.stat throttled_time (ns) and nr_throttled, at the same
 * path in the cpu hierarchy (systemd and container runtimes mirror the
 * paths across hierarchies).
 */
#ifndef CPULEDGER_COLLECT_CGROUP_H
#define CPULEDGER_COLLECT_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/cgstats.h"

/* The mount points of the hierarchies cpuledger reads ("" when absent). */
struct cgroup_fs {
	char v2[512];		/* cgroup2 */
	char cpu[512];		/* v1 with the cpu controller */
	char cpuacct[512];	/* v1 with cpuacct */
};

/* From root/proc/self/mountinfo. 0, or -ENOENT when there is no cgroup
 * mount at all (the struct is then empty). */
int cgroup_fs__find(struct cgroup_fs *fs, const char *root);

/* Process pid's cgroup path into path: 0, or -errno (gone: -ENOENT). */
int cgroup_of_pid(const char *root, uint32_t pid, char *path, size_t size);

/* The cgroup named in /proc/PID/cgroup text: v2's "0::" line, else the
 * v1 cpu controller's. 0 or -ENOENT. */
int cgroup_parse_proc(const char *text, char *path, size_t size);

/* The counters of the cgroup at path now: 0, or -ENOENT when the group is
 * gone (or no hierarchy holds it). */
int cgroup_counters__read(const struct cgroup_fs *fs, const char *path,
			  struct cg_counters *c);

/* Calls fn for each cgroup of the v2 hierarchy with its id (the
 * directory's inode number: what PERF_SAMPLE_CGROUP carries) and path
 * ("/" for the root). Stops at fn's error. 0 when there is no v2 mount. */
int cgroup_walk(const struct cgroup_fs *fs,
		int (*fn)(void *ctx, uint64_t id, const char *path), void *ctx);

#endif
