#!/usr/bin/env bash
# bench/bpf_read: what one read of the BPF collector costs with ~270 and
# ~2000 live threads, its maps read entry by entry (the path before
# batched lookups, and where the kernel refuses them) and batched, in
# one run (issue 25): median of READS reads each, and the ratio. Root
# (it loads the collector). bench/bpf_read.c says how.
#
# usage: bench/bpf_read.sh [READS [N...]]   (default 200 reads, 270 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
READS=${1:-200}
shift || true
[ $# -gt 0 ] || set -- 270 2000
make -s build/bench/bpf_read
build/bench/bpf_read "$READS" "$@"
