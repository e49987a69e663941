/*
 * bench/restack: copies a recording, each sample written as the recorder
 * writes it now (version 4: its stack named once, the sample naming it,
 * its addresses in its block's own frame), from a version 2 file (frames
 * inline) or a version 3 one (addresses inline), so that reports of one
 * recording in both versions can be timed and compared byte for byte
 * (bench/streaming_real.sh). The blocks end where the input's did (a
 * recorder flushes at its rounds): a reader's buffers are those of the
 * block sizes it meets. A version 3 file's stacks get the same ids: a
 * writer gives them in the order their first samples come.
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

/* A version 3 file's stacks, by id: their frames' names. */
static struct stack {
	uint32_t n;
	struct rec_frame *f;
} *stacks;
static uint32_t nstacks;

static int stack(const uint8_t *d, uint32_t len)
{
	struct rec_stack st;
	if (len < sizeof(st))
		return -1;
	memcpy(&st, d, sizeof(st));
	if (st.id != nstacks || len != sizeof(st) + (size_t)st.nframes * sizeof(struct rec_stack_frame))
		return -1;
	struct stack *v = realloc(stacks, (nstacks + 1) * sizeof(*v));
	if (!v)
		return -1;
	stacks = v;
	struct stack *k = &stacks[nstacks++];
	k->n = st.nframes;
	if (!(k->f = calloc(st.nframes + 1, sizeof(*k->f))))
		return -1;
	for (uint32_t i = 0; i < st.nframes; i++) {
		struct rec_stack_frame sf;
		memcpy(&sf, d + sizeof(st) + i * sizeof(sf), sizeof(sf));
		k->f[i] = (struct rec_frame){ .function = sf.function, .dso = sf.dso,
					      .flags = sf.flags };
	}
	return 0;
}

/* A version 3 sample: its stack's names with its own addresses. */
static int stack_sample(struct rec_writer *w, const uint8_t *d, uint32_t len)
{
	struct rec_stack_sample s;
	if (len < sizeof(s))
		return -1;
	memcpy(&s, d, sizeof(s));
	if (s.stack >= nstacks || len != sizeof(s) + (size_t)stacks[s.stack].n * 8)
		return -1;
	struct stack *k = &stacks[s.stack];
	for (uint32_t i = 0; i < k->n; i++)
		memcpy(&k->f[i].ip, d + sizeof(s) + i * 8, 8);
	struct rec_sample_head h = { s.pid, s.tid, s.cpu, k->n, s.time_ns, s.period };
	return rec_writer__sample(w, &h, k->f);
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
			      type == REC_STACK ? stack(d, len) :
			      type == REC_STACK_SAMPLE ? stack_sample(w, d, len) :
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
