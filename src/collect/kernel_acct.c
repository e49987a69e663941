/* kernel_acct: see kernel_acct.h. */
#include "kernel_acct.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <zlib.h>

#include "procfs.h"
#include "../core/banned.h"

/* Whether struct name has a member called member: 1, 0, -1 no struct. */
static int has_member(const struct btf *btf, const char *name, const char *member)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);
	if (id <= 0)
		return -1;
	const struct btf_type *t = btf__type_by_id(btf, (unsigned)id);
	const struct btf_member *m = btf_members(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return 1;
	return 0;
}

/* The running kernel's BTF: all -1 when it has none. */
static void read_btf(struct kernel_config *c)
{
	*c = (struct kernel_config){ -1, -1, -1 };
	/* a kernel without BTF is no error here: libbpf is told to be quiet */
	libbpf_print_fn_t was = libbpf_set_print(NULL);
	struct btf *btf = btf__load_vmlinux_btf();
	libbpf_set_print(was);
	if (!btf || libbpf_get_error(btf))
		return;
	c->paravirt = has_member(btf, "rq", "prev_steal_time_rq");
	c->irq = has_member(btf, "rq", "prev_irq_time");
	c->kvm_steal_clock = btf__find_by_name_kind(btf, "steal_time", BTF_KIND_VAR) > 0;
	btf__free(btf);
}

/* "CONFIG_NAME=y" in a configuration's text: 1, else 0. */
static int config_set(const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = text; (p = strstr(p, name)); p += n)
		if ((p == text || p[-1] == '\n') && !strncmp(p + n, "=y\n", 3))
			return 1;
	return 0;
}

/* /proc/config.gz, inflated (NULL: none). */
static char *read_config_gz(void)
{
	gzFile f = gzopen("/proc/config.gz", "rb");
	if (!f)
		return NULL;
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap + 1);
	int got;
	while (buf && (got = gzread(f, buf + len, (unsigned)(cap - len))) > 0) {
		len += (size_t)got;
		if (len == cap) {
			char *more = realloc(buf, 2 * cap + 1);
			if (!more) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = more;
			cap *= 2;
		}
	}
	gzclose(f);
	if (buf)
		buf[len] = 0;
	return buf;
}

/* The kernel's configuration: all -1 when neither file is there. */
static void read_config(struct kernel_config *c)
{
	*c = (struct kernel_config){ -1, -1, -1 };
	struct utsname u;
	char path[300];
	size_t len;
	char *text = NULL;
	if (!uname(&u)) {
		snprintf(path, sizeof(path), "boot/config-%s", u.release);
		text = procfs_read("/", path, &len);
	}
	if (!text)
		text = read_config_gz();
	if (!text)
		return;
	c->paravirt = config_set(text, "CONFIG_PARAVIRT_TIME_ACCOUNTING");
	c->irq = config_set(text, "CONFIG_IRQ_TIME_ACCOUNTING");
	free(text);
}

/* Whether a word stands alone on the command line. */
static bool cmdline_has(const char *cmdline, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = cmdline; p && (p = strstr(p, word)); p += n)
		if ((p == cmdline || p[-1] == ' ') && (!p[n] || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

void kernel_acct__decide(struct kernel_acct *k, const struct kernel_config *btf,
			 const struct kernel_config *config, const char *cmdline,
			 long long steal_since_boot)
{
	const struct kernel_config *c = config->paravirt >= 0 ? config : btf;
	const char *from = config->paravirt >= 0 ? "config" : btf->paravirt >= 0 ? "btf" : NULL;
	*k = (struct kernel_acct){ .accounting = ACCT_JUDGE };
	snprintf(k->source, sizeof(k->source), "%s", from ? from : "none: judged from the data");
	if (from) {
		bool paravirt = c->paravirt == 1, irq = c->irq == 1;
		char extra[64] = "";
		/* the boot options turn the accounting off where it is built */
		if (paravirt && cmdline && cmdline_has(cmdline, "no-steal-acc")) {
			paravirt = false;
			snprintf(extra, sizeof(extra), ", cmdline no-steal-acc");
		}
		if (irq && cmdline && cmdline_has(cmdline, "tsc=noirqtime")) {
			irq = false;
			snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
				 ", cmdline tsc=noirqtime");
		}
		k->accounting = !paravirt ? ACCT_INCLUDED : irq ? ACCT_EXCLUDED_IRQ : ACCT_EXCLUDED;
		snprintf(k->source + strlen(k->source), sizeof(k->source) - strlen(k->source),
			 "%s", extra);
	}
	/* the KVM steal clock in BTF says the guest can read one, not that
	 * the host gives it (a Firecracker/PVM guest has it and counts none) */
	k->steal_clock = steal_since_boot > 0 ? 1 : steal_since_boot == 0 ? -1 : 0;
	/* no steal clock, nothing to exclude: the task clock holds the time
	 * the host took, whatever the configuration (the kernel enables the
	 * exclusion only when the hypervisor offers the clock) */
	if (k->steal_clock < 0 && k->accounting != ACCT_INCLUDED && k->accounting != ACCT_JUDGE) {
		k->accounting = ACCT_INCLUDED;
		snprintf(k->source + strlen(k->source), sizeof(k->source) - strlen(k->source),
			 ", but no steal clock");
	}
}

/* The eighth number of /proc/stat's "cpu " line: steal since boot, or -1. */
static long long steal_since_boot(void)
{
	size_t len;
	char *text = procfs_read("/", "proc/stat", &len);
	unsigned long long v[8];
	long long steal = -1;
	if (text && sscanf(text, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8)
		steal = (long long)v[7];
	free(text);
	return steal;
}

void kernel_acct__read(struct kernel_acct *k)
{
	/* the configuration first: parsing BTF takes some 40 MB for a moment */
	struct kernel_config btf = { -1, -1, -1 }, config;
	read_config(&config);
	if (config.paravirt < 0)
		read_btf(&btf);
	size_t len;
	char *cmdline = procfs_read("/", "proc/cmdline", &len);
	kernel_acct__decide(k, &btf, &config, cmdline, steal_since_boot());
	free(cmdline);
}
