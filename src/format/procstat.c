/* procstat: see procstat.h. */
#include "procstat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/banned.h"

int procstat_steal(const char *text, uint64_t *steal, uint8_t *seen, uint32_t n)
{
	int found = 0;
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "cpu", 3) != 0 || p[3] < '0' || p[3] > '9')
			continue;
		char *end;
		unsigned long cpu = strtoul(p + 3, &end, 10);
		uint64_t v[8];
		for (int i = 0; i < 8; i++) {
			const char *s = end;
			v[i] = strtoull(s, &end, 10);
			if (end == s)
				return -EINVAL;
		}
		if (cpu < n) {
			steal[cpu] = v[7];
			seen[cpu] = 1;
		}
		found++;
	}
	return found;
}
