/*
 * bench/restack: copies a recording, each sample written as the recorder
 * writes it now (version 3: its stack named once, the sample naming it),
 * so that reports of one recording in both versions can be timed and
 * compared byte for byte (bench/streaming_real.sh). The blocks end where
 * the input's did (a recorder flushes at its rounds): a reader's buffers
 * are those of the block sizes it meets.
 *
 * usage: restack IN OUT
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/recording.h"

/* A version 2 sample: its head, then its frames inline. */
static int sample(struct rec_writer *w, const uint8_t *d, uint32_t len)
{
	struct rec_sample_head h;
	if (len < sizeof(h))
		return -1;
	memcpy(&h, d, sizeof(h));
	if (len != sizeof(h) + (size_t)h.nframes * sizeof(struct rec_frame))
		return -1;
	struct rec_frame *f = malloc(h.nframes * sizeof(*f) + 1);
	if (!f)
		return -1;
	memcpy(f, d + sizeof(h), h.nframes * sizeof(*f));
	int err = rec_writer__sample(w, &h, f);
	free(f);
	return err;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: restack IN OUT\n");
		return 2;
	}
	int in = open(argv[1], O_RDONLY), out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct rec_error e;
	struct rec_reader *r = in < 0 ? NULL : rec_reader__new(in, &e);
	struct rec_writer *w = out < 0 ? NULL : rec_writer__new(out);
	if (!r || !w) {
		perror("restack");
		return 1;
	}
	uint32_t type, len;
	const uint8_t *d;
	int got;
	uint64_t block = 0;
	while ((got = rec_reader__next(r, &type, &d, &len, &e)) == 1) {
		int err = 0;
		if (rec_reader__offset(r) != block) {
			err = rec_writer__flush(w);
			block = rec_reader__offset(r);
		}
		if (!err)
			err = type == REC_SAMPLE ? sample(w, d, len) :
			      rec_writer__add(w, type, d, len, NULL, 0);
		if (err) {
			fprintf(stderr, "restack: %s: cannot copy an item of type %u\n", argv[1], type);
			return 1;
		}
	}
	if (got < 0 || rec_writer__finish(w) || close(out)) {
		fprintf(stderr, "restack: %s: %s\n", argv[1], got < 0 ? e.msg : "cannot write");
		return 1;
	}
	rec_writer__free(w);
	rec_reader__free(r);
	return 0;
}
