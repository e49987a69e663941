/* procfs: see procfs.h. */
#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/banned.h"

char *procfs_read(const char *root, const char *rel, size_t *len)
{
	char path[4096];
	if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (n + 1 >= cap) {
			char *b = realloc(buf, cap * 2);
			if (!b) {
				free(buf);
				buf = NULL;
				errno = ENOMEM;
				break;
			}
			buf = b;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			buf = NULL;
			errno = e;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = n;
	}
	return buf;
}

static void read_comm(const char *root, const char *pid, const char *tid,
		      char *comm, size_t size)
{
	char rel[600];
	snprintf(rel, sizeof(rel), "proc/%s/task/%s/comm", pid, tid);
	char *c = procfs_read(root, rel, NULL);
	comm[0] = '\0';
	if (c) {
		c[strcspn(c, "\n")] = '\0';
		snprintf(comm, size, "%s", c);
		free(c);
	}
}

int procfs_tasks(const char *root,
		 int (*fn)(void *ctx, pid_t pid, pid_t tid, const char *comm),
		 void *ctx)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/proc", root);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	struct dirent *p;
	int err = 0;
	while (!err && (p = readdir(d))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/proc/%s/task", root, p->d_name);
		DIR *t = opendir(path);
		if (!t)
			continue;	/* gone: normal */
		struct dirent *q;
		while (!err && (q = readdir(t))) {
			if (q->d_name[0] < '1' || q->d_name[0] > '9')
				continue;
			char comm[64];
			read_comm(root, p->d_name, q->d_name, comm, sizeof(comm));
			err = fn(ctx, atoi(p->d_name), atoi(q->d_name), comm);
		}
		closedir(t);
	}
	closedir(d);
	return err;
}

bool procfs_cmdline(const char *root, pid_t pid, char *buf, size_t size)
{
	char rel[64];
	size_t n = 0;
	snprintf(rel, sizeof(rel), "proc/%d/cmdline", (int)pid);
	char *c = procfs_read(root, rel, &n);
	buf[0] = '\0';
	if (!c)
		return false;
	while (n && c[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (c[i] == '\0' || c[i] == '\n')
			c[i] = ' ';
	snprintf(buf, size, "%.*s", (int)n, c);
	free(c);
	return n >= size;
}

int procfs_schedstat(const char *root, pid_t pid, pid_t tid, unsigned long long *run,
		     unsigned long long *delay)
{
	char rel[96];
	snprintf(rel, sizeof(rel), "proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	char *text = procfs_read(root, rel, NULL);
	if (!text)
		return errno ? -errno : -ENOENT;
	bool ok = sscanf(text, "%llu %llu", run, delay) == 2;
	free(text);
	return ok ? 0 : -ENODATA;
}

int procfs_run_delay(const char *root, pid_t pid, pid_t tid, unsigned long long *ns)
{
	unsigned long long run;
	return procfs_schedstat(root, pid, tid, &run, ns);
}

int procfs_wait_hook(void *ctx, uint32_t pid, uint32_t tid, uint64_t *ns)
{
	unsigned long long v = 0;
	(void)ctx;
	int err = procfs_run_delay("/", (pid_t)pid, (pid_t)tid, &v);
	*ns = v;
	return err;
}
