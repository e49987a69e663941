/* symbolizer: see symbolizer.h. */
#include "symbolizer.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <elfutils/libdwfl.h>

#include "elf_symtab.h"
#include "perf_map.h"
#include "../collect/procfs.h"
#include "../core/hindex.h"
#include "../core/strtab.h"
#include "../core/banned.h"

struct ksym {
	uint64_t addr;
	uint32_t name;		/* in names */
};

struct dso {
	uint32_t path;		/* string id */
	Dwfl *dwfl;		/* NULL: could not be opened, or shared */
	Dwfl_Module *mod;
	uint32_t build_id;	/* string id of its hex, or HINDEX_NONE */
	struct elf_symtab *tab;	/* its functions, read on first lookup;
				 * shared with files of its build-id */
	bool owns_tab;
	bool opened;		/* tried: dwfl says what came of it */
	uint32_t shares;	/* 1 + the dso whose module it uses, or 0 */
	uint64_t last_use;	/* the symbolizer's tick at its last lookup */
};

struct symbolizer {
	char root[256];
	struct strtab names;	/* paths, and names a lookup returns */
	struct dso *dsos;
	uint32_t ndsos, cap;
	struct hindex index;
	struct hindex by_build_id;	/* build-id string id -> dso */
	struct perf_maps jit;	/* /tmp/perf-PID.map of JITs */
	struct ksym *ksyms;	/* sorted by address */
	uint32_t nksyms;
	int kallsyms;		/* 0 not read yet, 1 read, -1 unusable */
	int vdso_fd;		/* 0 not made yet, -1 unusable */
	/* bounds (0: none): files held open, and their tables' bytes */
	uint32_t max_files;
	size_t max_bytes;
	uint32_t open_files;
	size_t tab_bytes;
	uint64_t tick, evicted;
};

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct symbolizer *symbolizer__new(const char *root)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	snprintf(s->root, sizeof(s->root), "%s", strcmp(root, "/") ? root : "");
	strtab__init(&s->names);
	hindex__init(&s->index);
	hindex__init(&s->by_build_id);
	perf_maps__init(&s->jit, root);
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->ndsos; i++) {
		if (s->dsos[i].dwfl)
			dwfl_end(s->dsos[i].dwfl);
		if (s->dsos[i].owns_tab && s->dsos[i].tab) {
			elf_symtab__release(s->dsos[i].tab);
			free(s->dsos[i].tab);
		}
	}
	free(s->dsos);
	free(s->ksyms);
	perf_maps__release(&s->jit);
	if (s->vdso_fd > 0)
		close(s->vdso_fd);
	strtab__release(&s->names);
	hindex__release(&s->index);
	hindex__release(&s->by_build_id);
	free(s);
}

static int cmp_ksym(const void *a, const void *b)
{
	uint64_t x = ((const struct ksym *)a)->addr, y = ((const struct ksym *)b)->addr;
	return (x > y) - (x < y);
}

/* Text symbols of /proc/kallsyms, sorted. Unusable when kptr_restrict
 * hides the addresses (all zero). */
static void read_kallsyms(struct symbolizer *s)
{
	size_t len;
	char *text = procfs_read(s->root[0] ? s->root : "/", "proc/kallsyms", &len);
	s->kallsyms = -1;
	if (!text)
		return;
	uint32_t cap = 0;
	bool nonzero = false;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *end;
		uint64_t addr = strtoull(line, &end, 16);
		if (end[0] != ' ' || !end[1] || end[2] != ' ')
			continue;
		char type = end[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		char *name = end + 3;
		size_t n = strcspn(name, "\t");	/* drop "\t[module]" */
		if (s->nksyms == cap) {
			cap = cap ? cap * 2 : 65536;
			struct ksym *k = realloc(s->ksyms, cap * sizeof(*k));
			if (!k)
				break;
			s->ksyms = k;
		}
		uint32_t id = strtab__intern(&s->names, name, n);
		if (id == HINDEX_NONE)
			break;
		s->ksyms[s->nksyms++] = (struct ksym){ addr, id };
		nonzero |= addr != 0;
	}
	free(text);
	if (!nonzero || !s->nksyms)
		return;
	qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), cmp_ksym);
	s->kallsyms = 1;
}

