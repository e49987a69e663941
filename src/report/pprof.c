/*
 * report/pprof: the rows by function as a gzipped profile.proto, the
 * format of `go tool pprof`, Grafana Pyroscope and Parca (docs/formats.md).
 * Two sample types, cpu and steal, in nanoseconds; one sample per row, at
 * the location of its function, labelled pid, tid, command and account;
 * a mapping per file (dso), a function per (name, file). The message is
 * built with protobuf-c from the profile.proto Debian ships with pprof,
 * so the wire format is the one the readers are built from.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "report.h"
#include "../core/strtab.h"
#include "../core/banned.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__ValueType ValueType;

enum { LABELS = 4 };

struct builder {
	struct strtab strings;		/* the profile's string table */
	struct strtab mapping_keys;	/* dso string id -> mapping index */
	struct strtab function_keys;	/* (name, dso) string ids -> function index */
	Mapping *mappings;
	Function *functions;
	Location *locations;
	Line *lines;
	Line **line_ptrs;
	uint32_t nmappings, nfunctions;
};

static int64_t str(struct builder *b, const char *s)
{
	uint32_t id = strtab__intern(&b->strings, s, strlen(s));
	return id == HINDEX_NONE ? -1 : (int64_t)id;
}

/* The mapping index of a file, adding it when new. */
static int64_t mapping(struct builder *b, int64_t file)
{
	uint32_t key = (uint32_t)file;
	uint32_t id = strtab__intern(&b->mapping_keys, (const char *)&key, sizeof(key));
	if (id == HINDEX_NONE)
		return -1;
	if (id == b->nmappings) {
		Mapping *m = &b->mappings[b->nmappings++];
		perftools__profiles__mapping__init(m);
		m->id = id + 1;
		m->filename = file;
		m->has_functions = true;
	}
	return id;
}

/* The location id of a function in a file, adding both when new. */
static int64_t location(struct builder *b, const char *name, const char *dso)
{
	int64_t n = str(b, name), f = str(b, dso);
	int64_t m = f < 0 ? -1 : mapping(b, f);
	if (n < 0 || m < 0)
		return -1;
	uint32_t key[2] = { (uint32_t)n, (uint32_t)f };
	uint32_t id = strtab__intern(&b->function_keys, (const char *)key, sizeof(key));
	if (id == HINDEX_NONE)
		return -1;
	if (id == b->nfunctions) {
		Function *fn = &b->functions[id];
		perftools__profiles__function__init(fn);
		fn->id = id + 1;
		fn->name = fn->system_name = n;
		fn->filename = f;
		Line *line = &b->lines[id];
		perftools__profiles__line__init(line);
		line->function_id = id + 1;
		b->line_ptrs[id] = line;
		Location *loc = &b->locations[id];
		perftools__profiles__location__init(loc);
		loc->id = id + 1;
		loc->mapping_id = (uint64_t)m + 1;
		loc->n_line = 1;
		loc->line = &b->line_ptrs[id];
		b->nfunctions++;
	}
	return id + 1;
}

/* gzip of buf, written to out. */
static int write_gzip(FILE *out, const uint8_t *buf, size_t len)
{
	z_stream z = { 0 };
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	uLong cap = deflateBound(&z, (uLong)len);
	uint8_t *zbuf = malloc(cap);
	int err = zbuf ? 0 : -ENOMEM;
	if (!err) {
		z.next_in = (Bytef *)buf;
		z.avail_in = (uInt)len;
		z.next_out = zbuf;
		z.avail_out = (uInt)cap;
		err = deflate(&z, Z_FINISH) == Z_STREAM_END ? 0 : -EIO;
	}
	if (!err && fwrite(zbuf, 1, z.total_out, out) != z.total_out)
		err = -EIO;
	deflateEnd(&z);
	free(zbuf);
	return err;
}

static void release(struct builder *b)
{
	strtab__release(&b->strings);
	strtab__release(&b->mapping_keys);
	strtab__release(&b->function_keys);
	free(b->mappings);
	free(b->functions);
	free(b->locations);
	free(b->lines);
	free(b->line_ptrs);
}

