/*
 * report/pprof: a gzipped profile.proto, the format of `go tool pprof`,
 * Grafana Pyroscope and Parca (docs/formats.md). Two sample types, cpu and
 * steal, in nanoseconds, cpu the default (what `go tool pprof` shows
 * first). With the call stacks of a recording (extras' stacks), one sample
 * per stack and label set, its locations leaf first; otherwise one sample
 * per row. Samples are labelled with the rows' key fields (pid, tid,
 * comm, command, account...; numbers as numbers); a mapping per file
 * (dso), a function and a location per (name, file). Strings are made
 * valid UTF-8 (profile.proto's strings are UTF-8): bytes that are not
 * become U+FFFD. The message is built with protobuf-c from
 * the profile.proto Debian ships with pprof, so the wire format is the
 * one the readers are built from; its samples, locations, functions and
 * string table, most of its bytes, are written by hand as protobuf-c
 * writes them (pprof_wire.h says why; test_pprof_wire compares the bytes).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "pprof_runs.h"
#include "pprof_zstream.h"
#include "pprof_wire.h"
#include "report.h"
#include "../core/grow.h"
#include "../core/stacks.h"
#include "../core/strtab.h"
#include "../core/banned.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__ValueType ValueType;

enum { LABELS = 12 };
/* packed labels kept for a thread's stack rows: a thread's rows differ by
 * account (the leaf's region: its executable, libc, the kernel, ...) */
enum { LABELS_KEPT = 4 };

/* RUN_BYTES of packed samples (whole samples), kept until the profile is
 * written: the samples are most of a profile, and a profile of a long
 * recording holds hundreds of thousands (30 MB of them for 8 minutes of
 * a compile loop). Each deflated as it is sealed, a segment of the gzip
 * stream to be written (pprof_runs.h), in the store the report gives (a
 * temporary file), else in memory: the same segments either way, so the
 * same file. */
#define RUN_BYTES (1u << 17)
struct run {
	uint8_t *z;		/* deflated, or NULL: stored at off */
	size_t zlen, len;
	uint64_t off;
	uint32_t crc;		/* of its len bytes, as gzip's */
};

/*
 * Strings of LONG_STRING bytes or more wait in the store with the samples,
 * where there is one: a long recording's profile names thousands of
 * distinct command lines (4.2 MB of them in 8 minutes of a compile loop,
 * most of what was left of the profile in memory). The string table
 * keeps an empty slot for each, for its id; longs finds them by hash,
 * their bytes read back to be compared. They are put LONG_BATCH bytes
 * at a time (a batch: those strings back to back, in the order of their
 * ids), and read back a batch at a time when the table is written.
 */
#define LONG_STRING 64
#define LONG_BATCH (1u << 16)
struct long_string {
	uint64_t off;		/* in the store; in pending until put */
	uint32_t len, id;
};
/* Long strings looked up lately, by hash, their bytes kept: a thread's
 * command line is looked up again for each thread of its process, and
 * for each process that runs it, each read back from the store to be
 * compared (a twentieth of a profile). Those of LONG_SEEN_MAX bytes or
 * less (a command line can be megabytes), so at most 1 MB. 1024 of them:
 * a compile loop runs the same few thousand command lines again and
 * again, and with 64, 3 300 of them were read back (a system call each)
 * for a profile of 8 minutes, 1 150 with 1024 (bench/RESULTS.md, round
 * 31). */
#define LONG_SEEN 1024
#define LONG_SEEN_MAX 1024
struct long_seen {
	uint64_t hash;
	uint32_t i, len;	/* its index in longs; 0 length: none yet */
	char *bytes;
};
struct long_batch {
	uint64_t off;
	uint32_t len;
	uint32_t first;		/* its first string's index in longs */
};

/*
 * Mappings are kept in an array of pointers, each allocated on its own,
 * since protobuf-c packs from pointers; functions and their locations,
 * one of each for every function named, as struct function (12 bytes,
 * written by gz_functions). Samples, one for each stack of each thread
 * (most of a profile), are packed as they come (by pprof_wire.c, as
 * protobuf-c would pack them), each as the Profile's field 2, and kept as
 * bytes: an unpacked sample with its labels took a kilobyte, its bytes a
 * tenth of it. pack() writes the fields before and after them.
 */
/* The string a label had last, and its id: a thread's stacks come one
 * after another with the same command line, comm and pid, and hashing a
 * long command line again for each was 5 % of a profile's making. */
struct label_memo {
	char *s;
	size_t cap;
	int64_t id;
};

/*
 * A stack's location ids as a sample packs them (varints), kept by the
 * stack's id: the rows of a report are many times its stacks (live8 of
 * bench/streaming_real: 600 K rows of 31 K stacks, a compile's threads
 * running the same few), and each row's locations were found frame by
 * frame: kept, the engine's thread does 3.6 % fewer instructions for
 * that profile (bench/RESULTS.md, round 30). A cache of a fixed size, each
 * stack in the slot its id names, so that its memory does not grow with
 * the stacks of a long recording; a stack whose bytes do not fit in a
 * slot is packed each time.
 */
#define STACK_MEMO 8192
#define STACK_MEMO_BYTES 43
#define STACK_MEMO_EMPTY 0xff
struct stack_memo {
	uint32_t stack;
	uint8_t len;		/* STACK_MEMO_EMPTY: no stack */
	uint8_t bytes[STACK_MEMO_BYTES];
};

/* A function and its location (the same id): its name and file as string
 * ids, its file's mapping. The Function, Location and Line protobuf-c
 * would pack are made as they are written (pprof_wire.h). */
struct function {
	uint32_t name, file, mapping;
};

/* A sample's labels: the row's key fields. */
struct labels {
	const char *key[LABELS];
	const char *str[LABELS];
	int64_t num[LABELS];
	size_t n;
	/* strings_of: the string ids of key and str (-1: none) */
	int64_t key_id[LABELS], str_id[LABELS];
};

