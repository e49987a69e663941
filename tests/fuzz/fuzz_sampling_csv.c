/*
 * libFuzzer entry point for the sampling-data CSV reader. The first byte
 * picks the method, the key and where to cut the input in two (to exercise
 * a line split across feeds); every accepted input is analysed and written
 * in every format, so the table and the writers are fuzzed too.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/attribute.h"
#include "core/table.h"
#include "format/sampling_csv.h"
#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t ctl = data[0];
	const char *text = (const char *)data + 1;
	size_t len = size - 1, cut = len ? (ctl * 31u) % (len + 1) : 0;

	struct attributor a;
	attributor__init(&a, (enum steal_method)(ctl % 3), 1000000, ctl & 8);
	struct sampling_reader *r = sampling_reader__new(&a);
	if (!r)
		return 0;
	int err = sampling_reader__feed(r, text, cut);
	if (!err)
		err = sampling_reader__feed(r, text + cut, len - cut);
	if (!err)
		err = sampling_reader__finish(r);
	if (err) {
		const struct input_error *e = sampling_reader__error(r);
		if (err == -EINVAL && (e->line == 0 || !e->msg[0]))
			__builtin_trap();	/* every refusal says where and why */
	} else {
		attributor__finish(&a);
		FILE *null = fopen("/dev/null", "w");
		static const char *const keys[] = { "vm,process", "vm,thread", "vm,thread,function" };
		for (int by = 0; by < 3; by++) {
			struct table *t = table__new_keys(&a, keys[by]);
			if (!t)
				break;
			if ((int64_t)t->totals.attributed_steal_ns +
			    t->totals.unattributed_steal_ns !=
			    (int64_t)t->totals.steal_ns)
				__builtin_trap();	/* steal is conserved */
			report_text.write(null, t, NULL);
			report_csv.write(null, t, NULL);
			report_json.write(null, t, NULL);
			table__free(t);
		}
		fclose(null);
	}
	sampling_reader__free(r);
	attributor__release(&a);
	return 0;
}
