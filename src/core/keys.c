/* keys: the one table of report keys. See keys.h. */
#include "keys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgroup_name.h"
#include "table.h"
#include "banned.h"

static const char *vm(const struct table_row *r) { return r->vm; }
static const char *comm(const struct table_row *r) { return r->comm; }
static const char *command(const struct table_row *r) { return r->command; }
static const char *executable(const struct table_row *r) { return r->executable; }
static const char *dso(const struct table_row *r) { return r->dso; }
static const char *function(const struct table_row *r) { return r->function; }
static const char *account(const struct table_row *r) { return r->account; }
static const char *cgroup(const struct table_row *r) { return r->cgroup; }
static int64_t pid(const struct table_row *r) { return r->pid; }
static int64_t tid(const struct table_row *r) { return r->tid; }
static int64_t uid(const struct table_row *r) { return r->uid; }
static int64_t cpu(const struct table_row *r) { return r->cpu; }
static int64_t start(const struct table_row *r)
{
	return r->start_ns ? (int64_t)r->start_ns : -1;
}

/* A cgroup as people know it: JSON and CSV keep the path too. */
static const char *cgroup_shown(const struct table_row *r, char *buf, size_t size)
{
	return r->cgroup ? cgroup_name(r->cgroup, buf, size) : NULL;
}

/* The program as flame graphs name a stack's: the command's first word
 * without its directory (every python3 whatever its script), else the
 * thread's [comm] (a kernel thread has no command line). */
static const char *program_of(const struct row_key *k, char *buf, size_t size)
{
	if (!k->command || !*k->command) {
		if (!k->comm)
			return NULL;
		snprintf(buf, size, "[%s]", k->comm);
		return buf;
	}
	size_t n = strcspn(k->command, " "), base = 0;
	for (size_t i = 0; i < n; i++)
		base = k->command[i] == '/' ? i + 1 : base;
	snprintf(buf, size, "%.*s", (int)(n - base), k->command + base);
	return buf;
}

static const char *program(const struct table_row *r) { return r->derived[0]; }

#define SOLO .before = RF_COUNT, .after = RF_COUNT	/* no other key with it */

