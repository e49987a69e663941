/* session: see session.h. */
#include "session_impl.h"

#include <stdlib.h>
#include <string.h>

#include "../core/banned.h"

void live_opts__init(struct live_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->hz = LIVE_HZ;
	o->root = "/";
	o->a.method = METHOD_PRECEDING;
}

void live_opts__release(struct live_opts *o)
{
	free(o->pids);
	o->pids = NULL;
}

void (*live_say_fn)(const char *fmt, ...);
static int (*accounts_loader)(const char *path, struct account_rules *rules, char **text);

void live_set_say(void (*fn)(const char *fmt, ...))
{
	live_say_fn = fn;
}

void live_set_accounts_loader(int (*load)(const char *path, struct account_rules *rules,
					  char **text))
{
	accounts_loader = load;
}

int live_load_accounts(const char *path, struct account_rules *rules, char **text)
{
	if (accounts_loader)
		return accounts_loader(path, rules, text);
	live_say("--accounts %s: rules cannot be read here", path);
	return LIVE_EXIT_USAGE;
}

volatile sig_atomic_t live_stop_signal, live_collect_requested, live_reload_requested;

static void on_stop(int sig)
{
	live_stop_signal = sig;
}

void live_stop(void)
{
	live_stop_signal = SIGTERM;
}

static void on_hup_reload(int sig)
{
	(void)sig;
	live_reload_requested = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	live_collect_requested = 1;
}

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

void live_block_signals(void)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < 4; i++)
		sigaddset(&set, stop_signals[i]);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* Handlers in place, then what came before them is let through. */
void live_install_signals(bool hup_reloads)
{
	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < 4; i++) {
		sa.sa_handler = stop_signals[i] == SIGHUP && hup_reloads ? on_hup_reload : on_stop;
		sigaction(stop_signals[i], &sa, NULL);
	}
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < 4; i++)
		sigaddset(&set, stop_signals[i]);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

