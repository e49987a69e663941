/*
 * report/pprof_wire: the parts of a profile that pprof.c writes as
 * protobuf's wire format itself, byte for byte as protobuf-c packs them:
 * a varint, a Sample, a Location and a Function. A profile is mostly its
 * samples (one for each stack of each thread), and protobuf-c packs a
 * message by walking its descriptor field by field: a tenth of an
 * 8-minute recording's profile went to sizing and packing its samples
 * that way. Its locations and functions, one of each for every function
 * named, were kept as protobuf-c's structs to be packed (180 bytes each,
 * 1.5 MB of that profile's memory); written here, pprof.c keeps 12 bytes
 * of each. test_pprof_wire checks the bytes against protobuf-c's.
 */
#ifndef CPULEDGER_REPORT_PPROF_WIRE_H
#define CPULEDGER_REPORT_PPROF_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "profile.pb-c.h"

/* The most bytes a varint takes. */
#define PPROF_VARINT_MAX 10

/* v as a varint into out; its length. Inline: a stack's sample writes
 * one for each of its locations. */
static inline size_t pprof_wire__varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;
	for (; v >= 0x80; v >>= 7)
		out[n++] = (uint8_t)(v | 0x80);
	out[n++] = (uint8_t)v;
	return n;
}

/* The length of s packed (protobuf-c's get_packed_size). */
size_t pprof_wire__sample_size(const Perftools__Profiles__Sample *s);

/* s packed into out, which has room for its size; the bytes written. */
size_t pprof_wire__sample(uint8_t *out, const Perftools__Profiles__Sample *s);

/*
 * A Sample whose location ids are the locs_len bytes of locs (each a
 * varint, as pprof_wire__varint writes them), its nval values, and its
 * labels the tail_len bytes of tail (Labels packed as fields 3), written
 * whole as a Profile's field 2 (its tag, its length, its bytes): a
 * stack's sample is mostly its locations, whose varints were sized and
 * written twice over when a Sample was sized then packed. out has room
 * for PPROF_SAMPLE_FIELD_MAX; the bytes written.
 */
#define PPROF_SAMPLE_FIELD_MAX(locs_len, nval, tail_len) \
	(3 * (1 + PPROF_VARINT_MAX) + (locs_len) + (nval) * PPROF_VARINT_MAX + (tail_len))
size_t pprof_wire__sample_field(uint8_t *out, const uint8_t *locs, size_t locs_len,
				const int64_t *values, size_t nval, const uint8_t *tail,
				size_t tail_len);

/* The length of a Location or Function packed, and it packed into out
 * (room for its size); the bytes written. */
size_t pprof_wire__location_size(const Perftools__Profiles__Location *l);
size_t pprof_wire__location(uint8_t *out, const Perftools__Profiles__Location *l);
size_t pprof_wire__function_size(const Perftools__Profiles__Function *f);
size_t pprof_wire__function(uint8_t *out, const Perftools__Profiles__Function *f);

#endif
