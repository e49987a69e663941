/*
 * symbolizer: the function that holds an offset in a code region's file.
 * User code through elfutils' libdwfl (symbol tables, .gnu_debugdata,
 * separate debuginfo when installed), the kernel through /proc/kallsyms.
 * Each file is opened once and kept, so a lookup costs a search; files
 * with the same build-id (one library under two paths, in containers)
 * share one module.
 */
#ifndef CPULEDGER_SYMBOLS_SYMBOLIZER_H
#define CPULEDGER_SYMBOLS_SYMBOLIZER_H

#include <stddef.h>
#include <stdint.h>

struct symbolizer;

/* What a lookup found: a function as a range of file offsets (for the
 * kernel: of addresses). name is owned by the symbolizer. */
struct sym {
	const char *name;
	uint64_t start, end;
};

/* root is where files and /proc are read from ("/" normally). NULL with
 * errno ENOMEM. */
struct symbolizer *symbolizer__new(const char *root);
void symbolizer__free(struct symbolizer *s);
/* Reads the kernel's symbols now, while /proc/kallsyms still shows their
 * addresses (before a recorder gives up root). */
void symbolizer__read_kernel(struct symbolizer *s);

/*
 * The function of dso (a path, or "[kernel.kallsyms]") at offset. Returns
 * 0, or -ENOENT when the file, its symbols or the symbol is not found.
 */
int symbolizer__lookup(struct symbolizer *s, const char *dso, uint64_t offset,
		       struct sym *out);

/* The function of process pid at addr in code a JIT made, from its
 * /tmp/perf-PID.map (start and end are addresses); 0 or -ENOENT. */
int symbolizer__jit(struct symbolizer *s, uint32_t pid, uint64_t addr, struct sym *out);
/* Bounds on what is kept (0: none): files held open with their function
 * tables, the tables' bytes, and JIT maps' bytes; the least recently used
 * go first, and are read again when next needed. */
void symbolizer__set_bounds(struct symbolizer *s, uint32_t max_files, size_t max_bytes,
			    size_t max_jit_bytes);
struct symbolizer_bounds {
	uint64_t files, files_evicted, table_bytes;
	uint64_t jit_entries, jit_bytes, jit_evicted;
};
void symbolizer__bounds(const struct symbolizer *s, struct symbolizer_bounds *b);

/* pid has gone: what was kept for it goes. */
void symbolizer__forget(struct symbolizer *s, uint32_t pid);

/* The build-id of dso as hex in buf; 0, or -ENOENT when it has none (or
 * cannot be opened). */
int symbolizer__build_id(struct symbolizer *s, const char *dso, char *buf,
			 size_t size);

#endif
