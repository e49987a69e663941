# The repository stays small and the runner stays usable:
# - no tracked file over 1 MB outside tests/fixtures/ (recordings of load
#   tests once sat at the root: 127 MB in every clone);
# - tests/run.sh runs tests by name (-k) and fails a test that hangs past
#   its time limit (-t), naming it and showing its last output.
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	big=$(git ls-files -z | xargs -0 stat -c '%s %n' 2>/dev/null |
		awk '$1 > 1048576 && $2 !~ /^tests\/fixtures\// { print }')
	[ -z "$big" ] || fail "tracked files over 1 MB outside tests/fixtures/: $big"
	echo "tracked files: none over 1 MB outside tests/fixtures/"
else
	echo "not a git checkout: the size check needs one"
fi

# A fake build directory: one test that passes, one that hangs.
mkdir -p "$TMP/b/tests"
printf '#!/bin/sh\necho fine\n' >"$TMP/b/tests/test_fine"
printf '#!/bin/sh\necho about to hang\nsleep 300\n' >"$TMP/b/tests/test_hang"
chmod +x "$TMP/b/tests/test_fine" "$TMP/b/tests/test_hang"
start=$(date +%s)
run tests/run.sh -k 'test_*' -t 2 "$TMP/b"
took=$(( $(date +%s) - start ))
[ "$(status)" = 1 ] || fail "runner: exit $(status), not 1: $(cat "$TMP/out")"
grep -q "^FAIL $TMP/b: test_hang (timed out after 2 s" "$TMP/out" || fail "no timeout failure: $(cat "$TMP/out")"
grep -q "about to hang" "$TMP/out" || fail "the hung test's output is not shown: $(cat "$TMP/out")"
grep -q "^PASS $TMP/b: test_fine" "$TMP/out" || fail "test_fine did not pass: $(cat "$TMP/out")"
[ "$(tail -1 "$TMP/out")" = "1 passed, 1 failed, 0 skipped" ] || fail "summary: $(tail -1 "$TMP/out")"
[ "$took" -lt 60 ] || fail "the hung test held the runner ${took} s"
run tests/run.sh -k test_fine "$TMP/b"
[ "$(tail -1 "$TMP/out")" = "1 passed, 0 failed, 0 skipped" ] || fail "-k test_fine: $(cat "$TMP/out")"
echo "runner: -k selects by name, a hung test fails in ${took} s with its output"
