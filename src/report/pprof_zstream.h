/*
 * report/pprof_zstream: ISA-L's deflate state kept at an address that is
 * the same in every run, so that a profile is the same bytes every time.
 *
 * Why: igzip's level 1 and 2 match finder (igzip_icf_body_h1_gr_bt.asm,
 * Debian's libisal2 2.30 and upstream) hashes the stream's own address
 * (bits 16 to 47 of the struct isal_zstream) where it should hash the
 * input's third byte when it starts a block without history: one
 * position goes into a slot that depends on where the state lies. The
 * output always inflates to the same bytes, but the matches found, and so
 * the file's bytes, varied from run to run with address-space layout
 * randomisation: 3 runs in 40 of an 8-minute recording's pprof.
 *
 * A state made here lies at one of a few fixed addresses, mapped with
 * MAP_FIXED_NOREPLACE, the first free one taken: the same one for the
 * same order of states made and freed. Where none is free (another
 * mapping there, or 16 states alive at once) it is on the heap: the
 * profile is still right, only maybe not the same bytes. A state at a
 * known address keeps the buffers' addresses only while it deflates
 * (a run, or a profile's whole stream): its users clear it after
 * (address-space randomisation is about pointers, and the agent may run
 * on a hostile host).
 */
#ifndef CPULEDGER_REPORT_PPROF_ZSTREAM_H
#define CPULEDGER_REPORT_PPROF_ZSTREAM_H
#include <isa-l/igzip_lib.h>
#include <stdbool.h>

/* A zeroed state, at a fixed address where one is free; NULL out of
 * memory. */
struct isal_zstream *pprof_zstream__new(void);
/* Whether s lies at one of the fixed addresses (its bytes reproducible). */
bool pprof_zstream__fixed(const struct isal_zstream *s);
void pprof_zstream__free(struct isal_zstream *s);

#endif
