/*
 * sched_flight (bpf/sched_flight.h): the stint in progress on each CPU
 * at a read, and what of it a thread's entry does not hold yet. The CPUs'
 * entries and the threads' are made here as the BPF programs would leave
 * them; the run times are what schedstat would say.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "bpf/sched_flight.h"

/* A CPU whose last switch seen put tid_in on it at run time rt_in (steal
 * clock steal_in), switches seen since the load, tid running now. */
static struct sc_cpu cpu(uint32_t tid_in, uint64_t rt_in, uint64_t steal_in, uint64_t switches,
			 uint32_t curr)
{
	return (struct sc_cpu){ .tid_in = tid_in, .rt_in = rt_in, .steal_in = steal_in,
				.delay_in = 7, .seen_in = tid_in ? SEEN_TIME | SEEN_STEAL : 0,
				.switches = switches, .switches_now = switches, .curr_now = curr,
				.curr_pid_now = 1 };
}

/* An entry whose last switch out left run time rt_last. */
static struct sc_thread entry(uint64_t rt_base, uint64_t rt_last, uint32_t flags)
{
	return (struct sc_thread){ .pid = 1, .flags = flags, .rt_base = rt_base,
				   .rt_last = rt_last };
}

/* thread tid's credit from one CPU's flight (no load task) */
static uint64_t credited(const struct sched_flight *f, uint32_t tid, const struct sc_thread *v,
			 uint64_t *steal)
{
	struct sched_flight_load none = { 0, 0 };
	uint64_t rt = 0;
	*steal = 0;
	sched_flight__credit(f, &none, 1, tid, v, &rt, steal);
	return rt;
}

/* Its switch in seen: the run since then, and the steal clock's growth. */
static void seen_switch_in(void **state)
{
	(void)state;
	struct sc_cpu c = cpu(42, 1000, 50, 9, 42);
	struct sched_flight_load load = { 0, 0 };
	struct sched_flight f;
	assert_true(sched_flight__of(&f, &c, &load, 0, 1600, 30, 80));
	assert_int_equal(f.tid, 42);
	assert_false(f.partial);
	assert_int_equal(f.rt_base, 1000);
	assert_int_equal(f.delay_base, 7);
	struct sc_thread v = entry(400, 1000, 0);
	uint64_t steal;
	assert_int_equal(credited(&f, 42, &v, &steal), 600);
	assert_int_equal(steal, 30);
	/* another thread gets nothing of it */
	assert_int_equal(credited(&f, 43, &v, &steal), 0);
}

/* The switch that gave the CPU back to a spinner was not reported (a
 * guest agent's thread last seen switching in): its run since its last
 * switch out is still counted, steal not (its start is not known). The
 * code before this module counted nothing here until the spinner's next
 * switch out, so a recording's first and last reads were off by the
 * stint. */
static void unseen_switch_in(void **state)
{
	(void)state;
	struct sc_cpu c = cpu(100, 5000, 50, 20, 42);
	struct sched_flight_load load = { 0, 0 };
	struct sched_flight f;
	assert_true(sched_flight__of(&f, &c, &load, 0, 9000, 30, 80));
	assert_int_equal(f.tid, 42);
	assert_true(f.partial);
	struct sc_thread v = entry(400, 2500, 0);
	uint64_t steal;
	assert_int_equal(credited(&f, 42, &v, &steal), 6500);
	assert_int_equal(steal, 0);
	/* with no entry yet, the one the read makes counts from now */
	assert_int_equal(f.rt_base, 9000);
	assert_int_equal(f.delay_base, 30);
	struct sc_thread made = entry(f.rt_base, f.rt_base, SC_PARTIAL);
	assert_int_equal(credited(&f, 42, &made, &steal), 0);
}

/* Born since the programs were attached: its run and wait since its
 * birth (its counters start at 0 at its fork) are all in the recording,
 * its switch in seen or not, running at the load or not; born before,
 * or the attach time unknown, from the read where its switch in was not
 * seen. */
