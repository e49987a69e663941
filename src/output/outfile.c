/* outfile: see outfile.h. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/banned.h"

/* The temporary file of the output being written, removed if a signal
 * ends the process first, so an interrupted command leaves nothing. */
static char *volatile pending_tmp;

static void on_fatal_signal(int sig)
{
	char *t = pending_tmp;
	if (t)
		unlink(t);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Handlers only where none is set: the recorder's own stop cleanly. */
static void remove_on_signal(char *tmp)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	pending_tmp = tmp;
	for (size_t i = 0; tmp && i < sizeof(sigs) / sizeof(*sigs); i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			signal(sigs[i], on_fatal_signal);
	}
}

static mode_t new_file_mode = 0600;

/* A report is megabytes written at once, and stdio's buffer is the file's
 * block size (4 KB): a write call each 4 KB, and a call is dear in a VM
 * (3 us on ours: 2 600 calls were 3 % of a report). 64 KiB makes them 16
 * times fewer. glibc takes a size only with a buffer given. */
#define OUT_BUF (64 * 1024)

/* A report is written by one thread, a call to stdio for each number and
 * name; each call took and let go the stream's lock (the process has
 * other threads by then, so glibc no longer skips it): a tenth of the
 * end of a JSON report of 35 000 threads. */
static void single_writer(FILE *f)
{
	__fsetlocking(f, FSETLOCKING_BYCALLER);
}

/* Standard output's, once and before it has been written (a command's
 * report is its first output there); a terminal's stays as it is, read
 * as it comes. */
static void widen_stdout(void)
{
	static char buf[OUT_BUF];
	static bool done;
	if (done)
		return;
	done = true;
	if (!isatty(STDOUT_FILENO) && !__fpending(stdout))
		setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	single_writer(stdout);
}

static void widen(struct outfile *o)
{
	single_writer(o->f);
	o->buf = malloc(OUT_BUF);
	if (o->buf)	/* else stdio's own */
		setvbuf(o->f, o->buf, _IOFBF, OUT_BUF);
}

/* Closes o's stream (then its buffer); fclose's result. */
static int close_stream(struct outfile *o)
{
	int r = fclose(o->f);
	free(o->buf);
	o->buf = NULL;
	o->f = NULL;
	return r;
}

void outfile_set_mode(unsigned mode)
{
	new_file_mode = (mode_t)mode;
}

static void (*say)(const char *fmt, ...);

void outfile_set_say(void (*fn)(const char *fmt, ...))
{
	say = fn;
}

/* A message for the user, by the function the command gave (none: quiet). */
#define SAY(...) do { if (say) say(__VA_ARGS__); } while (0)

/* What is at path now: 0 nothing or a regular file of ours, 1 a device
 * or FIFO (written in place), or -errno having said why it is refused. */