static int write_pprof(FILE *out, const struct table *t, const struct report_extras *x)
{
	size_t n = t->nrows ? t->nrows : 1;
	struct builder b = { 0 };
	strtab__init(&b.strings);
	strtab__init(&b.mapping_keys);
	strtab__init(&b.function_keys);
	b.mappings = calloc(n, sizeof(*b.mappings));
	b.functions = calloc(n, sizeof(*b.functions));
	b.locations = calloc(n, sizeof(*b.locations));
	b.lines = calloc(n, sizeof(*b.lines));
	b.line_ptrs = calloc(n, sizeof(*b.line_ptrs));
	Sample *samples = calloc(n, sizeof(*samples));
	Sample **sample_ptrs = calloc(n, sizeof(*sample_ptrs));
	Label *labels = calloc(n * LABELS, sizeof(*labels));
	Label **label_ptrs = calloc(n * LABELS, sizeof(*label_ptrs));
	int64_t *values = calloc(n * 2, sizeof(*values));
	uint64_t *loc_ids = calloc(n, sizeof(*loc_ids));
	uint8_t *packed = NULL;
	char **table = NULL;
	int err = b.mappings && b.functions && b.locations && b.lines && b.line_ptrs &&
		  samples && sample_ptrs && labels && label_ptrs && values && loc_ids ?
		  0 : -ENOMEM;
	bool steal_known = !x || x->steal_known;
	int64_t empty = str(&b, ""), cpu = str(&b, "cpu"), steal = str(&b, "steal"),
		ns = str(&b, "nanoseconds"), k_pid = str(&b, "pid"), k_tid = str(&b, "tid"),
		k_cmd = str(&b, "command"), k_acc = str(&b, "account");
	int64_t note = str(&b, steal_known ? "" : "steal unknown: recorded without "
			   "the means to measure it (steal values are 0)");
	if (empty || note < 0 || k_acc < 0)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < t->nrows; i++) {
		const struct table_row *r = &t->rows[i];
		Sample *s = &samples[i];
		perftools__profiles__sample__init(s);
		int64_t loc = location(&b, r->function ? r->function : "[unknown]",
				       r->dso ? r->dso : "[unknown]");
		if (loc < 0) {
			err = -ENOMEM;
			break;
		}
		loc_ids[i] = (uint64_t)loc;
		s->n_location_id = 1;
		s->location_id = &loc_ids[i];
		values[2 * i] = (int64_t)r->cpu_ns;
		values[2 * i + 1] = steal_known ? (int64_t)r->steal_ns : 0;
		s->n_value = 2;
		s->value = &values[2 * i];
		Label *l = &labels[i * LABELS];
		for (int k = 0; k < LABELS; k++) {
			perftools__profiles__label__init(&l[k]);
			label_ptrs[i * LABELS + k] = &l[k];
		}
		size_t nl = 0;
		l[nl].key = k_pid;
		l[nl++].num = r->pid;
		l[nl].key = k_tid;
		l[nl++].num = r->tid;
		if (r->command) {
			l[nl].key = k_cmd;
			if ((l[nl++].str = str(&b, r->command)) < 0)
				err = -ENOMEM;
		}
		if (r->account) {
			l[nl].key = k_acc;
			if ((l[nl++].str = str(&b, r->account)) < 0)
				err = -ENOMEM;
		}
		s->n_label = nl;
		s->label = &label_ptrs[i * LABELS];
		sample_ptrs[i] = s;
	}
	ValueType types[2], period_type;
	ValueType *type_ptrs[2] = { &types[0], &types[1] };
	Mapping **mapping_ptrs = NULL;
	Function **function_ptrs = NULL;
	Location **location_ptrs = NULL;
	if (!err) {
		mapping_ptrs = calloc(n, sizeof(*mapping_ptrs));
		function_ptrs = calloc(n, sizeof(*function_ptrs));
		location_ptrs = calloc(n, sizeof(*location_ptrs));
		table = calloc(b.strings.count, sizeof(*table));
		if (!mapping_ptrs || !function_ptrs || !location_ptrs || !table)
			err = -ENOMEM;
	}
	if (!err) {
		for (int k = 0; k < 2; k++) {
			perftools__profiles__value_type__init(&types[k]);
			types[k].type = k ? steal : cpu;
			types[k].unit = ns;
		}
		perftools__profiles__value_type__init(&period_type);
		period_type.type = cpu;
		period_type.unit = ns;
		for (uint32_t i = 0; i < b.nmappings; i++)
			mapping_ptrs[i] = &b.mappings[i];
		for (uint32_t i = 0; i < b.nfunctions; i++) {
			function_ptrs[i] = &b.functions[i];
			location_ptrs[i] = &b.locations[i];
		}
		for (uint32_t i = 0; i < b.strings.count; i++)
			table[i] = (char *)strtab__str(&b.strings, i);
		Profile p;
		perftools__profiles__profile__init(&p);
		p.n_sample_type = 2;
		p.sample_type = type_ptrs;
		p.n_sample = t->nrows;
		p.sample = sample_ptrs;
		p.n_mapping = b.nmappings;
		p.mapping = mapping_ptrs;
		p.n_location = b.nfunctions;
		p.location = location_ptrs;
		p.n_function = b.nfunctions;
		p.function = function_ptrs;
		p.n_string_table = b.strings.count;
		p.string_table = table;
		p.period_type = &period_type;
		p.period = (int64_t)t->interval_ns;
		p.duration_nanos = x ? (int64_t)x->duration_ns : 0;
		int64_t comment = note;
		if (note) {
			p.n_comment = 1;
			p.comment = &comment;
		}
		size_t len = perftools__profiles__profile__get_packed_size(&p);
		packed = malloc(len ? len : 1);
		if (!packed)
			err = -ENOMEM;
		else
			perftools__profiles__profile__pack(&p, packed);
		if (!err)
			err = write_gzip(out, packed, len);
	}
	free(packed);
	free(table);
	free(mapping_ptrs);
	free(function_ptrs);
	free(location_ptrs);
	free(samples);
	free(sample_ptrs);
	free(labels);
	free(label_ptrs);
	free(values);
	free(loc_ids);
	release(&b);
	return err ? err : ferror(out) ? -EIO : 0;
}

const struct report_writer report_pprof = { "pprof", write_pprof };