void symbolizer__read_kernel(struct symbolizer *s)
{
	if (!s->kallsyms)
		read_kallsyms(s);
}

static int kernel_lookup(struct symbolizer *s, uint64_t addr, struct sym *out)
{
	if (!s->kallsyms)
		read_kallsyms(s);
	if (s->kallsyms < 0)
		return -ENOENT;
	uint32_t lo = 0, hi = s->nksyms;	/* first symbol above addr */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (s->ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	const struct ksym *k = &s->ksyms[lo - 1];
	out->name = strtab__str(&s->names, k->name);
	out->start = k->addr;
	out->end = lo < s->nksyms ? s->ksyms[lo].addr : addr + 1;
	return 0;
}

struct dso_key {
	const struct symbolizer *s;
	uint32_t path;
};

static bool dso_eq(const void *ctx, uint32_t id)
{
	const struct dso_key *k = ctx;
	return k->s->dsos[id].path == k->path;
}

static struct dso *open_dso(struct symbolizer *s, const char *path);
static void open_file(struct symbolizer *s, struct dso *d);
static void bound(struct symbolizer *s, const struct dso *keep);

struct bid_key {
	const struct symbolizer *s;
	uint32_t build_id;
};

static bool bid_eq(const void *ctx, uint32_t id)
{
	const struct bid_key *k = ctx;
	return k->s->dsos[id].build_id == k->build_id && k->s->dsos[id].dwfl;
}

/* Notes d's build-id; when a file with the same one is open already, d
 * uses its module and lets its own go. */
static void share_by_build_id(struct symbolizer *s, struct dso *d)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(d->mod, &bits, &vaddr);
	if (n <= 0 || n > 64)
		return;
	char hex[129];
	for (int i = 0; i < n; i++) {
		static const char digits[] = "0123456789abcdef";
		hex[2 * i] = digits[bits[i] >> 4];
		hex[2 * i + 1] = digits[bits[i] & 15];
	}
	d->build_id = strtab__intern(&s->names, hex, (size_t)n * 2);
	if (d->build_id == HINDEX_NONE)
		return;
	struct bid_key k = { s, d->build_id };
	uint64_t h = hash_mix(d->build_id ^ 0x2127599bf4325c37ULL);
	uint32_t other = hindex__find(&s->by_build_id, h, bid_eq, &k);
	if (other == HINDEX_NONE) {
		hindex__insert(&s->by_build_id, h, (uint32_t)(d - s->dsos));
		return;
	}
	dwfl_end(d->dwfl);
	d->dwfl = NULL;		/* not ours to end */
	d->mod = s->dsos[other].mod;
	d->tab = s->dsos[other].tab;	/* NULL until one of them looks up */
	d->shares = other + 1;
}

int symbolizer__build_id(struct symbolizer *s, const char *dso, char *buf,
			 size_t size)
{
	struct dso *d = open_dso(s, dso);
	if (d && !d->opened) {
		open_file(s, d);
		d->last_use = ++s->tick;
		bound(s, d);
	}
	if (!d || d->build_id == HINDEX_NONE)
		return -ENOENT;
	snprintf(buf, size, "%s", strtab__str(&s->names, d->build_id));
	return 0;
}

/* The kernel's vDSO, as this process has it mapped, copied into a memory
 * file that libdwfl reads as it reads any (path: /proc/self/fd/N). */
