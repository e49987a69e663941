/* cgroup: see cgroup.h. */
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"
#include "../core/banned.h"

/* Whether the comma-separated list opts holds word. */
static bool has_word(const char *opts, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = opts; p && *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && !strncmp(p, word, n))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

static void set(char *dst, size_t size, const char *root, const char *mnt)
{
	snprintf(dst, size, "%s%s", strcmp(root, "/") ? root : "", mnt);
}

/* mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] - FSTYPE SRC SUPEROPTS" */
int cgroup_fs__find(struct cgroup_fs *fs, const char *root)
{
	memset(fs, 0, sizeof(*fs));
	char *text = procfs_read(root, "proc/self/mountinfo", NULL);
	if (!text)
		return -errno;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char mnt[512], type[32], super[512];
		const char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 ||
		    sscanf(dash + 3, "%31s %*s %511s", type, super) != 2)
			continue;
		if (!strcmp(type, "cgroup2") && !fs->v2[0])
			set(fs->v2, sizeof(fs->v2), root, mnt);
		else if (!strcmp(type, "cgroup") && has_word(super, "cpu") && !fs->cpu[0])
			set(fs->cpu, sizeof(fs->cpu), root, mnt);
		if (!strcmp(type, "cgroup") && has_word(super, "cpuacct") && !fs->cpuacct[0])
			set(fs->cpuacct, sizeof(fs->cpuacct), root, mnt);
	}
	free(text);
	return fs->v2[0] || fs->cpu[0] || fs->cpuacct[0] ? 0 : -ENOENT;
}

/* Lines "ID:CONTROLLERS:PATH"; v2's is "0::PATH". */
int cgroup_parse_proc(const char *text, char *path, size_t size)
{
	const char *v1 = NULL;
	size_t v1len = 0;
	for (const char *line = text; line && *line;) {
		size_t len = strcspn(line, "\n");
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
		if (c2) {
			const char *p = c2 + 1;
			size_t plen = len - (size_t)(p - line);
			char ctl[128];
			snprintf(ctl, sizeof(ctl), "%.*s", (int)(c2 - c1 - 1), c1 + 1);
			if (!strncmp(line, "0::", 3) && c1 == line + 1) {
				snprintf(path, size, "%.*s", (int)plen, p);
				return 0;
			}
			if (!v1 && has_word(ctl, "cpu")) {
				v1 = p;
				v1len = plen;
			}
		}
		line += len + (line[len] == '\n');
	}
	if (!v1)
		return -ENOENT;
	snprintf(path, size, "%.*s", (int)v1len, v1);
	return 0;
}

int cgroup_of_pid(const char *root, uint32_t pid, char *path, size_t size)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "proc/%u/cgroup", pid);
	char *text = procfs_read(root, rel, NULL);
	if (!text)
		return -errno;
	int err = cgroup_parse_proc(text, path, size);
	free(text);
	return err;
}

/* The value of "key N" in a flat-keyed file's text. */
static bool flat_key(const char *text, const char *key, uint64_t *v)
{
	size_t n = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, n) && p[n] == ' ') {
			char *end;
			errno = 0;
			unsigned long long x = strtoull(p + n + 1, &end, 10);
			if (errno || end == p + n + 1)
				return false;
			*v = x;
			return true;
		}
	return false;
}

static char *read_at(const char *mnt, const char *path, const char *file)
{
	if (!mnt[0])
		return NULL;
	char rel[4096];
	if (snprintf(rel, sizeof(rel), "%s/%s", strcmp(path, "/") ? path + (path[0] == '/') : ".",
		     file) >= (int)sizeof(rel))
		return NULL;
	return procfs_read(mnt, rel, NULL);
}

int cgroup_counters__read(const struct cgroup_fs *fs, const char *path,
			  struct cg_counters *c)
{
	memset(c, 0, sizeof(*c));
	uint64_t us, n;
	char *v2 = read_at(fs->v2, path, "cpu.stat");
	if (v2 && flat_key(v2, "usage_usec", &us)) {
		c->usage_ns = us * 1000;
		c->usage_known = true;
	}
	if (v2 && flat_key(v2, "throttled_usec", &us) && flat_key(v2, "nr_throttled", &n)) {
		c->throttled_ns = us * 1000;
		c->nr_throttled = n;
		c->throttled_known = true;
	}
	free(v2);
	char *acct = c->usage_known ? NULL : read_at(fs->cpuacct, path, "cpuacct.usage");
	if (acct) {
		char *end;
		unsigned long long ns = strtoull(acct, &end, 10);
		c->usage_known = end != acct;
		c->usage_ns = ns;
		free(acct);
	}
	char *v1 = c->throttled_known ? NULL : read_at(fs->cpu, path, "cpu.stat");
	if (v1 && flat_key(v1, "throttled_time", &us) && flat_key(v1, "nr_throttled", &n)) {
		c->throttled_ns = us;
		c->nr_throttled = n;
		c->throttled_known = true;
	}
	free(v1);
	return c->usage_known || c->throttled_known ? 0 : -ENOENT;
}

/* Depth first from dir (its path below the mount in rel). */
static int walk(int dirfd, char *rel, size_t len, size_t cap, int depth,
		int (*fn)(void *ctx, uint64_t id, const char *path), void *ctx)
{
	struct stat st;
	if (fstat(dirfd, &st))
		return 0;	/* gone meanwhile */
	int err = fn(ctx, (uint64_t)st.st_ino, len ? rel : "/");
	DIR *d = err || depth > 64 ? NULL : fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return err;
	}
	struct dirent *de;
	while (!err && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		size_t n = strlen(de->d_name);
		if (len + 1 + n + 1 > cap)
			continue;	/* deeper than any name we keep */
		int fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		rel[len] = '/';
		memcpy(rel + len + 1, de->d_name, n + 1);
		err = walk(fd, rel, len + 1 + n, cap, depth + 1, fn, ctx);
		rel[len] = '\0';
	}
	closedir(d);
	return err;
}

int cgroup_walk(const struct cgroup_fs *fs,
		int (*fn)(void *ctx, uint64_t id, const char *path), void *ctx)
{
	if (!fs->v2[0])
		return 0;
	int fd = open(fs->v2, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char rel[4096] = "";
	return walk(fd, rel, 0, sizeof(rel), 0, fn, ctx);
}