struct builder {
	struct strtab strings;		/* the profile's string table */
	struct label_memo memo[2 * LABELS];	/* each label's key and str */
	struct strtab mapping_keys;	/* file string -> mapping index */
	struct strtab function_keys;	/* (name, file) strings -> function index */
	Mapping **mappings;
	struct function *functions;	/* each with its location, by id - 1 */
	uint8_t *samples;		/* the packed samples since the last run */
	size_t samples_len, samples_cap;
	struct run *runs;		/* and before, stored or deflated */
	const struct row_store *store;	/* or NULL */
	uint32_t nruns, runs_cap;
	struct run_deflater *deflater;	/* the last run's, until taken */
	uint64_t *locs;			/* a sample's location ids */
	size_t locs_cap;
	uint8_t *loc_bytes;		/* a stack's, packed */
	size_t loc_bytes_cap;
	uint32_t nmappings, nfunctions, nsamples;
	uint32_t mappings_cap, functions_cap;
	/* what was looked up before, as the lookup would find it again: a
	 * string as given (raw) -> string id, a stack's (name, file) ids of
	 * x->names -> location id. By the strings' bytes, not where they
	 * are: the stacks of a report come as its threads go, from tables
	 * that still grow (and move) */
	struct strtab raw;
	int64_t *raw_ids;
	uint32_t raw_ids_cap;
	struct strtab loc_keys;
	int64_t *loc_ids;
	uint32_t loc_ids_cap;
	/* and by the stack table's frame id (0: not yet): a profile's
	 * samples are mostly their frames, a few thousand distinct ones
	 * looked up a million times; hashing each (name, file) pair again
	 * was a fifth of a profile's making */
	const struct stacktab *frames_of;
	uint32_t *frame_locs;
	uint32_t frame_locs_cap;
	/* and a stack's location ids packed, by its id (of frames_of) */
	struct stack_memo *stack_memo;
	bool steal_known;
	/* samples packed as their threads went, with both values: whether
	 * steal is known is said at the end */
	bool streamed;
	/* long strings, in the store (LONG_STRING) */
	struct long_string *longs;
	uint32_t nlongs, longs_cap, nlongs_put;
	struct hindex long_index;
	struct long_seen seen[LONG_SEEN];
	char *pending;			/* the strings not yet put */
	size_t pending_len, pending_cap;
	struct long_batch *batches;
	uint32_t nbatches, batches_cap;
	char *back;			/* a string or batch read back */
	size_t back_cap;
	int store_err;			/* the store's error, if it failed */
	/* the labels of the last stack rows, packed (stack_labels); the one
	 * the row at hand has, and the one a row with new labels replaces */
	struct packed_labels {
		bool valid;
		const struct rows *st;
		uint64_t batch;
		struct row w;
		uint32_t like;		/* w's report_stack like */
		uint8_t *bytes;
		size_t len, cap;
	} labels[LABELS_KEPT];
	unsigned labels_at, labels_next;
	/* the labels made last (stack_labels), their strings found: the
	 * next a thread's rows need differ in their account alone */
	struct made_labels {
		bool valid;
		const struct rows *st;
		uint64_t batch;
		struct row w;
		struct labels l;
		int account;	/* the account's label in l, or -1 */
	} made;
};

/* -ENOMEM, or the error of the store where that failed. */
static int str_error(const struct builder *b)
{
	return b->store_err ? b->store_err : -ENOMEM;
}

/* len bytes at off in the store, read back into b->back (NULL, with
 * b->store_err set, when that fails). */
static const char *read_back(struct builder *b, uint64_t off, size_t len)
{
	int err = grow_bytes(&b->back, &b->back_cap, len + 1, 256) ? -ENOMEM :
		  b->store->get(b->store->ctx, off, b->back, len);
	if (err) {
		b->store_err = err;
		return NULL;
	}
	return b->back;
}

/* Long string i's bytes: in pending, or read back from the store. */
static const char *long_bytes(struct builder *b, uint32_t i)
{
	const struct long_string *l = &b->longs[i];
	return i >= b->nlongs_put ? b->pending + l->off : read_back(b, l->off, l->len);
}

struct long_key {
	struct builder *b;
	const char *s;
	size_t len;
};

static bool long_eq(const void *ctx, uint32_t i)
{
	const struct long_key *k = ctx;
	if (k->b->longs[i].len != k->len)
		return false;
	const char *bytes = long_bytes(k->b, i);
	return bytes && !memcmp(bytes, k->s, k->len);
}

/* The strings in pending put in the store, as a batch. */
static int put_pending(struct builder *b)
{
	if (!b->pending_len)
		return 0;
	struct long_batch batch = { 0, (uint32_t)b->pending_len, b->nlongs_put };
	if (grow_array((void **)&b->batches, &b->batches_cap, b->nbatches, sizeof(*b->batches),
		       16))
		return -ENOMEM;
	int err = b->store->put(b->store->ctx, b->pending, b->pending_len, &batch.off);
	if (err)
		return b->store_err = err;
	for (uint32_t i = b->nlongs_put; i < b->nlongs; i++)
		b->longs[i].off += batch.off;
	b->batches[b->nbatches++] = batch;
	b->nlongs_put = b->nlongs;
	b->pending_len = 0;
	return 0;
}

/* Long string i, s[0..n), as seen lately (not when it is too long, or
 * out of memory: it is then looked up in the store again). */
static void remember_long(struct long_seen *seen, uint64_t h, uint32_t i, const char *s,
			  size_t n)
{
	char *bytes = n <= LONG_SEEN_MAX ? realloc(seen->bytes, n) : NULL;
	if (!bytes) {
		free(seen->bytes);
		*seen = (struct long_seen){ 0 };
		return;
	}
	memcpy(bytes, s, n);
	*seen = (struct long_seen){ .hash = h, .i = i, .len = (uint32_t)n, .bytes = bytes };
}

/* The string table index of the long string s[0..n), valid UTF-8. */
static int64_t long_string(struct builder *b, const char *s, size_t n)
{
	uint64_t h = hash_bytes(s, n, 0);
	struct long_seen *seen = &b->seen[h % LONG_SEEN];
	if (seen->len == n && seen->hash == h && !memcmp(seen->bytes, s, n))
		return b->longs[seen->i].id;
	struct long_key k = { b, s, n };
	uint32_t i = hindex__find(&b->long_index, h, long_eq, &k);
	if (b->store_err)
		return -1;
	if (i != HINDEX_NONE) {
		remember_long(seen, h, i, s, n);
		return b->longs[i].id;
	}
	uint32_t id = strtab__add_slot(&b->strings, 1);
	if (id == HINDEX_NONE || n > UINT32_MAX ||
	    grow_array((void **)&b->longs, &b->longs_cap, b->nlongs, sizeof(*b->longs), 256) ||
	    grow_bytes(&b->pending, &b->pending_cap, b->pending_len + n, 4096) ||
	    hindex__insert(&b->long_index, h, b->nlongs))
		return -1;
	remember_long(seen, h, b->nlongs, s, n);
	b->longs[b->nlongs++] = (struct long_string){ b->pending_len, (uint32_t)n, id };
	memcpy(b->pending + b->pending_len, s, n);
	b->pending_len += n;
	if (b->pending_len >= LONG_BATCH && put_pending(b))
		return -1;
	return id;
}

