/*
 * sched_forget (bpf/sched_forget.h): exited threads' entries out of the
 * collector's threads map, never a new thread's. A fake map of a few ids
 * stands for the kernel's; a "new thread" takes an id between the read
 * (which found the entry exited) and the delete, as it can under churn
 * (pid_max 32768 wraps in seconds).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "bpf/sched_forget.h"

#define SLOTS 8

struct fake_map {
	bool used[SLOTS];
	struct sc_thread v[SLOTS];	/* key: the index */
	/* before the take of this id, a new thread (born new_born) takes
	 * it: the programs replace the dead entry with its own */
	uint32_t reuse_tid;
	uint64_t new_born;
	/* and before the put back, it switches out again, making another
	 * (born again_born: none where 0) */
	uint64_t again_born;
	int take_err;		/* (a kernel before 5.14) */
	int takes, puts;
};

static struct sc_thread entry(uint64_t born, uint32_t flags, uint64_t rt)
{
	return (struct sc_thread){ .pid = 1, .flags = flags, .born_ns = born, .rt_last = rt };
}

static int take(void *ctx, uint32_t tid, struct sc_thread *v)
{
	struct fake_map *m = ctx;
	m->takes++;
	if (m->take_err)
		return m->take_err;
	if (tid == m->reuse_tid) {
		m->used[tid] = true;
		m->v[tid] = entry(m->new_born, 0, 500);
	}
	if (!m->used[tid])
		return -ENOENT;
	*v = m->v[tid];
	m->used[tid] = false;
	if (tid == m->reuse_tid && m->again_born) {
		m->used[tid] = true;
		m->v[tid] = entry(m->again_born, SC_PARTIAL, 700);
	}
	return 0;
}

static int put_back(void *ctx, uint32_t tid, const struct sc_thread *v)
{
	struct fake_map *m = ctx;
	m->puts++;
	if (m->used[tid])
		return -EEXIST;
	m->used[tid] = true;
	m->v[tid] = *v;
	return 0;
}

/* Ids 2, 3, 5 read exited (born 20, 30, 50); 4 lives (born 40). */
static void fill(struct fake_map *m, uint32_t *tids, struct sc_thread *gone)
{
	memset(m, 0, sizeof(*m));
	static const uint32_t ids[] = { 2, 3, 5 };
	for (int i = 0; i < 3; i++) {
		tids[i] = ids[i];
		gone[i] = entry(ids[i] * 10, SC_EXITED, 100);
		m->used[ids[i]] = true;
		m->v[ids[i]] = gone[i];
	}
	m->used[4] = true;
	m->v[4] = entry(40, 0, 100);
}

/*
 * read: 2, 3, 5 exited      map after   kept (given with the read)
 * none reused               4           none
 */
static void exited_go(void **state)
{
	(void)state;
	struct fake_map m;
	uint32_t tids[3], kt[3];
	struct sc_thread gone[3], kept[3];
	size_t nkept = 9, done = 0;
	fill(&m, tids, gone);
	struct sched_forget_ops ops = { &m, take, put_back };
	assert_int_equal(sched_forget__exited(&ops, tids, gone, 3, kt, kept, &nkept, &done), 0);
	assert_int_equal(nkept, 0);
	assert_int_equal(done, 3);
	bool want[SLOTS] = { [4] = true };
	assert_memory_equal(m.used, want, sizeof(want));
	assert_int_equal(m.puts, 0);
}

/*
 * a new thread (born 99, run 500) takes id 3 after the read:
 * map after: 3 (born 99, run 500), 4; kept: 3 (born 99)
 * (before: deleted by id, the new thread's entry went with the dead's)
 */
static void new_thread_stays(void **state)
{
	(void)state;
	struct fake_map m;
	uint32_t tids[3], kt[3];
	struct sc_thread gone[3], kept[3];
	size_t nkept = 0, done = 0;
	fill(&m, tids, gone);
	m.reuse_tid = 3;
	m.new_born = 99;
	struct sched_forget_ops ops = { &m, take, put_back };
	assert_int_equal(sched_forget__exited(&ops, tids, gone, 3, kt, kept, &nkept, &done), 0);
	bool want[SLOTS] = { [3] = true, [4] = true };
	assert_memory_equal(m.used, want, sizeof(want));
	assert_int_equal(m.v[3].born_ns, 99);
	assert_int_equal(m.v[3].rt_last, 500);
	assert_int_equal(m.v[3].flags, 0);
	assert_int_equal(nkept, 1);
	assert_int_equal(kt[0], 3);
	assert_int_equal(kept[0].born_ns, 99);
	assert_int_equal(kept[0].rt_last, 500);
	assert_int_equal(m.puts, 1);
}

/*
 * the new thread also switches out between the take and the put back,
 * making another entry (born 77, partial): that one stays in the map,
 * the taken one (born 99, run 500) is given with the read
 */
static void new_thread_made_another(void **state)
{
	(void)state;
	struct fake_map m;
	uint32_t tids[3], kt[3];
	struct sc_thread gone[3], kept[3];
	size_t nkept = 0, done = 0;
	fill(&m, tids, gone);
	m.reuse_tid = 5;
	m.new_born = 99;
	m.again_born = 77;
	struct sched_forget_ops ops = { &m, take, put_back };
	assert_int_equal(sched_forget__exited(&ops, tids, gone, 3, kt, kept, &nkept, &done), 0);
	bool want[SLOTS] = { [4] = true, [5] = true };
	assert_memory_equal(m.used, want, sizeof(want));
	assert_int_equal(m.v[5].born_ns, 77);
	assert_int_equal(nkept, 1);
	assert_int_equal(kt[0], 5);
	assert_int_equal(kept[0].born_ns, 99);
	assert_int_equal(kept[0].rt_last, 500);
}

/* A kernel that cannot take an entry with its value: nothing is taken,
 * the caller is told where it stopped (0: all left to it). */
static void take_refused(void **state)
{
	(void)state;
	struct fake_map m;
	uint32_t tids[3], kt[3];
	struct sc_thread gone[3], kept[3];
	size_t nkept = 0, done = 9;
	fill(&m, tids, gone);
	m.take_err = -EINVAL;
	struct sched_forget_ops ops = { &m, take, put_back };
	assert_int_equal(sched_forget__exited(&ops, tids, gone, 3, kt, kept, &nkept, &done),
			 -EINVAL);
	assert_int_equal(done, 0);
	assert_int_equal(nkept, 0);
	bool want[SLOTS] = { [2] = true, [3] = true, [4] = true, [5] = true };
	assert_memory_equal(m.used, want, sizeof(want));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exited_go),
		cmocka_unit_test(new_thread_stays),
		cmocka_unit_test(new_thread_made_another),
		cmocka_unit_test(take_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
