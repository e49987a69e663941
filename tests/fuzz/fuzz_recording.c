/*
 * libFuzzer entry point for the recording reader and loader: the input is
 * a recording file (held in a memfd); every refusal must name its offset
 * and reason, and an accepted one is analysed whole.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/live_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", 0);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	lseek(fd, 0, SEEK_SET);
	struct loaded_recording r;
	struct rec_error e;
	int err = recording__load(fd, METHOD_PRECEDING, NULL, &r, &e);
	if (err == -EINVAL && !e.msg[0])
		__builtin_trap();	/* every refusal says why */
	loaded_recording__release(&r);
	close(fd);
	return 0;
}
