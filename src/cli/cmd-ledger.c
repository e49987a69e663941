/*
 * cpuledger ledger add REC: a recording made earlier, into the ledger, as
 * one collection; the same recording twice is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ledger_write.h"
#include "../ledger/ledger.h"
#include "../core/banned.h"

static const char usage[] =
	"usage: cpuledger ledger add [options] RECORDING...\n"
	"\n"
	"Adds recordings of 'cpuledger record' to the ledger, each as one\n"
	"collection; a recording added before is refused.\n"
	"\n"
	"  -l, --ledger PATH      the ledger (default ./cpuledger.db)\n"
	"  -A, --accounts FILE    charge accounts by these rules instead of those recorded\n"
	"  -w, --wait SEC         wait this long for another writer to let go of\n"
	"                         the ledger before giving up (default 30)\n"
	"  -h, --help             show this help\n";

int cmd_ledger(int argc, char **argv)
{
	static const struct option options[] = {
		{ "ledger", required_argument, NULL, 'l' },
		{ "accounts", required_argument, NULL, 'A' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = "cpuledger.db", *accounts = NULL;
	int c;
	optind = 1;
	if (argc < 2 || strcmp(argv[1], "add")) {
		if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			fputs(usage, stdout);
			return 0;
		}
		cli_error("give a subcommand: add");
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	argc--;
	argv++;
	double wait;
	while ((c = getopt_long(argc, argv, "l:A:w:h", options, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (!cli_parse_double("--wait", optarg, &wait))
				return EXIT_USAGE;
			if (wait < 0 || wait > 86400) {
				cli_error("--wait: '%s' is not 0 to 86400 seconds", optarg);
				return EXIT_USAGE;
			}
			ledger__set_wait((int)(wait * 1000));
			break;
		case 'l':
			path = optarg;
			break;
		case 'A':
			accounts = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		cli_error("no recording given");
		return EXIT_USAGE;
	}
	struct account_rules rules = { 0 };
	if (accounts) {
		int st = cli_load_accounts(accounts, &rules, NULL);
		if (st)
			return st;
	}
	int status = 0;
	for (int i = optind; i < argc && !status; i++) {
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			cli_error("cannot open '%s': %s", argv[i], strerror(errno));
			status = EXIT_USAGE;
			break;
		}
		struct loaded_recording r;
		struct rec_error e;
		int err = recording__load(fd, METHOD_PRECEDING, accounts ? &rules : NULL, &r, &e);
		close(fd);
		if (err == -EINVAL) {
			fprintf(stderr, "%s: offset %llu: %s\n", argv[i],
				(unsigned long long)e.offset, e.msg);
			status = EXIT_USAGE;
		} else if (err) {
			cli_error("cannot read '%s': %s", argv[i], strerror(-err));
			status = EXIT_RUNTIME;
		} else {
			status = ledger_write_recording(path, &r, "import");
		}
		loaded_recording__release(&r);
	}
	account_rules__release(&rules);
	return status;
}
