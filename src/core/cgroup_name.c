/* cgroup_name: see cgroup_name.h. The shapes are those the runtimes
 * make: systemd's cgroup driver puts a container in a scope named
 * RUNTIME-ID.scope (docker-, cri-containerd-, crio-, libpod-, and their
 * -conmon- monitors), cgroupfs drivers in a directory named by the id
 * under /docker or /kubepods; Kubernetes puts a pod in
 * kubepods[-QOS]-pod<UID>.slice (the uid's dashes escaped as '_') or
 * pod<UID>. */
#include "cgroup_name.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "banned.h"

/* Whether s[0..n) is a container id: 32 or more hex digits. */
static bool is_id(const char *s, size_t n)
{
	if (n < 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

struct runtime {
	const char *prefix, *name;
};

/* Longer prefixes first: "crio-conmon-" before "crio-". */
static const struct runtime runtimes[] = {
	{ "cri-containerd-", "containerd" }, { "crio-conmon-", "cri-o conmon" },
	{ "crio-", "cri-o" }, { "libpod-conmon-", "podman conmon" }, { "libpod-", "podman" },
	{ "docker-", "docker" },
};

/* A container's name from one path component (c, n bytes), or false. */
static bool container(const char *c, size_t n, const char *parent, size_t pn, char *out,
		      size_t size)
{
	size_t scope = n > 6 && !memcmp(c + n - 6, ".scope", 6) ? n - 6 : n;
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(*runtimes); i++) {
		size_t pl = strlen(runtimes[i].prefix);
		if (scope > pl && !memcmp(c, runtimes[i].prefix, pl) && is_id(c + pl, scope - pl)) {
			snprintf(out, size, "%s:%.12s", runtimes[i].name, c + pl);
			return true;
		}
	}
	if (is_id(c, n)) {	/* cgroupfs drivers: /docker/ID, /kubepods/.../ID */
		bool docker = pn == 6 && !memcmp(parent, "docker", 6);
		snprintf(out, size, "%s:%.12s", docker ? "docker" : "container", c);
		return true;
	}
	return false;
}

/* A pod's uid from one path component, into uid (dashes restored). */
static bool pod(const char *c, size_t n, char *uid, size_t size)
{
	const char *p = NULL;
	size_t len = 0;
	if (n > 6 && !memcmp(c + n - 6, ".slice", 6) && !memcmp(c, "kubepods", 8)) {
		const char *at = strstr(c, "-pod");
		if (at && at < c + n - 6) {
			p = at + 4;
			len = (size_t)(c + n - 6 - p);
		}
	} else if (n > 3 && !memcmp(c, "pod", 3)) {
		p = c + 3;
		len = n - 3;
	}
	if (!p || len < 8 || len >= size)
		return false;
	for (size_t i = 0; i < len; i++)
		uid[i] = p[i] == '_' ? '-' : p[i];
	uid[len] = '\0';
	return true;
}

static bool is_unit(const char *c, size_t n)
{
	static const char *const kinds[] = { ".service", ".scope", ".slice", ".socket",
					     ".mount", ".swap" };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++) {
		size_t k = strlen(kinds[i]);
		if (n > k && !memcmp(c + n - k, kinds[i], k))
			return true;
	}
	return false;
}

const char *cgroup_name(const char *path, char *buf, size_t size)
{
	snprintf(buf, size, "%s", path);
	const char *last = strrchr(path, '/');
	if (!last || !last[1])
		return buf;	/* the root, or not a path */
	const char *c = last + 1, *parent = last;
	size_t n = strlen(c);
	while (parent > path && parent[-1] != '/')
		parent--;
	size_t pn = (size_t)(last - parent);
	char uid[64], name[96];
	if (container(c, n, parent, pn, name, sizeof(name))) {
		if (pod(parent, pn, uid, sizeof(uid)))	/* a pod's container */
			snprintf(buf, size, "pod %.8s/%s", uid, name);
		else
			snprintf(buf, size, "%s", name);
	} else if (pod(c, n, uid, sizeof(uid))) {
		snprintf(buf, size, "pod %s", uid);
	} else if (is_unit(c, n)) {
		snprintf(buf, size, "%s", c);
	}
	return buf;
}
