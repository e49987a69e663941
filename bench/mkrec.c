/*
 * bench/mkrec: writes a synthetic recording (version 3, as the recorder
 * writes them) of N cpu-clock samples, for timing `report` on recordings
 * of known size without recording for hours.
 *
 * Each CPU runs threads in stints of 10 samples (1 ms apart); a stint ends
 * with its sched_stat_runtime (10 ms less 3 us; every 50th stint 200 us
 * less: steal) and a sched_switch to the next thread. THREADS threads in
 * processes of 4, 100 functions in 10 files; with DEPTH > 1 each sample
 * has a call stack of DEPTH frames (the thread's own callers over a leaf
 * that changes with the stint). A round mark every stint.
 *
 * usage: mkrec OUT SAMPLES [THREADS [CPUS [DEPTH]]]
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/recording.h"

#define MS 1000000ull
#define T0 (100000 * MS)
#define NFUNCS 100
#define NDSOS 10
#define MAXDEPTH 64

static struct rec_writer *w;

static void add(uint32_t type, const void *a, size_t alen, const void *b, size_t blen)
{
	if (rec_writer__add(w, type, a, alen, b, blen)) {
		perror("mkrec: write");
		exit(1);
	}
}

static void name(uint32_t id, const char *text)
{
	uint32_t pre[2] = { id, 0 };
	add(REC_NAME, pre, sizeof(pre), text, strlen(text));
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: mkrec OUT SAMPLES [THREADS [CPUS [DEPTH]]]\n");
		return 2;
	}
	uint64_t samples = strtoull(argv[2], NULL, 10);
	uint32_t threads = argc > 3 ? (uint32_t)atoi(argv[3]) : 64;
	uint32_t cpus = argc > 4 ? (uint32_t)atoi(argv[4]) : 2;
	uint32_t depth = argc > 5 ? (uint32_t)atoi(argv[5]) : 1;
	if (!threads || !cpus || cpus > threads || !depth || depth > MAXDEPTH)
		return 2;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || !(w = rec_writer__new(fd))) {
		perror(argv[1]);
		return 1;
	}
	char meta[512];
	int n = snprintf(meta, sizeof(meta), "phase=start\nsource=bench\nhost=bench\n"
			 "interval_ns=1000000\nclk_tck=100\ncallchain=%d\nsteal_source=tracepoints\n"
			 "scope=all\ntime_ns=%llu\n", depth > 1, (unsigned long long)T0);
	for (uint32_t c = 0; c < cpus; c++)
		n += snprintf(meta + n, sizeof(meta) - (size_t)n, "cpu=%u\n", c);
	add(REC_META, meta, (size_t)n, NULL, 0);
	char text[64];
	for (uint32_t i = 0; i < NFUNCS; i++) {
		snprintf(text, sizeof(text), "function_%u", i);
		name(i, text);
	}
	for (uint32_t i = 0; i < NDSOS; i++) {
		snprintf(text, sizeof(text), "/usr/lib/bench/lib%u.so", i);
		name(NFUNCS + i, text);
	}
	for (uint32_t p = 0; p < threads; p += 4) {
		struct rec_proc pr = { .time_ns = T0, .pid = 1000 + p, .uid = 0 };
		n = snprintf(text, sizeof(text), "bench-process --number %u", p / 4);
		pr.command_len = (uint32_t)n;
		add(REC_PROC, &pr, sizeof(pr), text, (size_t)n);
	}
	uint32_t *on = calloc(cpus, sizeof(*on));
	for (uint32_t c = 0; c < cpus; c++)
		on[c] = c;
	struct rec_frame f[MAXDEPTH];
	uint64_t t = T0, stint = 0;
	for (uint64_t s = 0; s < samples; t += MS) {
		for (uint32_t c = 0; c < cpus && s < samples; c++, s++) {
			uint32_t th = on[c], leaf = (th * 7 + (uint32_t)(stint / cpus)) % NFUNCS;
			for (uint32_t d = 0; d < depth; d++) {
				uint32_t fn = d ? (th * 13 + d * 17) % NFUNCS : leaf;
				f[d] = (struct rec_frame){ .ip = 0x400000 + fn * 64,
							   .function = fn, .dso = NFUNCS + fn % NDSOS };
			}
			struct rec_sample_head h = { .pid = 1000 + th / 4 * 4, .tid = 1000 + th,
						     .cpu = c, .nframes = depth,
						     .time_ns = t + MS / 2, .period = MS };
			if (rec_writer__sample(w, &h, f)) {	/* as the recorder writes it */
				perror("mkrec: write");
				exit(1);
			}
		}
		if ((t - T0) / MS % 10 != 9)
			continue;
		/* the stints end: runtime, a switch to the next thread, a round */
		for (uint32_t c = 0; c < cpus; c++, stint++) {
			uint64_t ran = 10 * MS - 3000 - (stint % 50 == 49 ? 200000 : 0);
			struct rec_sched r = { .kind = REC_SCHED_RUNTIME, .cpu = c, .time_ns = t + MS,
					       .a = 1000 + on[c], .value = ran };
			add(REC_SCHED, &r, sizeof(r), NULL, 0);
			uint32_t next = (on[c] + cpus) % threads;
			struct rec_sched sw = { .kind = REC_SCHED_SWITCH, .cpu = c, .time_ns = t + MS,
						.a = 1000 + on[c], .b = 1000 + next };
			add(REC_SCHED, &sw, sizeof(sw), NULL, 0);
			on[c] = next;
		}
		uint64_t round = t + MS;
		add(REC_ROUND, &round, sizeof(round), NULL, 0);
	}
	n = snprintf(meta, sizeof(meta), "phase=end\ntime_ns=%llu\n", (unsigned long long)(t + MS));
	add(REC_META, meta, (size_t)n, NULL, 0);
	if (rec_writer__finish(w) || close(fd)) {
		perror("mkrec: finish");
		return 1;
	}
	rec_writer__free(w);
	free(on);
	return 0;
}