/* The string table index of s[0..n), valid UTF-8, added when new. */
static int64_t intern(struct builder *b, const char *s, size_t n)
{
	if (b->store && n >= LONG_STRING)
		return long_string(b, s, n);
	uint32_t id = strtab__intern(&b->strings, s, n);
	return id == HINDEX_NONE ? -1 : (int64_t)id;
}

/* The string table index of s, made valid UTF-8. */
static int64_t str_clean(struct builder *b, const char *s)
{
	char *clean = utf8_dup_clean(s);
	if (!clean)
		return -1;
	int64_t id = intern(b, clean, strlen(clean));
	free(clean);
	return id;
}

/* Whether s[0..n) is valid UTF-8 as it is. ASCII is passed over eight
 * bytes at a time: command lines are mostly that, and a call a byte was
 * a third of a profile's string look-ups. */
static bool utf8_clean(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0, len; i < n; i += len) {
		uint64_t w;
		if (n - i >= sizeof(w)) {
			memcpy(&w, p + i, sizeof(w));
			if (!(w & 0x8080808080808080ull)) {
				len = sizeof(w);
				continue;
			}
		}
		if (!(len = utf8_seq(p + i, n - i)))
			return false;
	}
	return true;
}

/* str_clean of s, once for each string: a profile names the same
 * command, account and function in thousands of samples. A string
 * that is valid UTF-8 is its own entry, found there: only the others
 * are kept as given too (all of them twice, as given and cleaned, was
 * 2 MB of a long recording's command lines). */
static int64_t str(struct builder *b, const char *s)
{
	size_t n = strlen(s);
	if (!b->store || n < LONG_STRING) {
		uint32_t found = strtab__find(&b->strings, s, n);
		if (found != HINDEX_NONE)
			return found;
	}
	if (utf8_clean(s, n))
		return intern(b, s, n);
	uint32_t before = b->raw.count;
	uint32_t i = strtab__intern(&b->raw, s, n);
	if (i == HINDEX_NONE)
		return -1;
	if (b->raw.count == before)
		return b->raw_ids[i];
	int64_t id = str_clean(b, s);
	if (id < 0 || grow_array((void **)&b->raw_ids, &b->raw_ids_cap, i, sizeof(*b->raw_ids),
				 256))
		return -1;
	b->raw_ids[i] = id;
	return id;
}

static void label(struct labels *l, const char *key, const char *s, int64_t num)
{
	if (l->n == LABELS || (!s && num < 0))
		return;
	l->key[l->n] = key;
	l->str[l->n] = s;
	l->num[l->n++] = num;
}

struct row_labels {
	struct labels *l;
	const struct table_row *r;
};

/* One key's label, as a recording's rows name it (host for vm); numbers
 * as they are. Keys the locations say (function, dso) are no label. */
static void key_label(void *ctx, enum row_field f, bool with)
{
	const struct row_labels *c = ctx;
	const struct key_entry *e = key_entry(f);
	const char *name = e->label ? e->label : e->field;
	(void)with;
	if (e->location)
		return;
	if (e->text) {
		const char *v = e->text(c->r);
		label(c->l, name, v || !e->unknown ? v : e->unknown, -1);
	} else {
		label(c->l, name, NULL, e->number(c->r));
	}
}

/* The labels of a row: its key's fields but function and dso (the
 * locations say those), and its process's command (attrs: the table's
 * rows carry it). */
static void row_labels(bool attrs, const struct row_keys *k, const struct table_row *r,
		       struct labels *l)
{
	struct row_labels c = { l, r };
	l->n = 0;
	report_keys(k, REPORT_AFTER_NONE, key_label, &c);
	if (attrs && r->command && !row_keys__has(k, RF_COMMAND))
		label(l, "command", r->command, -1);
}

/* The index of key in keys, and whether it is new. */
static int64_t key_index(struct strtab *keys, const void *key, size_t len, bool *is_new)
{
	uint32_t before = keys->count;
	uint32_t id = strtab__intern(keys, key, len);
	*is_new = keys->count != before;
	return id == HINDEX_NONE ? -1 : (int64_t)id;
}

/* The mapping id of a file, adding it when new. */
static int64_t mapping(struct builder *b, int64_t file)
{
	uint32_t key = (uint32_t)file;
	bool is_new;
	int64_t id = key_index(&b->mapping_keys, &key, sizeof(key), &is_new);
	if (id < 0 || !is_new)
		return id < 0 ? -1 : id + 1;
	Mapping *m = malloc(sizeof(*m));
	if (!m || grow_array((void **)&b->mappings, &b->mappings_cap, b->nmappings,
			     sizeof(*b->mappings), 64)) {
		free(m);
		return -1;
	}
	perftools__profiles__mapping__init(m);
	m->id = (uint64_t)id + 1;
	m->filename = file;
	m->has_functions = true;
	b->mappings[b->nmappings++] = m;
	return id + 1;
}

/* The location id of a function in a file, adding both when new. */
static int64_t location(struct builder *b, const char *name, const char *dso)
{
	int64_t n = str(b, name), f = str(b, dso);
	int64_t m = f < 0 ? -1 : mapping(b, f);
	if (n < 0 || m < 0)
		return -1;
	uint32_t key[2] = { (uint32_t)n, (uint32_t)f };
	bool is_new;
	int64_t id = key_index(&b->function_keys, key, sizeof(key), &is_new);
	if (id < 0 || !is_new)
		return id < 0 ? -1 : id + 1;
	if (grow_array((void **)&b->functions, &b->functions_cap, b->nfunctions,
		       sizeof(*b->functions), 256))
		return -1;
	/* string ids and mapping ids are below 2^32 (strtab's, mapping()'s) */
	b->functions[b->nfunctions++] = (struct function){ (uint32_t)n, (uint32_t)f,
							   (uint32_t)m };
	return id + 1;
}

