/* stacktab: see stacktab.h. */
#include "stacktab.h"

#include <errno.h>
#include <stdlib.h>

#include "banned.h"

void stacktab__init(struct stacktab *t)
{
	strtab__init(&t->frames);
	strtab__init(&t->stacks);
}

void stacktab__release(struct stacktab *t)
{
	if (!t)
		return;
	strtab__release(&t->frames);
	strtab__release(&t->stacks);
}

uint32_t stacktab__intern(struct stacktab *t, const struct stack_frame *f, uint32_t n)
{
	/* a stack's frames are looked up one by one, then the stack: once a
	 * stack for a recording's reader (its samples name it by the file's
	 * id after), once a sample for a live tap (a few thousand a second) */
	static __thread uint32_t ids[512];	/* resolve.h's RES_MAX_FRAMES */
	uint32_t *key = n <= 512 ? ids : malloc(n * sizeof(*key));
	if (!key)
		return HINDEX_NONE;
	uint32_t id = HINDEX_NONE;
	for (uint32_t i = 0; i < n; i++)
		if ((key[i] = strtab__intern(&t->frames, (const char *)&f[i], sizeof(*f))) ==
		    HINDEX_NONE)
			goto out;
	id = strtab__intern(&t->stacks, (const char *)key, n * sizeof(*key));
out:
	if (key != ids)
		free(key);
	return id;
}

uint32_t stacktab__frames(const struct stacktab *t, uint32_t id, struct stack_frame *f,
			  uint32_t max)
{
	uint32_t n = stacktab__depth(t, id);
	if (n > max)
		n = max;
	for (uint32_t i = 0; i < n; i++)
		f[i] = stacktab__frame(t, id, i);
	return n;
}
