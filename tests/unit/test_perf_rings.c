/*
 * The rings of a perf session read together (collect/perf.c): every
 * record each ring held when the read began, taken in the order of their
 * times across the rings, with the CPU each came from; a record that
 * wraps a ring's end whole; a record the reader fails left in its ring
 * for the next read; the kernel's PERF_RECORD_LOST counted. The rings are
 * anonymous memory laid out as the kernel lays its rings out, filled here.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "collect/perf.h"

#define DATA 256	/* each ring's data: small, so that records wrap */

/* A record of the test: its time, and a tag to know it by. */
struct rec {
	struct perf_event_header h;
	uint64_t time, tag;
};

static void session(struct perf_session *s, int ncpus)
{
	memset(s, 0, sizeof(*s));
	s->ncpus = ncpus;
	s->cpus = calloc((size_t)ncpus, sizeof(*s->cpus));
	assert_non_null(s->cpus);
	for (int i = 0; i < ncpus; i++) {
		struct perf_cpu *c = &s->cpus[i];
		c->cpu = 10 + i;	/* a CPU's number is not its index */
		for (int k = 0; k < EV_KINDS; k++)
			c->fd[k] = -1;
		struct ring *r = &c->ring;
		r->page_size = (size_t)sysconf(_SC_PAGESIZE);
		r->data_size = DATA;
		r->base = mmap(NULL, r->page_size + DATA, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_true(r->base != MAP_FAILED);
		r->scratch_size = 1 << 16;
		r->scratch = malloc(r->scratch_size);
		assert_non_null(r->scratch);
	}
}

static struct perf_event_mmap_page *meta(struct perf_session *s, int i)
{
	return s->cpus[i].ring.base;
}

/* Writes bytes at the ring's head, wrapping its end, as the kernel does. */
static void put_bytes(struct perf_session *s, int i, const void *p, size_t n)
{
	struct ring *r = &s->cpus[i].ring;
	uint8_t *data = (uint8_t *)r->base + r->page_size;
	for (size_t k = 0; k < n; k++)
		data[(meta(s, i)->data_head + k) % DATA] = ((const uint8_t *)p)[k];
	meta(s, i)->data_head += n;
}

static void put(struct perf_session *s, int i, uint64_t time, uint64_t tag)
{
	struct rec r = { { PERF_RECORD_SAMPLE, 0, sizeof(r) }, time, tag };
	put_bytes(s, i, &r, sizeof(r));
}

/* What the reader saw, in its order. */
static struct seen {
	int cpu;
	uint64_t time, tag;
} seen[64];
static int nseen, fail_at = -1;

static int on_record(void *ctx, int cpu, const struct perf_event_header *h)
{
	(void)ctx;
	if (h->type != PERF_RECORD_SAMPLE)
		return 0;
	if (nseen == fail_at)
		return -EIO;
	const struct rec *r = (const void *)h;
	assert_int_equal(h->size, sizeof(*r));
	seen[nseen++] = (struct seen){ cpu, r->time, r->tag };
	return 0;
}

static uint64_t time_of(void *ctx, const struct perf_event_header *h)
{
	(void)ctx;
	return h->type == PERF_RECORD_SAMPLE ? ((const struct rec *)h)->time : 0;
}

static void read_all(struct perf_session *s, int want)
{
	nseen = 0;
	assert_int_equal(perf_session__read(s, on_record, time_of, NULL), want);
}

/* One CPU's mapping comes before another CPU's later samples, though its
 * ring is read second: the merge takes the earliest head first. */
static void records_in_time_order_across_rings(void **state)
{
	(void)state;
	struct perf_session s;
	session(&s, 3);
	put(&s, 0, 10, 1);
	put(&s, 0, 20, 2);
	put(&s, 0, 30, 3);
	put(&s, 0, 40, 4);
	put(&s, 1, 15, 5);
	put(&s, 1, 16, 6);
	put(&s, 1, 35, 7);	/* ring 2 holds nothing */
	read_all(&s, 0);
	static const struct { int cpu; uint64_t time; } want[] = {
		{ 10, 10 }, { 11, 15 }, { 11, 16 }, { 10, 20 }, { 10, 30 }, { 11, 35 }, { 10, 40 }
	};
	assert_int_equal(nseen, 7);
	for (int k = 0; k < 7; k++) {
		assert_int_equal(seen[k].cpu, want[k].cpu);
		assert_int_equal(seen[k].time, want[k].time);
	}
	for (int i = 0; i < 3; i++)	/* all of it given back */
		assert_int_equal(meta(&s, i)->data_tail, meta(&s, i)->data_head);
	/* a ring's own order is kept where it is out of order: its next
	 * record is the one the merge weighs */
	put(&s, 0, 50, 8);
	put(&s, 0, 45, 9);
	put(&s, 1, 47, 10);
	read_all(&s, 0);
	assert_int_equal(nseen, 3);
	assert_int_equal(seen[0].tag, 10);
	assert_int_equal(seen[1].tag, 8);
	assert_int_equal(seen[2].tag, 9);
	perf_session__release(&s);
}

/* Records that wrap the end of the data come whole (24-byte records
 * round a 256-byte ring: some start 16 or 8 bytes before its end). */
static void wrapped_records_whole(void **state)
{
	(void)state;
	struct perf_session s;
	session(&s, 1);
	uint64_t got = 0;
	for (uint64_t k = 0; k < 40; k++) {	/* more than the ring holds */
		put(&s, 0, 1000 + k, 200 + k);
		if (k % 5 == 4) {
			read_all(&s, 0);
			assert_int_equal(nseen, 5);
			for (int j = 0; j < 5; j++) {
				assert_int_equal(seen[j].time, 1000 + got);
				assert_int_equal(seen[j].tag, 200 + got++);
			}
		}
	}
	assert_int_equal(got, 40);
	perf_session__release(&s);
}

/* A record the reader fails stays in its ring, with those after it; the
 * ones before are given back. */
static void failed_record_stays(void **state)
{
	(void)state;
	struct perf_session s;
	session(&s, 2);
	put(&s, 0, 1, 1);
	put(&s, 1, 2, 2);
	put(&s, 0, 3, 3);
	put(&s, 1, 4, 4);
	fail_at = 2;
	read_all(&s, -EIO);
	fail_at = -1;
	assert_int_equal(nseen, 2);
	assert_int_equal(meta(&s, 0)->data_tail, sizeof(struct rec));
	assert_int_equal(meta(&s, 1)->data_tail, sizeof(struct rec));
	read_all(&s, 0);
	assert_int_equal(nseen, 2);
	assert_int_equal(seen[0].tag, 3);
	assert_int_equal(seen[1].tag, 4);
	perf_session__release(&s);
}

/* The kernel's count of records it dropped is summed per ring. */
static void lost_records_counted(void **state)
{
	(void)state;
	struct perf_session s;
	session(&s, 2);
	struct { struct perf_event_header h; uint64_t id, lost; } l = {
		{ PERF_RECORD_LOST, 0, sizeof(l) }, 7, 12 };
	put(&s, 1, 5, 1);
	put_bytes(&s, 1, &l, sizeof(l));
	l.lost = 30;
	put_bytes(&s, 1, &l, sizeof(l));
	read_all(&s, 0);
	assert_int_equal(nseen, 1);
	assert_int_equal(perf_session__lost(&s, 0), 0);
	assert_int_equal(perf_session__lost(&s, 1), 42);
	perf_session__release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_in_time_order_across_rings),
		cmocka_unit_test(wrapped_records_whole),
		cmocka_unit_test(failed_record_stays),
		cmocka_unit_test(lost_records_counted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
