/* libFuzzer entry point for the perf script folder: any bytes must fold
 * without crashing, with every option on or off, and cutting the bytes
 * into runs anywhere (as reads do) must not change the folded output. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/fold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Folds text, fed in runs of at most `run` bytes: the output, malloc'd,
 * or for a line refused, "bad line N". */
static char *fold(const struct fold_options *o, const char *text, size_t n,
		  size_t run, size_t *out_len)
{
	struct folder *f = folder__new(o);
	char *out = NULL;
	FILE *mem = open_memstream(&out, out_len);
	if (!f || !mem)
		abort();
	int err = 0;
	for (size_t at = 0; !err && at < n; at += run)
		err = folder__feed(f, text + at, n - at < run ? n - at : run);
	if (!err)
		err = folder__write(f, mem);
	if (err == -EBADMSG)
		fprintf(mem, "bad line %llu", (unsigned long long)folder__lineno(f));
	else if (err)
		abort();
	fclose(mem);
	folder__free(f);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	struct fold_options o = { data[0] & 1, data[0] & 2, data[0] & 4, data[0] & 8,
				  data[0] & 16 };
	size_t run = (size_t)data[1] % 64 + 1;
	const char *text = (const char *)data + 2;
	size_t n = size - 2, whole_len, cut_len;
	char *whole = fold(&o, text, n, n ? n : 1, &whole_len);
	char *cut = fold(&o, text, n, run, &cut_len);
	if (whole_len != cut_len || memcmp(whole, cut, whole_len))
		abort();
	free(whole);
	free(cut);
	return 0;
}
