/* ledger_write: a recording's usage into a ledger, as one collection. */
#ifndef CPULEDGER_CLI_LEDGER_WRITE_H
#define CPULEDGER_CLI_LEDGER_WRITE_H

#include "../format/live_load.h"

/*
 * Adds what r's processes in scope used, per thread and account, to the
 * ledger at path (created if missing) as one collection with this reason.
 * Returns 0 or an exit status, having said what went wrong (a recording
 * added before: EXIT_USAGE).
 */
int ledger_write_recording(const char *path, const struct loaded_recording *r,
			   const char *reason);

#endif
