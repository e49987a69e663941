/* mhd: see mhd.h. */
#include "mhd.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "../core/banned.h"

/* Each function of mhd_api: its name in the library, and its slot. */
#define FN(f) { "MHD_" #f, offsetof(struct mhd_api, f) }
static const struct {
	const char *name;
	size_t at;
} fns[] = {
	FN(start_daemon), FN(stop_daemon), FN(is_feature_supported), FN(get_connection_info),
	FN(lookup_connection_value), FN(create_response_from_buffer), FN(add_response_header),
	FN(queue_response), FN(destroy_response), FN(basic_auth_get_username_password),
	FN(queue_basic_auth_fail_response), FN(free),
};
#undef FN

_Static_assert(sizeof(fns) / sizeof(fns[0]) * sizeof(void (*)(void)) == sizeof(struct mhd_api),
	       "a name for each function");

static struct mhd_api api;
static const struct mhd_api *loaded;

const struct mhd_api *mhd__load(char *msg, size_t size)
{
	if (loaded)
		return loaded;
	/* kept open for the process's life: the servers' threads run in it */
	void *lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(msg, size, "cannot load %s (Debian's libmicrohttpd12): %s", MHD_SONAME,
			 dlerror());
		return NULL;
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void *p = dlsym(lib, fns[i].name);
		if (!p) {
			snprintf(msg, size, "%s has no %s", MHD_SONAME, fns[i].name);
			dlclose(lib);
			return NULL;
		}
		/* the address dlsym gives, as the slot's function pointer
		 * (POSIX: the same representation) */
		memcpy((char *)&api + fns[i].at, &p, sizeof(p));
	}
	loaded = &api;
	return loaded;
}
