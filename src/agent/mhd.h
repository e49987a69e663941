/*
 * mhd: libmicrohttpd, loaded by the agent when it starts serving.
 *
 * Linked in, it brought GnuTLS and p11-kit into every command, and their
 * start-up (6.8 ms here, of a `report`'s 10.8 ms before it reads a byte)
 * into each: a report of a minute's recording, a `top` and every test
 * paid it for an HTTP server they never start. Only the agent asks for
 * it, through the functions below, typed by the library's own header.
 */
#ifndef CPULEDGER_AGENT_MHD_H
#define CPULEDGER_AGENT_MHD_H

#include <stddef.h>
#include <microhttpd.h>

/* The library's soname as Debian 12 ships it (the package libmicrohttpd12,
 * which debian/control depends on). */
#define MHD_SONAME "libmicrohttpd.so.12"

struct mhd_api {
	__typeof__(&MHD_start_daemon) start_daemon;
	__typeof__(&MHD_stop_daemon) stop_daemon;
	__typeof__(&MHD_is_feature_supported) is_feature_supported;
	__typeof__(&MHD_get_connection_info) get_connection_info;
	__typeof__(&MHD_lookup_connection_value) lookup_connection_value;
	__typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
	__typeof__(&MHD_add_response_header) add_response_header;
	__typeof__(&MHD_queue_response) queue_response;
	__typeof__(&MHD_destroy_response) destroy_response;
	__typeof__(&MHD_basic_auth_get_username_password) basic_auth_get_username_password;
	__typeof__(&MHD_queue_basic_auth_fail_response) queue_basic_auth_fail_response;
	__typeof__(&MHD_free) free;
};

/* The library's functions, loaded on the first call (from one thread,
 * before any server runs); NULL with why in msg when it cannot be. */
const struct mhd_api *mhd__load(char *msg, size_t size);

#endif
