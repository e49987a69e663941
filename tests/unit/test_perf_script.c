/*
 * perf script's sample headers in every shape perf prints them
 * (builtin-script.c: VM, VCPU, COMM, PID/TID, CPU, MISC, TOD, TIME,
 * PERIOD, EVENT, in that order, each optional but the event), and lines
 * that are not headers: frames, which start with spaces too; and frame
 * lines in every shape the reference collapser reads.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "format/perf_script.h"

struct want {
	const char *comm;	/* NULL: none */
	int64_t pid, tid;
	int32_t cpu;
	int64_t time_ns;	/* -1: none */
	int64_t period;		/* -1: none */
	const char *event, *rest;
};

static void check(const char *line, const struct want *w, struct ps_hints *hints)
{
	struct ps_header h;
	assert_true(perf_script__header(line, strlen(line), hints, &h));
	if (w->comm) {
		assert_int_equal(h.comm_len, strlen(w->comm));
		assert_memory_equal(h.comm, w->comm, h.comm_len);
	} else {
		assert_null(h.comm);
	}
	assert_true(h.pid == w->pid);
	assert_true(h.tid == w->tid);
	assert_int_equal(h.cpu, w->cpu);
	assert_int_equal(h.has_time, w->time_ns >= 0);
	if (w->time_ns >= 0)
		assert_true(h.time_ns == (uint64_t)w->time_ns);
	assert_int_equal(h.has_period, w->period >= 0);
	if (w->period >= 0)
		assert_true(h.period == (uint64_t)w->period);
	assert_int_equal(h.event_len, strlen(w->event));
	assert_memory_equal(h.event, w->event, h.event_len);
	assert_int_equal(h.rest_len, strlen(w->rest));
	assert_memory_equal(h.rest, w->rest, h.rest_len);
}

#define NONE PS_ID_NONE

static void default_with_pid(void **state)
{
	(void)state;
	struct want w = { "cpuledger", 4803, 4805, 0, 577850564949LL, 1000000,
			  "cpu-clock/freq=1000/", "" };
	check("cpuledger  4803/4805  [000]   577.850564949:    1000000     cpu-clock/freq=1000/: ",
	      &w, NULL);
	/* comm right-aligned (no call chains), a tracepoint's text after it */
	struct want t = { "perf", 4807, 4807, 1, 577849552031LL, -1,
			  "sched:sched_stat_runtime", "comm=perf pid=4807 runtime=109127 [ns]" };
	check("            perf  4807/4807  [001]   577.849552031: sched:sched_stat_runtime: comm=perf pid=4807 runtime=109127 [ns]",
	      &t, NULL);
}

static void without_time_or_cpu(void **state)
{
	(void)state;
	struct want a = { "java", NONE, 3278, -1, -1, -1, "cpu-clock", "" };
	check("java  3278 cpu-clock: ", &a, NULL);
	check("java  3278 cpu-clock:", &a, NULL);	/* its ':' the line's last byte */
	struct want b = { "dd", NONE, 29776, -1, 666709771979000LL, 10101010, "cpu-clock", "" };
	check("dd 29776 666709.771979:   10101010 cpu-clock: ", &b, NULL);
	struct want c = { "java", NONE, 3278, 2, -1, -1, "cpu-clock", "" };
	check("java  3278 [002] cpu-clock: ", &c, NULL);
}

static void exited_tasks(void **state)
{
	(void)state;
	struct want a = { ":-1", -1, -1, 0, 12345678000LL, -1, "sched:sched_switch",
			  "prev_comm=x prev_pid=5 prev_prio=120 prev_state=X ==> next_comm=swapper/0 next_pid=0 next_prio=120" };
	check(":-1 -1/-1 [000] 12.345678: sched:sched_switch: prev_comm=x prev_pid=5 prev_prio=120 prev_state=X ==> next_comm=swapper/0 next_pid=0 next_prio=120",
	      &a, NULL);
	struct want b = { ":-1", 30892, -1, 1, 1000001000LL, -1, "cpu-clock", "" };
	check("             :-1 30892/-1    [001]     1.000001: cpu-clock: ", &b, NULL);
}

