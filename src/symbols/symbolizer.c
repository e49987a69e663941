/* symbolizer: see symbolizer.h. */
#include "symbolizer.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>

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
};

struct symbolizer {
	char root[256];
	struct strtab names;	/* paths, and names a lookup returns */
	struct dso *dsos;
	uint32_t ndsos, cap;
	struct hindex index;
	struct hindex by_build_id;	/* build-id string id -> dso */
	struct ksym *ksyms;	/* sorted by address */
	uint32_t nksyms;
	int kallsyms;		/* 0 not read yet, 1 read, -1 unusable */
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
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->ndsos; i++)
		if (s->dsos[i].dwfl)
			dwfl_end(s->dsos[i].dwfl);
	free(s->dsos);
	free(s->ksyms);
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
}

int symbolizer__build_id(struct symbolizer *s, const char *dso, char *buf,
			 size_t size)
{
	struct dso *d = open_dso(s, dso);
	if (!d || d->build_id == HINDEX_NONE)
		return -ENOENT;
	snprintf(buf, size, "%s", strtab__str(&s->names, d->build_id));
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
	if (path[0] != '/')
		return d;	/* [vdso], [anon]...: no file to read */
	char full[4096];
	snprintf(full, sizeof(full), "%s%s", s->root, path);
	d->dwfl = dwfl_begin(&callbacks);
	if (!d->dwfl)
		return d;
	d->mod = dwfl_report_offline(d->dwfl, path, full, -1);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (!d->mod) {
		dwfl_end(d->dwfl);
		d->dwfl = NULL;
		return d;
	}
	share_by_build_id(s, d);
	return d;
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

int symbolizer__lookup(struct symbolizer *s, const char *dso, uint64_t offset,
		       struct sym *out)
{
	if (!strcmp(dso, "[kernel.kallsyms]"))
		return kernel_lookup(s, offset, out);
	struct dso *d = open_dso(s, dso);
	if (!d)
		return -ENOMEM;
	GElf_Addr addr;
	if (!d->mod || !offset_to_addr(d->mod, offset, &addr))
		return -ENOENT;
	GElf_Off symoff;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(d->mod, addr, &symoff, &sym,
						NULL, NULL, NULL);
	if (!name)
		return -ENOENT;
	uint32_t id = strtab__intern(&s->names, name, strlen(name));
	if (id == HINDEX_NONE)
		return -ENOMEM;
	out->name = strtab__str(&s->names, id);
	out->start = offset - symoff;
	out->end = out->start + (sym.st_size ? sym.st_size : symoff + 1);
	return 0;
}
