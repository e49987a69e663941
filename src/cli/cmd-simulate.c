/*
 * cpuledger simulate: sampling data of a simulated virtualization host
 * (core/sim.h), with the truth that analyze's methods are judged against.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "../core/sim.h"
#include "../format/sampling_csv.h"
#include "../report/report.h"
#include "../core/banned.h"

enum { S_SEED = 1, S_VMS, S_VCPUS, S_DURATION, S_STEAL, S_JITTER, S_PERIOD, S_OUTPUT,
       S_TRUTH };

static const struct cli_option simulate_options[] = {
	{ "seed", 0, "N", S_SEED, "random seed (default 1)" },
	{ "vms", 0, "N", S_VMS, "virtual machines (default 1)" },
	{ "vcpus", 0, "N", S_VCPUS, "vCPUs per VM (default 2)" },
	{ "duration-ms", 0, "N", S_DURATION, "simulated time in ms (default 10000)" },
	{ "steal-pct", 0, "P", S_STEAL, "share of time stolen, 0 to 90 (default 5)" },
	{ "jitter-ns", 0, "N", S_JITTER, "sample times vary by up to N ns (default 0)" },
	{ "period-ns", 0, "N", S_PERIOD, "the sampling period in ns (default 1000000)" },
	{ "output", 'o', "FILE", S_OUTPUT, "samples CSV (default standard output)" },
	{ "truth", 0, "FILE", S_TRUTH, "the true cpu and steal time per program, JSON" },
	{ 0 },
};

static const struct cli_option *const simulate_tables[] = { simulate_options, NULL };

const struct cli_command simulate_command = {
	"simulate", "[options] [-o FILE] [--truth FILE]",
	"Writes the sampling data of a deterministic simulated host: VMs whose\n"
	"threads run functions on vCPUs, idle, and lose the vCPU to the hypervisor\n"
	"in bursts; every vCPU is sampled once a period.",
	simulate_tables, NULL, false,
};

static int one_option(struct sim_config *c, int id, const char *arg, const char **out,
		      const char **truth)
{
	uint64_t v;
	switch (id) {
	case S_SEED: return cli_parse_u64("--seed", arg, 0, UINT64_MAX, &c->seed);
	case S_VMS:
		if (cli_parse_u64("--vms", arg, 1, 1000, &v))
			return EXIT_USAGE;
		c->vms = (uint32_t)v;
		return 0;
	case S_VCPUS:
		if (cli_parse_u64("--vcpus", arg, 1, 1024, &v))
			return EXIT_USAGE;
		c->vcpus = (uint32_t)v;
		return 0;
	case S_DURATION:
		return cli_parse_u64("--duration-ms", arg, 1, UINT32_MAX, &c->duration_ms);
	case S_STEAL: return cli_parse_double("--steal-pct", arg, &c->steal_pct);
	case S_JITTER:
		return cli_parse_u64("--jitter-ns", arg, 0, UINT32_MAX, &c->jitter_ns);
	case S_PERIOD:
		return cli_parse_u64("--period-ns", arg, 1, UINT32_MAX, &c->interval_ns);
	case S_OUTPUT: *out = arg; return 0;
	case S_TRUTH: *truth = arg; return 0;
	}
	return EXIT_USAGE;
}

/* 0 (*help when --help printed), or EXIT_USAGE having said why. */
static int parse_args(int argc, char **argv, struct sim_config *c,
		      const char **out, const char **truth, bool *help)
{
	int id, status;
	const char *arg;
	*c = (struct sim_config){ .seed = 1, .vms = 1, .vcpus = 2,
				  .duration_ms = 10000, .steal_pct = 5,
				  .jitter_ns = 0, .interval_ns = 1000000 };
	cli_begin();
	while ((id = cli_next(&simulate_command, argc, argv, &arg)) != CLI_END) {
		if (id == CLI_HELP) {
			cli_usage(stdout, &simulate_command);
			*help = true;
			return 0;
		}
		/* CLI_BAD: cli_next said what is wrong */
		if ((status = id == CLI_BAD ? EXIT_USAGE : one_option(c, id, arg, out, truth)))
			return status;
	}
	if (optind != argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	const char *bad = sim_config__check(c);
	if (bad) {
		cli_error("%s", bad);
		return EXIT_USAGE;
	}
	return 0;
}

static int write_samples(struct sim *s, FILE *f)
{
	enum { BUF = 1 << 20 };
	char *buf = malloc(BUF);
	size_t n = 0;
	struct sim_sample x;
	if (!buf)
		return -ENOMEM;
	n = (size_t)snprintf(buf, BUF, "%s\n", SAMPLING_CSV_HEADER);
	while (sim__next(s, &x)) {
		struct csv_sample c = {
			.vm = sim__vm_name(s, x.vm), .vcpu = x.vcpu,
			.time_ns = x.time_ns, .pid = x.pid, .tid = x.tid,
			.function = x.function, .state = x.state,
		};
		if (n + sampling_csv__line_max(&c) > BUF) {
			fwrite(buf, 1, n, f);
			n = 0;
		}
		n += sampling_csv__format(buf + n, &c);
	}
	fwrite(buf, 1, n, f);
	free(buf);
	return ferror(f) ? -EIO : 0;
}

static void write_truth(const struct sim *s, const struct sim_config *c,
			FILE *f)
{
	const struct sim_totals *t = sim__totals(s);
	uint32_t n;
	const struct sim_truth *p = sim__truth(s, &n);
	fprintf(f, "{\"version\":%d,\"seed\":%" PRIu64 ",\"vms\":%" PRIu32
		",\"vcpus\":%" PRIu32 ",\"duration_ms\":%" PRIu64
		",\"interval_ns\":%" PRIu64 ",\"jitter_ns\":%" PRIu64
		",\"steal_pct\":%g,\n", REPORT_FORMAT_VERSION, c->seed, c->vms,
		c->vcpus, c->duration_ms, c->interval_ns, c->jitter_ns,
		c->steal_pct);
	fprintf(f, "\"totals\":{\"run_ns\":%" PRIu64 ",\"idle_ns\":%" PRIu64
		",\"steal_ns\":%" PRIu64 ",\"held_steal_ns\":%" PRIu64
		",\"idle_steal_ns\":%" PRIu64 ",\"switch_steal_ns\":%" PRIu64
		"},\n\"programs\":[", t->run_ns, t->idle_ns,
		t->held_steal_ns + t->idle_steal_ns + t->switch_steal_ns,
		t->held_steal_ns, t->idle_steal_ns, t->switch_steal_ns);
	for (uint32_t i = 0; i < n; i++) {
		fputs(i ? ",\n{\"vm\":" : "\n{\"vm\":", f);
		json_put_string(f, sim__vm_name(s, p[i].vm));
		fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"function\":",
			p[i].pid, p[i].tid);
		json_put_string(f, p[i].function);
		fprintf(f, ",\"cpu_ns\":%" PRIu64 ",\"steal_ns\":%" PRIu64 "}",
			p[i].cpu_ns, p[i].steal_ns);
	}
	fputs("]}\n", f);
}

int cmd_simulate(int argc, char **argv)
{
	struct sim_config c;
	const char *out_path = NULL, *truth_path = NULL;
	bool help = false;
	int status = parse_args(argc, argv, &c, &out_path, &truth_path, &help);
	if (status || help)
		return status;

	status = EXIT_RUNTIME;
	struct outfile out = { 0 }, truth = { 0 };
	struct sim *s = sim__new(&c);
	if (!s) {
		cli_error("out of memory");
		return EXIT_RUNTIME;
	}
	if (outfile__open(&out, out_path))
		goto out_free;
	if (truth_path && outfile__open(&truth, truth_path))
		goto out_abort;
	if (write_samples(s, out.f)) {
		cli_error("cannot write samples: %s", strerror(errno));
		goto out_abort;
	}
	if (truth_path)
		write_truth(s, &c, truth.f);
	if (truth_path && outfile__commit(&truth))
		goto out_abort;
	if (outfile__commit(&out))
		goto out_free;
	status = 0;
	goto out_free;
out_abort:
	outfile__abort(&truth);
	outfile__abort(&out);
out_free:
	sim__free(s);
	return status;
}
