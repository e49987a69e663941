/* live_table: see live_table.c. */
#ifndef CPULEDGER_CLI_LIVE_TABLE_H
#define CPULEDGER_CLI_LIVE_TABLE_H

#include "../core/table.h"
#include "../format/live_load.h"

/*
 * The table of the processes in r's scope, rows carrying their command
 * lines, and their control-program time by the accounts in control.
 * *kept receives the programs the table borrows: free it after the
 * table. NULL with errno ENOMEM.
 */
struct table *live_table(const struct loaded_recording *r, enum group_by by,
			 const char *const *control, size_t ncontrol,
			 struct program **kept);

#endif
