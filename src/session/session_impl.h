/*
 * session_impl: what session.c (options' defaults, signals, where
 * messages go) and run.c (the recording from start to end) share.
 */
#ifndef CPULEDGER_SESSION_SESSION_IMPL_H
#define CPULEDGER_SESSION_SESSION_IMPL_H

#include <signal.h>

#include "session.h"

extern volatile sig_atomic_t live_stop_signal, live_collect_requested,
	live_reload_requested;
/* hup_reloads: SIGHUP asks for a reload, not a stop */
void live_install_signals(bool hup_reloads);

/* Says one line through the command's function (live_set_say), its
 * arguments passed on as they are. */
extern void (*live_say_fn)(const char *fmt, ...);
#define live_say(...) do { if (live_say_fn) live_say_fn(__VA_ARGS__); } while (0)
/* --accounts FILE through the command's loader: 0, or nonzero said. */
int live_load_accounts(const char *path, struct account_rules *rules, char **text);

#endif