/* Room for n location ids in b->locs. */
static int locs_room(struct builder *b, size_t n)
{
	if (n <= b->locs_cap)
		return 0;
	uint64_t *v = realloc(b->locs, n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	b->locs = v;
	b->locs_cap = n;
	return 0;
}

/* str of s, found as label k had it last (m). */
static int64_t str_memo(struct builder *b, struct label_memo *m, const char *s)
{
	/* one pass over a long command line where it is the same, not two */
	if (m->s && !strcmp(m->s, s))
		return m->id;
	size_t n = strlen(s);
	int64_t id = str(b, s);
	if (id < 0 || grow_bytes(&m->s, &m->cap, n + 1, 64))
		return -1;
	memcpy(m->s, s, n + 1);
	m->id = id;
	return id;
}

/* The string ids of a sample's labels, each looked up once (a dozen a
 * sample, a tenth of a profile's making when looked up twice). */
static int strings_of(struct builder *b, struct labels *l)
{
	for (size_t k = 0; k < l->n; k++) {
		l->key_id[k] = str_memo(b, &b->memo[2 * k], l->key[k]);
		l->str_id[k] = l->str[k] ? str_memo(b, &b->memo[2 * k + 1], l->str[k]) : -1;
		if (l->key_id[k] < 0 || (l->str[k] && l->str_id[k] < 0))
			return str_error(b);
	}
	return 0;
}

/* The run given to be deflated last, deflated: put in the store, or
 * kept. */
static int take_run(struct builder *b)
{
	struct deflated_run d;
	int got = b->deflater ? run_deflater__take(b->deflater, &d) : 0;
	if (got <= 0)
		return got;
	struct run *r = &b->runs[b->nruns - 1];
	r->zlen = d.zlen;
	r->crc = d.crc;
	if (b->store)
		return b->store->put(b->store->ctx, d.z, d.zlen, &r->off);
	if (!(r->z = malloc(d.zlen ? d.zlen : 1)))
		return -ENOMEM;
	memcpy(r->z, d.z, d.zlen);
	return 0;
}

/* The packed samples since the last run made a run of their own, given
 * to be deflated (the one before taken). */
static int seal_run(struct builder *b)
{
	int err = take_run(b);
	if (err)
		return err;
	if (!b->deflater && !(b->deflater = run_deflater__new()))
		return -ENOMEM;
	if (grow_array((void **)&b->runs, &b->runs_cap, b->nruns, sizeof(*b->runs), 16))
		return -ENOMEM;
	b->runs[b->nruns++] = (struct run){ .len = b->samples_len };
	err = run_deflater__give(b->deflater, &b->samples, &b->samples_cap, b->samples_len);
	b->samples_len = 0;
	return err;
}

/* A run's deflated bytes into b->back (read back from the store), or NULL
 * with b->store_err set. */
static const uint8_t *run_bytes(struct builder *b, const struct run *r)
{
	return r->z ? r->z : (const uint8_t *)read_back(b, r->off, r->zlen);
}

/* A run's packed samples into buf (cap bytes); 0 or -errno. */
static int open_run(struct builder *b, const struct run *r, uint8_t *buf, size_t cap)
{
	const uint8_t *z = run_bytes(b, r);
	if (!z)
		return str_error(b);
	return r->len > cap ? -EINVAL : run_inflate(z, r->zlen, buf, r->len);
}

/* s packed after the samples before, as the Profile's field 2. */
static int put_sample(struct builder *b, const Sample *s)
{
	/* length-delimited: its tag, its length, its bytes */
	size_t len = pprof_wire__sample_size(s);
	if (grow_bytes((char **)&b->samples, &b->samples_cap,
		       b->samples_len + 1 + PPROF_VARINT_MAX + len, 1 << 16))
		return -ENOMEM;
	uint8_t *p = b->samples + b->samples_len;
	*p++ = 2 << 3 | 2;
	p += pprof_wire__varint(p, len);
	p += pprof_wire__sample(p, s);
	b->samples_len = (size_t)(p - b->samples);
	b->nsamples++;
	return b->samples_len >= RUN_BYTES ? seal_run(b) : 0;
}

/* A sample of the locations packed in locs (locs_len bytes) and the
 * labels packed in b->labels, written after the samples before. */
static int put_stack_sample(struct builder *b, const uint8_t *locs, size_t locs_len,
			    uint64_t cpu, uint64_t steal)
{
	int64_t values[2] = { (int64_t)cpu, (int64_t)steal };
	size_t nval = b->steal_known ? 2 : 1;	/* unknown: no steal at all */
	const struct packed_labels *k = &b->labels[b->labels_at];
	if (grow_bytes((char **)&b->samples, &b->samples_cap,
		       b->samples_len + PPROF_SAMPLE_FIELD_MAX(locs_len, nval, k->len), 1 << 16))
		return -ENOMEM;
	b->samples_len += pprof_wire__sample_field(b->samples + b->samples_len, locs, locs_len,
						   values, nval, k->bytes, k->len);
	b->nsamples++;
	return b->samples_len >= RUN_BYTES ? seal_run(b) : 0;
}

/* The samples streamed with both values packed again with cpu alone (a
 * recording that measured no steal: each sample as it would have been
 * packed knowing that). */
static int repack_cpu_only(struct builder *b, const uint8_t *old, size_t len)
{
	size_t at = 0;
	int err = 0;
	while (at < len && !err) {
		size_t n = 0;
		at++;	/* the tag, then the length */
		for (int shift = 0; ; shift += 7) {
			uint8_t byte = old[at++];
			n |= (size_t)(byte & 0x7f) << shift;
			if (!(byte & 0x80))
				break;
		}
		Sample *s = perftools__profiles__sample__unpack(NULL, n, old + at);
		if (!s) {
			err = -ENOMEM;
			break;
		}
		if (s->n_value)
			s->n_value = 1;
		err = put_sample(b, s);
		perftools__profiles__sample__free_unpacked(s, NULL);
		at += n;
	}
	return err;
}

static int cpu_value_only(struct builder *b)
{
	int taken = take_run(b);
	if (taken)
		return taken;
	struct run *runs = b->runs;
	uint32_t nruns = b->nruns;
	size_t most = 1;
	for (uint32_t i = 0; i < nruns; i++)
		most = runs[i].len > most ? runs[i].len : most;
	uint8_t *tail = b->samples, *buf = malloc(most);
	size_t tail_len = b->samples_len;
	b->runs = NULL;
	b->nruns = b->runs_cap = 0;
	b->samples = NULL;
	b->samples_len = b->samples_cap = 0;
	b->nsamples = 0;
	int err = buf ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < nruns && !err; i++) {
		err = open_run(b, &runs[i], buf, most);
		err = err ? err : repack_cpu_only(b, buf, runs[i].len);
	}
	if (!err)
		err = repack_cpu_only(b, tail, tail_len);
	for (uint32_t i = 0; i < nruns; i++)
		free(runs[i].z);
	free(runs);
	free(tail);
	free(buf);
	return err;
}

/* l (its strings_of found) as s's labels, made in labels. */
static void label_msgs(Sample *s, const struct labels *l, Label labels[LABELS],
		       Label *label_ptrs[LABELS])
{
	for (size_t k = 0; k < l->n; k++) {
		perftools__profiles__label__init(&labels[k]);
		label_ptrs[k] = &labels[k];
		labels[k].key = l->key_id[k];
		if (l->str[k])
			labels[k].str = l->str_id[k];
		else
			labels[k].num = l->num[k];
	}
	s->n_label = l->n;
	s->label = label_ptrs;
}

