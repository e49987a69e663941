/* demangle: see demangle.h. */
#include "demangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "../core/banned.h"

const char *demangle(const char *name, size_t len, char *buf, size_t size)
{
	/* mangled names start _Z (C++, Rust legacy) or _R (Rust v0) */
	if (len < 3 || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R') || len >= 4096)
		return NULL;
	char raw[4096];
	memcpy(raw, name, len);
	raw[len] = '\0';
	char *d = cplus_demangle(raw, DMGL_AUTO);
	if (!d)
		return NULL;
	int n = snprintf(buf, size, "%s", d);
	free(d);
	return n > 0 && (size_t)n < size ? buf : NULL;
}
