/*
 * libFuzzer entry point for the recording reader and the streaming engine
 * behind it: the input is a recording file (held in a memfd); every
 * refusal must name its offset and reason, and an accepted one is analysed
 * whole, by function with stacks (every part of the analysis runs).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/pipeline.h"

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
	struct analysis a;
	struct rec_error e = { 0 };
	struct analysis_opts o = { .method = METHOD_PRECEDING, .stacks = true };
	size_t bad;
	row_keys__parse(&o.keys, (size & 1) ? "thread,function,account" : "comm,dso,cpu", &bad);
	int err = pipeline__report_file(&a, fd, &o, &e);
	if (err == -EINVAL && !e.msg[0])
		__builtin_trap();	/* every refusal says why */
	analysis__release(&a);
	close(fd);
	return 0;
}
