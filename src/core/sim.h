/*
 * sim: a deterministic virtual machine host, the source of sampling data for
 * tests and benchmarks, with the truth a real hypervisor never tells.
 *
 * Each VM has processes and threads; each thread is pinned to one vCPU and
 * runs slices in which it calls one function after another. Between slices
 * a vCPU may idle. The hypervisor steals in bursts that arrive at random in
 * the vCPU's own (non-stolen) time: a burst that lands in a slice belongs to
 * the thread holding the CPU, and to the function it was in; one that lands
 * in idle belongs to nobody; and at a switch between slices a burst may hit
 * the scheduler itself, belonging to nobody (seed 001, FIG. 10's reason for
 * the bracketed method). Every vCPU is sampled once an interval, with
 * optional jitter; the truth is kept in continuous time.
 */
#ifndef CPULEDGER_CORE_SIM_H
#define CPULEDGER_CORE_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "attribute.h"
#include "units.h"

struct sim_config {
	uint64_t seed;
	uint32_t vms, vcpus;	/* vCPUs per VM */
	uint64_t duration_ms;
	double steal_pct;	/* share of wall time stolen, 0 to 90 */
	uint64_t jitter_ns;	/* sample times vary by up to this either way */
	uint64_t interval_ns;
};

/* Checks c; returns NULL or a message naming the option at fault. */
const char *sim_config__check(const struct sim_config *c);

struct sim_sample {
	uint32_t vm, vcpu;
	uint64_t time_ns;
	enum sample_state state;
	uint32_t pid, tid;	/* set when state is SAMPLE_RUN */
	const char *function;	/* likewise; owned by the simulator */
};

/* The true figures of one program (vm, pid, tid, function). */
struct sim_truth {
	uint32_t vm, pid, tid;
	const char *function;
	uint64_t cpu_ns;	/* time it ran */
	uint64_t steal_ns;	/* time stolen while it held the vCPU */
};

struct sim_totals {
	uint64_t run_ns, idle_ns;
	uint64_t held_steal_ns;		/* stolen from a running thread */
	uint64_t idle_steal_ns;		/* stolen while idle */
	uint64_t switch_steal_ns;	/* stolen at a switch */
};

struct sim;

/* A new simulator for a checked config; NULL with errno ENOMEM. */
struct sim *sim__new(const struct sim_config *c);
void sim__free(struct sim *s);

/* The next sample, in time order per stream, streams interleaved.
 * Returns false when the duration is over. */
bool sim__next(struct sim *s, struct sim_sample *out);

/* The VM's name, "vm0", "vm1", ...; owned by the simulator. */
const char *sim__vm_name(const struct sim *s, uint32_t vm);

/* Truth over the simulated duration; valid once sim__next returned false.
 * The array is owned by the simulator. */
const struct sim_truth *sim__truth(const struct sim *s, uint32_t *count);
const struct sim_totals *sim__totals(const struct sim *s);

/* Base of all sample times: the simulated clock starts here, so that a
 * jittered first sample is still positive. */
#define SIM_T0_NS NSEC_PER_SEC

#endif
