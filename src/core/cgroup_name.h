/*
 * cgroup_name: a cgroup's name as people know it, from its path
 * (docs/cgroups.md): a container as its runtime's CLI shows it (the
 * first 12 characters of its id, after the runtime's name), a Kubernetes
 * pod by its uid, a systemd unit or slice as systemctl shows it; any
 * other path as it is. Reports show the name and keep the path (JSON,
 * CSV, the ledger, metrics), which is what identifies the group.
 */
#ifndef CPULEDGER_CORE_CGROUP_NAME_H
#define CPULEDGER_CORE_CGROUP_NAME_H

#include <stddef.h>

/* The name of the cgroup at path into buf (size > 0); returns buf. */
const char *cgroup_name(const char *path, char *buf, size_t size);

#endif
