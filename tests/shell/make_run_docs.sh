# README's two commands in its order, in one clone (issue 23): `make run`
# records the demo (build/demo/live.rec) that README.md's report shows,
# and then the docs test, which checks README's outputs against it, must
# pass (it failed when make run recorded the workload as
# `build/cpuledger workload ...` and README shows `cpuledger workload ...`).
# The clone is a copy of this tree with its optimized build (mtimes kept,
# so make builds nothing but what names the commit).
. "$(dirname "$0")/../lib.sh"
case ${BUILD:-} in *asan*) skip "runs on the optimized build (make run builds that one)" ;; esac
command -v perf >/dev/null || skip "perf is not installed"
need_perf
B=${BUILD:-build}
C=$TMP/clone
mkdir -p "$C/build"
(cd "$ROOT" && git ls-files -co --exclude-standard -z 2>/dev/null || find . -path ./build -prune -o -type f -print0) |
	(cd "$ROOT" && tar --null -T - -cf -) | tar -xf - -C "$C"
(cd "$ROOT/$B" && tar --exclude=./asan --exclude=./fuzz --exclude=./demo -cf - .) | tar -xf - -C "$C/build"
make -s -C "$C" run >"$TMP/run.out" 2>&1 || fail "make run: $(tail -20 "$TMP/run.out")"
grep -q "cpuledger workload threads" "$TMP/run.out" || fail "make run printed: $(head -20 "$TMP/run.out")"
"$C/build/cpuledger" report -i "$C/build/demo/live.rec" --by thread >"$TMP/report" ||
	fail "the demo's recording does not report"
! grep -q "build/cpuledger workload" "$TMP/report" ||
	fail "make run recorded the workload by its path: $(grep -m1 workload "$TMP/report")"
echo "make run: ok; the docs test in the same clone:"
CPULEDGER=$C/build/cpuledger BUILD=build bash "$C/tests/shell/docs.sh" >"$TMP/docs.out" 2>&1 ||
	fail "the docs test after make run: $(tail -20 "$TMP/docs.out")"
tail -2 "$TMP/docs.out"
echo "make_run_docs: ok"
