/*
 * bench/bpf_read: what one read of the BPF collector costs
 * (sched_clock__collect: the sampler on each CPU, the CPUs' and the
 * threads' maps, the stints in progress, the deltas), with the map read
 * entry by entry and batched (BPF_MAP_LOOKUP_BATCH), for a few counts of
 * live threads. Two collectors are loaded side by side, one of each
 * (CPULEDGER_BPF_BATCH=off for the second), and read in turn, the order
 * swapped each round: this machine's load changes by the second, and
 * both then see it alike. The threads sleep 100 ms at a time (each
 * switches ten times a second: an entry in the map, little CPU), added
 * up to each count in turn. A third collector whose first batched
 * lookup is refused (CPULEDGER_BPF_BATCH=einval, as a kernel before 5.6
 * refuses it) shows the fallback: it reads as many threads.
 *
 * usage: build/bench/bpf_read READS N...   (root; bench/bpf_read.sh)
 * prints per count: threads in the map, each path's median and the
 * ratio, in microseconds.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/sched_clock.h"
#include "collect/clock.h"

static volatile int stop;

static void *sleeper(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	while (!stop)
		nanosleep(&ts, NULL);
	return NULL;
}

static struct sched_clock *load(const char *batch)
{
	char why[256];
	if (batch)
		setenv("CPULEDGER_BPF_BATCH", batch, 1);
	else
		unsetenv("CPULEDGER_BPF_BATCH");
	struct sched_clock_opts o = { 0 };
	struct sched_clock *sc = sched_clock__new(&o, why, sizeof(why));
	if (!sc) {
		fprintf(stderr, "bpf_read: cannot load the collector: %s\n", why);
		exit(1);
	}
	return sc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t timed_collect(struct sched_clock *sc)
{
	struct sched_clock_collection c;
	uint64_t t0 = clock_mono_ns();
	if (sched_clock__collect(sc, &c)) {
		fprintf(stderr, "bpf_read: collect: %s\n", strerror(errno));
		exit(1);
	}
	return clock_mono_ns() - t0;
}

/* Threads in the collector's map now (exited ones kept). */
static size_t entries(struct sched_clock *sc)
{
	struct sched_clock_thread *t;
	size_t n = 0;
	if (sched_clock__read(sc, false, NULL, &t, &n))
		return 0;
	free(t);
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bpf_read READS N...\n");
		return 2;
	}
	int reads = atoi(argv[1]);
	struct sched_clock *batched = load(NULL), *each = load("off"), *refused = load("einval");
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	size_t alive = 0, cap = 0;
	pthread_t *th = NULL;
	uint64_t *a = calloc((size_t)reads, sizeof(*a)), *b = calloc((size_t)reads, sizeof(*b));
	printf("%8s %8s %14s %14s %7s\n", "threads", "in map", "entry by entry", "batched",
	       "ratio");
	for (int k = 2; k < argc; k++) {
		size_t want = (size_t)atol(argv[k]);
		if (want > cap) {
			th = realloc(th, want * sizeof(*th));
			cap = want;
		}
		for (; alive < want; alive++)
			if (pthread_create(&th[alive], &attr, sleeper, NULL)) {
				fprintf(stderr, "bpf_read: pthread_create: %s\n", strerror(errno));
				return 1;
			}
		struct timespec settle = { 0, 400 * 1000 * 1000 };
		nanosleep(&settle, NULL);	/* each has slept, so switched, once */
		timed_collect(batched);
		timed_collect(each);
		for (int i = 0; i < reads; i++) {
			if (i % 2) {
				b[i] = timed_collect(batched);
				a[i] = timed_collect(each);
			} else {
				a[i] = timed_collect(each);
				b[i] = timed_collect(batched);
			}
			struct timespec gap = { 0, 5 * 1000 * 1000 };
			nanosleep(&gap, NULL);
		}
		uint64_t ma = median(a, (size_t)reads), mb = median(b, (size_t)reads);
		printf("%8zu %8zu %11.1f us %11.1f us %6.2fx\n", alive, entries(batched), ma / 1e3,
		       mb / 1e3, mb ? (double)ma / (double)mb : 0);
	}
	/* (each forgets the exited threads it reads: read both just now) */
	timed_collect(batched);
	timed_collect(refused);
	size_t nb = entries(batched), nr = entries(refused);
	printf("refused: %s; %zu threads read (batched: %zu)\n",
	       sched_clock__status(refused)->map_reads, nr, nb);
	printf("batched: %s\n", sched_clock__status(batched)->map_reads);
	stop = 1;
	for (size_t i = 0; i < alive; i++)
		pthread_join(th[i], NULL);
	sched_clock__free(batched);
	sched_clock__free(each);
	sched_clock__free(refused);
	free(th);
	free(a);
	free(b);
	return 0;
}