/* A sample of nloc locations (b->locs) and labels l (their strings_of
 * found), packed after the ones before. */
static int sample(struct builder *b, size_t nloc, uint64_t cpu, uint64_t steal,
		  const struct labels *l)
{
	int64_t values[2] = { (int64_t)cpu, (int64_t)steal };
	Sample s;
	Label labels[LABELS];
	Label *label_ptrs[LABELS];
	perftools__profiles__sample__init(&s);
	s.n_value = b->steal_known ? 2 : 1;	/* unknown: no steal at all */
	s.value = values;
	s.n_location_id = nloc;
	s.location_id = b->locs;
	label_msgs(&s, l, labels, label_ptrs);
	return put_sample(b, &s);
}

static int from_rows(struct builder *b, const struct table *t)
{
	struct labels l;
	for (size_t i = 0; i < t->nrows; i++) {
		const struct table_row *r = table__row(t, i);
		int64_t loc = location(b, r->function ? r->function : "[unknown]",
				       r->dso ? r->dso : "[unknown]");
		row_labels(t->attrs, &t->keys, r, &l);
		if (loc < 0 || locs_room(b, 1) || strings_of(b, &l))
			return str_error(b);
		b->locs[0] = (uint64_t)loc;
		int err = sample(b, 1, r->cpu_ns, r->steal_ns, &l);
		if (err)
			return err;
	}
	return 0;
}

/* The location of a stack's (name, file) ids of names, as location()
 * gives it. */
static int64_t stack_location(struct builder *b, const struct strtab *names,
			      const uint32_t pair[2])
{
	uint32_t before = b->loc_keys.count;
	uint32_t i = strtab__intern(&b->loc_keys, (const char *)pair, 2 * sizeof(uint32_t));
	if (i == HINDEX_NONE || grow_array((void **)&b->loc_ids, &b->loc_ids_cap, i,
					   sizeof(*b->loc_ids), 256))
		return -1;
	if (b->loc_keys.count != before)
		b->loc_ids[i] = location(b, strtab__str(names, pair[0]),
					 pair[1] != NO_DSO ? strtab__str(names, pair[1]) :
					 "[unknown]");
	return b->loc_ids[i];
}

/* Rows whose labels are alike: every field but their stack and figures
 * (row_labels reads none of those), compared as two runs of bytes with
 * no padding in them. */
_Static_assert(offsetof(struct row, start_ns) == offsetof(struct row, tid) + 4 &&
	       offsetof(struct row, uid) == offsetof(struct row, start_ns) + 8 &&
	       offsetof(struct row, cpu) == offsetof(struct row, uid) + 8 &&
	       offsetof(struct row, stack) == offsetof(struct row, cpu) + 4 &&
	       offsetof(struct row, derived) == offsetof(struct row, stack) + 4 &&
	       offsetof(struct row, seq) == offsetof(struct row, attr_cgroup) + 4,
	       "struct row's key fields lie one after another");
static bool same_labels(const struct row *a, const struct row *b)
{
	/* the account first: what mostly tells a thread's rows apart */
	return a->account == b->account && !memcmp(a, b, offsetof(struct row, stack)) &&
	       !memcmp(a->derived, b->derived,
		       offsetof(struct row, seq) - offsetof(struct row, derived));
}

/* Row w's labels into l, their strings found (strings_of). */
static int row_strings(struct builder *b, const struct report_stack *rs, const struct rows *st,
		       const struct row *w, struct labels *l)
{
	struct table_row r = {
		.vm = rows__str(st, w->vm), .comm = rows__str(st, w->comm),
		.command = rows__str(st, w->command), .executable = rows__str(st, w->executable),
		.account = rows__str(st, w->account), .cgroup = rows__str(st, w->cgroup),
		.pid = w->pid, .tid = w->tid, .uid = w->uid, .cpu = w->cpu,
	};
	for (int i = 0; i < ROW_DERIVED; i++)
		r.derived[i] = rows__str(st, w->derived[i]);
	if (!r.command)
		r.command = rows__str(st, w->attr_command);
	row_labels(rs->attrs, &st->keys, &r, l);
	return strings_of(b, l) ? str_error(b) : 0;
}

/* Which of l's labels is the account's (its key's name, which no other
 * key has), or -1. */
static int account_label(const struct labels *l)
{
	const struct key_entry *e = key_entry(RF_ACCOUNT);
	const char *name = e->label ? e->label : e->field;
	for (size_t i = 0; i < l->n; i++)
		if (l->key[i] == name)
			return l->str[i] ? (int)i : -1;
	return -1;
}

/* Row w's labels into l as those made last with w's account, where w
 * differs from that row in its account alone (a thread's next account:
 * its strings, a long command line among them, were looked up and
 * compared again, a thirtieth of a profile): 0, or 1 when w is not such
 * a row, or -errno. The strings are looked up in the order strings_of
 * would: the others are the ones found last. */
static int account_labels(struct builder *b, const struct report_stack *rs,
			  const struct rows *st, const struct row *w, struct labels *l)
{
	const struct made_labels *m = &b->made;
	if (!m->valid || m->st != st || m->batch != rs->batch || m->account < 0 ||
	    w->account == ROW_NONE)
		return 1;
	struct row x = *w;
	x.account = m->w.account;
	if (!same_labels(&x, &m->w))
		return 1;
	int at = m->account;
	*l = m->l;
	l->str[at] = rows__str(st, w->account);
	l->str_id[at] = str_memo(b, &b->memo[2 * at + 1], l->str[at]);
	return l->str_id[at] < 0 ? str_error(b) : 0;
}

/* The labels of stack row w of st (in batch) packed, as b->labels_at
 * says: a thread's stacks come one after another with labels of a few
 * kinds (its account alternates with each stack's leaf: half of all
 * rows when only the last was kept), whose strings were looked up and
 * packed for each (a seventh of a profile of 8 minutes of a compile
 * loop). Strings are looked up in the order they always were: a row's
 * labels' strings before its locations' (a kept row's were found
 * before: none is new). */
