/*
 * The waits a source grows as it reads them (core/cgstats.h, the BPF
 * collector's, as record and run keep them): an exited thread's wait is
 * kept until the engine has handed the thread out, then forgotten at the
 * source's next read, so that the table follows the live threads however
 * many come and go. Wired here as src/record/recorder_bpf.c wires it: an
 * engine (STEAL_GIVEN) fed the clocks, a sink that asks for each thread's
 * wait when it is handed out (the analysis', analysis.c thread_wait), and
 * a sink that tells cgstats of the hand-outs, added before or after the
 * one that asks. Checked: the table holds the live threads and those not
 * yet handed out, not every thread seen; every thread's wait asked for is
 * the one it grew to, exactly as when nothing is forgotten; a thread
 * handed out before its last figure came keeps its wait until that figure
 * comes and it is handed out again; an id given again to a new thread
 * keeps the new thread's wait.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/cgstats.h"
#include "core/engine.h"

#define MS 1000000ULL
#define ROUNDS 200
#define PER_ROUND 20			/* threads born, and gone, a round */
#define MAX_TID (10 + ROUNDS * PER_ROUND)

struct world {
	struct cgstats cg;
	bool forget;			/* the hand-outs told to cgstats */
	uint64_t asked[MAX_TID];	/* the wait asked for at hand-out */
	bool known[MAX_TID];
	uint32_t handed;
	uint32_t peak;			/* the table's largest */
};

static int ask(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	struct world *w = ctx;
	const struct eng_proc *p = engine__proc(e, t->proc);
	assert_non_null(p);
	assert_true(t->tid < MAX_TID);
	w->known[t->tid] = cgstats__thread_wait(&w->cg, p->pid, t->tid, &w->asked[t->tid]);
	w->handed++;
	return 0;
}

static int tell(void *ctx, const struct engine *e, const struct eng_thread *t)
{
	struct world *w = ctx;
	const struct eng_proc *p = engine__proc(e, t->proc);
	return p ? cgstats__wait_handed(&w->cg, p->pid, t->tid) : 0;
}

static struct engine *start(struct world *w, bool forget, bool tell_first)
{
	memset(w, 0, sizeof(*w));
	cgstats__init(&w->cg);
	cgstats__waits_taken(&w->cg, 0);
	cgstats__waits_taken(&w->cg, 1);
	w->forget = forget;
	struct engine_config c = { .method = METHOD_PRECEDING, .mode = STEAL_GIVEN,
				   .interval_ns = 10 * MS, .ncpus = 2, .unknown_fn = 100,
				   .scope_all = true, .exit_grace_ns = 3000 * MS };
	const struct engine_sink asker = { w, NULL, NULL, ask }, teller = { w, NULL, NULL, tell };
	struct engine *e = engine__new(&c, forget && tell_first ? &teller : &asker);
	assert_non_null(e);
	if (forget)
		assert_int_equal(engine__add_sink(e, tell_first ? &asker : &teller), 0);
	return e;
}

/* One thread's figures of a read: its wait grown (and marked final at
 * its last), its clock to the engine. */
static void read_one(struct world *w, struct engine *e, uint64_t t, uint32_t tid, uint64_t wait,
		     bool final)
{
	assert_int_equal(cgstats__wait_grow(&w->cg, 7, tid, wait), 0);
	if (final && w->forget)
		assert_int_equal(cgstats__wait_final(&w->cg, 7, tid), 0);
	struct eng_event ev = { .kind = EK_CLOCK, .time = t, .pid = 7, .tid = tid,
				.value = MS, .flags = final ? EF_FINAL : 0,
				.comm = ENGINE_NONE, .function = ENGINE_NONE, .dso = ENGINE_NONE,
				.account = ENGINE_NONE, .stack = ENGINE_NONE };
	assert_int_equal(engine__push(e, &ev), 0);
}

/* ROUNDS reads: thread 7 (the process) lives throughout; PER_ROUND
 * threads are seen at each read and gone at the next. */
