/*
 * cpuledger collect PID: asks a recorder (record or run with --ledger) to
 * add a collection to its ledger now, seed 000's collection at the user's
 * request. It sends SIGUSR1, after making sure PID is a cpuledger.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../collect/procfs.h"
#include "../core/banned.h"

int cmd_collect(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs("usage: cpuledger collect PID\n\n"
		      "Asks the recorder PID (cpuledger record or run with --ledger) to add a\n"
		      "collection to its ledger now.\n\n"
		      "  -h, --help             show this help\n", stdout);
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
	char rel[64];
	snprintf(rel, sizeof(rel), "proc/%ld/comm", pid);
	char *comm = procfs_read("/", rel, NULL);
	bool ours = comm && !strncmp(comm, "cpuledger", 9);
	free(comm);
	if (!ours) {
		cli_error("process %ld is not a cpuledger recorder", pid);
		return EXIT_USAGE;
	}
	if (kill((pid_t)pid, SIGUSR1)) {
		cli_error("cannot signal %ld: %s", pid, strerror(errno));
		return EXIT_RUNTIME;
	}
	return 0;
}