static int check_target(const char *path)
{
	struct stat st;
	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		SAY("cannot write '%s': %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISLNK(st.st_mode)) {
		SAY("cannot write '%s': it is a symbolic link (refused: write to what it "
			  "points to)", path);
		return -ELOOP;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return 1;
	if (S_ISDIR(st.st_mode)) {
		SAY("cannot write '%s': it is a directory", path);
		return -EISDIR;
	}
	if (st.st_uid != geteuid()) {
		SAY("cannot write '%s': it belongs to user %u, not to %u (refused: remove "
			  "it, or write elsewhere)", path, (unsigned)st.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	return 0;
}

static int open_in_place(struct outfile *o, const char *path)
{
	o->fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (o->fd < 0) {
		int err = -errno;
		SAY("cannot write '%s': %s", path, strerror(errno));
		return err;
	}
	o->in_place = true;
	o->f = fdopen(o->fd, "w");
	if (!o->f) {
		int err = -errno;
		close(o->fd);
		o->fd = -1;
		return err;
	}
	if (!isatty(o->fd))	/* a terminal's is read as it comes */
		widen(o);
	return 0;
}

/* A new file at name, ours and 0600 (or as asked), never through a link. */
static int create_new(const char *name, bool excl)
{
	int fd = open(name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (excl ? O_EXCL : 0),
		      0600);
	if (fd >= 0 && fchmod(fd, new_file_mode))
		errno = 0;	/* the mode asked for could not be set: 0600 stays */
	return fd;
}

int outfile__open(struct outfile *o, const char *path)
{
	*o = (struct outfile){ .path = path, .fd = -1 };
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		widen_stdout();
		return 0;
	}
	int kind = check_target(path);
	if (kind < 0)
		return kind;
	if (kind == 1)
		return open_in_place(o, path);
	size_t n = strlen(path) + 32;
	o->tmp = malloc(n);
	if (!o->tmp)
		return -ENOMEM;
	for (int tries = 0; tries < 100; tries++) {
		snprintf(o->tmp, n, "%s.tmp.%d.%d", path, (int)getpid(), rand() % 1000000);
		if ((o->fd = create_new(o->tmp, true)) >= 0 || errno != EEXIST)
			break;
	}
	if (o->fd < 0) {
		int err = -errno;
		SAY("cannot create '%s': %s", path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return err;
	}
	remove_on_signal(o->tmp);
	o->f = fdopen(o->fd, "w");
	if (!o->f) {
		int err = -errno;
		close(o->fd);
		o->fd = -1;	/* abort would close it again */
		outfile__abort(o);
		return err;
	}
	widen(o);
	return 0;
}

int outfile__open_recording(struct outfile *o, const char *path)
{
	*o = (struct outfile){ .path = path, .fd = -1 };
	int kind = check_target(path);
	if (kind < 0)
		return kind;
	if (kind == 1)
		return open_in_place(o, path);
	size_t n = strlen(path) + 16;
	if (!(o->tmp = malloc(n)))
		return -ENOMEM;
	snprintf(o->tmp, n, "%s.part", path);
	if (check_target(o->tmp) < 0 || (o->fd = create_new(o->tmp, false)) < 0) {
		int err = errno ? -errno : -EPERM;
		if (o->fd < 0 && errno)
			SAY("cannot create '%s': %s", o->tmp, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return err;
	}
	if (flock(o->fd, LOCK_EX | LOCK_NB)) {
		SAY("another cpuledger records into '%s' now (its '%s' is locked)", path,
			  o->tmp);
		close(o->fd);
		free(o->tmp);
		o->tmp = NULL;
		return -EBUSY;
	}
	struct stat st;
	if (!fstat(o->fd, &st) && st.st_size) {	/* a killed recorder's: kept */
		char killed[4096];
		snprintf(killed, sizeof(killed), "%s.killed", path);
		if (check_target(killed) == 0 && !rename(o->tmp, killed)) {
			SAY("'%s', left by a recorder that was killed, is kept as '%s' (report "
			    "--salvage reads it)", o->tmp, killed);
			close(o->fd);	/* its lock goes with it */
			o->fd = create_new(o->tmp, true);
			if (o->fd < 0 || flock(o->fd, LOCK_EX | LOCK_NB)) {
				SAY("cannot create '%s': %s", o->tmp, strerror(errno));
				return -EBUSY;
			}
		} else if (ftruncate(o->fd, 0)) {
			SAY("cannot write '%s': %s", o->tmp, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

int outfile__commit(struct outfile *o)
{
	int err = 0;
	if (o->f == stdout) {
		if (fflush(stdout) || ferror(stdout)) {
			err = -(errno ? errno : EIO);
			SAY("cannot write standard output: %s", strerror(-err));
		}
		return err;
	}
	if (o->f && (fflush(o->f) || ferror(o->f)))
		err = -(errno ? errno : EIO);
	if (!err && !o->in_place && o->fd >= 0 && fsync(o->fd) && errno != EINVAL)
		err = -errno;
	if (o->f ? close_stream(o) && !err : o->fd >= 0 && close(o->fd) && !err)
		err = -(errno ? errno : EIO);
	o->f = NULL;
	o->fd = -1;
	if (!err && o->tmp && rename(o->tmp, o->path))
		err = -errno;
	remove_on_signal(NULL);
	if (err) {
		SAY("cannot write '%s': %s", o->path, strerror(-err));
		if (o->tmp)
			unlink(o->tmp);
	}
	free(o->tmp);
	o->tmp = NULL;
	return err;
}

void outfile__abort(struct outfile *o)
{
	if (o->f && o->f != stdout)
		close_stream(o);
	else if (!o->f && o->fd >= 0)
		close(o->fd);
	o->f = NULL;
	o->fd = -1;
	remove_on_signal(NULL);
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
}

void outfile__keep_partial(struct outfile *o)
{
	if (!o->tmp) {
		outfile__abort(o);
		return;
	}
	if (o->f)
		close_stream(o);
	else if (o->fd >= 0)
		close(o->fd);
	o->f = NULL;
	o->fd = -1;
	remove_on_signal(NULL);
	SAY("what was recorded up to there is kept in '%s' (report --salvage reads it); "
	    "'%s' is as it was", o->tmp, o->path);
	free(o->tmp);
	o->tmp = NULL;
}

bool outfile__is_input(const char *out, const char *in, const char *role)
{
	struct stat a, b;
	if (!out || !strcmp(out, "-") || !in || !strcmp(in, "-"))
		return false;
	bool same = !stat(out, &a) && !stat(in, &b) ? a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino && S_ISREG(a.st_mode) : !strcmp(out, in);
	if (!same)
		return false;
	SAY("'%s' is %s too: refused (it would be overwritten)", out, role);
	return true;
}
