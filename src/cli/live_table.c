/* live_table: a recording's table, limited to the processes in its scope
 * (all, -p PIDs, or the command and its descendants), with their command
 * lines; shared by report and run. */
#include <stdlib.h>
#include <string.h>

#include "live_table.h"
#include "../core/banned.h"

static bool in_scope(const struct loaded_recording *r, uint32_t pid)
{
	const struct loaded_process *p = loaded_recording__process(r, pid);
	return p ? p->in_scope : !strcmp(r->scope, "all");
}

struct table *live_table(const struct loaded_recording *r, enum group_by by,
			 const char *const *control, size_t ncontrol,
			 struct program **kept)
{
	struct table_input in;
	live__table_input(&r->live, &in);
	in.control = control;
	in.ncontrol = ncontrol;
	*kept = malloc((in.nprogs ? in.nprogs : 1) * sizeof(**kept));
	if (!*kept)
		return NULL;
	uint32_t n = 0;
	memset(&in.totals, 0, sizeof(in.totals));
	for (uint32_t i = 0; i < in.nprogs; i++) {
		const struct program *p = &in.progs[i];
		if (!in_scope(r, p->pid))
			continue;
		(*kept)[n++] = *p;
		in.totals.samples += p->samples;
		in.totals.steal_samples += p->steal_samples;
		in.totals.run_ns += p->run_ns;
		in.totals.steal_ns += p->steal_ns;
	}
	in.progs = *kept;
	in.nprogs = n;
	struct table *t = table__build(&in, by);
	if (t)
		for (size_t i = 0; i < t->nrows; i++) {
			const struct loaded_process *p =
				loaded_recording__process(r, t->rows[i].pid);
			t->rows[i].command = p ? p->command : NULL;
		}
	return t;
}

