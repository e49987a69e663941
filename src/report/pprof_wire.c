/* report/pprof_wire: see pprof_wire.h. profile.proto is proto3, so its
 * repeated numbers are packed (a tag, the bytes' length, each a varint)
 * and a Label's numbers that are 0 are not written at all; int64 values
 * are written as their two's complement uint64, as protobuf-c does. */
#include "pprof_wire.h"

#include <string.h>

#include "../core/banned.h"

enum {
	PROFILE_SAMPLE = 2 << 3 | 2,		/* a Profile's samples */
	SAMPLE_LOCATION_ID = 1 << 3 | 2,	/* field 1, length-delimited */
	SAMPLE_VALUE = 2 << 3 | 2,
	SAMPLE_LABEL = 3 << 3 | 2,
	LABEL_KEY = 1 << 3,			/* field 1, varint */
	LABEL_STR = 2 << 3,
	LABEL_NUM = 3 << 3,
	LABEL_NUM_UNIT = 4 << 3,
	LOCATION_ID = 1 << 3,			/* varints */
	LOCATION_MAPPING_ID = 2 << 3,
	LOCATION_ADDRESS = 3 << 3,
	LOCATION_LINE = 4 << 3 | 2,		/* a Line */
	LOCATION_IS_FOLDED = 5 << 3,
	LINE_FUNCTION_ID = 1 << 3,
	LINE_LINE = 2 << 3,
	FUNCTION_ID = 1 << 3,
	FUNCTION_NAME = 2 << 3,
	FUNCTION_SYSTEM_NAME = 3 << 3,
	FUNCTION_FILENAME = 4 << 3,
	FUNCTION_START_LINE = 5 << 3,
};

static size_t varint_len(uint64_t v)
{
	/* 7 bits a byte: 1 for 0..127, 10 for the top bit set */
	return v < 0x80 ? 1 : (size_t)(64 - __builtin_clzll(v) + 6) / 7;
}

/* A field of its own: the tag and its value's bytes, or nothing for 0. */
static size_t num_field_len(int64_t v)
{
	return v ? 1 + varint_len((uint64_t)v) : 0;
}

static size_t line_len(const Perftools__Profiles__Line *l)
{
	return num_field_len((int64_t)l->function_id) + num_field_len(l->line);
}

static size_t label_len(const Perftools__Profiles__Label *l)
{
	return num_field_len(l->key) + num_field_len(l->str) + num_field_len(l->num) +
	       num_field_len(l->num_unit);
}

static size_t packed_len(const uint64_t *v, size_t n)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += varint_len(v[i]);
	return len;
}

static size_t packed_len_signed(const int64_t *v, size_t n)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += varint_len((uint64_t)v[i]);
	return len;
}

/* A length-delimited field's head and its len bytes' size. */
static size_t delimited_len(size_t len)
{
	return 1 + varint_len(len) + len;
}

size_t pprof_wire__sample_size(const Perftools__Profiles__Sample *s)
{
	size_t len = 0;
	if (s->n_location_id)
		len += delimited_len(packed_len(s->location_id, s->n_location_id));
	if (s->n_value)
		len += delimited_len(packed_len_signed(s->value, s->n_value));
	for (size_t i = 0; i < s->n_label; i++)
		len += delimited_len(label_len(s->label[i]));
	return len;
}

static size_t put_head(uint8_t *out, uint8_t tag, size_t len)
{
	out[0] = tag;
	return 1 + pprof_wire__varint(out + 1, len);
}

static size_t put_num_field(uint8_t *out, uint8_t tag, int64_t v)
{
	if (!v)
		return 0;
	out[0] = tag;
	return 1 + pprof_wire__varint(out + 1, (uint64_t)v);
}

size_t pprof_wire__sample(uint8_t *out, const Perftools__Profiles__Sample *s)
{
	uint8_t *p = out;
	if (s->n_location_id) {
		p += put_head(p, SAMPLE_LOCATION_ID, packed_len(s->location_id, s->n_location_id));
		for (size_t i = 0; i < s->n_location_id; i++)
			p += pprof_wire__varint(p, s->location_id[i]);
	}
	if (s->n_value) {
		p += put_head(p, SAMPLE_VALUE, packed_len_signed(s->value, s->n_value));
		for (size_t i = 0; i < s->n_value; i++)
			p += pprof_wire__varint(p, (uint64_t)s->value[i]);
	}
	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];
		p += put_head(p, SAMPLE_LABEL, label_len(l));
		p += put_num_field(p, LABEL_KEY, l->key);
		p += put_num_field(p, LABEL_STR, l->str);
		p += put_num_field(p, LABEL_NUM, l->num);
		p += put_num_field(p, LABEL_NUM_UNIT, l->num_unit);
	}
	return (size_t)(p - out);
}

