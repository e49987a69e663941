/*
 * cpuledger ledger add REC...: recordings made earlier, into the ledger.
 * A recording none of which is there becomes one collection; one whose
 * collections are there in part (a recorder whose ledger was locked at the
 * end, or killed) gets one more collection with what is missing, so the
 * ledger then holds exactly its report. Each file is added or refused on
 * its own, and each refusal is named.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "../analysis/pipeline.h"
#include "../replay/rec_source.h"
#include "../ledger/ledger.h"
#include "../ledger/writer.h"
#include "../core/banned.h"

enum { G_LEDGER = 1, G_ACCOUNTS, G_WAIT };

static const struct cli_option ledger_options[] = {
	{ "ledger", 0, "PATH", G_LEDGER, "the ledger (default ./cpuledger.db)" },
	{ "accounts", 0, "FILE", G_ACCOUNTS, "charge accounts by these rules instead of those recorded" },
	{ "wait", 0, "SEC", G_WAIT, "wait this long for another writer to let go of\n"
	  "the ledger before giving up (default 30)" },
	{ 0 },
};

static const struct cli_option *const ledger_tables[] = { ledger_options, NULL };

const struct cli_command ledger_command = {
	"ledger", "add [options] RECORDING...",
	"Adds recordings of 'cpuledger record' (or perf-script:FILE, the text of\n"
	"perf script) to the ledger: each as one collection, or, when some of it\n"
	"is there already (collected while it was recorded), what of it is not.",
	ledger_tables, NULL, false,
};

/* What a recording's rows already sum to in the ledger, subtracted. */
struct have {
	struct batch *b;
};

static int subtract(void *ctx, const struct ledger_sum *s)
{
	struct batch *b = ((struct have *)ctx)->b;
	for (uint32_t i = 0; i < b->n; i++) {
		struct batch_row *r = &b->rows[i];
		/* the command may have changed (an exec): not part of the match */
		if (r->t.pid == s->pid && r->t.tid == s->tid &&
		    r->t.proc_start_ns == s->proc_start_ns && !strcmp(r->u.account, s->account)) {
			r->u.cpu_ns -= s->cpu_ns;
			r->u.steal_ns -= s->steal_ns;
			r->u.samples -= s->samples;
			return 0;
		}
	}
	return 0;
}

/* Each thread's run-queue wait over the recording (its schedstat
 * run_delay at the recorder's start and end snapshots), given on the
 * first of its rows: a task's wait is not per account. A thread not
 * alive at the end, or a recording without the snapshots, leaves it
 * unknown. */
static void add_waits(struct batch *b, const struct cgstats *cg)
{
	for (uint32_t i = 0; cg && i < b->n; i++) {
		struct batch_row *r = &b->rows[i];
		bool first = true;
		for (uint32_t j = 0; j < i && first; j++)
			first = b->rows[j].t.pid != r->t.pid || b->rows[j].t.tid != r->t.tid ||
				b->rows[j].t.proc_start_ns != r->t.proc_start_ns;
		uint64_t ns;
		if (first && cgstats__thread_wait(cg, r->t.pid, r->t.tid, &ns)) {
			r->u.wait_ns = (int64_t)ns;
			r->u.wait_known = true;
		}
	}
}

/* The recording's whole usage, as collections of it would sum to. */
static struct batch *whole(int fd, const struct account_rules *rules, struct rec_error *e,
			   int *err)
{
	struct rec_source_opts so = { .rules = rules };
	struct rec_source *src = rec_source__open(fd, &so, e);
	struct batch *b = NULL;
	struct pipeline p = { 0 };
	*err = src ? 0 : -errno;
	if (!*err) {
		const struct rec_meta *m = rec_source__meta(src);
		struct pipeline_opts po = { .collect = true };
		struct source *s = rec_source__source(src, e);
		*err = pipeline__run(&p, s, &po);
		if (!*err && !(b = collector__collect(&p.coll, p.engine, "import",
						      m->realtime_end_ns)))
			*err = -ENOMEM;
		if (b)
			add_waits(b, s->ops->cgstats ? s->ops->cgstats(s) : NULL);
		if (b)
			b->c.start_ns = m->realtime_start_ns;
	}
	pipeline__release(&p);
	rec_source__free(src);
	return b;
}