static int stack_labels(struct builder *b, const struct report_stack *rs,
			const struct rows *st, const struct row *w)
{
	/* the last row's first: the next row mostly has them too; by the
	 * row it was made like, where that is said (comparing the rows was
	 * a twentieth of the engine's thread) */
	for (unsigned j = 0; j < LABELS_KEPT; j++) {
		unsigned i = (b->labels_at + j) % LABELS_KEPT;
		const struct packed_labels *k = &b->labels[i];
		if (k->valid && k->st == st && k->batch == rs->batch &&
		    (rs->like ? k->like == rs->like : same_labels(&k->w, w))) {
			b->labels_at = i;
			return 0;
		}
	}
	struct packed_labels *k = &b->labels[b->labels_next];
	k->valid = false;
	struct labels l;
	int err = account_labels(b, rs, st, w, &l);
	if (err < 0)
		return err;
	if (err > 0 && (err = row_strings(b, rs, st, w, &l)))
		return err;
	b->made = (struct made_labels){ true, st, rs->batch, *w, l, account_label(&l) };
	Sample s;
	Label labels[LABELS];
	Label *label_ptrs[LABELS];
	perftools__profiles__sample__init(&s);
	label_msgs(&s, &l, labels, label_ptrs);
	size_t len = pprof_wire__sample_size(&s);
	if (grow_bytes((char **)&k->bytes, &k->cap, len, 256))
		return -ENOMEM;
	k->len = pprof_wire__sample(k->bytes, &s);
	k->w = *w;
	k->like = rs->like;
	k->st = st;
	k->batch = rs->batch;
	k->valid = true;
	b->labels_at = b->labels_next;
	b->labels_next = (b->labels_next + 1) % LABELS_KEPT;
	return 0;
}

/* One stack row w of st: its locations, leaf first. */
static int stack_sample(struct builder *b, const struct report_stack *rs, const struct rows *st,
			const struct row *w)
{
	if (!w->f.samples && !w->f.cpu_ns && !w->f.steal_ns)
		return 0;	/* time no sample placed is a stack too */
	/* the labels' strings first, then the locations' (the string table's
	 * order, as when the sample was made before its locations) */
	int err = stack_labels(b, rs, st, w);
	if (err)
		return err;
	if (b->frames_of != rs->frames || !b->stack_memo) {
		free(b->frame_locs);
		b->frame_locs = NULL;
		b->frame_locs_cap = 0;
		if (!b->stack_memo &&
		    !(b->stack_memo = malloc(STACK_MEMO * sizeof(*b->stack_memo))))
			return -ENOMEM;
		memset(b->stack_memo, 0xff, STACK_MEMO * sizeof(*b->stack_memo));	/* empty */
		b->frames_of = rs->frames;
	}
	struct stack_memo *m = &b->stack_memo[w->stack % STACK_MEMO];
	if (m->len != STACK_MEMO_EMPTY && m->stack == w->stack)
		return put_stack_sample(b, m->bytes, m->len, w->f.cpu_ns, w->f.steal_ns);
	uint32_t nloc = stacktab__depth(rs->frames, w->stack);
	if (grow_bytes((char **)&b->loc_bytes, &b->loc_bytes_cap, (size_t)nloc * PPROF_VARINT_MAX,
		       1024))
		return -ENOMEM;
	size_t at = 0;	/* the location ids packed so far */
	for (uint32_t n = 0; n < nloc; n++) {
		uint32_t fid = stacktab__frame_id(rs->frames, w->stack, n);
		if (grow_array_to((void **)&b->frame_locs, &b->frame_locs_cap, fid,
				  sizeof(*b->frame_locs), 1024))
			return -ENOMEM;
		if (!b->frame_locs[fid]) {
			struct stack_frame f = stacktab__frame_of(rs->frames, fid);
			uint32_t pair[2] = { f.function, f.dso };
			int64_t loc = stack_location(b, rs->names, pair);
			if (loc < 0)
				return str_error(b);
			b->frame_locs[fid] = (uint32_t)loc;
		}
		at += pprof_wire__varint(b->loc_bytes + at, b->frame_locs[fid]);
	}
	if (at && at <= STACK_MEMO_BYTES) {
		*m = (struct stack_memo){ .stack = w->stack, .len = (uint8_t)at };
		memcpy(m->bytes, b->loc_bytes, at);
	}
	return put_stack_sample(b, b->loc_bytes, at, w->f.cpu_ns, w->f.steal_ns);
}

static int from_stacks(struct builder *b, const struct table *t,
		       const struct report_extras *x)
{
	struct report_stack rs = { .attrs = t->attrs, .names = x->names,
				   .frames = x->stack_frames };
	for (uint32_t i = 0; i < x->stacks->n; i++) {
		int err = stack_sample(b, &rs, x->stacks, &x->stacks->v[i]);
		if (err)
			return err;
	}
	return 0;
}

/* A gzip stream written to out as its input comes, deflated by ISA-L's
 * igzip at its level 1. zlib's fastest level (Go's runtime/pprof's
 * choice) took a fifth of an 8-minute recording's profile: 0.23 s for
 * its 30 MB, where igzip takes 0.04 s for a file 5 % smaller (bench/
 * RESULTS.md, round 15). One gzip member (RFC 1952) whose deflate stream
 * takes the runs' segments as they were deflated (gz_segment): its
 * header and trailer are written here, the CRC-32 of all it holds
 * combined from theirs. Any gzip reader reads it (go tool pprof,
 * Pyroscope, Python's gzip); the bytes inside are what they were. */
struct gz {
	struct isal_zstream *z;	/* at a fixed address (pprof_zstream.h) */
	FILE *out;
	int err;
	uint32_t crc;		/* of what it holds so far */
	uint64_t len;
};

static void gz_write(struct gz *g, const void *buf, size_t len)
{
	if (!g->err && fwrite(buf, 1, len, g->out) != len)
		g->err = -EIO;
}

static int gz_begin(struct gz *g, FILE *out)
{
	/* deflate (8), no flags, no time, no extra flags, OS unknown */
	static const uint8_t header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff };
	*g = (struct gz){ .out = out };
	if (!(g->z = pprof_zstream__new()))
		return -ENOMEM;
	isal_deflate_init(g->z);
	g->z->level = 1;
	g->z->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
	g->z->level_buf = malloc(g->z->level_buf_size);
	g->z->gzip_flag = IGZIP_DEFLATE;
	g->z->flush = NO_FLUSH;
	if (!g->z->level_buf) {
		pprof_zstream__free(g->z);
		return -ENOMEM;
	}
	gz_write(g, header, sizeof(header));
	return 0;
}

/* len bytes of buf, the last of the input when last. */
static void gz_put(struct gz *g, const uint8_t *buf, size_t len, bool last)
{
	static __thread uint8_t zbuf[1 << 16];
	g->crc = crc32_gzip_refl(g->crc, buf, len);
	g->len += len;
	g->z->next_in = (uint8_t *)buf;
	g->z->avail_in = (uint32_t)len;
	g->z->end_of_stream = last;
	while (!g->err) {
		g->z->next_out = zbuf;
		g->z->avail_out = sizeof(zbuf);
		if (isal_deflate(g->z) != COMP_OK)
			g->err = -EIO;
		gz_write(g, zbuf, sizeof(zbuf) - g->z->avail_out);
		/* with the last, until the stream has ended; else until all
		 * is taken and nothing is left to write */
		if (last ? g->z->internal_state.state == ZSTATE_END :
		    !g->z->avail_in && g->z->avail_out)
			break;
	}
}

