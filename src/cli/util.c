/* cli/util: messages, option values, whole-or-nothing output files and
 * terminal progress, shared by the subcommands. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../collect/procfs.h"
#include "../format/recording.h"
#include "../core/accounts.h"
#include "../ledger/ledger.h"
#include "../report/report.h"
#include "../collect/clock.h"
#include "../core/units.h"
#include "../core/banned.h"

const char *cli_progname = "cpuledger";

void cli_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", cli_progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_parse_u64(const char *opt, const char *arg, uint64_t min,
		  uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (!*arg || *end || errno || arg[0] == '-' || v < min || v > max) {
		cli_error("%s: '%s' is not an integer from %llu to %llu", opt,
			  arg, (unsigned long long)min, (unsigned long long)max);
		return EXIT_USAGE;
	}
	*out = v;
	return 0;
}

int cli_parse_double(const char *opt, const char *arg, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (!*arg || *end || errno || !isfinite(v)) {
		cli_error("%s: '%s' is not a number", opt, arg);
		return EXIT_USAGE;
	}
	*out = v;
	return 0;
}

int cli_parse_seconds(const char *opt, const char *arg, double min, double max,
		      double *out)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (max > CLI_MAX_SECONDS)
		max = CLI_MAX_SECONDS;
	/* isfinite and the range also refuse NaN, "inf" and 1e400 */
	if (!*arg || *end || errno || !isfinite(v) || !(v >= min && v <= max)) {
		cli_error("%s: '%s' is not a number of seconds from %.15g to %.15g", opt, arg,
			  min, max);
		return EXIT_USAGE;
	}
	*out = v;
	return 0;
}

/* now, today, yesterday (midnight UTC), -N{s,min,h,d,w} (so long ago). */
static bool parse_relative(const char *s, int64_t *out)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t now = (int64_t)ts.tv_sec, day = now - now % 86400;
	if (!strcmp(s, "now") || !strcmp(s, "today") || !strcmp(s, "yesterday")) {
		*out = (s[0] == 'n' ? now : s[0] == 't' ? day : day - 86400) * NSEC_PER_SEC;
		if (s[0] == 'n')
			*out += ts.tv_nsec;
		return true;
	}
	static const struct { const char *unit; int64_t s; } units[] = {
		{ "s", 1 }, { "min", 60 }, { "h", 3600 }, { "d", 86400 }, { "w", 7 * 86400 },
	};
	char *end = NULL;
	errno = 0;
	long long n = s[0] == '-' && s[1] >= '0' && s[1] <= '9' ? strtoll(s + 1, &end, 10) : -1;
	for (size_t i = 0; n >= 0 && !errno && i < sizeof(units) / sizeof(*units); i++)
		if (!strcmp(end, units[i].unit) && n <= (now + 4000000000LL) / units[i].s) {
			*out = (now - n * units[i].s) * NSEC_PER_SEC + ts.tv_nsec;
			return true;
		}
	return false;
}

bool cli_parse_time(const char *s, int64_t *out)
{
	if (parse_relative(s, out))
		return true;
	if (s[0] == '@') {
		char *end;
		errno = 0;
		long long v = strtoll(s + 1, &end, 10);
		/* nanoseconds in 64 bits reach the year 2262 */
		if (!s[1] || *end || errno || v > INT64_MAX / NSEC_PER_SEC ||
		    v < INT64_MIN / NSEC_PER_SEC)
			return false;
		*out = v * NSEC_PER_SEC;
		return true;
	}
	struct tm tm = { 0 };
	int n = 0, len = (int)strlen(s);
	if (sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n) != 3)
		return false;
	if (n < len) {
		int m = 0;
		if (sscanf(s + n, "T%2d:%2d%n", &tm.tm_hour, &tm.tm_min, &m) != 2)
			return false;
		n += m;
		if (n < len && (sscanf(s + n, ":%2d%n", &tm.tm_sec, &m) != 1 || (n += m) != len))
			return false;
	}
	if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	if (t > INT64_MAX / NSEC_PER_SEC || t < INT64_MIN / NSEC_PER_SEC)
		return false;
	*out = (int64_t)t * NSEC_PER_SEC;
	return true;
}

