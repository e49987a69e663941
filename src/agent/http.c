/* http: see http.h. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mhd.h"
#include "../core/banned.h"

/* libmicrohttpd, once the first server starts (mhd.h) */
static const struct mhd_api *mhd;

/* A client and its connections now. */
struct client {
	char key[64];
	unsigned conns;
};

struct http_server {
	struct MHD_Daemon *d;
	struct http_handlers h;
	struct http_config c;
	pthread_mutex_t lock;		/* clients */
	pthread_mutex_t auth_lock;	/* crypt one at a time (a core at most) */
	struct sockaddr_storage addr;	/* where it listens */
	struct client clients[HTTP_MAX_CONNECTIONS];
	unsigned nclients;
	unsigned long refused;
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

/* The uid owning the local socket at peer that is connected to local
 * (loopback: the peer is this machine's), from the kernel's socket table
 * (sock_diag); -1 when not found. */
static long peer_uid(const struct sockaddr_storage *peer, const struct sockaddr_storage *local)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} req = { .nh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			  .nlmsg_flags = NLM_F_REQUEST },
		  .r = { .sdiag_family = (unsigned char)peer->ss_family,
			 .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0u } };
	struct inet_diag_sockid *id = &req.r.id;
	id->idiag_cookie[0] = id->idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (peer->ss_family == AF_INET) {
		const struct sockaddr_in *p = (const void *)peer, *l = (const void *)local;
		id->idiag_sport = p->sin_port;
		id->idiag_dport = l->sin_port;
		memcpy(id->idiag_src, &p->sin_addr, 4);
		memcpy(id->idiag_dst, &l->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *p = (const void *)peer, *l = (const void *)local;
		id->idiag_sport = p->sin6_port;
		id->idiag_dport = l->sin6_port;
		memcpy(id->idiag_src, &p->sin6_addr, 16);
		memcpy(id->idiag_dst, &l->sin6_addr, 16);
	}
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -1;
	long uid = -1;
	char buf[1024];
	struct timeval tv = { 1, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(fd, &req, sizeof(req), 0) == (ssize_t)sizeof(req)) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		const struct nlmsghdr *h = (const void *)buf;
		if (n >= (ssize_t)NLMSG_LENGTH(sizeof(struct inet_diag_msg)) &&
		    h->nlmsg_type == SOCK_DIAG_BY_FAMILY)
			uid = ((const struct inet_diag_msg *)NLMSG_DATA(h))->idiag_uid;
	}
	close(fd);
	return uid;
}

static bool loopback(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
	const struct in6_addr *x = &((const struct sockaddr_in6 *)a)->sin6_addr;
	return a->ss_family == AF_INET6 &&
	       (IN6_IS_ADDR_LOOPBACK(x) ||
		(IN6_IS_ADDR_V4MAPPED(x) && x->s6_addr[12] == 127));
}

/* Who is at peer, connected to local: "uid N" for a local user, else its
 * address. */
static void client_key(const struct sockaddr_storage *p, const struct sockaddr_storage *local,
		       char *key, size_t size)
{
	struct sockaddr_storage peer = *p;
	long uid = loopback(&peer) ? peer_uid(&peer, local) : -1;
	if (uid >= 0) {
		snprintf(key, size, "uid %ld", uid);
		return;
	}
	char addr[INET6_ADDRSTRLEN] = "?";
	const void *a = peer.ss_family == AF_INET ?
		(const void *)&((struct sockaddr_in *)&peer)->sin_addr :
		(const void *)&((struct sockaddr_in6 *)&peer)->sin6_addr;
	inet_ntop(peer.ss_family, a, addr, sizeof(addr));
	snprintf(key, size, "%s", addr);
}

static void client_of(int fd, char *key, size_t size)
{
	struct sockaddr_storage peer, local;
	socklen_t pl = sizeof(peer), ll = sizeof(local);
	if (getpeername(fd, (struct sockaddr *)&peer, &pl) ||
	    getsockname(fd, (struct sockaddr *)&local, &ll))
		snprintf(key, size, "?");
	else
		client_key(&peer, &local, key, size);
}

static unsigned client_count(const struct http_server *s, const char *key)
{
	for (unsigned i = 0; i < s->nclients; i++)
		if (!strcmp(s->clients[i].key, key))
			return s->clients[i].conns;
	return 0;
}