/* What was put so far deflated to a byte's end, and nothing after it
 * looking back past it: a segment may follow. */
static void gz_flush(struct gz *g)
{
	g->z->flush = FULL_FLUSH;
	gz_put(g, NULL, 0, false);
	g->z->flush = NO_FLUSH;
}

/* A run's deflated segment, as it is (after gz_flush). */
static void gz_segment(struct gz *g, const uint8_t *z, const struct run *r)
{
	gz_write(g, z, r->zlen);
	g->crc = (uint32_t)crc32_combine(g->crc, r->crc, (z_off_t)r->len);
	g->len += r->len;
}

/* The stream ended (its last put), its trailer written: its CRC-32 and
 * length (modulo 2^32), little-endian. */
static int gz_end(struct gz *g)
{
	uint8_t trailer[8];
	for (int i = 0; i < 4; i++) {
		trailer[i] = (uint8_t)(g->crc >> (8 * i));
		trailer[4 + i] = (uint8_t)(g->len >> (8 * i));
	}
	gz_write(g, trailer, sizeof(trailer));
	free(g->z->level_buf);
	pprof_zstream__free(g->z);
	g->z = NULL;
	return g->err;
}

/* The packed samples into g: the runs' segments as they are, then those
 * since the last run. */
static int gz_samples(struct gz *g, struct builder *b)
{
	int err = take_run(b);
	if (b->nruns)
		gz_flush(g);
	for (uint32_t i = 0; i < b->nruns && !err; i++) {
		const uint8_t *z = run_bytes(b, &b->runs[i]);
		if (z)
			gz_segment(g, z, &b->runs[i]);
		else
			err = str_error(b);
	}
	if (!err)
		gz_put(g, b->samples, b->samples_len, false);
	return err;
}

/* protobuf-c's bytes as it packs them, gathered and given to a gz a
 * buffer at a time (it appends a field at a time, often a few bytes). */
struct gz_buffer {
	ProtobufCBuffer base;
	struct gz *g;
	size_t len;
	uint8_t buf[1 << 16];
};

static void gz_buffer_flush(struct gz_buffer *w)
{
	if (w->len)
		gz_put(w->g, w->buf, w->len, false);
	w->len = 0;
}

static void gz_buffer_append(ProtobufCBuffer *base, size_t len, const uint8_t *data)
{
	struct gz_buffer *w = (struct gz_buffer *)base;
	if (w->len + len > sizeof(w->buf))
		gz_buffer_flush(w);
	if (len >= sizeof(w->buf)) {
		gz_put(w->g, data, len, false);
		return;
	}
	memcpy(w->buf + w->len, data, len);
	w->len += len;
}

/* A gz_buffer for g, or NULL. */
static struct gz_buffer *gz_buffer_new(struct gz *g)
{
	struct gz_buffer *w = malloc(sizeof(*w));
	if (w)
		*w = (struct gz_buffer){ .base.append = gz_buffer_append, .g = g };
	return w;
}

/* Which of a Profile's fields pack_part packs: those before the samples
 * (1, sample_type), the mappings after them (3: gz_functions writes 4 and
 * 5, locations and functions), those after the string table (7 on). */
enum part { PART_HEAD, PART_MIDDLE, PART_TAIL };

/* Part of p into g, packed by protobuf-c as it is made: the rest of a
 * long recording's profile was 4.6 MB made whole before it was
 * compressed. */
static int pack_part(struct gz *g, const Profile *p, enum part part)
{
	Profile q = *p;
	q.n_sample = 0;
	q.n_string_table = 0;
	if (part != PART_HEAD) {
		q.n_sample_type = 0;
		q.sample_type = NULL;
	}
	if (part != PART_MIDDLE)
		q.n_mapping = q.n_location = q.n_function = 0;
	if (part != PART_TAIL) {	/* 7 on */
		q.drop_frames = q.keep_frames = 0;
		q.time_nanos = 0;
		q.period_type = NULL;
		q.period = q.duration_nanos = q.default_sample_type = 0;
		q.n_comment = 0;
	}
	struct gz_buffer *w = gz_buffer_new(g);
	if (!w)
		return -ENOMEM;
	perftools__profiles__profile__pack_to_buffer(&q, &w->base);
	gz_buffer_flush(w);
	free(w);
	return 0;
}

/* The string table into g (field 6), as protobuf-c packs a repeated
 * string: each string's tag, length and bytes. The long strings come
 * back from the store a batch at a time, in the order of their ids. */
static int gz_strings(struct gz *g, struct builder *b)
{
	struct gz_buffer *w = gz_buffer_new(g);
	if (!w)
		return -ENOMEM;
	uint32_t j = 0, k = 0;	/* the next long string, the next batch */
	const char *batch = NULL;	/* batch k - 1, read back */
	for (uint32_t i = 0; i < b->strings.count; i++) {
		const char *bytes = strtab__str(&b->strings, i);
		size_t len = strtab__len(&b->strings, i);
		if (j < b->nlongs && b->longs[j].id == i) {
			const struct long_string *l = &b->longs[j];
			if (k < b->nbatches && j == b->batches[k].first) {
				const struct long_batch *next = &b->batches[k++];
				if (!(batch = read_back(b, next->off, next->len)))
					break;
			}
			bytes = j >= b->nlongs_put ? b->pending + l->off :
				batch + (l->off - b->batches[k - 1].off);
			len = l->len;
			j++;
		}
		uint8_t head[1 + PPROF_VARINT_MAX] = { 6 << 3 | 2 };
		size_t n = 1 + pprof_wire__varint(head + 1, len);
		w->base.append(&w->base, n, head);
		w->base.append(&w->base, len, (const uint8_t *)bytes);
	}
	gz_buffer_flush(w);
	free(w);
	return b->store_err;
}

/* The locations (field 4), then the functions (field 5), into g: each
 * function's id is its location's, a location one line of its function
 * at no address. */
