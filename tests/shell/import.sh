# cpuledger import perf-script and report -i perf-script: (issue 6).
# For every file of shared/testdata/flamegraph (where it is beside the
# clone), the perf script fixtures recorded here (one line per sample;
# with sched tracepoints; every frame shape) and perf script text that
# perf makes here (with call chains, and with -F +pid --ns):
# - the samples, and the samples per file (dso) of each sample's own
#   frame, equal what an independent reading of the text here (Python
#   regular expressions) counts;
# - totals conserve samples: run + steal + idle is every sample, idle
#   being the idle task's (pid 0), and the event's count is the same;
# - `import -o` then `report` equals `report -i perf-script:`, and reading
#   standard input equals reading the file.
# And bad input: a line that is no perf script is FILE:LINE, exit 2, and
# no recording is written.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
# the shared recordings where they are beside the clone (TESTDATA to say
# where else), the fixtures, and perf script text made here by perf
DATA=${TESTDATA:-$ROOT/../shared/testdata}/flamegraph
files=$(ls "$FIX"/perf-script-*.txt)
if [ -d "$DATA" ]; then
	files="$(ls "$DATA"/perf-*.txt) $files"
else
	echo "no $DATA (the shared recordings, tests/README.md): the fixtures and perf's text made here"
fi
if command -v perf >/dev/null &&
   perf record -q -a -g -o "$TMP/here.data" -- sleep 0.5 >/dev/null 2>&1 &&
   perf script -i "$TMP/here.data" >"$TMP/perf-here-stacks.txt" 2>/dev/null &&
   perf script -i "$TMP/here.data" -F +pid --ns >"$TMP/perf-here-pid.txt" 2>/dev/null; then
	files="$files $TMP/perf-here-stacks.txt $TMP/perf-here-pid.txt"
else
	echo "perf cannot record here: no text made by it"
fi
for f in $files; do
	name=$(basename "$f")
	run "$CL" report -i "perf-script:$f" --by process,dso --format json
	[ "$(status)" = 0 ] || fail "$name: report: $(cat "$TMP/err")"
	cp "$TMP/out" "$TMP/$name.json"
	python3 - "$f" "$TMP/$name.json" <<'PY' || fail "$name: counts differ"
import json, re, sys
from collections import Counter
head = re.compile(r'^\s*(\S.*?)\s+(\d+)(?:/(\d+))?\s+(?:\[\d+\]\s+)?(?:\d+\.\d+:\s+)?(?:\d+\s+)?(\S+):(?:\s+(.*))?$')
frame = re.compile(r'^\s*\w+\s*(.+) \((.*)\)')	# the reference collapser's
def module(fm):	# a file deleted since it was mapped: "(PATH (deleted))"
    func, mod = fm.group(1), fm.group(2)
    if mod == 'deleted)' and ' (' in func:
        return func.rsplit(' (', 1)[1] + ' (deleted)'
    return mod
event, want, idle, dsos, first = None, 0, 0, Counter(), False
for line in open(sys.argv[1], errors='replace'):
    line = line.rstrip('\n')
    m = head.match(line)
    if m and not line.startswith('#'):
        ev = m.group(4)
        first = False
        if ev.startswith('sched:sched_'):
            continue
        event = event or ev
        if ev != event:
            continue
        want += 1
        # the idle task (tid 0) is in the total, in no row
        first = int(m.group(3) or m.group(2)) != 0
        idle += not first
        rest = m.group(5) or ''
        fm = frame.match(rest) if rest else None
        if fm and first:
            dsos[module(fm)] += 1
            first = False
        elif not rest:
            pass
        continue
    fm = frame.match(line)
    if fm and first:
        dsos[module(fm)] += 1
        first = False
    elif not line.strip():
        first = False
r = json.load(open(sys.argv[2]))
got = Counter()
for row in r["rows"]:
    if row["samples"]:
        got[row["dso"]] += row["samples"]
nodso = want - idle - sum(dsos.values())
if nodso:
    dsos["[unknown]"] += nodso
