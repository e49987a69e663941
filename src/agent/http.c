/* http: see http.h. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "../core/banned.h"

struct http_server {
	struct MHD_Daemon *d;
	struct http_handlers h;
};

int http_parse_listen(const char *listen, struct sockaddr_storage *ss, unsigned *len)
{
	char host[128];
	const char *colon = strrchr(listen, ':');
	if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof(host))
		return -EINVAL;
	char *end;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || port == 0 || port > 65535)
		return -EINVAL;
	memcpy(host, listen, (size_t)(colon - listen));
	host[colon - listen] = '\0';
	memset(ss, 0, sizeof(*ss));
	size_t hl = strlen(host);
	if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
			return -EINVAL;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		return 0;
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
		return -EINVAL;
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	*len = sizeof(*s4);
	return 0;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     char *body, size_t len, bool owned)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return reply(c, status, "text/plain; charset=utf-8", (char *)msg, strlen(msg), false);
}

static enum MHD_Result metrics(struct http_server *s, struct MHD_Connection *c)
{
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_ACCEPT);
	bool om = accept && strstr(accept, "application/openmetrics-text");
	char *body;
	size_t len;
	if (s->h.metrics(s->h.ctx, om, &body, &len))
		return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no figures yet\n");
	return reply(c, MHD_HTTP_OK, om ? "application/openmetrics-text; version=1.0.0; "
		     "charset=utf-8" : "text/plain; version=0.0.4; charset=utf-8", body, len, true);
}

static enum MHD_Result profile(struct http_server *s, struct MHD_Connection *c)
{
	const char *arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
	unsigned long secs = 30;
	if (arg) {
		char *end;
		secs = strtoul(arg, &end, 10);
		if (!*arg || *end || secs < 1 || secs > 300)
			return text(c, MHD_HTTP_BAD_REQUEST, "seconds: a whole number from 1 to 300\n");
	}
	char *body;
	size_t len;
	int err = s->h.profile(s->h.ctx, (unsigned)secs, &body, &len);
	if (err == -EBUSY)
		return text(c, MHD_HTTP_TOO_MANY_REQUESTS, "a profile is being taken: try again\n");
	if (err)
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "the profile failed\n");
	return reply(c, MHD_HTTP_OK, "application/octet-stream", body, len, true);
}

static const char index_page[] =
	"cpuledger agent\n"
	"  /metrics                        CPU time and steal per program and account\n"
	"  /debug/pprof/profile?seconds=N  a pprof profile of the next N seconds\n";

static enum MHD_Result on_request(void *ctx, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_size, void **state)
{
	(void)version;
	(void)data;
	struct http_server *s = ctx;
	if (!*state) {	/* headers only so far: say so, then answer */
		*state = s;
		return MHD_YES;
	}
	if (*data_size)
		return text(c, MHD_HTTP_BAD_REQUEST, "no body expected\n");
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n");
	if (!strcmp(url, "/metrics"))
		return metrics(s, c);
	if (!strcmp(url, "/debug/pprof/profile"))
		return profile(s, c);
	if (!strcmp(url, "/"))
		return text(c, MHD_HTTP_OK, index_page);
	return text(c, MHD_HTTP_NOT_FOUND, "not found\n");
}

struct http_server *http_server__start(const char *listen, const struct http_handlers *h,
				       char *msg, size_t size)
{
	struct sockaddr_storage ss;
	unsigned sl;
	if (http_parse_listen(listen, &ss, &sl)) {
		snprintf(msg, size, "--listen: '%s' is not ADDR:PORT (127.0.0.1:9465, "
			 "[::1]:9465)", listen);
		return NULL;
	}
	struct http_server *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(msg, size, "out of memory");
		return NULL;
	}
	s->h = *h;
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_ERROR_LOG | (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	uint16_t port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
			      ((struct sockaddr_in *)&ss)->sin_port);
	s->d = MHD_start_daemon(flags, port, NULL, NULL, on_request, s,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_LIMIT, 16u,
				MHD_OPTION_CONNECTION_TIMEOUT, 330u,
				MHD_OPTION_END);
	if (!s->d) {
		snprintf(msg, size, "--listen: cannot listen on '%s': %s", listen,
			 strerror(errno ? errno : EADDRINUSE));
		free(s);
		return NULL;
	}
	return s;
}

void http_server__stop(struct http_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d);
	free(s);
}
