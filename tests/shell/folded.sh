# Folded stacks from perf script text, byte for byte as the reference
# collapser folds them: every recording in ../shared/testdata/flamegraph
# and every option (pid, tid, kernel, jit, all, addrs) against the
# reference's own output kept beside it (issue 6's conformance test).
. "$(dirname "$0")/../lib.sh"
data=$ROOT/../shared/testdata/flamegraph
[ -d "$data/results" ] || skip "no test data at $data"
n=0
for f in "$data"/*.txt; do
	b=$(basename "$f" .txt)
	[ "$b" = README ] && continue
	for o in pid tid kernel jit all addrs; do
		"$CL" report -i "perf-script:$f" -f folded --folded "$o" >"$TMP/out" ||
			fail "$b --folded $o: exit $?"
		cmp -s "$TMP/out" "$data/results/$b-collapsed-$o.txt" ||
			{ diff "$TMP/out" "$data/results/$b-collapsed-$o.txt" | head -5; fail "$b --folded $o differs"; }
		n=$((n + 1))
	done
done
[ "$n" = 42 ] || fail "checked $n outputs, want 42"
# stdin, and no options: the plain collapse of the first file
"$CL" report -i perf-script:- -f folded <"$data/perf-funcab-pid-01.txt" >"$TMP/plain"
grep -q "^func_ab;__libc_start_main;main;func_b 116$" "$TMP/plain" || fail "plain fold from stdin"
run "$CL" report -i "perf-script:$data/perf-dd-stacks-01.txt" -f folded --folded pids
[ "$(status)" = 2 ] && grep -q -- "--folded: 'pids'" "$TMP/err" || fail "bad --folded"
run "$CL" report -i "perf-script:$data/perf-dd-stacks-01.txt" -f json
[ "$(status)" = 2 ] || fail "perf-script input with json should be refused for now"
