/*
 * regions: each process's code regions (seed 000's segments), so that a
 * sampled instruction pointer resolves to a region by a search in its
 * process's table, never by matching strings.
 *
 * A region is a mapping of a file (the executable, a shared library),
 * [vdso], anonymous or JIT memory, from PERF_RECORD_MMAP2 records and from
 * /proc/PID/maps for processes already running. A fork copies the
 * parent's table (the child shares its address space layout); an exec
 * empties it.
 *
 * Each change carries its time (0: unknown, as for a maps snapshot), and
 * changes may come out of order: perf's rings are merged by time a read
 * at a time, but a record written (or made visible: the kernel moves a
 * ring's head when its outermost writer ends) while the heads were taken
 * comes in the next read, and a recording of another reader's may not be
 * merged at all. So a process that moves between CPUs while it execs can
 * have its new mappings read before the exec. An exec therefore removes only
 * what was mapped before it, a mapping older than an exec already seen is
 * the old program's and is dropped, and a fork seen after its child's exec
 * copies nothing. Kernel addresses resolve to the region "[kernel.kallsyms]"
 * whatever the process. A region's dso is a string id; what a sample needs
 * to find its symbol later is (dso, offset in the file).
 */
#ifndef CPULEDGER_CORE_REGIONS_H
#define CPULEDGER_CORE_REGIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindex.h"
#include "strtab.h"

struct region {
	uint64_t start, end;	/* [start, end) in the process */
	uint64_t pgoff;		/* file offset mapped at start */
	uint64_t time;		/* when mapped (0: unknown) */
	uint32_t dso;		/* string id of its path or [name] */
};

struct proc_regions {
	uint32_t pid;
	struct region *r;	/* sorted by start, not overlapping */
	uint32_t n, cap;
	uint32_t exe;		/* dso of its main executable, or UINT32_MAX */
	uint64_t exe_time;	/* when exe was mapped */
	uint64_t exec_time;	/* its latest exec seen (0: none) */
};

struct regions {
	struct strtab *strings;	/* borrowed: dso names live there */
	struct proc_regions *procs;
	uint32_t nprocs, procs_cap;
	struct hindex index;
	uint32_t kernel_dso;	/* "[kernel.kallsyms]" */
};

/* 0 or -ENOMEM. strings must outlive the table. */
int regions__init(struct regions *t, struct strtab *strings);
void regions__release(struct regions *t);

/* Maps [start, start+len) of pid to path at file offset pgoff at time;
 * what it overlaps is replaced, as mmap(2) does. 0 or -ENOMEM. */
int regions__map(struct regions *t, uint32_t pid, uint64_t start,
		 uint64_t len, uint64_t pgoff, const char *path, size_t plen,
		 uint64_t time);

/* A fork at time: child gets a copy of parent's table, under what the
 * child mapped after it. 0 or -ENOMEM. */
int regions__fork(struct regions *t, uint32_t child, uint32_t parent,
		  uint64_t time);

/* An exec at time: what pid mapped before it goes (its new mappings
 * follow as MMAP2). 0 or -ENOMEM. */
int regions__exec(struct regions *t, uint32_t pid, uint64_t time);

/* pid has gone: its regions are freed. */
void regions__forget(struct regions *t, uint32_t pid);

/*
 * Where ip of pid is: the region's dso, and the offset in its file (for
 * the kernel: the address itself). False when no region holds it. kernel
 * says the sample was taken in kernel mode.
 */
bool regions__find(const struct regions *t, uint32_t pid, uint64_t ip,
		   bool kernel, uint32_t *dso, uint64_t *offset);

/* The dso of pid's main executable: the first file mapped after its exec
 * (the kernel maps the program before its interpreter), or the lowest in
 * a maps snapshot. UINT32_MAX when not known. */
uint32_t regions__exe(const struct regions *t, uint32_t pid);

/*
 * Parses one line of /proc/PID/maps into regions__map(); lines that map
 * nothing executable are skipped (a sample's IP lies in code). 0, -EINVAL
 * for a malformed line, -ENOMEM.
 */
int regions__maps_line(struct regions *t, uint32_t pid, const char *line,
		       size_t len);

#endif