/* The rows left once what the ledger has is taken out. */
static int complete(const char *path, struct batch *b, bool *nothing, char *msg, size_t size)
{
	struct ledger *l;
	int err = ledger__open(path, LEDGER_WRITE, &l, msg, size);
	if (err)
		return err;
	int64_t next = 0;
	struct have h = { b };
	err = ledger__recording(l, b->c.recording, &next, subtract, &h, msg, size);
	ledger__close(l);
	if (err)
		return err;
	uint32_t n = 0;
	for (uint32_t i = 0; i < b->n; i++) {
		struct batch_row *r = &b->rows[i];
		/* what of a thread's wait the ledger has is not known here: the
		 * rest of a recording completed says none (unknown, not 0) */
		if (next)
			r->u.wait_known = false;
		if (r->u.cpu_ns || r->u.steal_ns || r->u.samples)
			b->rows[n++] = *r;
		else
			batch_row__release(r);
	}
	b->n = n;
	b->c.seq = next ? next : -1;
	free((char *)b->c.reason);
	b->c.reason = strdup(next ? "complete" : "import");
	*nothing = next && !n;
	return b->c.reason ? 0 : -ENOMEM;
}

static int add_one(const char *ledger, const char *rec, const struct account_rules *rules)
{
	int fd, status = cli_open_recording(rec, NULL, &fd);
	if (status)
		return status;
	struct rec_error e = { 0 };
	int err;
	struct batch *b = whole(fd, rules, &e, &err);
	close(fd);
	if (err == -EINVAL) {
		cli_not_a_recording(rec, &e, true);
		return EXIT_USAGE;
	}
	if (err) {
		cli_error("cannot read '%s': %s", rec, strerror(-err));
		return EXIT_RUNTIME;
	}
	char msg[512];
	bool nothing = false;
	err = complete(ledger, b, &nothing, msg, sizeof(msg));
	if (!err && nothing) {
		cli_error("'%s' is in the ledger already, whole: nothing added", rec);
		batch__free(b);
		return EXIT_USAGE;
	}
	if (!err)
		err = batch__write(ledger, b, msg, sizeof(msg));
	int64_t seq = b->c.seq;
	uint32_t rows = b->n;
	batch__free(b);
	if (err) {
		cli_error("cannot add '%s' to '%s': %s", rec, ledger, msg);
		return err == -EINVAL || err == -EEXIST ? EXIT_USAGE : EXIT_RUNTIME;
	}
	if (seq > 0)
		fprintf(stderr, "%s: '%s': what was missing added (collection %lld, %u rows)\n",
			cli_progname, rec, (long long)seq, rows);
	else
		fprintf(stderr, "%s: '%s' added (%u rows)\n", cli_progname, rec, rows);
	return 0;
}

/* 0 (*help when --help printed), or EXIT_USAGE having said why. */
static int parse(int argc, char **argv, const char **path, const char **accounts,
		 bool *help)
{
	int id;
	const char *arg;
	double wait;
	cli_begin();
	while ((id = cli_next(&ledger_command, argc, argv, &arg)) != CLI_END) {
		switch (id) {
		case CLI_HELP:
			cli_usage(stdout, &ledger_command);
			*help = true;
			return 0;
		case G_LEDGER: *path = arg; break;
		case G_ACCOUNTS: *accounts = arg; break;
		case G_WAIT:
			if (cli_parse_seconds("--wait", arg, 0, 86400, &wait))
				return EXIT_USAGE;
			ledger__set_wait((int)(wait * 1000));
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		cli_error("no recording given");
		return EXIT_USAGE;
	}
	return 0;
}

int cmd_ledger(int argc, char **argv)
{
	const char *path = "cpuledger.db", *accounts = NULL;
	if (argc < 2 || strcmp(argv[1], "add")) {
		if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			cli_usage(stdout, &ledger_command);
			return 0;
		}
		cli_error("give a subcommand: add");
		cli_usage(stderr, &ledger_command);
		return EXIT_USAGE;
	}
	bool help = false;
	int status = parse(argc - 1, argv + 1, &path, &accounts, &help);
	if (status || help)
		return status;
	struct account_rules rules = { 0 };
	if (accounts && (status = cli_load_accounts(accounts, &rules, NULL)))
		return status;
	int refused = 0;
	/* each file on its own: one refused does not keep the rest out */
	for (int i = optind + 1; i < argc; i++) {
		int st = add_one(path, argv[i], accounts ? &rules : NULL);
		refused += st != 0;
		if (st && (!status || st == EXIT_RUNTIME))
			status = st;
	}
	if (refused && argc - optind - 1 > 1)
		cli_error("%d of %d recordings not added (said above)", refused,
			  argc - optind - 1);
	account_rules__release(&rules);
	return status;
}