static void run(struct world *w, struct engine *e)
{
	for (uint32_t r = 0; r <= ROUNDS; r++) {
		uint64_t t = (r + 1) * 250 * MS;
		if (w->forget)
			cgstats__wait_sweep(&w->cg, NULL, NULL);
		read_one(w, e, t, 7, 1000 + r, false);
		for (uint32_t i = 0; i < PER_ROUND; i++) {
			uint32_t born = 10 + r * PER_ROUND + i, dying = born - PER_ROUND;
			if (r < ROUNDS)
				read_one(w, e, t, born, 3 * born, false);
			if (r > 0)
				read_one(w, e, t, dying, 5 * dying, true);
		}
		assert_int_equal(engine__advance(e, t), 0);
		if (w->cg.nwaits > w->peak)
			w->peak = w->cg.nwaits;
	}
	assert_int_equal(engine__finish(e, (ROUNDS + 2) * 250 * MS), 0);
}

static void table_follows_live_threads(void **state)
{
	(void)state;
	static struct world kept, forgot, forgot2;
	struct engine *e = start(&kept, false, false);
	run(&kept, e);
	engine__free(e);
	for (int order = 0; order < 2; order++) {
		struct world *w = order ? &forgot2 : &forgot;
		e = start(w, true, order);
		run(w, e);
		engine__free(e);
		print_message("threads %u: table at most %u (kept: %u)\n", w->handed, w->peak,
			      kept.cg.nwaits);
		/* the live ones (2x PER_ROUND at a read's end, and 7), and
		 * those gone at the read not yet swept */
		assert_true(w->peak <= 3 * PER_ROUND + 1);
		assert_int_equal(w->handed, kept.handed);
		assert_int_equal(w->handed, ROUNDS * PER_ROUND + 1);
		for (uint32_t tid = 0; tid < MAX_TID; tid++) {
			assert_int_equal(w->known[tid], kept.known[tid]);
			assert_int_equal(w->asked[tid], kept.asked[tid]);
		}
		/* every thread's wait, known: what it grew to */
		for (uint32_t tid = 10; tid < 10 + ROUNDS * PER_ROUND; tid++) {
			assert_true(w->known[tid]);
			assert_int_equal(w->asked[tid], 8 * tid);
		}
		cgstats__release(&w->cg);
	}
	assert_true(kept.cg.nwaits >= ROUNDS * PER_ROUND);
	cgstats__release(&kept.cg);
}

/* A thread handed out before its last figure (its exit's grace passed
 * first): its wait stays until that figure comes and the engine hands it
 * out again; an id then given to a new thread of the same process keeps
 * the new thread's wait through the old one's hand-out notice. */
static void handed_early_and_reused(void **state)
{
	(void)state;
	struct cgstats s;
	cgstats__init(&s);
	assert_int_equal(cgstats__wait_grow(&s, 7, 20, 5), 0);
	assert_int_equal(cgstats__wait_handed(&s, 7, 20), 0);	/* not final yet */
	cgstats__wait_sweep(&s, NULL, NULL);
	assert_int_equal(s.nwaits, 1);
	assert_int_equal(cgstats__wait_grow(&s, 7, 20, 2), 0);
	assert_int_equal(cgstats__wait_final(&s, 7, 20), 0);
	assert_int_equal(cgstats__wait_handed(&s, 7, 20), 0);
	/* before the sweep, a new thread took id 20 */
	assert_int_equal(cgstats__wait_grow(&s, 7, 21, 1), 0);
	assert_int_equal(cgstats__wait_grow(&s, 7, 20, 9), 0);
	cgstats__wait_sweep(&s, NULL, NULL);
	assert_int_equal(s.nwaits, 2);
	/* its last figure, handed out, swept: gone; 21 kept, found */
	assert_int_equal(cgstats__wait_final(&s, 7, 20), 0);
	assert_int_equal(cgstats__wait_handed(&s, 7, 20), 0);
	cgstats__wait_sweep(&s, NULL, NULL);
	assert_int_equal(s.nwaits, 1);
	cgstats__waits_taken(&s, 1);
	uint64_t ns;
	cgstats__waits_taken(&s, 0);
	assert_true(cgstats__thread_wait(&s, 7, 21, &ns));
	assert_int_equal(ns, 1);
	assert_false(cgstats__thread_wait(&s, 7, 20, &ns));
	cgstats__release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_follows_live_threads),
		cmocka_unit_test(handed_early_and_reused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
