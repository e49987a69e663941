/* libFuzzer entry point for the command-line values cpuledger parses by
 * hand: record/run's options (pids, rate, durations, realtime priority,
 * ring pages, call-graph modes), numbers, methods, --by and --sort keys,
 * lists, formats, --folded lists and bill's times. The first byte picks
 * the parser (and for record's, the option); the rest is the value. A
 * value accepted must be in the range the option allows. (Refusals print
 * a line each: tests/fuzz/run.sh closes the target's standard error.) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/live.h"
#include "core/table.h"
#include "format/fold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char *arg = malloc(size);
	memcpy(arg, data + 1, size - 1);
	arg[size - 1] = '\0';
	unsigned pick = data[0];
	uint64_t u;
	double d;
	int64_t t;
	switch (pick % 8) {
	case 0: {
		struct live_opts o;
		live_opts__init(&o);
		int n = 0;
		while (live_record_options[n].name)
			n++;
		const struct cli_option *opt = &live_record_options[(pick / 8) % (unsigned)n];
		int r = live_opts__parse(&o, opt->id, opt->arg ? arg : NULL);
		if (r != 1 && r != -1)
			abort();
		for (int i = 0; r == 1 && i < o.npids; i++)
			if (o.pids[i] <= 0 || o.pids[i] > 4194304)
				abort();
		/* any duration in ns fits 64 bits with a start added */
		if (r == 1 && (o.hz < 1 || o.hz > 100000 || o.duration < 0 ||
			       o.duration > CLI_MAX_SECONDS ||
			       (o.interval != 0 && !(o.interval >= CLI_INTERVAL_MIN &&
						     o.interval <= CLI_INTERVAL_MAX)) ||
			       o.realtime < 0 || o.realtime > 99 ||
			       (o.mmap_pages & (o.mmap_pages - 1))))
			abort();
		live_opts__release(&o);
		break;
	}
	case 1:
		if (!cli_parse_u64("--n", arg, 1, 100000, &u) && (u < 1 || u > 100000))
			abort();
		break;
	case 2:
		(void)cli_parse_double("--x", arg, &d);
		if (!cli_parse_seconds("--s", arg, 0.5, 1e300, &d) &&
		    !(d >= 0.5 && d <= CLI_MAX_SECONDS))
			abort();
		break;
	case 3: {
		enum steal_method m;
		struct row_keys k;
		struct sort_spec so;
		size_t bad;
		const struct report_writer *w;
		(void)cli_parse_method(arg, &m);
		if (!row_keys__parse(&k, arg, &bad) && (k.n == 0 || k.n > RF_COUNT))
			abort();
		if (!sort_spec__parse(&so, arg, &bad) && (so.n == 0 || so.n > SORT_COUNT))
			abort();
		if (!cli_parse_format(arg, &w) && !w)
			abort();
		struct cli_list l = { 0 };
		(void)cli_parse_list("--x", arg, &l);
		cli_list__release(&l);
		struct cli_ids ids = { 0 };
		if (!cli_parse_ids("--x", arg, &ids))
			for (size_t i = 0; i < ids.n; i++)
				if (!ids.v[i] || ids.v[i] > 4194304)
					abort();
		free(ids.v);
		break;
	}
	case 4: {
		struct fold_options fo;
		(void)fold_options__parse(&fo, arg);
		break;
	}
	default:
		(void)cli_parse_time(arg, &t);
		break;
	}
	free(arg);
	return 0;
}