/* n bytes from src to dst, 8 at a time, the last word overlapping the
 * one before (no byte past either's n is read or written): libc's
 * memcpy of these few dozen bytes took a seventh of a profile's making on
 * one CPU, where the runs are deflated between them (bench/report_ab:
 * 0.83 of the time), and a byte at a time was a twentieth of its
 * instructions; the bytes after the last word, a byte at a time, were
 * 40 M of an 8-minute profile's. The fixed-size memcpys are moves. */
static void copy_short(uint8_t *dst, const uint8_t *src, size_t n)
{
	uint64_t w;
	uint32_t h;
	if (n >= 8) {
		for (size_t i = 0; i + 8 < n; i += 8) {
			memcpy(&w, src + i, sizeof(w));
			memcpy(dst + i, &w, sizeof(w));
		}
		memcpy(&w, src + n - 8, sizeof(w));
		memcpy(dst + n - 8, &w, sizeof(w));
	} else if (n >= 4) {
		memcpy(&h, src, sizeof(h));
		memcpy(dst, &h, sizeof(h));
		memcpy(&h, src + n - 4, sizeof(h));
		memcpy(dst + n - 4, &h, sizeof(h));
	} else {
		for (size_t i = 0; i < n; i++)
			dst[i] = src[i];
	}
}

size_t pprof_wire__sample_field(uint8_t *out, const uint8_t *locs, size_t locs_len,
				const int64_t *values, size_t nval, const uint8_t *tail,
				size_t tail_len)
{
	size_t val_len = packed_len_signed(values, nval);
	size_t len = (locs_len ? delimited_len(locs_len) : 0) +
		     (nval ? delimited_len(val_len) : 0) + tail_len;
	uint8_t *p = out;
	p += put_head(p, PROFILE_SAMPLE, len);
	if (locs_len) {
		p += put_head(p, SAMPLE_LOCATION_ID, locs_len);
		copy_short(p, locs, locs_len);
		p += locs_len;
	}
	if (nval) {
		p += put_head(p, SAMPLE_VALUE, val_len);
		for (size_t i = 0; i < nval; i++)
			p += pprof_wire__varint(p, (uint64_t)values[i]);
	}
	copy_short(p, tail, tail_len);
	return (size_t)(p - out) + tail_len;
}

size_t pprof_wire__location_size(const Perftools__Profiles__Location *l)
{
	size_t len = num_field_len((int64_t)l->id) + num_field_len((int64_t)l->mapping_id) +
		     num_field_len((int64_t)l->address) + num_field_len(l->is_folded);
	for (size_t i = 0; i < l->n_line; i++)
		len += delimited_len(line_len(l->line[i]));
	return len;
}

size_t pprof_wire__location(uint8_t *out, const Perftools__Profiles__Location *l)
{
	uint8_t *p = out;
	p += put_num_field(p, LOCATION_ID, (int64_t)l->id);
	p += put_num_field(p, LOCATION_MAPPING_ID, (int64_t)l->mapping_id);
	p += put_num_field(p, LOCATION_ADDRESS, (int64_t)l->address);
	for (size_t i = 0; i < l->n_line; i++) {
		const Perftools__Profiles__Line *line = l->line[i];
		p += put_head(p, LOCATION_LINE, line_len(line));
		p += put_num_field(p, LINE_FUNCTION_ID, (int64_t)line->function_id);
		p += put_num_field(p, LINE_LINE, line->line);
	}
	p += put_num_field(p, LOCATION_IS_FOLDED, l->is_folded);
	return (size_t)(p - out);
}

size_t pprof_wire__function_size(const Perftools__Profiles__Function *f)
{
	return num_field_len((int64_t)f->id) + num_field_len(f->name) +
	       num_field_len(f->system_name) + num_field_len(f->filename) +
	       num_field_len(f->start_line);
}

size_t pprof_wire__function(uint8_t *out, const Perftools__Profiles__Function *f)
{
	uint8_t *p = out;
	p += put_num_field(p, FUNCTION_ID, (int64_t)f->id);
	p += put_num_field(p, FUNCTION_NAME, f->name);
	p += put_num_field(p, FUNCTION_SYSTEM_NAME, f->system_name);
	p += put_num_field(p, FUNCTION_FILENAME, f->filename);
	p += put_num_field(p, FUNCTION_START_LINE, f->start_line);
	return (size_t)(p - out);
}
