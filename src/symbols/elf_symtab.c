/* elf_symtab: see elf_symtab.h. */
#include "elf_symtab.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/banned.h"

/* A symbol read, with what decides between two at one address, as perf
 * decides: a size over none, not weak over weak, global over local, fewer
 * leading underscores, then the longer name ("malloc" over
 * "__libc_malloc", "cfree" over "free"). */
struct cand {
	struct elf_func f;
	uint8_t sized, strong, global;
	uint8_t underscores;
	uint16_t len;
};

struct reading {
	struct cand *v;
	uint32_t n, cap;
	struct strtab *names;
};

static int push(struct reading *r, uint64_t start, uint64_t size, const char *name,
		size_t len, int bind)
{
	uint32_t id = strtab__intern(r->names, name, len);
	if (id == HINDEX_NONE ||
	    grow_array((void **)&r->v, &r->cap, r->n, sizeof(*r->v), 1024))
		return -ENOMEM;
	uint8_t u = 0;
	while (u < len && name[u] == '_')
		u++;
	r->v[r->n++] = (struct cand){ { start, start + size, id }, size > 0, bind != STB_WEAK,
				      bind == STB_GLOBAL, u, (uint16_t)(len < 65535 ? len : 65535) };
	return 0;
}

/* The version names of a file's .dynsym, when it is the table libdwfl
 * reads (no .symtab): perf shows a symbol of a hidden version, not the
 * default one, as NAME@VERSION ("cfree@GLIBC_2.2.5"). */
struct versions {
	Elf *elf;
	Elf_Data *versym;	/* one half-word a .dynsym entry */
	size_t ndyn;
	const char **names;	/* by version index */
	size_t nnames;
};

static void read_versions(struct versions *v, Dwfl_Module *mod)
{
	GElf_Addr bias;
	*v = (struct versions){ .elf = dwfl_module_getelf(mod, &bias) };
	Elf_Scn *versym = NULL, *verdef = NULL;
	GElf_Shdr sh, defsh = { 0 };
	for (Elf_Scn *scn = v->elf ? elf_nextscn(v->elf, NULL) : NULL; scn;
	     scn = elf_nextscn(v->elf, scn)) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			return;	/* libdwfl reads .symtab: no versions */
		if (sh.sh_type == SHT_DYNSYM && sh.sh_entsize)
			v->ndyn = sh.sh_size / sh.sh_entsize;
		else if (sh.sh_type == SHT_GNU_versym)
			versym = scn;
		else if (sh.sh_type == SHT_GNU_verdef) {
			verdef = scn;
			defsh = sh;
		}
	}
	Elf_Data *dd = verdef ? elf_getdata(verdef, NULL) : NULL;
	if (!versym || !dd || !(v->versym = elf_getdata(versym, NULL)))
		return;
	size_t off = 0;
	for (GElf_Word i = 0; i < defsh.sh_info; i++) {
		GElf_Verdef def;
		GElf_Verdaux aux;
		if (!gelf_getverdef(dd, (int)off, &def) ||
		    !gelf_getverdaux(dd, (int)(off + def.vd_aux), &aux))
			break;
		const char *name = elf_strptr(v->elf, defsh.sh_link, aux.vda_name);
		if (name && def.vd_ndx < 4096) {
			if (def.vd_ndx >= v->nnames) {
				size_t n = def.vd_ndx + 1;
				const char **p = realloc(v->names, n * sizeof(*p));
				if (!p)
					break;
				memset(p + v->nnames, 0, (n - v->nnames) * sizeof(*p));
				v->names = p;
				v->nnames = n;
			}
			v->names[def.vd_ndx] = name;
		}
		if (!def.vd_next)
			break;
		off += def.vd_next;
	}
}

/* The hidden version of .dynsym entry i from the file elf, or NULL. */
static const char *hidden_version(const struct versions *v, Elf *elf, int i)
{
	GElf_Versym vs;
	if (!v->versym || elf != v->elf || (size_t)i >= v->ndyn ||
	    !gelf_getversym(v->versym, i, &vs) || !(vs & 0x8000))
		return NULL;
	vs &= 0x7fff;
	return vs < v->nnames ? v->names[vs] : NULL;
}

