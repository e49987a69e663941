/* webconfig: see webconfig.h. */
#include "webconfig.h"

#include <crypt.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/banned.h"

#define MAX_FILE (1u << 20)	/* a certificate chain, a key: far less */

enum section { S_NONE, S_TLS, S_USERS };

struct reader {
	const char *path;
	unsigned line;
	char *msg;
	size_t size;
	char *cert_file, *key_file;
};

static int fail(struct reader *r, const char *what, const char *subject)
{
	snprintf(r->msg, r->size, "%s:%u: %s%s%s", r->path, r->line, what,
		 subject ? ": " : "", subject ? subject : "");
	return -1;
}

/* A scalar: 'single' ('' is a quote), "double" (\" and \\), or plain up
 * to a " #" comment; trailing spaces go. NULL when badly quoted. */
static char *scalar(char *s)
{
	while (*s == ' ')
		s++;
	if (*s == '\'' || *s == '"') {
		char q = *s, *out = s, *in = s + 1;
		for (;; in++) {
			if (!*in)
				return NULL;
			if (*in == q && q == '\'' && in[1] == '\'') {
				*out++ = *in++;
				continue;
			}
			if (*in == q)
				break;
			if (q == '"' && *in == '\\' && (in[1] == '"' || in[1] == '\\'))
				in++;
			*out++ = *in;
		}
		char *rest = in + 1;
		while (*rest == ' ')
			rest++;
		if (*rest && *rest != '#')
			return NULL;
		*out = '\0';
		return s;
	}
	char *hash = strstr(s, " #");
	if (hash)
		*hash = '\0';
	size_t n = strlen(s);
	while (n && s[n - 1] == ' ')
		s[--n] = '\0';
	return s;
}

static bool bcrypt_hash(const char *h)
{
	return strlen(h) == 60 && h[0] == '$' && h[1] == '2' && strchr("aby", h[2]) &&
	       h[3] == '$';
}

static int user(struct reader *r, struct web_config *c, const char *name, const char *hash)
{
	for (size_t i = 0; i < c->nusers; i++)
		if (!strcmp(c->users[i].name, name))
			return fail(r, "a user named twice", name);
	if (!bcrypt_hash(hash))
		return fail(r, "not a bcrypt hash ($2y$..., as htpasswd -nB makes)", name);
	struct web_user *u = realloc(c->users, (c->nusers + 1) * sizeof(*u));
	if (!u)
		return fail(r, "out of memory", NULL);
	c->users = u;
	u[c->nusers] = (struct web_user){ strdup(name), strdup(hash), NULL };
	if (!u[c->nusers].name || !u[c->nusers].hash) {
		free(u[c->nusers].name);
		free(u[c->nusers].hash);
		return fail(r, "out of memory", NULL);
	}
	c->nusers++;
	return 0;
}

static int tls_key(struct reader *r, const char *key, const char *value)
{
	char **slot = !strcmp(key, "cert_file") ? &r->cert_file :
		      !strcmp(key, "key_file") ? &r->key_file : NULL;
	if (!slot)
		return fail(r, "tls_server_config: not supported by cpuledger (cert_file and "
			    "key_file are)", key);
	if (*slot)
		return fail(r, "given twice", key);
	if (!*value)
		return fail(r, "an empty file name", key);
	*slot = strdup(value);
	return *slot ? 0 : fail(r, "out of memory", NULL);
}

/* One line, in section *sec. */
static int line(struct reader *r, struct web_config *c, char *s, enum section *sec)
{
	size_t indent = strspn(s, " ");
	if (s[indent] == '\t' || strchr(s, '\t'))
		return fail(r, "a tab (YAML indents with spaces)", NULL);
	if (!s[indent] || s[indent] == '#')
		return 0;
	char *key = s + indent, *colon = strstr(key, ": ");
	if (!colon && key[strlen(key) - 1] == ':')
		colon = key + strlen(key) - 1;
	if (!colon || colon == key)
		return fail(r, "not 'key: value'", NULL);
	*colon = '\0';
	char *value = scalar(colon + 1);
	if (!value)
		return fail(r, "a value badly quoted", key);
	if (!indent) {
		if (*value)
			return fail(r, "unknown key (tls_server_config and basic_auth_users are "
				    "known)", key);
		*sec = !strcmp(key, "tls_server_config") ? S_TLS :
		       !strcmp(key, "basic_auth_users") ? S_USERS : S_NONE;
		if (*sec == S_NONE)
			return fail(r, "not supported by cpuledger (tls_server_config and "
				    "basic_auth_users are)", key);
		return 0;
	}
	if (*sec == S_NONE)
		return fail(r, "indented under no section", key);
	if (!*value)
		return fail(r, "no value", key);
	return *sec == S_TLS ? tls_key(r, key, value) : user(r, c, key, value);
}

