/* libFuzzer entry point for the account rules reader (docs/accounts.md):
 * any text parses or is refused with a line inside it and a message; the
 * rules parsed then match code sites (taken from the same bytes) to an
 * account that is a non-empty string. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/accounts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct account_rules r = { 0 };
	size_t line = 0, lines = 1;
	char msg[128] = "";
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	int err = account_rules__parse(&r, (const char *)data, size, &line, msg, sizeof(msg));
	if (err == -EINVAL && (!line || line > lines || !msg[0]))
		abort();
	if (err && err != -EINVAL)
		abort();
	if (!err) {
		static const char *const dsos[] = { "/usr/lib/x86_64-linux-gnu/libc.so.6",
			"[kernel.kallsyms]", "/usr/bin/openssl", "[anon]", "" };
		for (size_t i = 0; i < sizeof(dsos) / sizeof(*dsos); i++) {
			uint64_t ip = 0;
			memcpy(&ip, data, size < 8 ? size : 8);
			struct code_site s = { .dso = dsos[i], .symbol = i % 2 ? "memcpy" : NULL,
					       .ip = ip + i * 4096, .kernel = i == 1,
					       .executable = i == 2 };
			const char *acc = account_rules__match(&r, &s);
			if (!acc || !acc[0])
				abort();
		}
	}
	account_rules__release(&r);
	return 0;
}
