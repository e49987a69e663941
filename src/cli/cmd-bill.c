/*
 * cpuledger bill: seed 000's editing means. Sums the ledger's collections
 * by user, command, account, process or day: per row the target and
 * control program's CPU time and their total, the steal, and the apparent
 * time a naive profiler would have charged.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "../ledger/ledger.h"
#include "../report/report.h"
#include "../core/banned.h"

static const char usage[] =
	"usage: cpuledger bill [options]\n"
	"\n"
	"Sums the ledger's CPU time, steal and corrected time by user, command,\n"
	"account, process or day.\n"
	"\n"
	"  -l, --ledger PATH      the ledger (default ./cpuledger.db)\n"
	"  -b, --by KEY           user|command|account|process|day (default user)\n"
	"      --since T          collections ending at or after T\n"
	"      --until T          collections ending before T (T: YYYY-MM-DD,\n"
	"                         YYYY-MM-DDTHH:MM[:SS] in UTC, or @SECONDS)\n"
	"  -c, --control LIST     accounts that count as control program\n"
	"                         (comma-separated; default kernel)\n"
	"  -f, --format FORMAT    text|csv|json (default text)\n"
	"  -o, --output FILE      write the bill to FILE (default stdout)\n"
	"  -h, --help             show this help\n";

enum { OPT_SINCE = 256, OPT_UNTIL };

struct bill {
	struct bill_row *rows;
	size_t n, cap;
	uint64_t cpu, control, steal, samples;
};

static int collect(void *ctx, const struct bill_row *row)
{
	struct bill *b = ctx;
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct bill_row *r = realloc(b->rows, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		b->rows = r;
		b->cap = cap;
	}
	b->rows[b->n] = *row;
	b->rows[b->n].key = strdup(row->key);
	if (!b->rows[b->n].key)
		return -ENOMEM;
	b->n++;
	b->cpu += row->cpu_ns;
	b->control += row->control_ns;
	b->steal += row->steal_ns;
	b->samples += row->samples;
	return 0;
}

static double s_(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* A uid as "1000 (alice)" when the name is known. */
static const char *user_name(const char *uid, char *buf, size_t size)
{
	char *end;
	long v = strtol(uid, &end, 10);
	struct passwd *pw = *uid && !*end ? getpwuid((uid_t)v) : NULL;
	snprintf(buf, size, pw ? "%s (%s)" : "%s", uid, pw ? pw->pw_name : "");
	return buf;
}

static void write_text(FILE *f, const struct bill *b, enum bill_by by, const char *path)
{
	char name[300];
	int w = 5;	/* "total" */
	for (size_t i = 0; i < b->n; i++) {
		const char *key = by == BILL_USER ? user_name(b->rows[i].key, name, sizeof(name))
						  : b->rows[i].key;
		int n = (int)strlen(key);
		w = n > w ? (n < 60 ? n : 60) : w;
	}
	fprintf(f, "Bill of ledger '%s' by %s\n\n", path, bill_by__name(by));
	fprintf(f, "%-*s %12s %12s %12s %12s %12s %10s\n", w, "KEY", "TARGET_S", "CONTROL_S",
		"TOTAL_S", "STEAL_S", "APPARENT_S", "SAMPLES");
	for (size_t i = 0; i < b->n; i++) {
		const struct bill_row *r = &b->rows[i];
		const char *key = by == BILL_USER ? user_name(r->key, name, sizeof(name)) : r->key;
		fprintf(f, "%-*.*s %12.3f %12.3f %12.3f %12.3f %12.3f %10" PRIu64 "\n", w, w, key,
			s_(r->cpu_ns - r->control_ns), s_(r->control_ns), s_(r->cpu_ns),
			s_(r->steal_ns), s_(r->cpu_ns + r->steal_ns), r->samples);
	}
	fprintf(f, "%-*s %12.3f %12.3f %12.3f %12.3f %12.3f %10" PRIu64 "\n", w, "total",
		s_(b->cpu - b->control), s_(b->control), s_(b->cpu), s_(b->steal),
		s_(b->cpu + b->steal), b->samples);
	fputs("\nTOTAL_S is CPU time really run (the corrected time); APPARENT_S adds the steal.\n", f);
}

