/*
 * profile: the agent's /debug/pprof/profile, a profile of some seconds
 * each request, taken beside the main engine. Each is a pipeline of its
 * own (pipeline.h) fed by a tap of the recorder, seeded with the tasks
 * the main engine knows alive, built at the end of its seconds with its
 * own copy of the names, and written to pprof by the thread that asked.
 *
 * Two threads use it: an HTTP thread asks (profiles__take, which waits
 * for its profile and writes it, the slow part off the recording's
 * thread), and the recording's thread starts and builds them at each of
 * its turns (profiles__turn). Prints nothing: errors are -errno.
 */
#ifndef CPULEDGER_ANALYSIS_PROFILE_H
#define CPULEDGER_ANALYSIS_PROFILE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "pipeline.h"
#include "../core/strtab.h"
#include "../record/recorder.h"

/* A profile's slot: asked by an HTTP thread (P_ASKED), taken by the
 * recording's (P_ACTIVE, a tap of the recorder), built by it at the end
 * with its own copy of the names (P_BUILT), and written to pprof by the
 * HTTP thread that asked (P_WRITING), which frees the slot. */
enum { P_FREE, P_ASKED, P_ACTIVE, P_BUILT, P_WRITING };
struct profile {
	int state;
	char client[80];	/* who asked: one profile a client at a time */
	unsigned seconds;
	uint64_t start_ns, end_ns;
	struct pipeline pipe;	/* its own engine, fed by a tap */
	struct analysis a;
	struct stacktab stacks;		/* P_BUILT: the tap's */
	struct strtab names;		/* and a copy of the names */
	int err;
};

/* Profiles taken at once (one a client), and how many more may wait. */
#define PROFILE_SLOTS RECORDER_TAPS
#define PROFILE_QUEUE 4
#define PROFILE_QUEUE_WAIT_S 30

struct profiles {
	pthread_mutex_t lock;
	pthread_cond_t done;	/* a slot changed state */
	struct profile p[PROFILE_SLOTS];	/* state under lock */
	unsigned waiting;	/* requests waiting for a slot */
	bool stopping;
	bool labels;		/* samples labelled with command lines */
};

void profiles__init(struct profiles *ps, bool labels);
/* After profiles__stop and once no thread can call profiles__take. */
void profiles__release(struct profiles *ps);

/* An HTTP thread's request: client's profile of seconds, in pprof, into
 * a malloc'd *body of *len bytes. 0; -EBUSY (the client has one being
 * taken, or too many wait, or waited too long); -ECANCELED (the
 * recording stopped); -ENOMEM or the analysis' error. */
int profiles__take(struct profiles *ps, const char *client, unsigned seconds, char **body,
		   size_t *len);

/* The recording's thread, at each of its turns: profiles asked start
 * (from what e knows of the tasks alive), those whose seconds are over
 * are built. A profile that fails fails its request, not the caller. */
void profiles__turn(struct profiles *ps, struct recorder *r, struct engine *e, uint64_t now);

/* The recording has stopped: profiles asked or being taken end
 * unanswered (-ECANCELED), and no more are taken. */
void profiles__stop(struct profiles *ps);

#endif
