#!/usr/bin/env bash
# The test runner: every unit test binary and shell test, once per build
# directory given (an optimized build, then the ASan+UBSan one), then each
# fuzz target briefly. A shell test passes with exit 0, is skipped with
# exit 77 (saying why on its last line), and fails otherwise.
# The last line is "N passed, N failed, N skipped".
#
# usage: tests/run.sh BUILD_DIR... [FUZZ_DIR]   (FUZZ_DIR: a build/fuzz path)
set -uo pipefail
cd "$(dirname "$0")/.."
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
FUZZ_SECONDS=${FUZZ_SECONDS:-15}

passed=0 failed=0 skipped=0 failures=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT

report() {	# name status
	case $2 in
	0) passed=$((passed + 1)); echo "PASS $1" ;;
	77) skipped=$((skipped + 1)); echo "SKIP $1: $(tail -1 "$log")" ;;
	*) failed=$((failed + 1)); failures+=("$1"); echo "FAIL $1 (exit $2)"; tail -30 "$log" | sed 's/^/    /' ;;
	esac
}

for dir in "$@"; do
	case $dir in */fuzz) continue ;; esac
	echo "== $dir"
	for t in "$dir"/tests/test_*; do
		[ -x "$t" ] || continue
		"$t" >"$log" 2>&1
		status=$?	# before any expansion below resets $?
		report "$dir: $(basename "$t")" $status
	done
	for t in tests/shell/*.sh; do
		CPULEDGER="$PWD/$dir/cpuledger" BUILD="$dir" bash "$t" >"$log" 2>&1
		status=$?	# before any expansion below resets $?
		report "$dir: $(basename "$t" .sh)" $status
	done
done

for dir in "$@"; do
	case $dir in */fuzz) ;; *) continue ;; esac
	echo "== fuzz, ${FUZZ_SECONDS}s each"
	for t in "$dir"/fuzz_*; do
		[ -x "$t" ] || continue
		tests/fuzz/run.sh "$t" "$FUZZ_SECONDS" >"$log" 2>&1
		status=$?
		head -1 "$log"
		report "fuzz: $(basename "$t")" $status
	done
done

if [ ${#failures[@]} -gt 0 ]; then
	echo "failed:"; printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
