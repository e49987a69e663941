/*
 * live_impl: what live.c (options, signals) and live_run.c (the
 * recording from start to end) share.
 */
#ifndef CPULEDGER_CLI_LIVE_IMPL_H
#define CPULEDGER_CLI_LIVE_IMPL_H

#include <signal.h>

#include "live.h"

extern volatile sig_atomic_t live_stop_signal, live_collect_requested,
	live_reload_requested;
/* hup_reloads: SIGHUP asks for a reload, not a stop */
void live_install_signals(bool hup_reloads);

#endif
