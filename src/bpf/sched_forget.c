/* sched_forget: see sched_forget.h. */
#include "sched_forget.h"

#include <errno.h>

#include "../core/banned.h"

/* The same thread: its entry was made at the same moment (born_ns) and
 * is still marked exited (a new thread's never is when made). */
static int same_thread(const struct sc_thread *a, const struct sc_thread *b)
{
	return a->born_ns == b->born_ns && (a->flags & SC_EXITED);
}

int sched_forget__exited(const struct sched_forget_ops *ops, const uint32_t *tids,
			 const struct sc_thread *gone, size_t n, uint32_t *kept_tids,
			 struct sc_thread *kept, size_t *nkept, size_t *done)
{
	struct sc_thread v;
	int err = 0;
	size_t i;
	*nkept = 0;
	for (i = 0; i < n; i++) {
		err = ops->take(ops->ctx, tids[i], &v);
		if (err == -ENOENT) {
			err = 0;	/* gone already: a new thread's switch
					 * is replacing it (counted in reused) */
			continue;
		}
		if (err)
			break;
		if (same_thread(&v, &gone[i]))
			continue;
		/* a new thread's: back in the map, and given with this read
		 * (-EEXIST: it made another since; that one counts on from
		 * its own start, this one holds what came before) */
		ops->put_back(ops->ctx, tids[i], &v);
		kept_tids[*nkept] = tids[i];
		kept[(*nkept)++] = v;
	}
	*done = i;
	return err;
}
