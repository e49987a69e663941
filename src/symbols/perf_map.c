/* perf_map: see perf_map.h. */
#include "perf_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "../collect/procfs.h"
#include "../core/grow.h"
#include "../collect/clock.h"
#include "../core/units.h"
#include "../core/banned.h"

struct perf_map {
	uint32_t pid;
	bool used;
	off_t size;		/* of the file when read */
	struct timespec mtime;	/* likewise: a file rewritten to its size */
	uint64_t checked_ns;	/* when the file was last looked at */
	bool checked;
	struct jit_func *v;	/* sorted by start, not overlapping */
	uint32_t n;
	char *text;		/* the names, back to back */
	size_t bytes;		/* v and text, counted in perf_maps' bytes */
	uint64_t last_use;
};

/* A table read, or let go: its memory out of the count. */
static void drop(struct perf_maps *m, struct perf_map *map)
{
	m->bytes -= map->bytes;
	m->entries -= map->n;
	free(map->v);
	free(map->text);
	map->v = NULL;
	map->text = NULL;
	map->n = 0;
	map->bytes = 0;
	map->size = -1;
}

/* Within max_bytes again: the least recently used tables go, but keep. */
static void bound(struct perf_maps *m, const struct perf_map *keep)
{
	while (m->max_bytes && m->bytes > m->max_bytes) {
		struct perf_map *lru = NULL;
		for (uint32_t i = 0; i < m->n; i++) {
			struct perf_map *x = &m->v[i];
			if (x->used && x != keep && x->v && (!lru || x->last_use < lru->last_use))
				lru = x;
		}
		if (!lru)
			return;
		drop(m, lru);
		m->evicted++;
	}
}

void perf_maps__init(struct perf_maps *m, const char *root)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->root, sizeof(m->root), "%s", strcmp(root, "/") ? root : "");
	hindex__init(&m->index);
	m->max_file_bytes = PERF_MAP_MAX_BYTES;
	m->recheck_ns = PERF_MAP_RECHECK_NS;
	m->rate = PERF_MAP_RATE;
	m->clock_ns = clock_mono_ns;
	m->budget = PERF_MAP_RATE;
}

void perf_maps__release(struct perf_maps *m)
{
	for (uint32_t i = 0; i < m->n; i++) {
		free(m->v[i].v);
		free(m->v[i].text);
	}
	free(m->v);
	free(m->free_slots);
	hindex__release(&m->index);
	memset(m, 0, sizeof(*m));
}

struct key {
	const struct perf_maps *m;
	uint32_t pid;
};

static bool map_eq(const void *ctx, uint32_t id)
{
	const struct key *k = ctx;
	return k->m->v[id].used && k->m->v[id].pid == k->pid;
}

struct line {
	struct jit_func f;
	size_t name;		/* offset in the text */
	uint32_t order;		/* later lines win */
};

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	if (x->f.start != y->f.start)
		return x->f.start < y->f.start ? -1 : 1;
	return (y->order > x->order) - (y->order < x->order);	/* later first */
}

/* Reads the map file (fd, which it closes) into map; a line that is not
 * "START SIZE NAME" is skipped (a JIT that is writing it). No more than
 * size bytes are read: the file may grow as it is read. */
static int load(struct perf_maps *m, struct perf_map *map, int fd, const struct stat *st)
{
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -errno;
	}
	off_t size = st->st_size, done = 0;
	struct line *v = NULL;
	uint32_t n = 0, cap = 0;
	char *buf = NULL, *text = NULL;
	size_t bcap = 0, tlen = 0, tcap = 0;
	ssize_t len;
	int err = 0;
	while (!err && done < size && (len = getline(&buf, &bcap, f)) > 0) {
		done += len;
		char *p = buf, *end;
		uint64_t start = strtoull(p, &end, 16), sz;
		if (end == p || *end != ' ')
			continue;
		sz = strtoull(p = end + 1, &end, 16);
		if (end == p || *end != ' ' || !sz || start + sz < start)
			continue;
		char *name = end + 1;
		size_t nl = strcspn(name, "\n");
		if (grow_bytes(&text, &tcap, tlen + nl + 1, 4096) ||
		    grow_array((void **)&v, &cap, n, sizeof(*v), 256)) {
			err = -ENOMEM;
			break;
		}
		memcpy(text + tlen, name, nl);
		text[tlen + nl] = '\0';
		v[n] = (struct line){ { start, start + sz, NULL }, tlen, n };
		tlen += nl + 1;
		n++;
	}
	free(buf);
	fclose(f);
	if (err) {
		free(v);
		free(text);
		return err;
	}
	qsort(v, n, sizeof(*v), cmp_line);
	struct jit_func *out = malloc((n ? n : 1) * sizeof(*out));
	if (!out) {
		free(v);
		free(text);
		return -ENOMEM;
	}
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (k && out[k - 1].start == v[i].f.start)
			continue;	/* the later of one start */
		if (k && out[k - 1].end > v[i].f.start)
			out[k - 1].end = v[i].f.start;
		out[k] = v[i].f;
		out[k++].name = text + v[i].name;
	}
	free(v);
	drop(m, map);
	map->v = out;
	map->n = k;
	map->text = text;
	map->size = size;
	map->mtime = st->st_mtim;
	map->bytes = (n ? n : 1) * sizeof(*out) + tcap;
	m->bytes += map->bytes;
	m->entries += k;
	bound(m, map);
	return 0;
}

