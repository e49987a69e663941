/* worker: see worker.h. */
#include "worker.h"

#include <sched.h>

#include "../core/banned.h"

bool worker_cpus_to_spare(void)
{
	cpu_set_t set;
	return sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 1;
}

bool worker_start(pthread_t *t, pthread_mutex_t *mu, pthread_cond_t *cv,
		  void *(*fn)(void *), void *arg)
{
	if (pthread_mutex_init(mu, NULL))
		return false;
	if (pthread_cond_init(cv, NULL)) {
		pthread_mutex_destroy(mu);
		return false;
	}
	if (pthread_create(t, NULL, fn, arg)) {
		pthread_cond_destroy(cv);
		pthread_mutex_destroy(mu);
		return false;
	}
	return true;
}

void worker_stop(pthread_t t, pthread_mutex_t *mu, pthread_cond_t *cv, bool *stop)
{
	pthread_mutex_lock(mu);
	*stop = true;
	pthread_cond_broadcast(cv);
	pthread_mutex_unlock(mu);
	pthread_join(t, NULL);
	pthread_cond_destroy(cv);
	pthread_mutex_destroy(mu);
}