static void born_since_the_attach(void **state)
{
	(void)state;
	struct sc_cpu c = cpu(100, 5000, 50, 20, 42);
	c.curr_start_now = 7000;
	struct sched_flight_load load = { 0, 0 };
	struct sched_flight f;
	assert_true(sched_flight__of(&f, &c, &load, 6000, 9000, 30, 80));
	assert_false(f.partial);
	assert_int_equal(f.rt_base, 0);
	assert_int_equal(f.delay_base, 0);
	assert_int_equal(f.steal_ns, 0);
	struct sc_thread made = entry(f.rt_base, f.rt_base, 0);
	uint64_t steal;
	assert_int_equal(credited(&f, 42, &made, &steal), 9000);
	assert_true(sched_flight__of(&f, &c, &load, 7000, 9000, 30, 80));
	assert_int_equal(f.rt_base, 0);
	assert_true(sched_flight__of(&f, &c, &load, 8000, 9000, 30, 80));
	assert_true(f.partial);
	assert_int_equal(f.rt_base, 9000);
	assert_int_equal(f.delay_base, 30);
	assert_true(sched_flight__of(&f, &c, &load, 0, 9000, 30, 80));
	assert_true(f.partial);
	/* its switch in seen: from its birth all the same, with the steal
	 * clock's growth since that switch in */
	struct sc_cpu seen = cpu(42, 1000, 50, 9, 42);
	seen.curr_start_now = 7000;
	assert_true(sched_flight__of(&f, &seen, &load, 6000, 1600, 30, 80));
	assert_false(f.partial);
	assert_int_equal(f.rt_base, 0);
	assert_int_equal(f.delay_base, 0);
	assert_int_equal(f.steal_ns, 30);
	/* running at the load, no switch since: from its birth, not the
	 * load, and not partial (so that no load credit is added) */
	struct sc_cpu at_load = cpu(0, 0, 0, 0, 42);
	at_load.curr_start_now = 7000;
	struct sched_flight_load was = { 42, 300 };
	assert_true(sched_flight__of(&f, &at_load, &was, 6000, 1300, 30, 80));
	assert_false(f.partial);
	assert_int_equal(f.rt_base, 0);
	made = entry(0, 0, 0);
	uint64_t rt = 0;
	steal = 0;
	sched_flight__credit(&f, &was, 1, 42, &made, &rt, &steal);
	assert_int_equal(rt, 1300);
}

/* The entry read after the stint's switch out holds it: nothing more
 * (the code before counted the flight again on top). */
static void entry_read_after_switch_out(void **state)
{
	(void)state;
	struct sc_cpu c = cpu(42, 1000, 50, 9, 42);
	struct sched_flight_load load = { 0, 0 };
	struct sched_flight f;
	assert_true(sched_flight__of(&f, &c, &load, 0, 1600, 30, 80));
	struct sc_thread v = entry(400, 1700, 0);
	uint64_t steal;
	assert_int_equal(credited(&f, 42, &v, &steal), 0);
	assert_int_equal(steal, 0);
	/* nor for an exited thread */
	v = entry(400, 1000, SC_EXITED);
	assert_int_equal(credited(&f, 42, &v, &steal), 0);
	/* nor for another process's thread that took the id since */
	v = entry(0, 0, 0);
	v.pid = 2;
	assert_int_equal(credited(&f, 42, &v, &steal), 0);
}

/* No switch on the CPU since the load: the task then counts from its run
 * time then; one first seen at a switch out is given its run from the
 * load to that switch. */
static void since_the_load(void **state)
{
	(void)state;
	struct sc_cpu c = cpu(0, 0, 0, 0, 42);
	struct sched_flight_load load = { 42, 300 };
	struct sched_flight f;
	assert_true(sched_flight__of(&f, &c, &load, 0, 1300, 30, 80));
	assert_true(f.partial);
	assert_int_equal(f.rt_base, 300);
	assert_int_equal(f.steal_ns, 0);
	struct sc_thread made = entry(f.rt_base, f.rt_base, SC_PARTIAL);
	uint64_t rt = 0, steal = 0;
	sched_flight__credit(&f, &load, 1, 42, &made, &rt, &steal);
	assert_int_equal(rt, 1000);
	/* switched out once (unseen in) at 800, back since: 500 + 500 */
	struct sc_cpu later = cpu(9, 700, 0, 3, 42);
	assert_true(sched_flight__of(&f, &later, &load, 0, 1300, 30, 80));
	struct sc_thread out = entry(800, 800, SC_PARTIAL);
	rt = 0;
	sched_flight__credit(&f, &load, 1, 42, &out, &rt, &steal);
	assert_int_equal(rt, 1000);
}

