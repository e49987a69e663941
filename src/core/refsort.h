/*
 * refsort: where rows of gone threads are kept (a row_store), and the
 * refs to them (row_ref) kept in the store too, and sorted there. A
 * report by thread of a day of short processes has millions of threads,
 * 64 bytes of ref each: held in memory for the table's sorts, they were
 * what its peak grew with
 * (2.2 MB of 10.7 for eight minutes of a compile loop). Refs go to the
 * store a chunk at a time (REFS_CHUNK of them, sorted before they go: a
 * run), runs are merged REFS_FANIN at a time until one is left, and a
 * list of chunks is read back by index. Memory is a few chunks,
 * whatever the number of refs. Nothing here does I/O: the store is the
 * caller's.
 */
#ifndef CPULEDGER_CORE_REFSORT_H
#define CPULEDGER_CORE_REFSORT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Where rows of gone threads are kept out of memory (rows__store): the
 * caller's scratch file, as the engine is free of I/O. A report by
 * thread of a day of short processes has millions of rows, each with its
 * command line: in memory they were most of what such a report took.
 */
struct row_store {
	void *ctx;
	/* appends n bytes, their offset in *off: 0 or -errno */
	int (*put)(void *ctx, const void *buf, size_t n, uint64_t *off);
	/* reads n bytes at off: 0 or -errno */
	int (*get)(void *ctx, uint64_t off, void *buf, size_t n);
	/* writes n bytes over bytes put before, at off: 0 or -errno (NULL:
	 * the store cannot) */
	int (*set)(void *ctx, uint64_t off, const void *buf, size_t n);
};

/* A stored row: where it is, and what sorting it needs. */
struct row_ref {
	uint64_t off;
	uint64_t start_ns;
	/* the row's sums; the table's arithmetic makes them its figures
	 * (table.c: cpu_ns and steal_ns after the method) */
	uint64_t samples, steal_samples, cpu_ns, steal_ns;
	uint32_t pid, tid, len;
	uint32_t seq;		/* the row's (of rows of one key, the first) */
};

#define REFS_CHUNK 2048		/* refs a chunk: 128 KB */
#define REFS_FANIN 16		/* runs one merge reads at once */

/* a before b (< 0), after, or equal (0); ctx the caller's */
typedef int (*ref_cmp)(const struct row_ref *a, const struct row_ref *b, void *ctx);

/* Refs in the store, in order: chunks of `chunk` refs (the last may hold
 * fewer), each written by one put. */
struct ref_list {
	uint64_t *at;		/* each chunk's offset */
	uint32_t nchunks, cap;
	uint64_t n;		/* refs */
	uint32_t chunk;		/* refs a full chunk holds */
};

/* Lists each in an order (runs), to be merged into one. */
struct ref_runs {
	struct ref_list *v;
	uint32_t n, cap;
	/* refs a chunk, runs a merge (0: REFS_CHUNK, REFS_FANIN; tests
	 * make them small to see many runs and passes) */
	uint32_t chunk, fanin;
};

/* Sorts refs by cmp in memory, ties in the order they are in. */
void refs__sort(struct row_ref *refs, size_t n, ref_cmp cmp, void *ctx);

/* Refs by their task (pid, tid, start): the order rows of one key come
 * together in. */
int refs__cmp_task(const struct row_ref *a, const struct row_ref *b, void *ctx);

void ref_list__free(struct ref_list *l);
/* Refs [i, i + n) of l into out: 0 or the store's -errno. */
int ref_list__get(const struct row_store *st, const struct ref_list *l, uint64_t i, size_t n,
		  struct row_ref *out);
/* refs written over refs [i, i + n) of l: 0, the store's -errno, or
 * -ENOTSUP where the store cannot. */
int ref_list__set(const struct row_store *st, const struct ref_list *l, uint64_t i, size_t n,
		  const struct row_ref *refs);

/* A list written a ref at a time (ref_writer__end gives it). */
struct ref_writer {
	const struct row_store *st;
	struct ref_list list;
	struct row_ref *buf;	/* a chunk */
	uint32_t used;
	int error;		/* the first */
};

void ref_writer__init(struct ref_writer *w, const struct row_store *st, uint32_t chunk);
int ref_writer__put(struct ref_writer *w, const struct row_ref *ref);
/* The list written (*out), or the first -errno (nothing in *out). */
int ref_writer__end(struct ref_writer *w, struct ref_list *out);

void ref_runs__free(struct ref_runs *r);
/* Refs a chunk of r's holds. */
uint32_t ref_runs__chunk(const struct ref_runs *r);
/* refs[0..n) sorted by cmp and written as one more run: 0 or -errno. */
int ref_runs__add(struct ref_runs *r, const struct row_store *st, struct row_ref *refs,
		  size_t n, ref_cmp cmp, void *ctx);
/* The runs (each in cmp's order) merged, every ref handed to emit in
 * cmp's order, ties in the order of the runs they came from (a run added
 * first, first). The runs are used up. 0, or the first -errno (emit's
 * too). */
int ref_runs__merge(struct ref_runs *r, const struct row_store *st, ref_cmp cmp, void *ctx,
		    int (*emit)(void *ectx, const struct row_ref *ref), void *ectx);

/* l sorted by cmp, ties in the order they are in: in the store, a chunk
 * in memory at a time. 0, or -errno with l as it was. */
int ref_list__sort(struct ref_list *l, const struct row_store *st, uint32_t fanin, ref_cmp cmp,
		   void *ctx);

#endif
