#!/usr/bin/env bash
# usage: tests/fuzz/run.sh TARGET SECONDS [RUNS]   (RUNS: stop after that
# many executions, SECONDS still the limit)
# Runs one libFuzzer target for SECONDS on its seed corpus (committed under
# tests/fuzz/corpus/NAME), keeping what it finds in a scratch directory, and
# prints the executions it made. Exit status: 0, or 1 when the fuzzer
# found a crash, a leak, a timeout or undefined behaviour.
set -euo pipefail
target=$1 seconds=$2 runs=${3:-}
name=$(basename "$target")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$here/corpus/$name/." "$work/" 2>/dev/null || true
log="$work.log"
status=0
# -close_fd_mask=2: the targets' own messages (refusals) stay out of the log
start=$(date +%s)
"$target" ${runs:+-runs="$runs"} -max_total_time="$seconds" -close_fd_mask=2 -timeout=10 -rss_limit_mb=2048 -error_exitcode=1 \
	-print_final_stats=1 -artifact_prefix="$work/" "$work" >"$log" 2>&1 || status=$?
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
echo "$name: $execs executions in $(( $(date +%s) - start ))s, exit $status"
if [ "$status" != 0 ]; then
	tail -40 "$log"
	mkdir -p fuzz-crashes && cp "$work"/crash-* fuzz-crashes/ 2>/dev/null || true
fi
rm -f "$log"
# Any failure is 1: libFuzzer's own codes (77 for a crash by default) must
# not read as the test runner's "skipped".
[ "$status" = 0 ]