/* Before a connection is set up (no thread yet): refused when its client
 * holds as many as it may. The address it reached is where we listen, or
 * for a wildcard there, the loopback address of its family (what local
 * clients use); on_connection counts what this lets through. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct http_server *s = cls;
	struct sockaddr_storage peer = { 0 }, local = s->addr;
	memcpy(&peer, addr, len < sizeof(peer) ? len : sizeof(peer));
	if (local.ss_family == AF_INET &&
	    ((struct sockaddr_in *)&local)->sin_addr.s_addr == htonl(INADDR_ANY))
		((struct sockaddr_in *)&local)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else if (local.ss_family == AF_INET6 &&
		 IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&local)->sin6_addr))
		((struct sockaddr_in6 *)&local)->sin6_addr = in6addr_loopback;
	char key[64];
	client_key(&peer, &local, key, sizeof(key));
	pthread_mutex_lock(&s->lock);
	bool over = client_count(s, key) >= s->c.client_connections;
	s->refused += over;
	pthread_mutex_unlock(&s->lock);
	return over ? MHD_NO : MHD_YES;
}

/* One more connection of key: its count now (the table holds a client
 * per connection at most, so it never fills). */
static unsigned client_add(struct http_server *s, const char *key)
{
	for (unsigned i = 0; i < s->nclients; i++)
		if (!strcmp(s->clients[i].key, key))
			return ++s->clients[i].conns;
	if (s->nclients == HTTP_MAX_CONNECTIONS)
		return UINT32_MAX;
	struct client *c = &s->clients[s->nclients++];
	snprintf(c->key, sizeof(c->key), "%s", key);
	return c->conns = 1;
}

static void client_drop(struct http_server *s, const char *key)
{
	for (unsigned i = 0; i < s->nclients; i++) {
		if (strcmp(s->clients[i].key, key))
			continue;
		if (!--s->clients[i].conns)
			s->clients[i] = s->clients[--s->nclients];
		return;
	}
}

/* Each connection's client, counted; one over its client's limit is shut
 * at once (its thread then sees the end and goes). */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *s = cls;
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (*socket_context) {
			pthread_mutex_lock(&s->lock);
			client_drop(s, *socket_context);
			pthread_mutex_unlock(&s->lock);
		}
		free(*socket_context);
		*socket_context = NULL;
		return;
	}
	const union MHD_ConnectionInfo *ci =
		mhd->get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	char *key = malloc(64);
	if (!ci || !key) {
		free(key);
		return;
	}
	client_of(ci->connect_fd, key, 64);
	pthread_mutex_lock(&s->lock);
	unsigned n = client_add(s, key);
	bool over = n > s->c.client_connections;
	s->refused += over;
	pthread_mutex_unlock(&s->lock);
	if (n == UINT32_MAX) {
		free(key);
		key = NULL;
	}
	*socket_context = key;
	if (over || !key)
		shutdown(ci->connect_fd, SHUT_RDWR);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     char *body, size_t len, bool owned)
{
	struct MHD_Response *r = mhd->create_response_from_buffer(
		len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	mhd->add_response_header(r, "Content-Type", type);
	enum MHD_Result ret = mhd->queue_response(c, status, r);
	mhd->destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return reply(c, status, "text/plain; charset=utf-8", (char *)msg, strlen(msg), false);
}

static enum MHD_Result metrics(struct http_server *s, struct MHD_Connection *c)
{
	const char *accept = mhd->lookup_connection_value(c, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_ACCEPT);
	bool om = accept && strstr(accept, "application/openmetrics-text");
	char *body;
	size_t len;
	if (s->h.metrics(s->h.ctx, om, &body, &len))
		return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no figures yet\n");
	return reply(c, MHD_HTTP_OK, om ? "application/openmetrics-text; version=1.0.0; "
		     "charset=utf-8" : "text/plain; version=0.0.4; charset=utf-8", body, len, true);
}

static enum MHD_Result profile(struct http_server *s, struct MHD_Connection *c,
			       const char *client)
{
	const char *arg = mhd->lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
	unsigned long secs = 30;
	if (arg) {
		char *end;
		secs = strtoul(arg, &end, 10);
		if (!*arg || *end || secs < 1 || secs > 300)
			return text(c, MHD_HTTP_BAD_REQUEST, "seconds: a whole number from 1 to 300\n");
	}
	char *body;
	size_t len;
	int err = s->h.profile(s->h.ctx, client, (unsigned)secs, &body, &len);
	if (err == -EBUSY)
		return text(c, MHD_HTTP_TOO_MANY_REQUESTS, "you have a profile being taken, or "
			    "too many wait: try again later\n");
	if (err)
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "the profile failed\n");
	return reply(c, MHD_HTTP_OK, "application/octet-stream", body, len, true);
}

static const char index_page[] =
	"cpuledger agent\n"
	"  /metrics                        CPU time and steal per program and account\n"
	"  /debug/pprof/profile?seconds=N  a pprof profile of the next N seconds\n"
	"  /-/healthy                      200 while the agent runs\n";

