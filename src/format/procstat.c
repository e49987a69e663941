/* procstat: see procstat.h. */
#include "procstat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/banned.h"

int procstat_times(const char *text, struct procstat_cpu *cpus, uint32_t n)
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
			cpus[cpu].seen = true;
			cpus[cpu].busy = v[0] + v[1] + v[2] + v[5] + v[6];
			cpus[cpu].idle = v[3] + v[4];
			cpus[cpu].steal = v[7];
		}
		found++;
	}
	return found;
}

int procstat_steal(const char *text, uint64_t *steal, uint8_t *seen, uint32_t n)
{
	struct procstat_cpu *c = calloc(n ? n : 1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	int found = procstat_times(text, c, n);
	for (uint32_t i = 0; i < n && found >= 0; i++)
		if (c[i].seen) {
			steal[i] = c[i].steal;
			seen[i] = 1;
		}
	free(c);
	return found;
}
