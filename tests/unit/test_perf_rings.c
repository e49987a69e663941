/*
 * The rings of a perf session read together (collect/perf.c): every
 * record each ring held when the read began, taken in the order of their
 * times across the rings, with the CPU each came from; a record that
 * wraps a ring's end whole; a record the reader fails left in its ring
 * for the next read; space given back as the read goes; the kernel's
 * PERF_RECORD_LOST counted; a record's time as the recorder takes it.
 * The rings are anonymous memory laid out as the kernel lays its rings
 * out, filled here.
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
#include "resolve/perf_decode.h"

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
static const struct perf_event_mmap_page *watched;	/* its tail as each record is read */
static uint64_t tail_seen[64];

static int on_record(void *ctx, int cpu, const struct perf_event_header *h)
{
	(void)ctx;
	if (h->type != PERF_RECORD_SAMPLE)
		return 0;
	if (nseen == fail_at)
		return -EIO;
	const struct rec *r = (const void *)h;
	assert_int_equal(h->size, sizeof(*r));
	tail_seen[nseen] = watched ? watched->data_tail : 0;
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
 * round a 256-byte ring: some start 16 or 8 bytes before its end), two
 * rings' at once: each is made whole in its ring's own scratch. */
static void wrapped_records_whole(void **state)
{
	(void)state;
	struct perf_session s;
	session(&s, 2);
	uint64_t got = 0;
	for (uint64_t k = 0; k < 40; k++) {	/* more than a ring holds */
		put(&s, 0, 2 * k, 200 + k);
		put(&s, 1, 2 * k + 1, 300 + k);
		if (k % 5 == 4) {
			read_all(&s, 0);
			assert_int_equal(nseen, 10);
			for (int j = 0; j < 10; j++, got++) {
				assert_int_equal(seen[j].cpu, 10 + j % 2);
				assert_int_equal(seen[j].time, got);
				assert_int_equal(seen[j].tag, (j % 2 ? 300 : 200) + got / 2);
			}
		}
	}
	assert_int_equal(got, 80);
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

/* A long read gives the space it passed back as it goes, every eighth
 * of the ring (32 bytes here, two records), not at its end alone: the
 * merge holds every ring for the whole read. */
static void space_given_back_during_the_read(void **state)
{
	(void)state;
	struct perf_session s;
	session(&s, 2);
	for (uint64_t k = 0; k < 8; k++)
		put(&s, 0, k, k);
	put(&s, 1, 100, 100);
	watched = meta(&s, 0);
	read_all(&s, 0);
	watched = NULL;
	assert_int_equal(nseen, 9);
	for (int k = 0; k < 8; k++)
		assert_int_equal(tail_seen[k], 48 * (k / 2));
	assert_int_equal(meta(&s, 0)->data_tail, 8 * sizeof(struct rec));
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

/* The recorder's key, perf_record_time, is the time perf_decode reads,
 * for every record the recorder's events write: cpu-clock samples with
 * and without call chains and cgroups, the tracepoints' samples (no IP,
 * a raw part), and the side records with their sample_id_all trailer
 * (collect/perf.c opens every event with it). */
static uint8_t rec_buf[512];
static size_t rec_len;

static void start(uint32_t type)
{
	struct perf_event_header h = { type, 0, 0 };
	memcpy(rec_buf, &h, sizeof(h));
	rec_len = sizeof(h);
}

static void u64(uint64_t v)
{
	memcpy(rec_buf + rec_len, &v, 8);
	rec_len += 8;
}

static void bytes(const void *p, size_t n)
{
	memcpy(rec_buf + rec_len, p, n);
	rec_len += n;
}

static void end(void)
{
	((struct perf_event_header *)rec_buf)->size = (uint16_t)rec_len;
}

/* TID, TIME, CPU, IDENTIFIER: what sample_id_all adds to a side record */
static void trailer(uint64_t time, uint64_t id)
{
	u64(7 | (uint64_t)8 << 32);
	u64(time);
	u64(1);
	u64(id);
	end();
}

static void same_time(const struct pd_layout *l, uint64_t want)
{
	struct perf_ev ev;
	assert_int_equal(perf_decode(l, rec_buf, rec_len, &ev), 0);
	assert_int_equal(ev.time, want);
	assert_int_equal(perf_record_time(l, rec_buf, rec_len), want);
}

static void record_time_as_decoded(void **state)
{
	(void)state;
	enum { CLOCK_ID = 100, SWITCH_ID = 200, RUNTIME_ID = 300 };
	for (int chain = 0; chain < 2; chain++) {
		for (int cgroup = 0; cgroup < 2; cgroup++) {
			struct perf_options o = { .callchain = chain, .cgroup = cgroup };
			struct pd_layout l = { 0 };
			l.sample_type[PE_CLOCK] = perf_session__sample_type(&o, EV_CLOCK);
			l.sample_type[PE_SWITCH] = perf_session__sample_type(&o, EV_SWITCH);
			l.sample_type[PE_RUNTIME] = perf_session__sample_type(&o, EV_RUNTIME);
			l.prev_pid = (struct pd_field){ 0, 4 };
			l.next_pid = (struct pd_field){ 4, 4 };
			l.rt_pid = (struct pd_field){ 0, 4 };
			l.rt_runtime = (struct pd_field){ 4, 8 };
			assert_int_equal(pd_layout__add_id(&l, SWITCH_ID, PE_SWITCH), 0);
			assert_int_equal(pd_layout__add_id(&l, CLOCK_ID, PE_CLOCK), 0);
			assert_int_equal(pd_layout__add_id(&l, RUNTIME_ID, PE_RUNTIME), 0);
			pd_layout__ready(&l);
			uint64_t t = 5000000000ULL + (uint64_t)(chain * 2 + cgroup);

			start(PERF_RECORD_SAMPLE);	/* a cpu-clock sample */
			u64(CLOCK_ID);
			u64(0x401000);			/* IP */
			u64(7 | (uint64_t)8 << 32);	/* pid, tid */
			u64(t);
			u64(1);				/* CPU */
			u64(1000000);			/* period */
			if (chain) {
				u64(3);
				u64((uint64_t)-512);	/* PERF_CONTEXT_USER */
				u64(0x401000);
				u64(0x402000);
			}
			if (cgroup)
				u64(42);
			end();
			same_time(&l, t);

			uint32_t raw[5] = { 12, 7, 9, 0, 0 };	/* size, then prev, next */
			start(PERF_RECORD_SAMPLE);	/* sched_switch */
			u64(SWITCH_ID);
			u64(7 | (uint64_t)8 << 32);
			u64(t + 10);
			u64(0);
			u64(1);
			bytes(raw, 16);
			end();
			same_time(&l, t + 10);

			uint32_t rt[4] = { 12, 8, 0, 0 };	/* size, pid, runtime */
			uint64_t runtime = 123456;
			memcpy(&rt[2], &runtime, 8);
			start(PERF_RECORD_SAMPLE);	/* sched_stat_runtime */
			u64(RUNTIME_ID);
			u64(7 | (uint64_t)8 << 32);
			u64(t + 20);
			u64(0);
			u64(runtime);
			bytes(rt, 16);
			end();
			same_time(&l, t + 20);

			char comm[16] = "cc1";
			uint32_t ids[4] = { 7, 8, 1, 1 };
			start(PERF_RECORD_COMM);
			bytes(ids, 8);
			bytes(comm, sizeof(comm));
			trailer(t + 30, CLOCK_ID);
			same_time(&l, t + 30);

			start(PERF_RECORD_FORK);
			bytes(ids, 16);
			u64(t + 40);
			trailer(t + 40, SWITCH_ID);
			same_time(&l, t + 40);

			start(PERF_RECORD_EXIT);
			bytes(ids, 16);
			u64(t + 50);
			trailer(t + 50, CLOCK_ID);
			same_time(&l, t + 50);

			char path[16] = "/usr/bin/cc";
			start(PERF_RECORD_MMAP2);	/* pid, tid, addr, len, pgoff, ... */
			bytes(ids, 8);
			u64(0x400000);
			u64(0x10000);
			u64(0);
			u64(0);				/* maj, min */
			u64(0);				/* ino */
			u64(0);				/* ino generation */
			u64(5 | (uint64_t)2 << 32);	/* prot, flags */
			bytes(path, sizeof(path));
			trailer(t + 60, CLOCK_ID);
			same_time(&l, t + 60);

			char cg[16] = "/system.slice";
			start(PERF_RECORD_CGROUP);	/* id, path */
			u64(77);
			bytes(cg, sizeof(cg));
			trailer(t + 65, CLOCK_ID);
			same_time(&l, t + 65);

			start(PERF_RECORD_LOST);
			u64(SWITCH_ID);
			u64(3);
			trailer(t + 70, SWITCH_ID);
			same_time(&l, t + 70);
			pd_layout__release(&l);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_in_time_order_across_rings),
		cmocka_unit_test(wrapped_records_whole),
		cmocka_unit_test(failed_record_stays),
		cmocka_unit_test(space_given_back_during_the_read),
		cmocka_unit_test(lost_records_counted),
		cmocka_unit_test(record_time_as_decoded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
