/* libFuzzer entry point for the perf script parser (the importer without
 * its file writing): any bytes are a bad line or items that hold together
 * (names numbered in order, samples' frames naming names given before
 * them), and cutting the bytes into runs anywhere, as reads do, changes
 * nothing. The first byte sets the run length. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/script_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct items {
	FILE *log;		/* every item, as bytes */
	uint32_t names;
};

static int check_item(void *ctx, uint32_t type, const void *a, size_t alen,
		      const void *b, size_t blen)
{
	struct items *it = ctx;
	uint32_t pre[2];
	if (type == REC_NAME) {
		memcpy(pre, a, 8);
		if (alen != 8 || pre[0] != it->names++)
			abort();
	} else if (type == REC_SAMPLE) {
		struct rec_sample_head h;
		if (alen != sizeof(h))
			abort();
		memcpy(&h, a, sizeof(h));
		if (blen != h.nframes * sizeof(struct rec_frame))
			abort();
		for (uint32_t i = 0; i < h.nframes; i++) {
			struct rec_frame f;
			memcpy(&f, (const char *)b + i * sizeof(f), sizeof(f));
			if (f.function >= it->names || f.dso >= it->names)
				abort();
		}
	} else if (type != REC_TASK && type != REC_CMDLINE && type != REC_SCHED) {
		abort();
	}
	fwrite(&type, 4, 1, it->log);
	fwrite(a, 1, alen, it->log);
	if (blen)
		fwrite(b, 1, blen, it->log);
	return 0;
}

static char *parse(const uint8_t *text, size_t n, size_t run, size_t *len)
{
	struct script_import_stats st;
	char msg[200];
	struct items it = { 0 };
	char *out = NULL;
	it.log = open_memstream(&out, len);
	struct script_parser *p = script_parser__new(check_item, &it, &st, msg, sizeof(msg));
	if (!p || !it.log)
		abort();
	int err = 0;
	for (size_t at = 0; !err && at < n; at += run)
		err = script_parser__feed(p, (const char *)text + at, n - at < run ? n - at : run);
	if (!err)
		err = script_parser__finish(p);
	if (err == -EBADMSG)
		fprintf(it.log, "bad line %llu", (unsigned long long)st.lines);
	else if (err)
		abort();
	else
		fprintf(it.log, "%llu samples %s %llu", (unsigned long long)st.samples,
			st.event, (unsigned long long)st.interval_ns);
	fclose(it.log);
	script_parser__free(p);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t run = data[0] % 64 + 1;
	size_t l1, l2;
	char *whole = parse(data + 1, size - 1, size, &l1);
	char *cut = parse(data + 1, size - 1, run, &l2);
	if (l1 != l2 || memcmp(whole, cut, l1))
		abort();
	free(whole);
	free(cut);
	return 0;
}