static int vdso_file(struct symbolizer *s, char *path, size_t size)
{
	if (s->vdso_fd < 0)
		return -ENOENT;
	if (!s->vdso_fd) {
		s->vdso_fd = -1;
		uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
		char *maps = procfs_read("/", "proc/self/maps", NULL);
		char *line = maps ? strstr(maps, "[vdso]") : NULL;
		while (line && line > maps && line[-1] != '\n')
			line--;
		unsigned long long start, end;
		int fd = -1;
		if (base && line && sscanf(line, "%llx-%llx", &start, &end) == 2 &&
		    start == base && end > start && end - start <= (64u << 10) &&
		    (fd = memfd_create("cpuledger-vdso", MFD_CLOEXEC)) >= 0 &&
		    write(fd, (const void *)base, end - start) == (ssize_t)(end - start))
			s->vdso_fd = fd;
		else if (fd >= 0)
			close(fd);
		free(maps);
		if (s->vdso_fd < 0)
			return -ENOENT;
	}
	snprintf(path, size, "/proc/self/fd/%d", s->vdso_fd);
	return 0;
}

/* The dso of path, opened on first use; NULL when memory runs out. */
static struct dso *open_dso(struct symbolizer *s, const char *path)
{
	uint32_t pid = strtab__intern(&s->names, path, strlen(path));
	if (pid == HINDEX_NONE)
		return NULL;
	struct dso_key k = { s, pid };
	uint64_t h = hash_mix(pid ^ 0xd6e8feb86659fd93ULL);
	uint32_t id = hindex__find(&s->index, h, dso_eq, &k);
	if (id != HINDEX_NONE)
		return &s->dsos[id];
	if (s->ndsos == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 32;
		struct dso *d = realloc(s->dsos, cap * sizeof(*d));
		if (!d)
			return NULL;
		s->dsos = d;
		s->cap = cap;
	}
	if (hindex__insert(&s->index, h, s->ndsos))
		return NULL;
	struct dso *d = &s->dsos[s->ndsos++];
	*d = (struct dso){ .path = pid, .build_id = HINDEX_NONE };
	return d;
}

/* Opens d's file (once, and again after it was let go). */
static void open_file(struct symbolizer *s, struct dso *d)
{
	const char *path = strtab__str(&s->names, d->path);
	d->opened = true;
	char full[4096];
	if (!strcmp(path, "[vdso]")) {
		/* every process has the kernel's one image: ours, copied */
		if (vdso_file(s, full, sizeof(full)))
			return;
	} else if (path[0] != '/') {
		return;	/* [anon], [heap]...: no file to read */
	} else {
		snprintf(full, sizeof(full), "%s%s", s->root, path);
	}
	d->dwfl = dwfl_begin(&callbacks);
	if (!d->dwfl)
		return;
	d->mod = dwfl_report_offline(d->dwfl, path, full, -1);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (!d->mod) {
		dwfl_end(d->dwfl);
		d->dwfl = NULL;
		return;
	}
	s->open_files++;
	share_by_build_id(s, d);
	if (!d->dwfl)
		s->open_files--;	/* its twin's module serves */
}

/* Lets d's file and table go (it opens again when next looked up), with
 * the files that shared its module. */
static void let_go(struct symbolizer *s, struct dso *d)
{
	uint32_t self = (uint32_t)(d - s->dsos);
	if (d->dwfl && d->build_id != HINDEX_NONE)
		hindex__remove(&s->by_build_id, hash_mix(d->build_id ^ 0x2127599bf4325c37ULL),
			       self);
	for (uint32_t i = 0; i < s->ndsos; i++)
		if (s->dsos[i].shares == self + 1)
			s->dsos[i] = (struct dso){ .path = s->dsos[i].path,
						   .build_id = HINDEX_NONE };
	if (d->owns_tab) {
		s->tab_bytes -= d->tab->bytes;
		elf_symtab__release(d->tab);
		free(d->tab);
	}
	if (d->dwfl) {
		dwfl_end(d->dwfl);
		s->open_files--;
	}
	*d = (struct dso){ .path = d->path, .build_id = HINDEX_NONE };
	s->evicted++;
}

