/* libFuzzer entry point for the perf script folder: any bytes, cut into
 * lines, must fold without crashing, with every option on or off. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "format/fold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	struct fold_options o = { data[0] & 1, data[0] & 2, data[0] & 4, data[0] & 8,
				  data[0] & 16 };
	struct folder *f = folder__new(&o);
	if (!f)
		return 0;
	const char *p = (const char *)data + 1, *e = (const char *)data + size;
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(e - p);
		folder__line(f, p, n);
		p += n + 1;
	}
	FILE *null = fopen("/dev/null", "w");
	folder__write(f, null);
	fclose(null);
	folder__free(f);
	return 0;
}