static void guest_tod_misc_modifiers(void **state)
{
	(void)state;
	struct want a = { "qemu", 1, 2, 0, 1500000000LL, -1, "cycles:u", "" };
	check("VM:  123 VCPU:001 qemu 1/2 [000] 1.5: cycles:u: ", &a, NULL);
	struct want b = { "bash", 12, 12, 0, 100000001000LL, -1, "cpu-clock", "" };
	check("bash 12/12 [000] 2024-06-01 12:34:56.123456 100.000001: cpu-clock: ", &b, NULL);
	check("bash 12/12 [000] K      100.000001: cpu-clock: ", &b, NULL);
	struct want c = { "a", NONE, 1, 0, 1000000000LL, -1, "cpu-clock:ppp", "" };
	check("a 1 [000] 1.0: cpu-clock:ppp: ", &c, NULL);
	struct want d = { "emulator", NONE, 4152, -1, 75695008865000LL, 1, "cycles:u", "" };
	check("emulator  4152 75695.008865:          1 cycles:u: ", &d, NULL);
}

static void one_frame_on_the_line(void **state)
{
	(void)state;
	struct want a = { "perf", 1, 1, 0, 1000000000LL, 1, "cpu-clock",
			  "ffffffff81000000 foo+0x5 ([kernel.kallsyms])" };
	check("perf 1/1 [000] 1.000000000: 1 cpu-clock:  ffffffff81000000 foo+0x5 ([kernel.kallsyms])",
	      &a, NULL);
}

static void comm_with_spaces_and_digits(void **state)
{
	(void)state;
	struct want a = { "Web Content 2", 4567, 4570, 1, 5500000000LL, -1, "cpu-clock", "" };
	check("Web Content 2 4567/4570 [001] 5.5: cpu-clock: ", &a, NULL);
	/* "W C 2 4567 cpu-clock:" reads two ways; the event's last header
	 * (an id, no period) decides */
	struct ps_hints hints = { 0 };
	struct want b = { "W C", NONE, 9, -1, -1, -1, "cpu-clock", "" };
	check("W C 9 cpu-clock: ", &b, &hints);
	struct want c = { "W C 2", NONE, 4567, -1, -1, -1, "cpu-clock", "" };
	check("W C 2 4567 cpu-clock: ", &c, &hints);
	/* without a hint, the shortest comm followed by an id */
	struct want d = { "W C", NONE, 2, -1, -1, 4567, "cpu-clock", "" };
	check("W C 2 4567 cpu-clock: ", &d, NULL);
}

static void not_headers(void **state)
{
	(void)state;
	static const char *const lines[] = {
		"\t    8799 spin_a+0x49 (/work/main/build/cpuledger)",
		"\tffffffff8133c3e5 pvm_flush_tlb_multi+0x105 ([kernel.kallsyms])",
		"\t7f00 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)",
		"# ========",
		"",
		"just words here",
		/* colons, none ending a word */
		"\t7f00 std::vector<int>::size() const (/usr/lib/libx.so)",
		"\t7f00 a::b:c (/usr/lib/libx.so)",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(*lines); i++) {
		struct ps_header h;
		assert_false(perf_script__header(lines[i], strlen(lines[i]), NULL, &h));
	}
}

/*
 * Words split sixteen bytes at a time: a header with its fields apart by
 * every width of blanks from 1 to 40, of each kind perf's reader takes
 * for one (space, tab, \v, \f, \r), so each word starts and ends at each
 * place of a sixteen-byte run, and the line ends on one, within or after.
 */
static void blanks_of_every_width(void **state)
{
	(void)state;
	static const char kinds[] = " \t\v\f\r";
	static const char *const fields[] = { "cc1", "6337/6338", "[001]",
					      "149.160735803:", "1000000", "cpu-clock:" };
	struct want w = { "cc1", 6337, 6338, 1, 149160735803LL, 1000000, "cpu-clock", "" };
	for (size_t width = 1; width <= 40; width++) {
		for (size_t kind = 0; kind < sizeof(kinds) - 1; kind++) {
			char line[512];
			size_t n = 0;
			for (size_t f = 0; f < sizeof(fields) / sizeof(*fields); f++) {
				for (size_t b = 0; f && b < width; b++)	/* a mix, ending in kind */
					line[n++] = b + 1 == width ? kinds[kind] : kinds[(b + f) % 5];
				memcpy(line + n, fields[f], strlen(fields[f]));
				n += strlen(fields[f]);
			}
			line[n] = '\0';
			check(line, &w, NULL);
			/* blanks after the event, and after the line's end (not read) */
			memset(line + n, kinds[kind], width);
			line[n + width] = '\0';
			check(line, &w, NULL);
			char tail[600];
			memcpy(tail, line, n + width);
			memcpy(tail + n + width, "x", 2);	/* a word past the end */
			struct ps_header h;
			assert_true(perf_script__header(tail, n + width, NULL, &h));
			assert_int_equal(h.rest_len, 0);
		}
	}
	/* a tracepoint's text of more than 64 words: the fields read, the
	 * text kept whole */
	char line[1024] = "perf 1/1 [000] 1.5: sched:x:";
	for (int k = 0; k < 70; k++)
		strcat(line, " a=1");
	struct want t = { "perf", 1, 1, 0, 1500000000LL, -1, "sched:x", line + 29 };
	check(line, &t, NULL);
	/* a newline is no blank (a line has none; the splitter's) */
	struct ps_header h;
	assert_false(perf_script__header("cc1\n1/1 [000] 1.5: cpu-clock: ", 30, NULL, &h) &&
		     h.comm_len == 3);
	assert_int_equal(perf_script__skip_spaces(" \t\v\f\r \t\v\f\r \t\v\f\r \t\v\f\r x", 22), 21);
	assert_int_equal(perf_script__skip_spaces("                                ", 32), 32);
	assert_int_equal(perf_script__skip_spaces("\n", 1), 0);
}

