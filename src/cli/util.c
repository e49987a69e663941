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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../collect/procfs.h"
#include "../core/accounts.h"
#include "../report/report.h"
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

bool cli_parse_u64(const char *opt, const char *arg, uint64_t min,
		   uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (!*arg || *end || errno || arg[0] == '-' || v < min || v > max) {
		cli_error("%s: '%s' is not an integer from %llu to %llu", opt,
			  arg, (unsigned long long)min, (unsigned long long)max);
		return false;
	}
	*out = v;
	return true;
}

bool cli_parse_double(const char *opt, const char *arg, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (!*arg || *end || errno || !isfinite(v)) {
		cli_error("%s: '%s' is not a number", opt, arg);
		return false;
	}
	*out = v;
	return true;
}

bool cli_parse_time(const char *s, int64_t *out)
{
	if (s[0] == '@') {
		char *end;
		errno = 0;
		long long v = strtoll(s + 1, &end, 10);
		/* nanoseconds in 64 bits reach the year 2262 */
		if (!s[1] || *end || errno || v > INT64_MAX / 1000000000LL ||
		    v < INT64_MIN / 1000000000LL)
			return false;
		*out = v * 1000000000LL;
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
	if (t > INT64_MAX / 1000000000LL || t < INT64_MIN / 1000000000LL)
		return false;
	*out = (int64_t)t * 1000000000LL;
	return true;
}

bool cli_parse_method(const char *arg, enum steal_method *out)
{
	if (!steal_method__parse(arg, out))
		return true;
	cli_error("--method: unknown method '%s' (preceding, bracketed or ratio)", arg);
	return false;
}

bool cli_parse_by(const char *arg, enum group_by *out)
{
	if (!group_by__parse(arg, out))
		return true;
	cli_error("--by: unknown key '%s' (process, thread, function, dso or account)", arg);
	return false;
}

bool cli_parse_format(const char *arg, const struct report_writer **out)
{
	*out = report_writer__find(arg);
	if (*out)
		return true;
	cli_error("--format: unknown format '%s' (%s)", arg, report_writer__names());
	return false;
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

int outfile__open(struct outfile *o, const char *path)
{
	o->path = path;
	o->tmp = NULL;
	o->f = NULL;
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	size_t n = strlen(path) + 32;
	o->tmp = malloc(n);
	if (!o->tmp)
		return -ENOMEM;
	snprintf(o->tmp, n, "%s.tmp.XXXXXX", path);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		int err = -errno;
		cli_error("cannot create '%s': %s", path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return err;
	}
	remove_on_signal(o->tmp);
	/* mkstemp makes 0600; an output file gets the usual mode. */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int err = -errno;
		close(fd);
		outfile__abort(o);
		return err;
	}
	return 0;
}

int outfile__commit(struct outfile *o)
{
	int err = 0;
	if (o->f == stdout) {
		if (fflush(stdout) || ferror(stdout)) {
			err = -(errno ? errno : EIO);
			cli_error("cannot write standard output: %s",
				  strerror(-err));
		}
		return err;
	}
	if (fflush(o->f) || ferror(o->f))
		err = -(errno ? errno : EIO);
	if (fclose(o->f) && !err)
		err = -(errno ? errno : EIO);
	o->f = NULL;
	if (!err && rename(o->tmp, o->path))
		err = -errno;
	remove_on_signal(NULL);
	if (err) {
		cli_error("cannot write '%s': %s", o->path, strerror(-err));
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
	o->f = NULL;
	remove_on_signal(NULL);
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void progress__init(struct progress *p, const char *what, int fd)
{
	struct stat st;
	p->on = isatty(STDERR_FILENO);
	p->total = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ?
		   (uint64_t)st.st_size : 0;
	p->last_ns = now_ns();
	p->what = what;
}

void progress__update(void *ctx, uint64_t bytes)
{
	struct progress *p = ctx;
	if (!p->on)
		return;
	uint64_t t = now_ns();
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