static void write_csv(FILE *f, const struct bill *b)
{
	fputs("key,target_ns,control_ns,cpu_ns,steal_ns,apparent_ns,corrected_ns,samples\n", f);
	for (size_t i = 0; i < b->n; i++) {
		const struct bill_row *r = &b->rows[i];
		csv_put_field(f, r->key);
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 "\n", r->cpu_ns - r->control_ns, r->control_ns, r->cpu_ns,
			r->steal_ns, r->cpu_ns + r->steal_ns, r->cpu_ns, r->samples);
	}
}

static void write_json(FILE *f, const struct bill *b, enum bill_by by)
{
	fprintf(f, "{\"version\":1,\"by\":\"%s\",\"rows\":[", bill_by__name(by));
	for (size_t i = 0; i < b->n; i++) {
		const struct bill_row *r = &b->rows[i];
		fputs(i ? ",\n{\"key\":" : "\n{\"key\":", f);
		json_put_string(f, r->key);
		fprintf(f, ",\"target_ns\":%" PRIu64 ",\"control_ns\":%" PRIu64 ",\"cpu_ns\":%" PRIu64
			",\"steal_ns\":%" PRIu64 ",\"apparent_ns\":%" PRIu64 ",\"corrected_ns\":%" PRIu64
			",\"samples\":%" PRIu64 "}", r->cpu_ns - r->control_ns, r->control_ns,
			r->cpu_ns, r->steal_ns, r->cpu_ns + r->steal_ns, r->cpu_ns, r->samples);
	}
	fprintf(f, "],\"totals\":{\"cpu_ns\":%" PRIu64 ",\"control_ns\":%" PRIu64
		",\"steal_ns\":%" PRIu64 ",\"samples\":%" PRIu64 "}}\n",
		b->cpu, b->control, b->steal, b->samples);
}

int cmd_bill(int argc, char **argv)
{
	static const struct option options[] = {
		{ "ledger", required_argument, NULL, 'l' },
		{ "by", required_argument, NULL, 'b' },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "control", required_argument, NULL, 'c' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = "cpuledger.db", *output = NULL, *format = "text";
	enum bill_by by = BILL_USER;
	int64_t since = INT64_MIN, until = INT64_MAX;
	char control_buf[512] = "kernel";
	const char *control[16];
	size_t ncontrol = 0;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "l:b:c:f:o:h", options, NULL)) != -1) {
		switch (c) {
		case 'l':
			path = optarg;
			break;
		case 'b':
			if (bill_by__parse(optarg, &by)) {
				cli_error("--by: unknown key '%s' (user, command, account, process or day)", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_SINCE:
		case OPT_UNTIL:
			if (!cli_parse_time(optarg, c == OPT_SINCE ? &since : &until)) {
				cli_error("%s: '%s' is not YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] or @SECONDS",
					  c == OPT_SINCE ? "--since" : "--until", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'c':
			snprintf(control_buf, sizeof(control_buf), "%s", optarg);
			break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "csv") && strcmp(optarg, "json")) {
				cli_error("--format: unknown format '%s' (text|csv|json)", optarg);
				return EXIT_USAGE;
			}
			format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	char *save = NULL;
	for (char *t = strtok_r(control_buf, ",", &save); t && ncontrol < 16;
	     t = strtok_r(NULL, ",", &save))
		control[ncontrol++] = t;

	char msg[512];
	struct ledger *l;
	int err = ledger__open(path, false, &l, msg, sizeof(msg));
	if (err) {
		cli_error("%s", msg);
		return err == -EINVAL || err == -ENOENT ? EXIT_USAGE : EXIT_RUNTIME;
	}
	struct bill b = { 0 };
	int status = 0;
	err = ledger__bill(l, by, since, until, control, ncontrol, collect, &b, msg, sizeof(msg));
	ledger__close(l);
	if (err) {
		cli_error("%s", err == -ENOMEM ? "out of memory" : msg);
		status = EXIT_RUNTIME;
	} else {
		struct outfile out;
		if (outfile__open(&out, output)) {
			status = EXIT_RUNTIME;
		} else {
			if (!strcmp(format, "json"))
				write_json(out.f, &b, by);
			else if (!strcmp(format, "csv"))
				write_csv(out.f, &b);
			else
				write_text(out.f, &b, by, path);
			if (outfile__commit(&out))
				status = EXIT_RUNTIME;
		}
	}
	for (size_t i = 0; i < b.n; i++)
		free((char *)b.rows[i].key);
	free(b.rows);
	return status;
}
