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
