#!/usr/bin/env bash
# The test runner: every unit test binary and shell test, once per build
# directory given (an optimized build, then the ASan+UBSan one), then each
# fuzz target briefly. A shell test passes with exit 0, is skipped with
# exit 77 (saying why on its last line), and fails otherwise; a test that
# runs past its time limit fails with its name and its last output.
# The last line is "N passed, N failed, N skipped".
#
# usage: tests/run.sh [-k PATTERN]... [-t SECONDS] BUILD_DIR... [FUZZ_DIR]
#   -k PATTERN   only tests whose name (e.g. live_steal, test_ledger,
#                fuzz_fold) matches the shell glob PATTERN; repeatable
#   -t SECONDS   time limit per test (default $TEST_TIMEOUT or 900)
#   FUZZ_DIR     a build/fuzz path: its targets run FUZZ_SECONDS each
set -uo pipefail
cd "$(dirname "$0")/.."
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
FUZZ_SECONDS=${FUZZ_SECONDS:-15}
limit=${TEST_TIMEOUT:-900}
patterns=()
while getopts "k:t:" opt; do
	case $opt in
	k) patterns+=("$OPTARG") ;;
	t) limit=$OPTARG ;;
	*) echo "usage: tests/run.sh [-k PATTERN]... [-t SECONDS] BUILD_DIR... [FUZZ_DIR]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

passed=0 failed=0 skipped=0 failures=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT

wanted() {	# name
	[ ${#patterns[@]} -eq 0 ] && return 0
	local p
	for p in "${patterns[@]}"; do
		# shellcheck disable=SC2053
		[[ $1 == $p ]] && return 0
	done
	return 1
}

report() {	# name status
	case $2 in
	0) passed=$((passed + 1)); echo "PASS $1 ($((SECONDS - began)) s)" ;;
	77) skipped=$((skipped + 1)); echo "SKIP $1: $(tail -1 "$log")" ;;
	124|137) failed=$((failed + 1)); failures+=("$1 (timed out)")
		echo "FAIL $1 (timed out after ${limit} s; its last output:)"
		tail -30 "$log" | sed 's/^/    /' ;;
	*) failed=$((failed + 1)); failures+=("$1"); echo "FAIL $1 (exit $2)"; tail -30 "$log" | sed 's/^/    /' ;;
	esac
}

# Runs a test under the time limit, in its own process group so that what
# it started goes with it when the limit is reached.
limited() {
	began=$SECONDS
	timeout --kill-after=20 "$limit" "$@" >"$log" 2>&1
}

for dir in "$@"; do
	case $dir in */fuzz) continue ;; esac
	echo "== $dir"
	for t in "$dir"/tests/test_*; do
		[ -x "$t" ] || continue
		wanted "$(basename "$t")" || continue
		limited "$t"
		status=$?	# before any expansion below resets $?
		report "$dir: $(basename "$t")" $status
	done
	for t in tests/shell/*.sh; do
		wanted "$(basename "$t" .sh)" || continue
		CPULEDGER="$PWD/$dir/cpuledger" BUILD="$dir" limited bash "$t"
		status=$?	# before any expansion below resets $?
		report "$dir: $(basename "$t" .sh)" $status
	done
done

for dir in "$@"; do
	case $dir in */fuzz) ;; *) continue ;; esac
	echo "== fuzz, ${FUZZ_SECONDS}s each"
	for t in "$dir"/fuzz_*; do
		[ -x "$t" ] || continue
		wanted "$(basename "$t")" || continue
		limited tests/fuzz/run.sh "$t" "$FUZZ_SECONDS"
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
