/*
 * http: the agent's HTTP endpoint, by libmicrohttpd, a thread for each
 * connection (a profile request waits its seconds without holding up a
 * scrape). Paths:
 *   /metrics               the counters: the Prometheus text format 0.0.4,
 *                          or OpenMetrics 1.0 when the Accept header asks
 *   /debug/pprof/profile   ?seconds=N (1-300, default 30): a pprof profile
 *                          of the next N seconds, as Go's net/http/pprof
 *                          serves it (continuous profilers scrape it)
 *   /-/healthy             200 while the agent runs (no authentication)
 *   /                      a page naming them
 * Anything else is 404; methods other than GET and HEAD are 405.
 *
 * On a shared host: TLS and basic authentication from a web config file
 * (webconfig.h); each client (a local user, told by the kernel's socket
 * table for loopback peers; a remote address otherwise) holds at most
 * client_connections at once (more are closed at once), and a connection
 * that sends nothing for idle_timeout seconds is closed, so one user
 * holding connections cannot starve another's scrapes.
 */
#ifndef CPULEDGER_AGENT_HTTP_H
#define CPULEDGER_AGENT_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "webconfig.h"

struct http_handlers {
	void *ctx;
	/* the body for /metrics (malloc'd); 0 or -errno */
	int (*metrics)(void *ctx, bool openmetrics, char **body, size_t *len);
	/* a profile of the next seconds for client (a user name, "uid N" or
	 * an address), malloc'd gzipped protobuf; 0, -EBUSY (that client
	 * has one being taken, or too many wait), or -errno */
	int (*profile)(void *ctx, const char *client, unsigned seconds, char **body,
		       size_t *len);
};

struct http_config {
	const char *listen;		/* "ADDR:PORT", "[ADDR6]:PORT" */
	struct web_config *web;		/* NULL: plain HTTP, anyone */
	unsigned client_connections;	/* each client's at once */
	unsigned idle_timeout;		/* seconds */
};

/* The total of connections at once (every client's). */
#define HTTP_MAX_CONNECTIONS 256

struct http_server;

/* Listens as c says. NULL with msg set. */
struct http_server *http_server__start(const struct http_config *c,
				       const struct http_handlers *h, char *msg, size_t size);
void http_server__stop(struct http_server *s);

/* ADDR:PORT as a socket address; 0 or -EINVAL. */
struct sockaddr_storage;
int http_parse_listen(const char *listen, struct sockaddr_storage *ss, unsigned *len);

#endif
