/*
 * demangle: C++ (Itanium) and Rust (legacy and v0) names as perf shows
 * them, without parameters ("bitmap_set_bit", "core::fmt::write"), by
 * libiberty's demangler (Debian's libiberty-dev), the one binutils and
 * perf use.
 */
#ifndef CPULEDGER_SYMBOLS_DEMANGLE_H
#define CPULEDGER_SYMBOLS_DEMANGLE_H

#include <stddef.h>

/* The demangled name of name[0..len) in buf (size bytes), or NULL when it
 * is not a mangled name (or does not fit). */
const char *demangle(const char *name, size_t len, char *buf, size_t size);

#endif
