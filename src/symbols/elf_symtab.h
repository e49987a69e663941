/*
 * elf_symtab: the functions of one ELF file as a table sorted by address,
 * read once and searched by bisection (libdwfl's own lookup scans the
 * symbol table each time: 60 % of a recorder's time under a compile
 * loop). What libdwfl finds for the module: .symtab, or .dynsym with the
 * .gnu_debugdata (MiniDebugInfo) symbols, or a separate debug file's; and
 * PLT entries as NAME@plt, from .rela.plt, as perf shows them. A symbol
 * of size 0 covers up to the next one (perf's rule); an address in no
 * symbol is not found.
 */
#ifndef CPULEDGER_SYMBOLS_ELF_SYMTAB_H
#define CPULEDGER_SYMBOLS_ELF_SYMTAB_H

#include <stdint.h>
#include <elfutils/libdwfl.h>

#include "../core/strtab.h"

struct elf_func {
	uint64_t start, end;	/* module addresses */
	uint32_t name;		/* in the table's names */
};

struct elf_symtab {
	struct elf_func *v;	/* sorted by start, not overlapping */
	uint32_t n;
	struct strtab names;	/* its own: they go with it */
	size_t bytes;		/* what it holds, for a bound on memory */
};

/* Reads mod's functions. 0 or -ENOMEM (a module without symbols gives an
 * empty table). */
int elf_symtab__read(struct elf_symtab *t, Dwfl_Module *mod);
/* The function holding module address addr, or NULL. */
const struct elf_func *elf_symtab__find(const struct elf_symtab *t, uint64_t addr);
void elf_symtab__release(struct elf_symtab *t);

#endif
