# Sourced by every shell test: where the binary is, a scratch directory
# removed on exit, and fail/skip helpers. Exit 0 passes, 77 skips.
set -euo pipefail
: "${CPULEDGER:?set CPULEDGER to the binary under test}"
CL=$CPULEDGER
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FIX=$ROOT/tests/fixtures
TMP=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "skipped: $*"; exit 77; }

# After a BPF collector that did not start ($TMP/err): skipped where the
# kernel has no BTF or the user may not load BPF programs; where both are
# there, programs the kernel refuses (its verifier) are this project's
# bug, not the machine's: failed.
skip_without_bpf() {
	grep -q "cannot start the BPF collector" "$TMP/err" || return 0
	if [ -r /sys/kernel/btf/vmlinux ] && [ "$(id -u)" = 0 ] && ! grep -q "not allowed" "$TMP/err"; then
		fail "the BPF programs do not load on a kernel with BTF, as root: $(cat "$TMP/err")"
	fi
	skip "$(cat "$TMP/err")"
}

# Runs a command, saving stdout, stderr and status in $TMP/out, err, status.
run() {
	set +e
	"$@" >"$TMP/out" 2>"$TMP/err"
	echo $? >"$TMP/status"
	set -e
}
status() { cat "$TMP/status"; }

# Skips (saying why) unless the kernel lets cpuledger record system-wide.
need_perf() {
	run "$CL" record -a --duration 0.1 -o "$TMP/probe.rec"
	if [ "$(status)" != 0 ]; then
		grep -q "perf_event_open" "$TMP/err" && skip "no perf_event access: $(cat "$TMP/err")"
		fail "probe recording: $(cat "$TMP/err")"
	fi
}