/* With users in the web config: whether the request names one rightly
 * (*user set to the name, for the caller to MHD_free). */
static bool authorized(struct http_server *s, struct MHD_Connection *c, char **user)
{
	*user = NULL;
	if (!s->c.web || !s->c.web->nusers)
		return true;
	char *password = NULL;
	*user = mhd->basic_auth_get_username_password(c, &password);
	bool ok = false;
	if (*user && password) {
		pthread_mutex_lock(&s->auth_lock);
		ok = web_config__check(s->c.web, *user, password);
		pthread_mutex_unlock(&s->auth_lock);
	}
	if (password) {
		explicit_bzero(password, strlen(password));
		mhd->free(password);
	}
	return ok;
}

static enum MHD_Result unauthorized(struct MHD_Connection *c)
{
	static char msg[] = "unauthorized\n";
	struct MHD_Response *r = mhd->create_response_from_buffer(sizeof(msg) - 1, msg,
								 MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	mhd->add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	enum MHD_Result ret = mhd->queue_basic_auth_fail_response(c, "cpuledger", r);
	mhd->destroy_response(r);
	return ret;
}

static enum MHD_Result route(struct http_server *s, struct MHD_Connection *c, const char *url)
{
	if (!strcmp(url, "/-/healthy"))
		return text(c, MHD_HTTP_OK, "OK\n");
	char *user;
	if (!authorized(s, c, &user)) {
		if (user)
			mhd->free(user);
		return unauthorized(c);
	}
	char client[80];
	if (user) {	/* a user of the web config: one client wherever it is */
		snprintf(client, sizeof(client), "user %s", user);
		mhd->free(user);
	} else {
		const union MHD_ConnectionInfo *ci =
			mhd->get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
		snprintf(client, sizeof(client), "%s",
			 ci && ci->socket_context ? (const char *)ci->socket_context : "?");
	}
	if (!strcmp(url, "/metrics"))
		return metrics(s, c);
	if (!strcmp(url, "/debug/pprof/profile"))
		return profile(s, c, client);
	if (!strcmp(url, "/"))
		return text(c, MHD_HTTP_OK, index_page);
	return text(c, MHD_HTTP_NOT_FOUND, "not found\n");
}

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
	return route(s, c, url);
}

static struct MHD_Daemon *start(struct http_server *s, const struct sockaddr_storage *ss)
{
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD |
			 MHD_USE_ERROR_LOG | (ss->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	uint16_t port = ntohs(ss->ss_family == AF_INET6 ?
			      ((const struct sockaddr_in6 *)ss)->sin6_port :
			      ((const struct sockaddr_in *)ss)->sin_port);
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, s->c.web ? s->c.web->cert : NULL },
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, s->c.web ? s->c.web->key : NULL },
		{ MHD_OPTION_END, 0, NULL },
	};
	bool https = s->c.web && s->c.web->cert;
	if (https)
		flags |= MHD_USE_TLS;
	return mhd->start_daemon(flags, port, on_accept, s, on_request, s,
				MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)ss,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, s->c.idle_timeout,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
				MHD_OPTION_THREAD_STACK_SIZE, (size_t)(1u << 20),
				https ? MHD_OPTION_ARRAY : MHD_OPTION_END, tls,
				MHD_OPTION_END);
}

struct http_server *http_server__start(const struct http_config *c,
				       const struct http_handlers *h, char *msg, size_t size)
{
	struct sockaddr_storage ss;
	unsigned sl;
	if (http_parse_listen(c->listen, &ss, &sl)) {
		snprintf(msg, size, "--listen: '%s' is not ADDR:PORT (127.0.0.1:9465, "
			 "[::1]:9465)", c->listen);
		return NULL;
	}
	if (!mhd && !(mhd = mhd__load(msg, size)))
		return NULL;
	if (c->web && c->web->cert && mhd->is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		snprintf(msg, size, "--web.config.file: this libmicrohttpd has no TLS");
		return NULL;
	}
	struct http_server *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(msg, size, "out of memory");
		return NULL;
	}
	s->h = *h;
	s->c = *c;
	s->addr = ss;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->auth_lock, NULL);
	errno = 0;
	s->d = start(s, &ss);
	if (!s->d) {
		snprintf(msg, size, "--listen: cannot listen on '%s': %s", c->listen,
			 errno ? strerror(errno) : "address in use, or the certificate or key "
			 "not usable");
		pthread_mutex_destroy(&s->lock);
		pthread_mutex_destroy(&s->auth_lock);
		free(s);
		return NULL;
	}
	return s;
}

void http_server__stop(struct http_server *s)
{
	if (!s)
		return;
	mhd->stop_daemon(s->d);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->auth_lock);
	free(s);
}
