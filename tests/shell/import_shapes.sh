# What import writes, report reads (issue 22): every perf script text of
# tests/fixtures and shared/testdata/flamegraph, each on its own, with
# CRLF line ends, and every pair of them joined, is either imported and
# then reported (exit 0 both), or refused by import with FILE:LINE and
# exit 2, writing nothing. A text joined to itself (times go back) and
# a text with and without times joined are refused at the line where
# the second begins; texts joined in time order with no line going back
# are one recording.
. "$(dirname "$0")/../lib.sh"
DATA=$ROOT/../shared/testdata/flamegraph
[ -d "$DATA" ] || skip "no $DATA"
command -v python3 >/dev/null || skip "python3 is not installed"
files=$(ls "$DATA"/perf-*.txt "$FIX"/perf-script-*.txt)

# import, then report: both succeed, or import refuses with FILE:LINE
# and writes nothing. Prints "ok" or "refused".
check() {
	local text=$1 label=$2
	rm -f "$TMP/x.rec"
	run "$CL" import perf-script "$text" -o "$TMP/x.rec"
	case $(status) in
	0)
		run "$CL" report -i "$TMP/x.rec" --format json
		[ "$(status)" = 0 ] || fail "$label: imported, then report refused: $(cat "$TMP/err")"
		python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/out" ||
			fail "$label: report's JSON does not parse"
		echo ok ;;
	2)
		grep -q "^$text:[0-9]*: " "$TMP/err" || fail "$label: refused without FILE:LINE: $(cat "$TMP/err")"
		[ ! -e "$TMP/x.rec" ] || fail "$label: refused, but wrote $TMP/x.rec"
		echo refused ;;
	*) fail "$label: import exit $(status): $(cat "$TMP/err")" ;;
	esac
}

nok=0 nrefused=0
for f in $files; do
	name=$(basename "$f")
	[ "$(check "$f" "$name")" = ok ] || fail "$name: refused on its own: $(cat "$TMP/err")"
	sed 's/$/\r/' "$f" >"$TMP/crlf.txt"
	[ "$(check "$TMP/crlf.txt" "$name with CRLF")" = ok ] ||
		fail "$name with CRLF: refused: $(cat "$TMP/err")"
	for g in $files; do
		cat "$f" "$g" >"$TMP/joined.txt"
		case $(check "$TMP/joined.txt" "$name + $(basename "$g")") in
		ok) nok=$((nok + 1)) ;;
		*) nrefused=$((nrefused + 1)) ;;
		esac
	done
done
[ "$nrefused" -gt 0 ] || fail "no joined pair was refused (a text joined to itself goes back)"
echo "joined pairs: $nok imported and reported, $nrefused refused at a line"

# a text joined to itself: refused where the second copy begins
S=$FIX/perf-script-sched.txt
lines=$(wc -l <"$S")
cat "$S" "$S" >"$TMP/twice.txt"
[ "$(check "$TMP/twice.txt" twice)" = refused ] || fail "a text joined to itself was imported"
at=$(sed -n 's/^[^:]*:\([0-9]*\): .*/\1/p' "$TMP/err")
first=$(awk '!/^#/ && NF { print NR; exit }' "$S")
[ "$at" -gt "$lines" ] && [ "$at" -le $((lines + first + 40)) ] ||
	fail "twice: refused at line $at, not where the second copy begins (line $((lines + 1)))"
grep -q "before the last on CPU" "$TMP/err" || fail "twice: $(cat "$TMP/err")"
# report -i perf-script: reads the same way
run "$CL" report -i "perf-script:$TMP/twice.txt"
[ "$(status)" = 2 ] || fail "report -i perf-script: of a doubled text: exit $(status)"

# a text with times, then the same without them (perf script -F -time)
O=$FIX/perf-script-oneline.txt
sed -E '/^#/! s/ +[0-9]+\.[0-9]+: / /' "$O" >"$TMP/notime.txt"
[ "$(check "$TMP/notime.txt" "oneline without times")" = ok ] ||
	fail "a text without times refused: $(cat "$TMP/err")"
cat "$O" "$TMP/notime.txt" >"$TMP/mixed.txt"
[ "$(check "$TMP/mixed.txt" mixed)" = refused ] || fail "times and no times joined were imported"
grep -q "without a time among lines with one" "$TMP/err" || fail "mixed: $(cat "$TMP/err")"
cat "$TMP/notime.txt" "$O" >"$TMP/mixed.txt"
[ "$(check "$TMP/mixed.txt" mixed2)" = refused ] || fail "no times and times joined were imported"

# joined in time order, no line going back: one recording, both texts'
# samples
python3 - "$S" >"$TMP/later.txt" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    if not line.startswith('#'):
        line = re.sub(r' (\d+)\.(\d+): ', lambda m: ' %d.%s: ' % (int(m.group(1)) + 1000, m.group(2)), line, count=1)
    sys.stdout.write(line)
PY
cat "$S" "$TMP/later.txt" >"$TMP/ordered.txt"
[ "$(check "$TMP/ordered.txt" ordered)" = ok ] || fail "texts in time order refused: $(cat "$TMP/err")"
one=$("$CL" report -i "perf-script:$S" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["clock_samples"])')
two=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["clock_samples"])' "$TMP/out")
[ "$two" = $((one * 2)) ] || fail "ordered: $two samples, expected $((one * 2))"
echo "doubled and mixed texts refused at their line; texts in time order read as one ($two samples)"
