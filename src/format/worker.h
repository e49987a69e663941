/*
 * worker: a thread beside the caller's, for the readers and writers here
 * that get a second CPU's help (a recording's reader ahead and writer
 * behind, perf script text's lines read ahead): whether there is a second
 * CPU, and the thread started and stopped with the lock and condition it
 * waits on.
 */
#ifndef CPULEDGER_FORMAT_WORKER_H
#define CPULEDGER_FORMAT_WORKER_H

#include <pthread.h>
#include <stdbool.h>

/* More than one CPU to run on: a second thread costs, not helps, on one. */
bool worker_cpus_to_spare(void);

/* A thread running fn(arg), with the lock and condition it waits on:
 * true when all are made, false with none left. */
bool worker_start(pthread_t *t, pthread_mutex_t *mu, pthread_cond_t *cv,
		  void *(*fn)(void *), void *arg);

/* Tells worker_start's thread to stop (*stop, under its lock), waits for
 * it to end, and lets its lock and condition go. */
void worker_stop(pthread_t t, pthread_mutex_t *mu, pthread_cond_t *cv, bool *stop);

#endif