/* A frame line cut as the reference collapser cuts it: the parts, or
 * pc NULL when it is no frame. */
static void frame(const char *line, const char *pc, const char *func, size_t gap,
		  const char *mod)
{
	struct frame_parts fp;
	bool ok = perf_script__frame_parts(line, strlen(line), &fp);
	if (!pc) {
		assert_false(ok);
		return;
	}
	assert_true(ok);
	assert_int_equal(fp.pclen, strlen(pc));
	assert_memory_equal(fp.pc, pc, fp.pclen);
	assert_int_equal(fp.flen, strlen(func));
	assert_memory_equal(fp.func, func, fp.flen);
	assert_int_equal(fp.gap, gap);
	assert_int_equal(fp.mlen, strlen(mod));
	assert_memory_equal(fp.mod, mod, fp.mlen);
}

static void frame_shapes(void **state)
{
	(void)state;
	/* today's perf */
	frame("ffffffff8133c3e5 pvm_flush_tlb_multi+0x105 ([kernel.kallsyms])",
	      "ffffffff8133c3e5", "pvm_flush_tlb_multi+0x105", 1, "[kernel.kallsyms]");
	frame("7f00 [unknown] ([unknown])", "7f00", "[unknown]", 1, "[unknown]");
	frame("4005d1 inlined_fn (inlined)", "4005d1", "inlined_fn", 1, "inlined");
	/* perf before 3.16: no function name, one space or more before
	 * the module */
	frame("7f1e2215d058  (/lib/x86_64-linux-gnu/libc-2.15.so)", "7f1e2215d058", "", 2,
	      "/lib/x86_64-linux-gnu/libc-2.15.so");
	frame("7f1e2215d059 (/lib/libc.so)", "7f1e2215d059", "", 1, "/lib/libc.so");
	frame("7f1e\t (/lib/libc.so)", "7f1e", "", 2, "/lib/libc.so");
	frame("7 (/lib/libc.so)", NULL, NULL, 0, NULL);	/* the reference reads none */
	/* names and modules with spaces and parentheses */
	frame("4005d4 std::vector<int, std::allocator<int> >::push_back(int const&) (/tmp/a.out)",
	      "4005d4", "std::vector<int, std::allocator<int> >::push_back(int const&)", 1, "/tmp/a.out");
	frame("4005d0 foo (/tmp/my dir/a.so)", "4005d0", "foo", 1, "/tmp/my dir/a.so");
	frame("4005d4 foo+0x10 (/usr/lib/libfoo.so (deleted))", "4005d4",
	      "foo+0x10 (/usr/lib/libfoo.so", 1, "deleted)");
	frame("4005d2 foo (m) trailing", "4005d2", "foo", 1, "m");
	frame("4005d6 foo ()", "4005d6", "foo", 1, "");
	frame("0x4005da\tfoo (m)", "0x4005da", "foo", 1, "m");
	/* no frames */
	frame("4005d0 foo", NULL, NULL, 0, NULL);
	frame("(x) (y)", NULL, NULL, 0, NULL);
	frame("just words here", NULL, NULL, 0, NULL);
	frame("4005d0 foo(m)", NULL, NULL, 0, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(default_with_pid),
		cmocka_unit_test(without_time_or_cpu),
		cmocka_unit_test(exited_tasks),
		cmocka_unit_test(guest_tod_misc_modifiers),
		cmocka_unit_test(one_frame_on_the_line),
		cmocka_unit_test(comm_with_spaces_and_digits),
		cmocka_unit_test(not_headers),
		cmocka_unit_test(blanks_of_every_width),
		cmocka_unit_test(frame_shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
