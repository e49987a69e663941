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
#include "../core/sim.h"
#include "../format/sampling_csv.h"
#include "../report/report.h"
#include "../core/banned.h"

static const char usage[] =
	"usage: cpuledger simulate [options] [-o FILE] [--truth FILE]\n"
	"\n"
	"Writes the sampling data of a deterministic simulated host: VMs whose\n"
	"threads run functions on vCPUs, idle, and lose the vCPU to the hypervisor\n"
	"in bursts; every vCPU is sampled once an interval.\n"
	"\n"
	"  -s, --seed N           random seed (default 1)\n"
	"      --vms N            virtual machines (default 1)\n"
	"      --vcpus N          vCPUs per VM (default 2)\n"
	"  -d, --duration-ms N    simulated time in ms (default 10000)\n"
	"      --steal-pct P      share of time stolen, 0 to 90 (default 5)\n"
	"      --jitter-ns N      sample times vary by up to N ns (default 0)\n"
	"  -I, --interval-ns N    sampling interval in ns (default 1000000)\n"
	"  -o, --output FILE      samples CSV (default stdout)\n"
	"      --truth FILE       the true cpu and steal time per program, JSON\n"
	"  -h, --help             show this help\n";

enum { OPT_VMS = 256, OPT_VCPUS, OPT_STEAL, OPT_JITTER, OPT_TRUTH };

static const struct option options[] = {
	{ "seed", required_argument, NULL, 's' },
	{ "vms", required_argument, NULL, OPT_VMS },
	{ "vcpus", required_argument, NULL, OPT_VCPUS },
	{ "duration-ms", required_argument, NULL, 'd' },
	{ "steal-pct", required_argument, NULL, OPT_STEAL },
	{ "jitter-ns", required_argument, NULL, OPT_JITTER },
	{ "interval-ns", required_argument, NULL, 'I' },
	{ "output", required_argument, NULL, 'o' },
	{ "truth", required_argument, NULL, OPT_TRUTH },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_args(int argc, char **argv, struct sim_config *c,
		      const char **out, const char **truth)
{
	uint64_t v;
	int ch;
	*c = (struct sim_config){ .seed = 1, .vms = 1, .vcpus = 2,
				  .duration_ms = 10000, .steal_pct = 5,
				  .jitter_ns = 0, .interval_ns = 1000000 };
	optind = 1;
	while ((ch = getopt_long(argc, argv, "s:d:I:o:h", options, NULL)) != -1) {
		switch (ch) {
		case 's':
			if (!cli_parse_u64("--seed", optarg, 0, UINT64_MAX, &c->seed))
				return -EINVAL;
			break;
		case OPT_VMS:
			if (!cli_parse_u64("--vms", optarg, 1, 1000, &v))
				return -EINVAL;
			c->vms = (uint32_t)v;
			break;
		case OPT_VCPUS:
			if (!cli_parse_u64("--vcpus", optarg, 1, 1024, &v))
				return -EINVAL;
			c->vcpus = (uint32_t)v;
			break;
		case 'd':
			if (!cli_parse_u64("--duration-ms", optarg, 1,
					   UINT32_MAX, &c->duration_ms))
				return -EINVAL;
			break;
		case OPT_STEAL:
			if (!cli_parse_double("--steal-pct", optarg, &c->steal_pct))
				return -EINVAL;
			break;
		case OPT_JITTER:
			if (!cli_parse_u64("--jitter-ns", optarg, 0, UINT32_MAX,
					   &c->jitter_ns))
				return -EINVAL;
			break;
		case 'I':
			if (!cli_parse_u64("--interval-ns", optarg, 1,
					   UINT32_MAX, &c->interval_ns))
				return -EINVAL;
			break;
		case 'o':
			*out = optarg;
			break;
		case OPT_TRUTH:
			*truth = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			fputs(usage, stderr);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	const char *bad = sim_config__check(c);
	if (bad) {
		cli_error("%s", bad);
		return -EINVAL;
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
	int err = parse_args(argc, argv, &c, &out_path, &truth_path);
	if (err)
		return err > 0 ? 0 : EXIT_USAGE;

	int status = EXIT_RUNTIME;
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
