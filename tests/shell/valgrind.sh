# valgrind stays clean (no invalid access, no leak) on the optimized build:
# simulate, and analyze in every format and method, on good and bad input.
. "$(dirname "$0")/../lib.sh"
case ${BUILD:-} in *asan*) skip "valgrind does not run ASan builds; the optimized build is checked" ;; esac
command -v valgrind >/dev/null || skip "valgrind is not installed"
# (libbpf's bpf() calls: what valgrind cannot model of them is suppressed,
# tests/valgrind-libbpf.supp says which and why; the live commands load the
# BPF collector where they can)
SUPP=$(cd "$(dirname "$0")/.." && pwd)/valgrind-libbpf.supp
vg() { valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
	--suppressions="$SUPP" "$@"; }
vg "$CL" simulate --vms 2 --vcpus 2 --duration-ms 500 --jitter-ns 1000 -o "$TMP/s.csv" --truth "$TMP/t.json"
for f in text csv json; do
	for m in preceding bracketed ratio; do
		vg "$CL" analyze --format $f --method $m --by function --timestamps "$TMP/s.csv" >/dev/null
	done
done
vg "$CL" analyze - <"$FIX/figs.csv" >/dev/null
printf 'vm,vcpu,time_ns,pid,tid,function,state\nvm0,0,1,,,,nap\n' >"$TMP/bad.csv"
set +e
vg "$CL" analyze -o "$TMP/r" "$TMP/bad.csv" 2>/dev/null
s=$?
set -e
[ "$s" = 2 ] || fail "bad input under valgrind: exit $s"
# The live path too, where the kernel lets us record.
if "$CL" record -a --duration 0.05 -o "$TMP/probe.rec" 2>/dev/null; then
	vg "$CL" record -o "$TMP/live.rec" -- "$CL" workload spin --iterations 20000 2>/dev/null
	vg "$CL" report -i "$TMP/live.rec" --format json >/dev/null
	vg "$CL" report -i "$TMP/live.rec" --by thread,function >/dev/null
	# collections each second, then the bill (a collection once read
	# the previous one's freed processes)
	vg "$CL" record --ledger "$TMP/l.db" --interval 1 -o "$TMP/l.rec" -- \
		"$CL" workload threads --seconds 3 2>/dev/null
	vg "$CL" bill --ledger "$TMP/l.db" --by command >/dev/null
fi
# perf script: imported, folded, and written as every format
S=$FIX/perf-script-sched.txt
vg "$CL" import perf-script "$S" -o "$TMP/s.rec" 2>/dev/null
for f in text csv json openmetrics pprof; do
	vg "$CL" report -i "$TMP/s.rec" --format $f -o "$TMP/out.$f"
done
vg "$CL" report -i "perf-script:$S" --format folded --folded all -o "$TMP/out.folded" 2>/dev/null
# a profile of several runs of samples, each deflated on a thread of its
# own as it is sealed
python3 "$ROOT/tests/many_stacks.py" >"$TMP/many.txt"
"$CL" import perf-script "$TMP/many.txt" -o "$TMP/many.rec" 2>/dev/null
vg "$CL" report -i "$TMP/many.rec" --format pprof -o "$TMP/many.pprof"
{ head -5 "$S"; echo "no perf script"; } >"$TMP/bad.txt"
set +e
vg "$CL" import perf-script "$TMP/bad.txt" -o "$TMP/bad.rec" 2>/dev/null
s=$?
set -e
[ "$s" = 2 ] || fail "bad perf script under valgrind: exit $s"
