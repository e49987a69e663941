/* kthread: a kernel thread's kind (kthread.h). */
#include "kthread.h"

#include <stdio.h>
#include <string.h>

#include "banned.h"

const char *kthread_kind(const char *comm, char *buf, size_t size)
{
	snprintf(buf, size, "%.*s", (int)strcspn(comm, "/"), comm);
	return buf[0] ? buf : comm;
}
