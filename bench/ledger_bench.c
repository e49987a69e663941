/*
 * bench/ledger_bench: collections per second through the ledger API, and
 * bytes per task-account row. Writes N collections of R rows (R threads,
 * one account each, task identities reused across collections as a
 * long-running recorder's are) into a fresh ledger.
 *
 * usage: ledger_bench PATH N R
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "ledger/ledger.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int n = atoi(argv[2]), rows = atoi(argv[3]);
	char msg[512];
	struct ledger *l;
	if (ledger__open(argv[1], true, &l, msg, sizeof(msg))) {
		fprintf(stderr, "%s\n", msg);
		return 1;
	}
	static const char *const accounts[] = { "program", "library", "kernel", "crypto" };
	double t0 = now();
	for (int i = 0; i < n; i++) {
		struct collection c = { 1000 + i, "interval", i * 1000000000LL,
					(i + 1) * 1000000000LL, "bench", "boot",
					"bench-recording", i };
		if (ledger__begin(l, &c, msg, sizeof(msg)))
			goto fail;
		for (int r = 0; r < rows; r++) {
			struct task_info t = { .pid = (uint32_t)(1000 + r / 4),
					       .tid = (uint32_t)(1000 + r), .uid = 1000,
					       .command = "bench command --with arguments",
					       .executable = "/usr/bin/bench",
					       .start_ns = -1, .end_ns = -1 };
			struct usage u = { accounts[r % 4], 1000000 + r, r, 1 + r % 7 };
			if (ledger__add(l, &t, &u, msg, sizeof(msg)))
				goto fail;
		}
		if (ledger__commit(l, msg, sizeof(msg)))
			goto fail;
	}
	double t = now() - t0;
	ledger__close(l);
	struct stat st;
	stat(argv[1], &st);
	printf("%d %d %.6f %lld\n", n, rows, t, (long long)st.st_size);
	return 0;
fail:
	fprintf(stderr, "%s\n", msg);
	return 1;
}
