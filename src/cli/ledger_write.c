/* ledger_write: see ledger_write.h. */
#include "ledger_write.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "../ledger/ledger.h"
#include "../core/banned.h"

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int ledger_write_recording(const char *path, const struct loaded_recording *r,
			   const char *reason)
{
	char msg[512], id[400];
	struct ledger *l;
	int err = ledger__open(path, true, &l, msg, sizeof(msg));
	if (err) {
		cli_error("%s", msg);
		return err == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	}
	/* a recording is known by where and when it began */
	snprintf(id, sizeof(id), "%s %s %llu", r->host, r->boot_id,
		 (unsigned long long)r->start_ns);
	int64_t now = now_ns();
	struct collection c = {
		.collected_ns = now, .reason = reason,
		.start_ns = r->realtime_start_ns ? r->realtime_start_ns : now,
		.end_ns = r->realtime_end_ns ? r->realtime_end_ns : now,
		.host = r->host, .boot_id = r->boot_id, .recording = id,
	};
	err = ledger__begin(l, &c, msg, sizeof(msg));
	if (err) {
		cli_error("cannot add to ledger '%s': %s", path, msg);
		ledger__close(l);
		return err == -EEXIST ? EXIT_USAGE : EXIT_RUNTIME;
	}
	const struct live *lv = &r->live;
	for (uint32_t i = 0; i < lv->nprogs && !err; i++) {
		const struct program *p = &lv->progs[i];
		const struct loaded_process *proc = loaded_recording__process(r, p->pid);
		if (proc ? !proc->in_scope : strcmp(r->scope, "all"))
			continue;
		if (!p->run_ns && !p->steal_ns && !p->samples)
			continue;	/* a caller with inclusive time only */
		struct task_info t = {
			.pid = p->pid, .tid = p->tid, .uid = proc ? proc->uid : -1,
			.command = proc ? proc->command : NULL,
			.executable = proc ? proc->executable : NULL,
			.start_ns = -1, .end_ns = -1,
		};
		struct usage u = {
			.account = p->account != NO_DSO ?
				strtab__str(&lv->strings, p->account) : "[unknown]",
			.cpu_ns = p->run_ns, .steal_ns = p->steal_ns, .samples = p->samples,
		};
		err = ledger__add(l, &t, &u, msg, sizeof(msg));
	}
	if (!err)
		err = ledger__commit(l, msg, sizeof(msg));
	else
		ledger__abort(l);
	if (err)
		cli_error("cannot add to ledger '%s': %s", path, msg);
	ledger__close(l);
	return err ? EXIT_RUNTIME : 0;
}
