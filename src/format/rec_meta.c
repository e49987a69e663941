/* rec_meta: see rec_meta.h. */
#include "rec_meta.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/banned.h"

static const char *const key_names[MK_COUNT] = {
	[MK_PHASE] = "phase", [MK_SOURCE] = "source", [MK_HOST] = "host",
	[MK_KERNEL] = "kernel", [MK_BOOT_ID] = "boot_id", [MK_HZ] = "hz",
	[MK_INTERVAL_NS] = "interval_ns", [MK_INTERVAL_SOURCE] = "interval_source",
	[MK_CLK_TCK] = "clk_tck", [MK_CALLCHAIN] = "callchain",
	[MK_STEAL_SOURCE] = "steal_source", [MK_SCOPE] = "scope", [MK_PID] = "pid",
	[MK_CHILD] = "child", [MK_CPU] = "cpu", [MK_SAMPLE_TYPE] = "sample_type",
	[MK_ID] = "id", [MK_TP] = "tp", [MK_TIME_NS] = "time_ns",
	[MK_REALTIME_NS] = "realtime_ns", [MK_EVENT] = "event", [MK_EVENTS] = "events",
	[MK_ORDERED] = "ordered", [MK_ROOT_UID] = "root_uid",
	[MK_KERNEL_ACCOUNTING] = "kernel_accounting",
	[MK_ACCOUNTING_SOURCE] = "kernel_accounting_source", [MK_STEAL_CLOCK] = "steal_clock",
	[MK_CPU_CLOCK] = "cpu_clock",
};

const char *rec_meta_key__name(enum rec_meta_key k)
{
	return k < MK_COUNT ? key_names[k] : "?";
}

const char *rec_scope__name(enum rec_scope s)
{
	return s == SCOPE_PIDS ? "pids" : s == SCOPE_COMMAND ? "command" : "all";
}

/* The key of a line, and the part after its dot (sample_type.clock). */
static int key_of(const char *k, const char **sub)
{
	const char *dot = strchr(k, '.');
	size_t len = dot ? (size_t)(dot - k) : strlen(k);
	*sub = dot ? dot + 1 : NULL;
	for (int i = 0; i < MK_COUNT; i++)
		if (strlen(key_names[i]) == len && !memcmp(key_names[i], k, len))
			return i;
	return -1;
}

static int event_of(const char *s)
{
	return !s ? -1 : !strcmp(s, "clock") ? PE_CLOCK : !strcmp(s, "switch") ? PE_SWITCH :
	       !strcmp(s, "runtime") ? PE_RUNTIME : -1;
}

static bool parse_field(const char *v, struct pd_field *f)
{
	return sscanf(v, "%u:%u", &f->offset, &f->size) == 2 &&
	       (f->size == 4 || f->size == 8);
}

static int tp_field(struct rec_meta *m, const char *sub, const char *v)
{
	struct pd_field *f = !sub ? NULL : !strcmp(sub, "prev_pid") ? &m->layout.prev_pid :
		!strcmp(sub, "next_pid") ? &m->layout.next_pid :
		!strcmp(sub, "rt_pid") ? &m->layout.rt_pid :
		!strcmp(sub, "rt_runtime") ? &m->layout.rt_runtime : NULL;
	return !f || parse_field(v, f) ? 0 : -EINVAL;
}

static void steal_source(struct rec_meta *m, const char *v)
{
	snprintf(m->steal_source, sizeof(m->steal_source), "%s", v);
	m->source = !strcmp(v, "tracepoints") ? SRC_TRACEPOINTS :
		    !strcmp(v, "sample-gaps") ? SRC_SAMPLE_GAPS :
		    !strncmp(v, "bpf", 3) && (!v[3] || v[3] == ' ') ? SRC_BPF : SRC_UNKNOWN;
	/* the BPF collector reads CPU time and wait whatever the kernel; its
	 * steal where a steal clock is there: "bpf (steal: unknown (why); ..." */
	m->steal_known = m->source != SRC_UNKNOWN &&
			 !(m->source == SRC_BPF && strstr(v, "steal: unknown"));
}