/* A file named in the config, relative to its directory. */
static int slurp(struct reader *r, const char *name, char **out, size_t *len)
{
	char full[4096];
	const char *slash = strrchr(r->path, '/');
	if (name[0] == '/' || !slash)
		snprintf(full, sizeof(full), "%s", name);
	else
		snprintf(full, sizeof(full), "%.*s/%s", (int)(slash - r->path), r->path, name);
	FILE *f = fopen(full, "re");
	if (!f) {
		snprintf(r->msg, r->size, "%s: cannot read '%s': %s", r->path, full, strerror(errno));
		return -1;
	}
	char *buf = malloc(MAX_FILE + 1);
	size_t n = buf ? fread(buf, 1, MAX_FILE + 1, f) : 0;
	bool bad = ferror(f) || n > MAX_FILE || !n;
	fclose(f);
	if (!buf || bad) {
		free(buf);
		snprintf(r->msg, r->size, "%s: '%s' is empty, unreadable or over 1 MiB", r->path,
			 full);
		return -1;
	}
	buf[n] = '\0';	/* GnuTLS takes PEM as a string */
	*out = buf;
	*len = n;
	return 0;
}

static int finish(struct reader *r, struct web_config *c)
{
	if (!r->cert_file != !r->key_file) {
		snprintf(r->msg, r->size, "%s: tls_server_config needs both cert_file and key_file",
			 r->path);
		return -1;
	}
	if (r->cert_file && (slurp(r, r->cert_file, &c->cert, &c->cert_len) ||
			     slurp(r, r->key_file, &c->key, &c->key_len)))
		return -1;
	return 0;
}

int web_config__read(const char *path, struct web_config *c, char *msg, size_t size)
{
	memset(c, 0, sizeof(*c));
	struct reader r = { .path = path, .msg = msg, .size = size };
	FILE *f = fopen(path, "re");
	if (!f) {
		snprintf(msg, size, "%s: cannot read: %s", path, strerror(errno));
		return -1;
	}
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	int err = 0;
	enum section sec = S_NONE;
	while (!err && (n = getline(&buf, &cap, f)) > 0) {
		r.line++;
		if ((size_t)n != strlen(buf))
			err = fail(&r, "a NUL byte", NULL);
		buf[strcspn(buf, "\r\n")] = '\0';
		if (!err)
			err = line(&r, c, buf, &sec);
	}
	free(buf);
	fclose(f);
	if (!err)
		err = finish(&r, c);
	free(r.cert_file);
	free(r.key_file);
	if (err)
		web_config__release(c);
	return err;
}

void web_config__release(struct web_config *c)
{
	for (size_t i = 0; i < c->nusers; i++) {
		free(c->users[i].name);
		free(c->users[i].hash);
		if (c->users[i].verified)
			explicit_bzero(c->users[i].verified, strlen(c->users[i].verified));
		free(c->users[i].verified);
	}
	free(c->users);
	if (c->key)
		explicit_bzero(c->key, c->key_len);
	free(c->key);
	free(c->cert);
	memset(c, 0, sizeof(*c));
}

/* Equal strings, in a time that does not tell where they differ. */
static bool same(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	unsigned char d = na != nb;
	for (size_t i = 0; i < na; i++)
		d |= (unsigned char)(a[i] ^ b[i % (nb ? nb : 1)]);
	return !d;
}

int web_config__check(struct web_config *c, const char *user, const char *password)
{
	struct web_user *u = NULL;
	for (size_t i = 0; i < c->nusers; i++)
		if (same(c->users[i].name, user))
			u = &c->users[i];
	if (!u)
		return 0;
	if (u->verified && same(u->verified, password))
		return 1;
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	const char *h = cd ? crypt_r(password, u->hash, cd) : NULL;
	bool ok = h && same(h, u->hash);
	free(cd);
	if (ok) {
		free(u->verified);
		u->verified = strdup(password);
	}
	return ok;
}