/* The effective uid of pid by /proc, or -1 (gone, or not to be read). */
static int64_t process_uid(const struct perf_maps *m, uint32_t pid)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "proc/%u/status", pid);
	char *status = procfs_read(m->root[0] ? m->root : "/", rel, NULL);
	if (!status)
		return -1;
	const char *u = strstr(status, "\nUid:");
	unsigned long real, eff;
	int64_t uid = u && sscanf(u + 5, "%lu %lu", &real, &eff) == 2 ? (int64_t)eff : -1;
	free(status);
	return uid;
}

/* Whether bytes may be read now: a bucket that fills at m->rate a second
 * up to one second's worth. */
static bool take_budget(struct perf_maps *m, uint64_t now, uint64_t bytes)
{
	uint64_t dt = now - m->budget_ns;
	/* dt < 1e9 and a rate below 2^34 fit the product in 64 bits */
	uint64_t add = dt >= NSEC_PER_SEC || m->rate >= (1ull << 34) ? m->rate :
		       dt * m->rate / NSEC_PER_SEC;
	m->budget = m->budget + add > m->rate ? m->rate : m->budget + add;
	m->budget_ns = now;
	if (bytes > m->rate)
		bytes = m->rate;	/* a file larger than a second's worth: a full bucket */
	if (bytes > m->budget)
		return false;
	m->budget -= bytes;
	return true;
}

/*
 * Opens the map file of pid when it may be read and has changed since
 * map was read: a file descriptor, or -ENOENT (none), -EPERM (not to be
 * trusted), -EEXIST (as read). st gets its status.
 */
static int open_map(struct perf_maps *m, struct perf_map *map, uint32_t pid, struct stat *st)
{
	char path[320];
	snprintf(path, sizeof(path), "%s/tmp/perf-%u.map", m->root, pid);
	/* O_NOFOLLOW: a link in /tmp to another user's file is not read;
	 * O_NONBLOCK: nor does a FIFO there hold the reader */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0) {
		m->refused++;	/* ELOOP: a link */
		return -EPERM;
	}
	int64_t uid = -1;
	bool ok = !fstat(fd, st) && S_ISREG(st->st_mode);
	if (ok && st->st_uid != 0)
		ok = (uid = process_uid(m, pid)) >= 0 && (uint64_t)uid == st->st_uid;
	ok = ok && (uint64_t)st->st_size <= m->max_file_bytes;
	if (!ok) {
		m->refused++;
		close(fd);
		return -EPERM;
	}
	if (st->st_size == map->size && st->st_mtim.tv_sec == map->mtime.tv_sec &&
	    st->st_mtim.tv_nsec == map->mtime.tv_nsec) {
		close(fd);
		return -EEXIST;
	}
	return fd;
}

/* The map of pid as it may be read now: looked at again at most every
 * m->recheck_ns, read again when changed and the rate allows. */
static void refresh(struct perf_maps *m, struct perf_map *map, uint32_t pid)
{
	uint64_t now = m->clock_ns();
	if (map->checked && now - map->checked_ns < m->recheck_ns)
		return;
	struct stat st;
	int fd = open_map(m, map, pid, &st);
	/* no file yet and none read: looked for again at the next lookup (a
	 * JIT writes its map as it starts; a failed open costs what the stat
	 * of each lookup did before) */
	if (fd == -ENOENT && map->size < 0)
		return;
	if (fd < 0) {
		map->checked = true;
		map->checked_ns = now;
		return;
	}
	if (!take_budget(m, now, (uint64_t)st.st_size)) {
		close(fd);	/* not now: looked at again on the next lookup */
		return;
	}
	map->checked = true;
	map->checked_ns = now;
	if (load(m, map, fd, &st))
		map->size = -1;	/* read again at the next recheck */
}

const struct jit_func *perf_maps__find(struct perf_maps *m, uint32_t pid, uint64_t addr)
{
	struct key k = { m, pid };
	uint64_t h = hash_mix(pid ^ 0x9e3779b97f4a7c15ULL);
	uint32_t id = hindex__find(&m->index, h, map_eq, &k);
	if (id == HINDEX_NONE) {
		if (m->nfree) {
			id = m->free_slots[--m->nfree];
		} else {
			if (grow_array((void **)&m->v, &m->cap, m->n, sizeof(*m->v), 16))
				return NULL;
			id = m->n++;
		}
		if (hindex__insert(&m->index, h, id)) {
			m->v[id] = (struct perf_map){ 0 };
			return NULL;
		}
		m->v[id] = (struct perf_map){ .pid = pid, .used = true, .size = -1 };
	}
	struct perf_map *map = &m->v[id];
	map->last_use = ++m->tick;
	refresh(m, map, pid);
	uint32_t lo = 0, hi = map->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (map->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < map->v[lo - 1].end ? &map->v[lo - 1] : NULL;
}

void perf_maps__forget(struct perf_maps *m, uint32_t pid)
{
	struct key k = { m, pid };
	uint64_t h = hash_mix(pid ^ 0x9e3779b97f4a7c15ULL);
	uint32_t id = hindex__find(&m->index, h, map_eq, &k);
	if (id == HINDEX_NONE)
		return;
	hindex__remove(&m->index, h, id);
	drop(m, &m->v[id]);
	m->v[id] = (struct perf_map){ 0 };
	if (!grow_array((void **)&m->free_slots, &m->free_cap, m->nfree,
			sizeof(*m->free_slots), 16))
		m->free_slots[m->nfree++] = id;
}
