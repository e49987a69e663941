/*
 * kthread: a kernel thread's kind, the name /metrics and the bill group
 * kernel threads under (kworker/0:2-events, kworker/u8:0: kworker). It is
 * here, below both, so that analysis/ and ledger/ share one spelling
 * without including each other.
 */
#ifndef CPULEDGER_CORE_KTHREAD_H
#define CPULEDGER_CORE_KTHREAD_H

#include <stddef.h>

/* A kernel thread's comm as its kind, up to a '/' (kworker/u8:0-events:
 * kworker): in buf (size > 0), or comm itself when it starts with '/'.
 * The bill's --by comm groups kernel threads by it too. */
const char *kthread_kind(const char *comm, char *buf, size_t size);

#endif
