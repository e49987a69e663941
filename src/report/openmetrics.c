/*
 * report/openmetrics: the rows as counters a Prometheus scrape or
 * textfile collector reads (docs/formats.md): cpuledger_cpu_seconds_total
 * and cpuledger_steal_seconds_total, one sample per row, labelled with the
 * fields the rows are keyed by (host and account with `report -f
 * openmetrics`, unless --by says otherwise). Steal that was not measured
 * is left out, never given as zero. Families are named with their _total
 * suffix, as the Prometheus text format has it and `promtool check
 * metrics` checks; the input ends with "# EOF" as OpenMetrics asks. Label
 * values are valid UTF-8 whatever bytes a process put in its name: what
 * is not UTF-8 becomes U+FFFD, and backslash, quote and newline are
 * escaped.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "report.h"
#include "../core/units.h"
#include "../core/banned.h"

static void put_num_label(FILE *out, bool *first, const char *name, int64_t v)
{
	char num[24];
	snprintf(num, sizeof(num), "%" PRId64, v);
	om_put_label(out, first, name, num);
}

static void put_labels(FILE *out, const struct table *t, const struct table_row *r,
		       const struct report_extras *x)
{
	bool first = true, pid_done = false;
	putc('{', out);
	for (uint8_t i = 0; i < t->keys.n; i++) {
		switch (t->keys.v[i]) {
		case RF_VM: om_put_label(out, &first, x ? "host" : "vm", r->vm); break;
		case RF_PROCESS:
		case RF_THREAD:
			if (!pid_done)
				put_num_label(out, &first, "pid", table_id(r->pid));
			pid_done = true;
			if (t->keys.v[i] == RF_THREAD)
				put_num_label(out, &first, "tid", table_id(r->tid));
			break;
		case RF_COMM: om_put_label(out, &first, "comm", r->comm); break;
		case RF_COMMAND: om_put_label(out, &first, "command", r->command); break;
		case RF_EXECUTABLE: om_put_label(out, &first, "executable", r->executable); break;
		case RF_USER: put_num_label(out, &first, "uid", r->uid); break;
		case RF_DSO: om_put_label(out, &first, "dso", r->dso); break;
		case RF_FUNCTION:
			om_put_label(out, &first, "function", r->function);
			if (!row_keys__has(&t->keys, RF_DSO) && r->dso)
				om_put_label(out, &first, "dso", r->dso);
			break;
		case RF_ACCOUNT: om_put_label(out, &first, "account",
					   r->account ? r->account : "[unknown]"); break;
		case RF_CPU: put_num_label(out, &first, "cpu", r->cpu); break;
		case RF_CGROUP: om_put_label(out, &first, "cgroup", r->cgroup); break;
		default: break;
		}
	}
	if (t->attrs && r->command && !row_keys__has(&t->keys, RF_COMMAND))
		om_put_label(out, &first, "command", r->command);
	putc('}', out);
}

static void family(FILE *out, const struct table *t, const struct report_extras *x,
		   const char *name, const char *help, bool steal)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
	for (size_t i = 0; i < t->nrows; i++) {
		const struct table_row *r = &t->rows[i];
		uint64_t ns = steal ? r->steal_ns : r->cpu_ns;
		fputs(name, out);
		put_labels(out, t, r, x);
		fprintf(out, " %" PRIu64 ".%09" PRIu64 "\n", ns / NSEC_PER_SEC,
			ns % NSEC_PER_SEC);
	}
}

static int write_openmetrics(FILE *out, const struct table *t,
			     const struct report_extras *x)
{
	family(out, t, x, "cpuledger_cpu_seconds_total",
	       "CPU time the program ran, steal taken out.", false);
	if (!x || x->steal_known)
		family(out, t, x, "cpuledger_steal_seconds_total",
		       "Time the hypervisor stole while the program held a CPU.", true);
	fputs("# EOF\n", out);
	return ferror(out) ? -EIO : 0;
}

const struct report_writer report_openmetrics = { "openmetrics", write_openmetrics };
