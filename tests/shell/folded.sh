# Folded stacks from perf script text, byte for byte as the reference
# collapser folds them: every recording in ../shared/testdata/flamegraph
# and every option (pid, tid, kernel, jit, all, addrs) against the
# reference's own output kept beside it (issue 6's conformance test).
. "$(dirname "$0")/../lib.sh"
# a recording's folded stacks (the engine's, not the collapser's) sorted
# as text, each line once, where names sort subtly: one the beginning of
# another followed by bytes below and above ';' ("f", "f.cold", "f;g"),
# names alike once made safe ("a b", "a_b"); as many samples as were read
python3 "$ROOT/tests/tricky_names.py" >"$TMP/tricky.txt"
"$CL" import perf-script "$TMP/tricky.txt" -o "$TMP/tricky.rec" 2>/dev/null || fail "import of tricky names"
"$CL" report -i "$TMP/tricky.rec" --format folded -o "$TMP/tricky.folded" || fail "folded of tricky names"
sed 's/ [0-9]*$//' "$TMP/tricky.folded" | LC_ALL=C sort -c -u ||
	fail "folded lines of tricky names not sorted as text, or not each once"
[ "$(awk '{ n += $NF } END { print n }' "$TMP/tricky.folded")" = \
	"$(grep -c 'cpu-clock:$' "$TMP/tricky.txt")" ] ||
	fail "folded samples of tricky names differ from those read"
[ "$(grep '^\[fixed\]' "$TMP/tricky.folded" | tr '\n' ,)" = \
	"[fixed];f 1,[fixed];f.cold 1,[fixed];f.cold;g 1,[fixed];f;g 1," ] ||
	fail "tricky names: $(grep '^\[fixed\]' "$TMP/tricky.folded" | tr '\n' ,)"
data=${TESTDATA:-$ROOT/../shared/testdata}/flamegraph
[ -d "$data/results" ] || skip "no test data at $data (the reference collapser's own output is needed: tests/README.md says where; script_frames.sh checks each frame shape on fixtures here)"
n=0
for f in "$data"/*.txt; do
	b=$(basename "$f" .txt)
	[ "$b" = README ] && continue
	for o in pid tid kernel jit all addrs; do
		"$CL" report -i "perf-script:$f" --format folded --folded "$o" >"$TMP/out" ||
			fail "$b --folded $o: exit $?"
		cmp -s "$TMP/out" "$data/results/$b-collapsed-$o.txt" ||
			{ diff "$TMP/out" "$data/results/$b-collapsed-$o.txt" | head -5; fail "$b --folded $o differs"; }
		n=$((n + 1))
	done
done
[ "$n" = 42 ] || fail "checked $n outputs, want 42"
# stdin, and no options: the plain collapse of the first file
"$CL" report -i perf-script:- --format folded <"$data/perf-funcab-pid-01.txt" >"$TMP/plain"
grep -q "^func_ab;__libc_start_main;main;func_b 116$" "$TMP/plain" || fail "plain fold from stdin"
run "$CL" report -i "perf-script:$data/perf-dd-stacks-01.txt" --format folded --folded pids
[ "$(status)" = 2 ] && grep -q -- "--folded: 'pids'" "$TMP/err" || fail "bad --folded"
run "$CL" report -i "perf-script:$data/perf-dd-stacks-01.txt" --format json
[ "$(status)" = 0 ] || fail "perf-script input with json: status $(status) (imported since issue 6)"
# perf's own messages and source lines among samples are skipped; a line
# that is none of header, frame, comment or known noise is refused with its
# line number, exit 2, and no output file
printf 'Warning:\nProcessed 10 events and lost 1 chunks!\nCheck IO/CPU overload!\n\n' >"$TMP/noise.txt"
printf 'dd 7 [000] 1.0: 3 cpu-clock:\n\tff f+0x1 (/bin/dd)\n\t  dd.c:12\n\tfe g (/bin/dd)\n\n' >>"$TMP/noise.txt"
"$CL" report -i "perf-script:$TMP/noise.txt" --format folded >"$TMP/noise.out" 2>"$TMP/noise.err" ||
	fail "noise refused: exit $?"
[ "$(cat "$TMP/noise.out")" = "dd;g;f 3" ] || fail "noise fold: $(cat "$TMP/noise.out")"
# what perf said it lost is reported, as is a sample no blank line ended
grep -q "noise.txt: perf says it lost 1 chunk(s)" "$TMP/noise.err" || fail "lost chunks: $(cat "$TMP/noise.err")"
"$CL" report -i "perf-script:$data/perf-dd-stacks-01.txt" --format folded >/dev/null 2>"$TMP/dd.err"
grep -q "dd-stacks-01.txt: 1 sample(s) not ended by a blank line" "$TMP/dd.err" ||
	fail "unended sample not reported: $(cat "$TMP/dd.err")"
# perf's id of a task it no longer knew, -1: a switch away from one that
# had exited (right-aligned, as perf script wrote it on this project's
# machine) is another event's header, skipped; a sample's tid -1 is its tid
printf 'cc1 11979/11979 [000] 1.0: 3 cpu-clock:\n\tff f+0x1 (/usr/bin/cc1)\n\tfe g (/usr/bin/cc1)\n\n' >"$TMP/gone.txt"
printf '             :-1 10447/-1    [001] 1.1:       sched:sched_switch: prev_comm=memfd:x prev_pid=11981 prev_prio=120 prev_state=X ==> next_comm=cc1 next_pid=11991 next_prio=120\n' >>"$TMP/gone.txt"
printf 'cc1 10447/-1 [001] 1.2: 2 cpu-clock:\n\tff f (/usr/bin/cc1)\n\n' >>"$TMP/gone.txt"
"$CL" report -i "perf-script:$TMP/gone.txt" --format folded --folded tid >"$TMP/gone.out" 2>"$TMP/gone.err" ||
	fail "a task perf no longer knew: exit $?: $(cat "$TMP/gone.err")"
[ "$(cat "$TMP/gone.out")" = "$(printf 'cc1-10447/-1;f 2\ncc1-11979/11979;g;f 3')" ] ||
	fail "a task perf no longer knew: $(cat "$TMP/gone.out")"
cp "$TMP/noise.txt" "$TMP/bad.txt"
printf 'dd 7 [000] 1.1: 3 cpu-clock:\n\tff f (/bin/dd)\nthis line means nothing\n\n' >>"$TMP/bad.txt"
run "$CL" report -i "perf-script:$TMP/bad.txt" --format folded -o "$TMP/bad.out"
[ "$(status)" = 2 ] || fail "bad line: exit $(status), want 2"
grep -q "^$TMP/bad.txt:12: not a perf script line" "$TMP/err" || fail "bad line message: $(cat "$TMP/err")"
[ ! -e "$TMP/bad.out" ] || fail "bad input left an output file"
# the same bad line as the last, without a newline: still its line number
printf 'dd 7 [000] 1.1: 3 cpu-clock:\n\tff f (/bin/dd)\njunk' >"$TMP/bad2.txt"
run "$CL" report -i "perf-script:$TMP/bad2.txt" --format folded
[ "$(status)" = 2 ] && grep -q "bad2.txt:3: not a perf script line" "$TMP/err" || fail "bad last line: $(cat "$TMP/err")"