static int read_symbols(struct reading *r, Dwfl_Module *mod)
{
	struct versions v;
	read_versions(&v, mod);
	int n = dwfl_module_getsymtab(mod), err = 0;
	for (int i = 1; i < n && !err; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *from;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &from, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		if (!name || !name[0] || !addr || (type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    shndx == SHN_UNDEF || shndx == SHN_ABS || shndx == (GElf_Word)-1)
			continue;
		const char *ver = hidden_version(&v, from, i);
		char buf[512];
		int len = ver ? snprintf(buf, sizeof(buf), "%s@%s", name, ver) : 0;
		if (ver && len > 0 && (size_t)len < sizeof(buf))
			err = push(r, addr, sym.st_size, buf, (size_t)len, bind);
		else
			err = push(r, addr, sym.st_size, name, strlen(name), bind);
	}
	free(v.names);
	return err;
}

static Elf_Scn *section(Elf *elf, size_t shstrndx, const char *want, GElf_Shdr *sh)
{
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		const char *name;
		if (gelf_getshdr(scn, sh) && (name = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/* x86-64's PLT: entry k of .plt.sec (with IBT), or of .plt after its
 * first, is the stub of .rela.plt's relocation k. */
static int read_plt(struct reading *r, Dwfl_Module *mod)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	size_t shstrndx;
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	GElf_Shdr rela_sh, plt_sh, dynsym_sh;
	Elf_Scn *rela = section(elf, shstrndx, ".rela.plt", &rela_sh);
	Elf_Scn *plt = section(elf, shstrndx, ".plt.sec", &plt_sh);
	uint64_t base = plt ? plt_sh.sh_addr : 0;
	if (!plt && (plt = section(elf, shstrndx, ".plt", &plt_sh)))
		base = plt_sh.sh_addr + 16;	/* past PLT0 */
	Elf_Scn *dynsym = rela ? elf_getscn(elf, rela_sh.sh_link) : NULL;
	Elf_Data *rd = rela ? elf_getdata(rela, NULL) : NULL;
	Elf_Data *sd = dynsym ? elf_getdata(dynsym, NULL) : NULL;
	if (!plt || !rd || !sd || rela_sh.sh_type != SHT_RELA || !rela_sh.sh_entsize ||
	    !gelf_getshdr(dynsym, &dynsym_sh))
		return 0;
	size_t n = rela_sh.sh_size / rela_sh.sh_entsize;
	for (size_t k = 0; k < n; k++) {
		GElf_Rela rel;
		GElf_Sym sym;
		const char *name;
		if (!gelf_getrela(rd, (int)k, &rel) ||
		    !gelf_getsym(sd, (int)GELF_R_SYM(rel.r_info), &sym) ||
		    !(name = elf_strptr(elf, dynsym_sh.sh_link, sym.st_name)) || !name[0])
			continue;
		char buf[512];
		int len = snprintf(buf, sizeof(buf), "%s@plt", name);
		uint64_t at = base + k * 16 + bias;
		int err = len > 0 && (size_t)len < sizeof(buf) ?
			  push(r, at, 16, buf, (size_t)len, STB_LOCAL) : 0;
		if (err)
			return err;
	}
	return 0;
}

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->f.start != y->f.start)
		return x->f.start < y->f.start ? -1 : 1;
	/* the best of one address first */
	if (x->sized != y->sized)
		return y->sized - x->sized;
	if (x->strong != y->strong)
		return y->strong - x->strong;
	if (x->global != y->global)
		return y->global - x->global;
	if (x->underscores != y->underscores)
		return x->underscores - y->underscores;
	if (x->len != y->len)
		return y->len - x->len;
	return (x->f.name > y->f.name) - (x->f.name < y->f.name);	/* stable */
}

int elf_symtab__read(struct elf_symtab *t, Dwfl_Module *mod)
{
	*t = (struct elf_symtab){ 0 };
	strtab__init(&t->names);
	struct reading r = { .names = &t->names };
	int err = read_symbols(&r, mod);
	if (!err)
		err = read_plt(&r, mod);
	if (err || !r.n) {
		free(r.v);
		if (err)
			strtab__release(&t->names);
		return err;
	}
	qsort(r.v, r.n, sizeof(*r.v), cmp_cand);
	t->v = malloc(r.n * sizeof(*t->v));
	if (!t->v) {
		free(r.v);
		strtab__release(&t->names);
		return -ENOMEM;
	}
	/* one function an address: the first of each start; a size of 0, or
	 * one past the next start, ends at the next start */
	for (uint32_t i = 0; i < r.n; i++) {
		if (t->n && t->v[t->n - 1].start == r.v[i].f.start)
			continue;
		t->v[t->n++] = r.v[i].f;
	}
	for (uint32_t i = 0; i < t->n; i++) {
		struct elf_func *f = &t->v[i];
		uint64_t next = i + 1 < t->n ? t->v[i + 1].start : f->start + 4096;
		if (f->end == f->start || f->end > next)
			f->end = next;
	}
	t->bytes = t->n * sizeof(*t->v) + t->names.cap + t->names.slots * 8 +
		   t->names.index.mask * 8;
	free(r.v);
	return 0;
}

const struct elf_func *elf_symtab__find(const struct elf_symtab *t, uint64_t addr)
{
	uint32_t lo = 0, hi = t->n;	/* the first function starting above addr */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < t->v[lo - 1].end ? &t->v[lo - 1] : NULL;
}

void elf_symtab__release(struct elf_symtab *t)
{
	free(t->v);
	strtab__release(&t->names);
	*t = (struct elf_symtab){ 0 };
}
