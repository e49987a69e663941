/* cli/util: messages, option values, the environment's checks and
 * terminal progress, shared by the subcommands (output files are
 * src/output/'s). */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
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
			return EXIT_USAGE;
		}
		char **v = realloc(l->v, (l->n + 1) * sizeof(*v));
		if (v)
			l->v = v;
		if (!v || !(l->v[l->n] = strndup(p, len))) {
			cli_error("out of memory");
			return EXIT_RUNTIME;
		}
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

/* On failure the ids are freed: the caller has nothing to release.
 * status: what the caller returns. */
static int ids_fail(struct cli_ids *ids, int status)
{
	free(ids->v);
	ids->v = NULL;
	ids->n = 0;
	return status;
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
			return ids_fail(ids, EXIT_USAGE);
		}
		uint32_t *n = realloc(ids->v, (ids->n + 1) * sizeof(*n));
		if (!n) {
			cli_error("out of memory");
			return ids_fail(ids, EXIT_RUNTIME);
		}
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
		outfile_set_mode((unsigned)mode);
		return 0;
	}
	cli_error("CPULEDGER_FILE_MODE: '%s' is not an octal mode from 0 to 0777",
		  getenv("CPULEDGER_FILE_MODE"));
	return EXIT_USAGE;
}

int outfile__not_input(const char *out, const char *in, const char *role)
{
	return outfile__is_input(out, in, role) ? EXIT_USAGE : 0;
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
