/*
 * scratch: a temporary file no name points to, for what a command keeps
 * out of memory while it runs (rows of gone threads: core/rows.h's
 * row_store). It is gone when closed, or when the process dies.
 */
#ifndef CPULEDGER_OUTPUT_SCRATCH_H
#define CPULEDGER_OUTPUT_SCRATCH_H

#include "../core/rows.h"

struct scratch;

/* In $TMPDIR (else /tmp): NULL with errno set. */
struct scratch *scratch__open(void);
void scratch__close(struct scratch *s);

/* The file as a row store; valid until scratch__close. */
const struct row_store *scratch__store(struct scratch *s);

/* 0, or the -errno of the first write or read that failed (a full
 * $TMPDIR): what a command says when the store's error reaches it. */
int scratch__error(const struct scratch *s);
/* The directory the file is in. */
const char *scratch__dir(const struct scratch *s);

#endif
