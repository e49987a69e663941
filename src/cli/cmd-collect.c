/*
 * cpuledger collect PID: asks a recorder (record or run with --ledger) to
 * add a collection to its ledger now, seed 000's collection at the user's
 * request. It sends SIGUSR1, after making sure, by its command line, that
 * PID is a cpuledger recording with a ledger, and that it is far enough
 * into its start to take the signal.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

#include "cli.h"
#include "options.h"
#include "../collect/procfs.h"
#include "../core/banned.h"

static const struct cli_option collect_options[] = { { 0 } };
static const struct cli_option *const collect_tables[] = { collect_options, NULL };

const struct cli_command collect_command = {
	"collect", "PID",
	"Asks the recorder PID (cpuledger record or run with --ledger) to add a\n"
	"collection to its ledger now.",
	collect_tables, NULL, false,
};

enum target { NOT_OURS, NO_LEDGER, RECORDER };

/* /proc/PID/FILE's text (the caller frees it), or NULL with errno. */
static char *proc_file(long pid, const char *file, size_t *n)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "proc/%ld/%s", pid, file);
	return procfs_read("/", rel, n);
}

/* What PID is, by its command line: cpuledger record or run, with
 * --ledger. */
static enum target what_is(long pid)
{
	size_t n;
	char *c = proc_file(pid, "cmdline", &n);
	if (!c)
		return NOT_OURS;
	enum target t = NOT_OURS;
	const char *arg0 = c, *end = c + n;
	const char *base = strrchr(arg0, '/');
	base = base ? base + 1 : arg0;
	const char *cmd = arg0 + strlen(arg0) + 1;
	if (!strcmp(base, "cpuledger") && cmd < end &&
	    (!strcmp(cmd, "record") || !strcmp(cmd, "run") || !strcmp(cmd, "agent"))) {
		t = NO_LEDGER;
		for (const char *a = cmd; a < end && strcmp(a, "--"); a += strlen(a) + 1)
			if (!strcmp(a, "--ledger") || !strncmp(a, "--ledger=", 9) ||
			    !strcmp(cmd, "agent"))
				t = RECORDER;
	}
	free(c);
	return t;
}

/* Whether pid holds or catches SIGUSR1 now (its SigBlk or SigCgt in
 * /proc/PID/status): sent earlier, while the program is still being
 * loaded, it would end it. */
static bool takes_usr1(long pid)
{
	size_t n;
	char *st = proc_file(pid, "status", &n);
	if (!st)
		return false;
	bool yes = false;
	const uint64_t bit = 1ull << (SIGUSR1 - 1);
	for (const char *k = st; (k = strstr(k, "Sig")); k += 3) {
		unsigned long long mask;
		if ((!strncmp(k, "SigBlk:", 7) || !strncmp(k, "SigCgt:", 7)) &&
		    sscanf(k + 7, "%llx", &mask) == 1 && (mask & bit))
			yes = true;
	}
	free(st);
	return yes;
}

/* Waits up to a second for a recorder that is starting. */
static bool ready(long pid)
{
	for (int i = 0; i < 100; i++) {
		if (takes_usr1(pid))
			return true;
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	return false;
}

int cmd_collect(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		cli_usage(stdout, &collect_command);
		return 0;
	}
	if (argc != 2) {
		cli_error("give the recorder's PID");
		return EXIT_USAGE;
	}
	char *end;
	long pid = strtol(argv[1], &end, 10);
	if (!*argv[1] || *end || pid <= 0 || pid > 4194304) {
		cli_error("'%s' is not a process id", argv[1]);
		return EXIT_USAGE;
	}
	switch (what_is(pid)) {
	case NOT_OURS:
		cli_error("process %ld is not a cpuledger recorder", pid);
		return EXIT_USAGE;
	case NO_LEDGER:
		cli_error("the recorder %ld has no ledger (--ledger): nothing to collect into", pid);
		return EXIT_RUNTIME;
	case RECORDER:
		break;
	}
	if (!ready(pid)) {
		cli_error("the recorder %ld is not ready for requests yet (it is starting): "
			  "try again", pid);
		return EXIT_RUNTIME;
	}
	if (kill((pid_t)pid, SIGUSR1)) {
		cli_error("cannot signal %ld: %s", pid, strerror(errno));
		return EXIT_RUNTIME;
	}
	return 0;
}
