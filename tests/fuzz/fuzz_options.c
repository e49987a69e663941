/* libFuzzer entry point for the command-line values cpuledger parses by
 * hand: record/run's options (pids, rate, durations, realtime priority,
 * ring pages), numbers, methods, keys, formats, --folded lists and bill's
 * times. The first byte picks
 * the parser (and for record's, the option); the rest is the value. A
 * value accepted must be in the range the option allows. (Refusals print
 * a line each: tests/fuzz/run.sh closes the target's standard error.) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/recorder.h"
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
		static const char opts[] = "apFgTAlNoDrM";
		struct record_opts o;
		record_opts__init(&o);
		int c = opts[(pick / 8) % (sizeof(opts) - 1)];
		int r = record_opts__parse(&o, c, arg);
		if (r != 1 && r != -1)
			abort();
		for (int i = 0; r == 1 && i < o.npids; i++)
			if (o.pids[i] <= 0 || o.pids[i] > 4194304)
				abort();
		if (r == 1 && (o.hz < 1 || o.hz > 100000 || o.duration < 0 ||
			       (c == 'N' && !(o.interval >= 0.1)) ||
			       o.realtime < 0 || o.realtime > 99 ||
			       (o.mmap_pages & (o.mmap_pages - 1))))
			abort();
		record_opts__release(&o);
		break;
	}
	case 1:
		if (cli_parse_u64("--n", arg, 1, 100000, &u) && (u < 1 || u > 100000))
			abort();
		break;
	case 2:
		(void)cli_parse_double("--x", arg, &d);
		break;
	case 3: {
		enum steal_method m;
		enum group_by b;
		const struct report_writer *w;
		(void)cli_parse_method(arg, &m);
		(void)cli_parse_by(arg, &b);
		if (cli_parse_format(arg, &w) && !w)
			abort();
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