int cli_parse_method(const char *arg, enum steal_method *out)
{
	if (!steal_method__parse(arg, out))
		return 0;
	cli_error("--method: unknown method '%s' (preceding, bracketed or ratio)", arg);
	return EXIT_USAGE;
}

int cli_parse_format(const char *arg, const struct report_writer **out)
{
	*out = report_writer__find(arg);
	if (*out)
		return 0;
	cli_error("--format: unknown format '%s' (%s)", arg, report_writer__names());
	return EXIT_USAGE;
}

int cli_parse_list(const char *opt, const char *arg, struct cli_list *l)
{
	for (const char *p = arg;;) {
		size_t len = strcspn(p, ",");
		if (!len) {
			cli_error("%s: '%s' has an empty name", opt, arg);
			return -1;
		}
		char **v = realloc(l->v, (l->n + 1) * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		if (!(l->v[l->n] = strndup(p, len)))
			return -1;
		l->n++;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

void cli_list__release(struct cli_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* On failure the ids are freed: the caller has nothing to release. */
static int ids_fail(struct cli_ids *ids)
{
	free(ids->v);
	ids->v = NULL;
	ids->n = 0;
	return -1;
}

int cli_parse_ids(const char *opt, const char *arg, struct cli_ids *ids)
{
	for (const char *p = arg; *p;) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno || v <= 0 || v > 4194304 || (*end && *end != ',')) {
			cli_error("%s: '%s' is not a list of %s ids", opt, arg,
				  strstr(opt, "tid") ? "thread" : "process");
			return ids_fail(ids);
		}
		uint32_t *n = realloc(ids->v, (ids->n + 1) * sizeof(*n));
		if (!n)
			return ids_fail(ids);
		ids->v = n;
		ids->v[ids->n++] = (uint32_t)v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

int cli_check_control(const char *const *control, size_t n,
		      const struct account_rules *rules)
{
	static const char *const defaults[] = { "kernel", "program", "library" };
	for (size_t i = 0; i < n; i++) {
		bool known = false;
		for (size_t d = 0; d < 3 && !known; d++)
			known = !strcmp(control[i], defaults[d]);
		for (size_t r = 0; rules && r < rules->n && !known; r++)
			known = !strcmp(control[i], rules->v[r].account);
		if (!known) {
			cli_error("--control: no account '%s': the rules define %s (docs/accounts.md)",
				  control[i], rules && rules->n ? "theirs, kernel, program and library" :
				  "kernel, program and library");
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* What a file that is not a recording is, from its first bytes: what
 * cpuledger reads it with, or NULL. */
static const char *what_file(const char *path)
{
	char buf[512] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	if (n >= 8 && !memcmp(buf, "PERFILE2", 8))
		return "a perf.data file: 'perf script -i FILE > perf.txt', then "
		       "'cpuledger import perf-script perf.txt' or 'cpuledger report -i perf-script:perf.txt'";
	if (!strncmp(buf, "vm,", 3) || strstr(buf, "vcpu,"))
		return "sampling data (CSV): 'cpuledger analyze FILE' reads it (docs/sampling-data.md)";
	if (memchr(buf, '\n', (size_t)n) && (strstr(buf, "cpu-clock") || strstr(buf, "cycles") ||
					      strstr(buf, "sched:") || buf[0] == '#'))
		return "perf script text: 'cpuledger report -i perf-script:FILE' or "
		       "'cpuledger import perf-script FILE' reads it (docs/import.md)";
	return NULL;
}

void cli_not_a_recording(const char *path, const struct rec_error *e, bool salvage)
{
	const char *what = e->offset == 0 ? what_file(path) : NULL;
	if (what) {
		fprintf(stderr, "%s: not a cpuledger recording: it is %s\n", path, what);
		return;
	}
	fprintf(stderr, "%s: offset %llu: %s%s\n", path, (unsigned long long)e->offset, e->msg,
		salvage || e->offset == 0 ? "" :
		" (--salvage reports what comes before it)");
}

int cli_load_accounts(const char *path, struct account_rules *rules,
		      char **text)
{
	size_t len, line;
	char msg[200];
	char *t = procfs_read("/", path[0] == '/' ? path + 1 : path, &len);
	if (!t && path[0] != '/') {
		/* relative to the working directory, not to "/" */
		char cwd[4096];
		if (getcwd(cwd, sizeof(cwd))) {
			char full[8192];
			snprintf(full, sizeof(full), "%s/%s", cwd + 1, path);
			t = procfs_read("/", full, &len);
		}
	}
	if (!t) {
		cli_error("--accounts: cannot read '%s': %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	int err = account_rules__parse(rules, t, len, &line, msg, sizeof(msg));
	if (err) {
		if (err == -EINVAL)
			fprintf(stderr, "%s:%zu: %s\n", path, line, msg);
		else
			cli_error("out of memory");
		account_rules__release(rules);
		free(t);
		return err == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	}
	if (text)
		*text = t;
	else
		free(t);
	return 0;
}

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

/* $CPULEDGER_FILE_MODE as a mode, or -1 when it is not one (unset: 0600). */
static long env_file_mode(void)
{
	const char *m = getenv("CPULEDGER_FILE_MODE");
	if (!m)
		return 0600;
	char *end;
	errno = 0;
	unsigned long v = strtoul(m, &end, 8);
	return !*m || *end || errno || v > 0777 ? -1 : (long)v;
}

int cli_check_environment(void)
{
	long mode = env_file_mode();
	if (mode >= 0) {
		ledger__set_file_mode((unsigned)mode);
		return 0;
	}
	cli_error("CPULEDGER_FILE_MODE: '%s' is not an octal mode from 0 to 0777",
		  getenv("CPULEDGER_FILE_MODE"));
	return EXIT_USAGE;
}

/* The mode new files get: 0600, or $CPULEDGER_FILE_MODE (octal; checked
 * at the start by cli_check_environment). */
static mode_t file_mode(void)
{
	long v = env_file_mode();
	return v < 0 ? 0600 : (mode_t)v;
}

/* What is at path now: 0 nothing or a regular file of ours, 1 a device
 * or FIFO (written in place), or -errno having said why it is refused. */
static int check_target(const char *path)
{
	struct stat st;
	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		cli_error("cannot write '%s': %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISLNK(st.st_mode)) {
		cli_error("cannot write '%s': it is a symbolic link (refused: write to what it "
			  "points to)", path);
		return -ELOOP;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return 1;
	if (S_ISDIR(st.st_mode)) {
		cli_error("cannot write '%s': it is a directory", path);
		return -EISDIR;
	}
	if (st.st_uid != geteuid()) {
		cli_error("cannot write '%s': it belongs to user %u, not to %u (refused: remove "
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
		cli_error("cannot write '%s': %s", path, strerror(errno));
		return err;
	}
	o->in_place = true;
	o->f = fdopen(o->fd, "w");
	if (!o->f) {
		int err = -errno;
		close(o->fd);
		return err;
	}
	return 0;
}

/* A new file at name, ours and 0600 (or as asked), never through a link. */
static int create_new(const char *name, bool excl)
{
	int fd = open(name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (excl ? O_EXCL : 0),
		      0600);
	if (fd >= 0 && fchmod(fd, file_mode()))
		errno = 0;	/* the mode asked for could not be set: 0600 stays */
	return fd;
}

int outfile__open(struct outfile *o, const char *path)
{
	*o = (struct outfile){ .path = path, .fd = -1 };
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
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
		cli_error("cannot create '%s': %s", path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return err;
	}
	remove_on_signal(o->tmp);
	o->f = fdopen(o->fd, "w");
	if (!o->f) {
		int err = -errno;
		close(o->fd);
		outfile__abort(o);
		return err;
	}
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
			cli_error("cannot create '%s': %s", o->tmp, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return err;
	}
	if (flock(o->fd, LOCK_EX | LOCK_NB)) {
		cli_error("another cpuledger records into '%s' now (its '%s' is locked)", path,
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
			fprintf(stderr, "%s: '%s', left by a recorder that was killed, is kept as "
				"'%s' (report --salvage reads it)\n", cli_progname, o->tmp, killed);
			close(o->fd);	/* its lock goes with it */
			o->fd = create_new(o->tmp, true);
			if (o->fd < 0 || flock(o->fd, LOCK_EX | LOCK_NB)) {
				cli_error("cannot create '%s': %s", o->tmp, strerror(errno));
				return -EBUSY;
			}
		} else if (ftruncate(o->fd, 0)) {
			cli_error("cannot write '%s': %s", o->tmp, strerror(errno));
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
			cli_error("cannot write standard output: %s", strerror(-err));
		}
		return err;
	}
	if (o->f && (fflush(o->f) || ferror(o->f)))
		err = -(errno ? errno : EIO);
	if (!err && !o->in_place && o->fd >= 0 && fsync(o->fd) && errno != EINVAL)
		err = -errno;
	if (o->f ? fclose(o->f) && !err : o->fd >= 0 && close(o->fd) && !err)
		err = -(errno ? errno : EIO);
	o->f = NULL;
	o->fd = -1;
	if (!err && o->tmp && rename(o->tmp, o->path))
		err = -errno;
	remove_on_signal(NULL);
	if (err) {
		cli_error("cannot write '%s': %s", o->path, strerror(-err));
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
		fclose(o->f);
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
		fclose(o->f);
	else if (o->fd >= 0)
		close(o->fd);
	o->f = NULL;
	o->fd = -1;
	remove_on_signal(NULL);
	fprintf(stderr, "%s: what was recorded up to there is kept in '%s' (report --salvage "
		"reads it); '%s' is as it was\n", cli_progname, o->tmp, o->path);
	free(o->tmp);
	o->tmp = NULL;
}

int outfile__not_input(const char *out, const char *in, const char *role)
{
	struct stat a, b;
	if (!out || !strcmp(out, "-") || !in || !strcmp(in, "-"))
		return 0;
	bool same = !stat(out, &a) && !stat(in, &b) ? a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino && S_ISREG(a.st_mode) : !strcmp(out, in);
	if (!same)
		return 0;
	cli_error("'%s' is %s too: refused (it would be overwritten)", out, role);
	return EXIT_USAGE;
}

void progress__init(struct progress *p, const char *what, int fd)
{
	struct stat st;
	p->on = isatty(STDERR_FILENO);
	p->total = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ?
		   (uint64_t)st.st_size : 0;
	p->last_ns = clock_mono_ns();
	p->what = what;
}

void progress__update(void *ctx, uint64_t bytes)
{
	struct progress *p = ctx;
	if (!p->on)
		return;
	uint64_t t = clock_mono_ns();
	if (t - p->last_ns < 200000000ULL)
		return;
	p->last_ns = t;
	double mib = (double)bytes / (1 << 20);
	if (p->total)
		fprintf(stderr, "\r%s: %.0f of %.0f MiB (%.0f%%)  ", p->what, mib,
			(double)p->total / (1 << 20),
			100.0 * (double)bytes / (double)p->total);
	else
		fprintf(stderr, "\r%s: %.0f MiB  ", p->what, mib);
}

void progress__done(struct progress *p)
{
	if (p->on)
		fputs("\r\033[K", stderr);
}
