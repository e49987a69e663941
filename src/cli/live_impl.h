/*
 * live_impl: what live.c (options, signals) and live_run.c (the
 * recording from start to end) share.
 */
#ifndef CPULEDGER_CLI_LIVE_IMPL_H
#define CPULEDGER_CLI_LIVE_IMPL_H

#include <signal.h>

#include "live.h"

extern volatile sig_atomic_t live_stop_signal, live_collect_requested;
void live_install_signals(void);

#endif