/* One key=value line of the start META. */
static int start_line(struct rec_meta *m, int key, const char *sub, const char *v)
{
	int ev;
	switch (key) {
	case MK_SOURCE: m->imported = !strcmp(v, "perf-script"); break;
	case MK_HOST: snprintf(m->host, sizeof(m->host), "%s", v); break;
	case MK_KERNEL: snprintf(m->kernel, sizeof(m->kernel), "%s", v); break;
	case MK_BOOT_ID: snprintf(m->boot_id, sizeof(m->boot_id), "%s", v); break;
	case MK_EVENT: snprintf(m->event, sizeof(m->event), "%s", v); break;
	case MK_STEAL_SOURCE: steal_source(m, v); break;
	case MK_KERNEL_ACCOUNTING:
		/* a name this version does not know: judged from the data */
		if (steal_accounting__parse(v, &m->accounting))
			m->accounting = ACCT_JUDGE;
		break;
	case MK_ACCOUNTING_SOURCE:
		snprintf(m->accounting_source, sizeof(m->accounting_source), "%s", v);
		break;
	case MK_STEAL_CLOCK: m->steal_clock = !strcmp(v, "yes") ? 1 : !strcmp(v, "none") ? -1 : 0;
		break;
	case MK_CPU_CLOCK: m->cpu_clock = !strcmp(v, "steal"); break;
	case MK_SCOPE:
		m->scope = !strcmp(v, "pids") ? SCOPE_PIDS : !strcmp(v, "command") ?
			   SCOPE_COMMAND : SCOPE_ALL;
		break;
	case MK_INTERVAL_NS: m->interval_ns = strtoull(v, NULL, 10); break;
	case MK_CLK_TCK: m->clk_tck = strtoull(v, NULL, 10); break;
	case MK_CALLCHAIN: m->callchain = atoi(v) != 0; break;
	case MK_ORDERED: m->ordered = atoi(v) != 0; break;
	case MK_CPU: {
		unsigned long c = strtoul(v, NULL, 10);
		if (c >= 65536)
			return -EINVAL;
		if (c + 1 > m->ncpus)
			m->ncpus = (uint32_t)c + 1;
		break;
	}
	case MK_PID:
	case MK_CHILD:
		if (m->nscope < sizeof(m->scope_pids) / sizeof(*m->scope_pids))
			m->scope_pids[m->nscope++] = (uint32_t)strtoul(v, NULL, 10);
		break;
	case MK_SAMPLE_TYPE:
		if ((ev = event_of(sub)) >= 0)
			m->layout.sample_type[ev] = strtoull(v, NULL, 10);
		break;
	case MK_ID:
		if ((ev = event_of(sub)) >= 0 &&
		    pd_layout__add_id(&m->layout, strtoull(v, NULL, 10), (enum pd_event)ev))
			return -ENOMEM;
		break;
	case MK_TP:
		return tp_field(m, sub, v);
	case MK_EVENTS:
		if (sub && m->nevents < sizeof(m->events) / sizeof(*m->events)) {
			struct source_event *c = &m->events[m->nevents++];
			snprintf(c->name, sizeof(c->name), "%s", sub);
			c->samples = strtoull(v, NULL, 10);
		}
		break;
	default:
		break;
	}
	return 0;
}

int rec_meta__parse(struct rec_meta *m, const char *text, size_t len,
		    char *msg, size_t msg_size)
{
	char *copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	int err = 0;
	bool start = false;
	char *save = NULL;
	for (char *line = strtok_r(copy, "\n", &save); line && !err;
	     line = strtok_r(NULL, "\n", &save)) {
		/* an event's name may hold '=' (cpu-clock/freq=1000/): its
		 * count is after the last one */
		char *v = strncmp(line, "events.", 7) ? strchr(line, '=') : strrchr(line, '=');
		if (!v)
			continue;
		*v++ = '\0';
		const char *sub;
		int key = key_of(line, &sub);
		if (key == MK_PHASE)
			start = !strcmp(v, "start");
		else if (key == MK_TIME_NS)
			*(start ? &m->start_ns : &m->end_ns) = strtoull(v, NULL, 10);
		else if (key == MK_REALTIME_NS)
			*(start ? &m->realtime_start_ns : &m->realtime_end_ns) =
				(int64_t)strtoull(v, NULL, 10);
		else if (start)
			err = start_line(m, key, sub, v);
	}
	free(copy);
	if (err == -EINVAL)
		snprintf(msg, msg_size, "bad metadata");
	if (err || !start)
		return err;
	if (!m->ncpus || !m->interval_ns || !m->clk_tck) {
		snprintf(msg, msg_size, "metadata lacks cpu, interval_ns or clk_tck");
		return -EINVAL;
	}
	if (!m->steal_source[0])
		steal_source(m, "unknown");
	pd_layout__ready(&m->layout);
	m->have_start = true;
	return 0;
}

void rec_meta__release(struct rec_meta *m)
{
	pd_layout__release(&m->layout);
}
