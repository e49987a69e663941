/*
 * http: the agent's HTTP endpoint, by libmicrohttpd, a thread for each
 * connection (a profile request waits its seconds without holding up a
 * scrape). Three paths:
 *   /metrics               the counters: the Prometheus text format 0.0.4,
 *                          or OpenMetrics 1.0 when the Accept header asks
 *   /debug/pprof/profile   ?seconds=N (1-300, default 30): a pprof profile
 *                          of the next N seconds, as Go's net/http/pprof
 *                          serves it (continuous profilers scrape it)
 *   /                      a page naming the two
 * Anything else is 404; methods other than GET and HEAD are 405. What the
 * bodies hold comes from the handlers, called on the server's threads.
 */
#ifndef CPULEDGER_AGENT_HTTP_H
#define CPULEDGER_AGENT_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct http_handlers {
	void *ctx;
	/* the body for /metrics (malloc'd); 0 or -errno */
	int (*metrics)(void *ctx, bool openmetrics, char **body, size_t *len);
	/* a profile of the next seconds (malloc'd gzipped protobuf); 0,
	 * -EBUSY (another is being taken), or -errno */
	int (*profile)(void *ctx, unsigned seconds, char **body, size_t *len);
};

struct http_server;

/* Listens on listen ("ADDR:PORT", "[ADDR6]:PORT"). NULL with msg set. */
struct http_server *http_server__start(const char *listen, const struct http_handlers *h,
				       char *msg, size_t size);
void http_server__stop(struct http_server *s);

/* ADDR:PORT as a socket address; 0 or -EINVAL. */
struct sockaddr_storage;
int http_parse_listen(const char *listen, struct sockaddr_storage *ss, unsigned *len);

#endif