static int gz_functions(struct gz *g, const struct builder *b)
{
	struct gz_buffer *w = gz_buffer_new(g);
	if (!w)
		return -ENOMEM;
	uint8_t buf[1 + PPROF_VARINT_MAX + 128];	/* either message is under 64 bytes */
	for (int field = 4; field <= 5; field++)
		for (uint32_t i = 0; i < b->nfunctions; i++) {
			const struct function *fn = &b->functions[i];
			Function f;
			Location loc;
			Line line, *lines[1] = { &line };
			size_t len, n;
			buf[0] = (uint8_t)(field << 3 | 2);
			if (field == 4) {
				perftools__profiles__line__init(&line);
				line.function_id = i + 1;
				perftools__profiles__location__init(&loc);
				loc.id = i + 1;
				loc.mapping_id = fn->mapping;
				loc.n_line = 1;
				loc.line = lines;
				len = pprof_wire__location_size(&loc);
				n = 1 + pprof_wire__varint(buf + 1, len);
				n += pprof_wire__location(buf + n, &loc);
			} else {
				perftools__profiles__function__init(&f);
				f.id = i + 1;
				f.name = f.system_name = fn->name;
				f.filename = fn->file;
				len = pprof_wire__function_size(&f);
				n = 1 + pprof_wire__varint(buf + 1, len);
				n += pprof_wire__function(buf + n, &f);
			}
			w->base.append(&w->base, n, buf);
		}
	gz_buffer_flush(w);
	free(w);
	return 0;
}

static int pack(struct builder *b, const struct table *t, const struct report_extras *x,
		FILE *out)
{
	int64_t cpu = str(b, "cpu"), steal = str(b, "steal"), ns = str(b, "nanoseconds");
	int64_t note = b->steal_known ? 0 : str(b, "steal unknown: recorded without "
						"the means to measure it (no steal values)");
	if (cpu < 0 || steal < 0 || ns < 0 || note < 0)
		return str_error(b);
	ValueType types[2], period_type;
	ValueType *type_ptrs[2] = { &types[0], &types[1] };
	for (int k = 0; k < 2; k++) {
		perftools__profiles__value_type__init(&types[k]);
		types[k].type = k ? steal : cpu;
		types[k].unit = ns;
	}
	perftools__profiles__value_type__init(&period_type);
	period_type.type = cpu;
	period_type.unit = ns;
	Profile p;
	perftools__profiles__profile__init(&p);
	p.n_sample_type = b->steal_known ? 2 : 1;
	p.sample_type = type_ptrs;
	p.n_mapping = b->nmappings;
	p.mapping = b->mappings;
	p.period_type = &period_type;
	p.period = (int64_t)t->interval_ns;
	p.default_sample_type = cpu;	/* else readers show the last, steal */
	p.duration_nanos = x ? (int64_t)x->duration_ns : 0;
	if (note) {
		p.n_comment = 1;
		p.comment = &note;
	}
	/* the fields in their numbers' order, as protobuf-c packs them:
	 * sample_type (1), the samples (2), mappings (3), locations (4),
	 * functions (5), the string table (6), the rest (7 on) */
	struct gz g;
	int err = gz_begin(&g, out);
	if (!err) {
		err = pack_part(&g, &p, PART_HEAD);
		err = err ? err : gz_samples(&g, b);
		err = err ? err : pack_part(&g, &p, PART_MIDDLE);
		err = err ? err : gz_functions(&g, b);
		err = err ? err : gz_strings(&g, b);
		err = err ? err : pack_part(&g, &p, PART_TAIL);
		gz_put(&g, NULL, 0, true);
		int gerr = gz_end(&g);
		err = err ? err : gerr;
	}
	return err;
}

static void builder_free(void *ctx)
{
	struct builder *b = ctx;
	if (!b)
		return;
	for (uint32_t i = 0; i < b->nmappings; i++)
		free(b->mappings[i]);
	free(b->samples);
	for (size_t i = 0; i < 2 * LABELS; i++)
		free(b->memo[i].s);
	for (uint32_t i = 0; i < b->nruns; i++)
		free(b->runs[i].z);
	free(b->runs);
	run_deflater__free(b->deflater);
	free(b->locs);
	free(b->loc_bytes);
	free(b->raw_ids);
	free(b->loc_ids);
	free(b->frame_locs);
	free(b->stack_memo);
	free(b->longs);
	hindex__release(&b->long_index);
	for (size_t i = 0; i < LONG_SEEN; i++)
		free(b->seen[i].bytes);
	free(b->pending);
	free(b->batches);
	free(b->back);
	for (unsigned i = 0; i < LABELS_KEPT; i++)
		free(b->labels[i].bytes);
	strtab__release(&b->raw);
	strtab__release(&b->loc_keys);
	free(b->mappings);
	free(b->functions);
	strtab__release(&b->strings);
	strtab__release(&b->mapping_keys);
	strtab__release(&b->function_keys);
	free(b);
}

static void *builder_new(const struct row_store *store)
{
	struct builder *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->store = store;
	strtab__init(&b->strings);
	strtab__init(&b->mapping_keys);
	strtab__init(&b->function_keys);
	strtab__init(&b->loc_keys);
	strtab__init(&b->raw);
	hindex__init(&b->long_index);
	if (str(b, "") != 0) {	/* string 0 is "" */
		builder_free(b);
		return NULL;
	}
	return b;
}

/* A gone thread's stack row, packed as it comes (REPORT_STREAMS_STACKS):
 * the same sample, in the same order, as from x->stacks at the end. */
static int stream_stack(void *ctx, const struct report_stack *rs, const struct rows *st,
			const struct row *w)
{
	struct builder *b = ctx;
	b->streamed = true;
	b->steal_known = !rs->no_steal;
	return stack_sample(b, rs, st, w);
}

static int write_pprof(FILE *out, const struct table *t, const struct report_extras *x)
{
	struct builder *b = x && x->stream ? x->stream : builder_new(NULL);
	if (!b)
		return -ENOMEM;
	/* streamed with steal values, none measured: packed again without
	 * (a source that said so at its start had them left out: a third of
	 * a profile's making, for a recording without steal) */
	bool known = !x || x->steal_known;
	int err = b->streamed && b->steal_known && !known ? cpu_value_only(b) : 0;
	if (b->streamed && !b->steal_known && known)
		err = -EINVAL;	/* a file's META said otherwise: cannot be */
	b->steal_known = known;
	if (!(x && x->stream))
		err = x && x->stacks ? from_stacks(b, t, x) : from_rows(b, t);
	if (!err)
		err = pack(b, t, x, out);
	if (!(x && x->stream))
		builder_free(b);
	return err ? err : ferror(out) ? -EIO : 0;
}

const struct report_writer report_pprof = {
	.name = "pprof", .write = write_pprof,
	.needs = REPORT_NEEDS_STACKS | REPORT_NEEDS_FUNCTION | REPORT_NO_ROWS,
	.by = "thread,function,account",
	.stream_new = builder_new, .stream_stack = stream_stack, .stream_free = builder_free,
};