/* Within the bounds again, by letting the least recently used files go
 * (never keep, the one being looked up). */
static void bound(struct symbolizer *s, const struct dso *keep)
{
	while ((s->max_files && s->open_files > s->max_files) ||
	       (s->max_bytes && s->tab_bytes > s->max_bytes)) {
		struct dso *lru = NULL;
		for (uint32_t i = 0; i < s->ndsos; i++) {
			struct dso *d = &s->dsos[i];
			if (d != keep && d->dwfl && (!lru || d->last_use < lru->last_use))
				lru = d;
		}
		if (!lru)
			return;
		let_go(s, lru);
	}
}

void symbolizer__set_bounds(struct symbolizer *s, uint32_t max_files, size_t max_bytes,
			    size_t max_jit_bytes)
{
	s->max_files = max_files;
	s->max_bytes = max_bytes;
	s->jit.max_bytes = max_jit_bytes;
}

void symbolizer__bounds(const struct symbolizer *s, struct symbolizer_bounds *b)
{
	*b = (struct symbolizer_bounds){ .files = s->open_files, .files_evicted = s->evicted,
					 .table_bytes = s->tab_bytes,
					 .jit_entries = s->jit.entries, .jit_bytes = s->jit.bytes,
					 .jit_evicted = s->jit.evicted };
}

/* The module address of a file offset, through its loadable segments. */
static bool offset_to_addr(Dwfl_Module *mod, uint64_t off, GElf_Addr *addr)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t n;
	if (!elf || elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
			*addr = off - ph.p_offset + ph.p_vaddr + bias;
			return true;
		}
	}
	return false;
}

/* d's function table, read on its first lookup (or its twin's, by
 * build-id); NULL when memory runs out. */
static struct elf_symtab *symtab_of(struct symbolizer *s, struct dso *d)
{
	struct dso *owner = d->shares ? &s->dsos[d->shares - 1] : d;
	if (!owner->tab) {
		struct elf_symtab *t = malloc(sizeof(*t));
		if (!t || elf_symtab__read(t, owner->mod)) {
			free(t);
			return NULL;
		}
		owner->tab = t;
		owner->owns_tab = true;
		s->tab_bytes += t->bytes;
	}
	d->tab = owner->tab;
	return d->tab;
}

int symbolizer__lookup(struct symbolizer *s, const char *dso, uint64_t offset,
		       struct sym *out)
{
	if (!strcmp(dso, "[kernel.kallsyms]"))
		return kernel_lookup(s, offset, out);
	struct dso *d = open_dso(s, dso);
	if (!d)
		return -ENOMEM;
	if (!d->opened)
		open_file(s, d);
	struct dso *owner = d->shares ? &s->dsos[d->shares - 1] : d;
	owner->last_use = d->last_use = ++s->tick;
	GElf_Addr addr;
	if (!d->mod || !offset_to_addr(d->mod, offset, &addr))
		return -ENOENT;
	struct elf_symtab *t = symtab_of(s, d);
	if (!t)
		return -ENOMEM;
	bound(s, owner);
	const struct elf_func *f = elf_symtab__find(t, addr);
	if (!f)
		return -ENOENT;
	out->name = strtab__str(&t->names, f->name);
	out->start = offset - (addr - f->start);
	out->end = out->start + (f->end - f->start);
	return 0;
}

int symbolizer__jit(struct symbolizer *s, uint32_t pid, uint64_t addr, struct sym *out)
{
	const struct jit_func *f = perf_maps__find(&s->jit, pid, addr);
	if (!f)
		return -ENOENT;
	*out = (struct sym){ f->name, f->start, f->end };
	return 0;
}

void symbolizer__forget(struct symbolizer *s, uint32_t pid)
{
	perf_maps__forget(&s->jit, pid);
}