/* Nothing counted: an idle CPU, a run time not read, or one behind its
 * switch in (read across a switch). */
static void nothing_counted(void **state)
{
	(void)state;
	struct sched_flight_load load = { 0, 0 };
	struct sched_flight f;
	struct sc_cpu idle = cpu(0, 0, 0, 5, 0);
	assert_false(sched_flight__of(&f, &idle, &load, 0, 1000, 0, 0));
	assert_int_equal(f.tid, 0);
	struct sc_cpu c = cpu(42, 1000, 50, 9, 42);
	assert_false(sched_flight__of(&f, &c, &load, 0, 0, 0, 80));
	assert_false(sched_flight__of(&f, &c, &load, 0, 900, 0, 80));
	struct sc_thread v = entry(0, 0, 0);
	uint64_t steal;
	assert_int_equal(credited(&f, 42, &v, &steal), 0);
}

/* A switch on the CPU after it was sampled: who was sampled may be
 * running elsewhere by now, and its entry may hold the stint: nothing. */
static void switched_since_the_sample(void **state)
{
	(void)state;
	struct sc_cpu c = cpu(77, 1000, 50, 10, 42);
	c.switches_now = 9;
	struct sched_flight_load load = { 0, 0 };
	struct sched_flight f;
	assert_false(sched_flight__of(&f, &c, &load, 0, 1600, 30, 80));
	assert_int_equal(f.tid, 0);
}

/* Sampled on CPU 0, then moved to CPU 1 (the switch off CPU 0 not
 * reported) and sampled there: one flight, the later, so that its run
 * there is not counted twice. */
static void one_flight_a_thread(void **state)
{
	(void)state;
	struct sched_flight_load loads[3] = { { 0, 0 }, { 0, 0 }, { 0, 0 } };
	struct sched_flight f[3];
	struct sc_cpu a = cpu(100, 0, 0, 20, 42), b = cpu(101, 0, 0, 30, 42);
	struct sc_cpu other = cpu(43, 100, 0, 5, 43);
	assert_true(sched_flight__of(&f[0], &a, &loads[0], 0, 5000, 0, 0));
	assert_true(sched_flight__of(&f[1], &b, &loads[1], 0, 5200, 0, 0));
	assert_true(sched_flight__of(&f[2], &other, &loads[2], 0, 400, 0, 0));
	sched_flight__one_each(f, 3);
	assert_int_equal(f[0].tid, 0);
	assert_int_equal(f[1].tid, 42);
	assert_int_equal(f[2].tid, 43);
	struct sc_thread v = entry(1000, 4000, 0);
	uint64_t rt = 0, steal = 0;
	sched_flight__credit(f, loads, 3, 42, &v, &rt, &steal);
	assert_int_equal(rt, 1200);
	/* the other way round: the later one first */
	assert_true(sched_flight__of(&f[0], &b, &loads[0], 0, 5200, 0, 0));
	assert_true(sched_flight__of(&f[1], &a, &loads[1], 0, 5000, 0, 0));
	sched_flight__one_each(f, 2);
	assert_int_equal(f[0].tid, 42);
	assert_int_equal(f[1].tid, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(seen_switch_in),
		cmocka_unit_test(unseen_switch_in),
		cmocka_unit_test(born_since_the_attach),
		cmocka_unit_test(entry_read_after_switch_out),
		cmocka_unit_test(since_the_load),
		cmocka_unit_test(nothing_counted),
		cmocka_unit_test(switched_since_the_sample),
		cmocka_unit_test(one_flight_a_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
