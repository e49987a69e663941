/* libFuzzer entry point for the perf script importer: any bytes are
 * either refused as a bad line or imported into a recording that then
 * loads without error and without a record it cannot parse. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/live_load.h"
#include "format/script_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int in = memfd_create("in", 0), out = memfd_create("out", 0);
	if (in < 0 || out < 0 || write(in, data, size) != (ssize_t)size ||
	    lseek(in, 0, SEEK_SET) < 0)
		abort();
	struct script_import_stats st;
	uint64_t line;
	char msg[200];
	int err = script_import(in, out, NULL, NULL, &st, &line, msg, sizeof(msg));
	if (err && err != -EBADMSG)
		abort();
	if (err == -EBADMSG && (line == 0 || line > st.lines))
		abort();
	if (!err) {
		struct loaded_recording r;
		struct rec_error e;
		if (lseek(out, 0, SEEK_SET) < 0)
			abort();
		int lerr = recording__load(out, METHOD_PRECEDING, NULL, &r, &e);
		if (lerr || r.bad_records || r.samples != st.samples)
			abort();
		loaded_recording__release(&r);
	}
	close(in);
	close(out);
	return 0;
}