static const struct key_entry entries[RF_COUNT] = {
	[RF_VM] = { .name = "vm", .alias = "host", .header = "VM", .field = "vm",
		    .label = "host", .type = KEY_TEXT, .uses = KEY_REPORT | KEY_BILL,
		    .narrow = true, SOLO, .text = vm },
	[RF_PROCESS] = { .name = "process", .header = "PID", .field = "pid", .type = KEY_TASK,
			 .uses = KEY_REPORT | KEY_BILL | KEY_ANALYZE, .narrow = true, .width = 8, SOLO,
			 .number = pid,
			 .bill_shows = RF_BIT(RF_VM) | RF_BIT(RF_PROCESS) | RF_BIT(RF_COMMAND) },
	[RF_THREAD] = { .name = "thread", .header = "TID", .field = "tid", .type = KEY_TASK,
			.uses = KEY_REPORT | KEY_BILL | KEY_ANALYZE, .narrow = true, .width = 8,
			.before = RF_PROCESS, .after = RF_COUNT, .number = tid,
			.bill_shows = RF_BIT(RF_VM) | RF_BIT(RF_PROCESS) | RF_BIT(RF_THREAD) |
				      RF_BIT(RF_COMM) },
	[RF_COMM] = { .name = "comm", .header = "COMM", .field = "comm", .type = KEY_TEXT,
		      .uses = KEY_REPORT | KEY_BILL, SOLO, .text = comm },
	[RF_COMMAND] = { .name = "command", .header = "COMMAND", .field = "command",
			 .type = KEY_TEXT, .uses = KEY_REPORT | KEY_BILL, SOLO,
			 .text = command },
	[RF_EXECUTABLE] = { .name = "executable", .header = "EXECUTABLE",
			    .field = "executable", .type = KEY_TEXT,
			    .uses = KEY_REPORT | KEY_BILL, SOLO, .text = executable },
	[RF_USER] = { .name = "user", .header = "USER", .field = "uid", .type = KEY_UID,
		      .uses = KEY_REPORT | KEY_BILL, .narrow = true, .width = 16, SOLO,
		      .number = uid },
	[RF_DSO] = { .name = "dso", .header = "DSO", .field = "dso", .type = KEY_TEXT,
		     .uses = KEY_REPORT, .needs = KEY_NEEDS_CODE, .location = true, SOLO,
		     .text = dso },
	/* a function is named within its file */
	[RF_FUNCTION] = { .name = "function", .header = "FUNCTION", .field = "function",
			  .type = KEY_TEXT, .uses = KEY_REPORT | KEY_ANALYZE,
			  .location = true, .before = RF_COUNT, .after = RF_DSO,
			  .text = function },
	[RF_ACCOUNT] = { .name = "account", .header = "ACCOUNT", .field = "account",
			 .unknown = "[unknown]", .type = KEY_TEXT,
			 .uses = KEY_REPORT | KEY_BILL, .needs = KEY_NEEDS_CODE, SOLO,
			 .text = account },
	[RF_CPU] = { .name = "cpu", .header = "CPU", .field = "cpu", .type = KEY_NUMBER,
		     .uses = KEY_REPORT, .narrow = true, .width = 4, SOLO, .number = cpu },
	[RF_CGROUP] = { .name = "cgroup", .header = "CGROUP", .field = "cgroup",
			.type = KEY_TEXT, .uses = KEY_REPORT | KEY_BILL, SOLO,
			.text = cgroup, .display = cgroup_shown },
	[RF_PROGRAM] = { .name = "program", .header = "PROGRAM", .field = "program",
			 .type = KEY_TEXT, .uses = KEY_REPORT, SOLO, .text = program,
			 .derive = program_of, .slot = 0 },
	[RF_HOUR] = { .name = "hour", .header = "HOUR", .field = "hour", .type = KEY_PERIOD,
		      .uses = KEY_BILL, SOLO },
	[RF_DAY] = { .name = "day", .header = "DAY", .field = "day", .type = KEY_PERIOD,
		     .uses = KEY_BILL, SOLO },
	[RF_MONTH] = { .name = "month", .header = "MONTH", .field = "month",
		       .type = KEY_PERIOD, .uses = KEY_BILL, SOLO },
	/* not a --by key: rows of stacks for pprof and folded */
	[RF_STACK] = { .name = "stack", .header = "STACK", .field = "stack",
		       .type = KEY_NUMBER, SOLO },
	/* not a --by key: what tells apart two tasks given one id */
	[RF_START] = { .name = "start", .header = "START_S", .field = "start_ns",
		       .type = KEY_START, .narrow = true, .width = 10, SOLO,
		       .number = start },
};

const struct key_entry *key_entry(enum row_field f)
{
	return &entries[f < RF_COUNT ? f : RF_STACK];
}

uint32_t key_entry__shows(enum row_field f)
{
	const struct key_entry *e = key_entry(f);
	return e->bill_shows ? e->bill_shows : RF_BIT(f);
}

static bool spelt(const char *name, const char *s, size_t len)
{
	return name && strlen(name) == len && !memcmp(name, s, len);
}

int key_entry__find(const char *s, size_t len, unsigned uses, enum row_field *out,
		    bool *known)
{
	for (int i = 0; i < RF_COUNT; i++) {
		const struct key_entry *e = &entries[i];
		if (!spelt(e->name, s, len) && !spelt(e->alias, s, len))
			continue;
		if (known)
			*known = e->uses != 0;
		*out = (enum row_field)i;
		return e->uses & uses ? 0 : -EINVAL;
	}
	if (known)
		*known = false;
	return -EINVAL;
}

const char *key_entry__names(unsigned uses, const char *sep, size_t wrap, size_t first,
			     char *buf, size_t size)
{
	size_t n = 0, col = first, seplen = strlen(sep);
	bool any = false;
	buf[0] = '\0';
	for (int i = 0; i < RF_COUNT && n < size; i++) {
		const struct key_entry *e = &entries[i];
		if (!(e->uses & uses))
			continue;
		size_t len = strlen(e->name);
		/* the separator's trailing space becomes the line break */
		bool brk = any && wrap && col + seplen + len > wrap;
		n += (size_t)snprintf(buf + n, size - n, "%.*s%s%s",
				      any ? (int)(brk ? seplen - (sep[seplen - 1] == ' ') :
						  seplen) : 0, sep, brk ? "\n" : "", e->name);
		col = brk ? len : col + (any ? seplen : 0) + len;
		any = true;
	}
	return buf;
}