# every sample read is run, steal or idle (the idle task's), and counted
# under its event
t = r["totals"]
conserved = t["samples"] + t["steal_samples"] + t["idle_samples"] == want and \
	t["idle_samples"] == idle and r["events"].get(event, 0) == want
ok = r["clock_samples"] == want and got == dsos and conserved
print("%s: %d samples (%d expected): %d run + %d steal + %d idle, %d files %s" % (
      sys.argv[1].split('/')[-1], r["clock_samples"], want, t["samples"],
      t["steal_samples"], t["idle_samples"], len(dsos), "ok" if ok else "FAIL"))
if got != dsos:
    for k in sorted(set(got) | set(dsos)):
        if got[k] != dsos[k]:
            print("  %s: %d, expected %d" % (k, got[k], dsos[k]))
sys.exit(0 if ok else 1)
PY
	run "$CL" import perf-script "$f" -o "$TMP/$name.rec"
	[ "$(status)" = 0 ] || fail "$name: import: $(cat "$TMP/err")"
	"$CL" report -i "$TMP/$name.rec" --by process,dso --format json >"$TMP/rec.json"
	cmp -s "$TMP/rec.json" "$TMP/$name.json" || fail "$name: import then report differs"
	"$CL" import perf-script - -o "$TMP/stdin.rec" <"$f" 2>/dev/null || fail "$name: stdin"
	"$CL" report -i "$TMP/stdin.rec" --by process,dso --format json >"$TMP/stdin.json"
	cmp -s "$TMP/stdin.json" "$TMP/$name.json" || fail "$name: standard input differs"
done

# steal from the tracepoints of the fixture recorded here
"$CL" report -i "perf-script:$FIX/perf-script-sched.txt" --format json | grep '"steal_source":"tracepoints"' >/dev/null ||
	fail "sched fixture: steal not from tracepoints"

# switches sampled one in four (-F +period shows it): the tracepoints are
# left out of the recording, every clock sample kept (the import copies
# its items one by one here, where it otherwise appends its blocks)
sed 's/:\( \+\)sched:sched_switch:/:\1 4 sched:sched_switch:/' "$FIX/perf-script-sched.txt" >"$TMP/sampled.txt"
"$CL" import perf-script "$TMP/sampled.txt" -o "$TMP/sampled.rec" 2>/dev/null || fail "sampled switches: import"
for input in "$TMP/sampled.rec" "perf-script:$FIX/perf-script-sched.txt"; do
	"$CL" report -i "$input" --format json >"$TMP/sampled.json" || fail "$input: report"
	python3 - "$TMP/sampled.json" "$input" <<'PY' || fail "$input: sampled switches' recording"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["totals"]
sampled = sys.argv[2].endswith(".rec")
assert t["samples"] == 539 and sum(r["samples"] for r in d["rows"]) == 539, t
if sampled:
    assert "sampled 1 in 4" in d["steal_source"], d["steal_source"]
    assert t["run_ns"] == 539 * 1000000 and t["steal_ns"] is None, t
else:    # each switch: the tracepoints place the time
    assert d["steal_source"] == "tracepoints" and t["run_ns"] != 539 * 1000000, t
PY
done

# a line that is no perf script: FILE:LINE, exit 2, nothing written
good=$DATA/perf-dd-stacks-01.txt
[ -f "$good" ] || good=$FIX/perf-script-sched.txt
{ head -20 "$good"; echo "this is not perf script"; } >"$TMP/bad.txt"
line=$(($(wc -l <"$TMP/bad.txt")))
run "$CL" import perf-script "$TMP/bad.txt" -o "$TMP/bad.rec"
[ "$(status)" = 2 ] || fail "bad line: status $(status)"
grep -q "^$TMP/bad.txt:$line: " "$TMP/err" || fail "bad line: message $(cat "$TMP/err")"
[ ! -e "$TMP/bad.rec" ] || fail "bad line: a recording was written"
ls "$TMP" | grep -q '^bad.rec' && fail "bad line: a temporary file was left"
run "$CL" report -i "perf-script:$TMP/bad.txt" -o "$TMP/bad.out"
[ "$(status)" = 2 ] && [ ! -e "$TMP/bad.out" ] || fail "report of a bad line: status $(status)"
echo "import: all files ok"
