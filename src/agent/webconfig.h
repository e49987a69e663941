/*
 * webconfig: the agent's --web.config.file, the YAML file Prometheus
 * exporters read (the exporter-toolkit's format), for TLS and basic
 * authentication:
 *
 *   tls_server_config:
 *     cert_file: server.crt      # relative to the file's directory
 *     key_file: server.key
 *   basic_auth_users:
 *     prometheus: $2y$10$...     # bcrypt, as htpasswd -B makes it
 *
 * Read by a small reader of just that shape (two levels of "key: value",
 * comments, quoted or plain scalars): the file is a few lines, and a key
 * this agent does not act on (client certificates, TLS versions, HTTP/2
 * headers) is refused by name rather than ignored, so a setting meant to
 * protect the endpoint is never silently dropped.
 */
#ifndef CPULEDGER_AGENT_WEBCONFIG_H
#define CPULEDGER_AGENT_WEBCONFIG_H

#include <stddef.h>

struct web_user {
	char *name, *hash;
	char *verified;		/* the password last found right: bcrypt is
				 * slow on purpose, and a scrape comes every
				 * few seconds */
};

struct web_config {
	char *cert, *key;	/* PEM contents (NULL: no TLS) */
	size_t cert_len, key_len;
	struct web_user *users;	/* none: no authentication */
	size_t nusers;
};

/* 0, or -1 with msg "PATH:LINE: what is wrong" (or "PATH: ..."). */
int web_config__read(const char *path, struct web_config *c, char *msg, size_t size);
void web_config__release(struct web_config *c);

/* 1 when user and password match one of c's users (bcrypt by crypt(3)),
 * else 0; callers serialize the calls (crypt is slow: one at a time). */
int web_config__check(struct web_config *c, const char *user, const char *password);

#endif
