/* sched_flight: see sched_flight.h. */
#include "sched_flight.h"

#include "../core/banned.h"

bool sched_flight__of(struct sched_flight *f, const struct sc_cpu *c,
		      const struct sched_flight_load *load, uint64_t attached_ns, uint64_t run,
		      uint64_t delay, uint64_t steal_now)
{
	/* curr_now out of date where the CPU switched after its sample */
	uint32_t tid = c->switches == c->switches_now ? c->curr_now : 0;
	/* born since the attach: all it ran and waited, however it began */
	bool born_since = tid && sc_born_since(attached_ns, c->curr_start_now);
	/* no switch on the CPU since the load: the task then runs still */
	bool since_load = !born_since && !c->switches && tid && tid == load->tid;
	bool seen_in = !since_load && tid && tid == c->tid_in && (c->seen_in & SEEN_TIME);
	uint64_t base = born_since ? 0 : since_load ? load->rt : seen_in ? c->rt_in : run;
	*f = (struct sched_flight){ 0 };
	if (!tid || !run || run < base)
		return false;
	f->tid = tid;
	f->pid = c->curr_pid_now;
	f->partial = !seen_in && !born_since;
	f->run_ns = run;
	f->rt_base = base;
	f->delay_base = born_since ? 0 : seen_in ? c->delay_in : delay;
	if (seen_in && (c->seen_in & SEEN_STEAL) && steal_now > c->steal_in)
		f->steal_ns = steal_now - c->steal_in;
	return true;
}

void sched_flight__one_each(struct sched_flight *flights, uint32_t ncpus)
{
	for (uint32_t i = 0; i < ncpus; i++)
		for (uint32_t j = i + 1; flights[i].tid && j < ncpus; j++) {
			if (flights[j].tid != flights[i].tid)
				continue;
			uint32_t older = flights[j].run_ns > flights[i].run_ns ? i : j;
			flights[older] = (struct sched_flight){ 0 };
		}
}

void sched_flight__credit(const struct sched_flight *flights,
			  const struct sched_flight_load *loads, uint32_t ncpus, uint32_t tid,
			  const struct sc_thread *v, uint64_t *rt, uint64_t *steal)
{
	for (uint32_t i = 0; i < ncpus; i++) {
		const struct sched_flight *f = &flights[i];
		if ((v->flags & SC_PARTIAL) && loads[i].tid == tid && v->rt_base > loads[i].rt)
			*rt += v->rt_base - loads[i].rt;
		if (f->tid == tid && f->pid == v->pid && !(v->flags & SC_EXITED) &&
		    f->run_ns > v->rt_last) {
			*rt += f->run_ns - v->rt_last;
			*steal += f->steal_ns;
		}
	}
}
