/* libFuzzer entry point for the agent's web config reader (docs/agent.md,
 * agent/webconfig.h): any bytes are read or refused with a message that
 * names the file (and a line within it); users read have a name and a
 * bcrypt hash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/webconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("webconfig", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	char path[64], msg[600] = "";
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct web_config c;
	if (web_config__read(path, &c, msg, sizeof(msg))) {
		if (strncmp(msg, path, strlen(path)) || strlen(msg) <= strlen(path))
			abort();
	} else {
		for (size_t i = 0; i < c.nusers; i++)
			if (!c.users[i].name[0] || strncmp(c.users[i].hash, "$2", 2) ||
			    strlen(c.users[i].hash) != 60)
				abort();
		web_config__release(&c);
	}
	close(fd);
	return 0;
}
