# A pid the kernel gave again within one recording (pid_max wraps: a
# recording of 10 000 execs once reported 9 386 processes), on a recording
# written here item by item (tests/recitems.py): process 200 was alive at
# the start and exited; sh (100) forked a new 200 at 50 ms that ran
# `true`, and another at 100 ms. Each is a row
# of its own, by process and by thread, told apart by its start: text's
# START_S (seconds into the recording, `-` for one alive at its start),
# JSON's and CSV's start_ns (the recording's clock, null or empty), an
# OpenMetrics label (promtool finds no two samples alike); the ledger's
# bill likewise. The same recording without the second and third 200 has
# no start anywhere.
. "$(dirname "$0")/../lib.sh"
command -v zstd >/dev/null || skip "zstd is not installed (package zstd)"
make_rec() {	# out reused(0|1)
	PYTHONPATH="$ROOT/tests" python3 - "$1" "$2" <<'PY' || fail "writing the recording"
import sys
from recitems import Recording, EXIT, FORK
r = Recording('source=test\nhost=h\ninterval_ns=1000000\nclk_tck=100\ncallchain=0\n'
              'steal_source=tracepoints\nscope=all\n')
for pid, comm in ((100, b'sh'), (200, b'sleep')):
    r.task(pid, comm)
r.proc(0, 100, b'sh -c loop', b'/bin/sh')
r.proc(0, 200, b'sleep 1', b'/bin/sleep')
r.stint(200, 1, 10)
r.taskev(EXIT, 10, 200, 100)
if sys.argv[2] == '1':
    for at, ran in ((50, 10), (100, 5)):
        r.taskev(FORK, at, 200, 100)
        r.proc(at + 1, 200, b'true', b'/bin/true')
        r.stint(200, at + 10, at + 10 + ran)
        r.taskev(EXIT, at + 10 + ran, 200, 100)
r.stint(100, 120, 123)
r.write(sys.argv[1], end_ms=200)
PY
}
make_rec "$TMP/reused.rec" 1
make_rec "$TMP/once.rec" 0

# text: PID, then START_S; the three 200s apart, largest first
"$CL" report -i "$TMP/reused.rec" --by process >"$TMP/p.txt" || fail "report --by process"
grep -q '^ *PID *START_S *APPARENT_S' "$TMP/p.txt" || fail "no START_S after PID: $(cat "$TMP/p.txt")"
awk '$1 == 200 { print $2, $5 }' "$TMP/p.txt" >"$TMP/got"
printf '%s\n' '0.050 0.010' '- 0.009' '0.100 0.005' >"$TMP/want"
diff -u "$TMP/want" "$TMP/got" || fail "process 200's rows (START_S CPU_S)"
grep -q '^ *100 *- ' "$TMP/p.txt" || fail "process 100 alive at the start: START_S not -"

# by thread: the thread's start, after TID
"$CL" report -i "$TMP/reused.rec" --by thread >"$TMP/t.txt" || fail "report --by thread"
grep -q '^ *PID *TID *START_S' "$TMP/t.txt" || fail "no START_S after TID: $(cat "$TMP/t.txt")"
[ "$(awk '$2 == 200' "$TMP/t.txt" | wc -l)" = 3 ] || fail "thread 200 not three rows: $(cat "$TMP/t.txt")"

# JSON and CSV: start_ns in the recording's clock, null/empty when alive at the start
for by in process thread; do
	"$CL" report -i "$TMP/reused.rec" --by $by --format json >"$TMP/$by.json" || fail "json by $by"
	"$CL" report -i "$TMP/reused.rec" --by $by --format csv >"$TMP/$by.csv" || fail "csv by $by"
	python3 - "$TMP/$by.json" "$TMP/$by.csv" $by <<'PY' || fail "json, csv by $by"
import csv, json, sys
r = json.load(open(sys.argv[1]))
assert r["by"] == sys.argv[3], r["by"]
got = sorted((x["pid"], x["start_ns"] or 0, x["command"]) for x in r["rows"])
want = [(100, 0, "sh -c loop"), (200, 0, "sleep 1"), (200, 10_050_000_000, "true"),
        (200, 10_100_000_000, "true")]
assert got == want, got
rows = list(csv.DictReader(open(sys.argv[2])))
key = "tid" if sys.argv[3] == "thread" else "pid"
assert list(rows[0])[:2 + (key == "tid")] == ["pid"] + (["tid"] if key == "tid" else []) + ["start_ns"], list(rows[0])
assert sorted(int(x["start_ns"] or 0) for x in rows) == [0, 0, 10_050_000_000, 10_100_000_000]
PY
done

# OpenMetrics: no two samples of one family alike
if command -v promtool >/dev/null; then
	"$CL" report -i "$TMP/reused.rec" --by process --format openmetrics -o "$TMP/om.txt" ||
		fail "openmetrics"
	promtool check metrics <"$TMP/om.txt" >"$TMP/lint" 2>&1 || fail "promtool: $(cat "$TMP/lint")"
	grep -q 'pid="200",start_ns="10050000000"' "$TMP/om.txt" || fail "no start_ns label: $(cat "$TMP/om.txt")"
fi

# comm and command rows sum the processes as before: no start
"$CL" report -i "$TMP/reused.rec" --by command --format json >"$TMP/c.json"
python3 - "$TMP/c.json" <<'PY' || fail "by command"
import json, sys
r = json.load(open(sys.argv[1]))
assert all("start_ns" not in x for x in r["rows"])
assert [x["cpu_ns"] for x in r["rows"] if x["command"] == "true"] == [15_000_000], r["rows"]
PY

# no pid given again: no start anywhere
"$CL" report -i "$TMP/once.rec" --by process >"$TMP/o.txt"
! grep -q START_S "$TMP/o.txt" || fail "START_S without a pid given again"
"$CL" report -i "$TMP/once.rec" --by thread --format json >"$TMP/o.json"
python3 - "$TMP/o.json" <<'PY' || fail "start_ns in rows without a pid given again"
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["rows"]) == 2 and all("start_ns" not in x for x in r["rows"]), r["rows"]
PY
# the ledger keeps each process apart (proc_start_ns), and a bill whose
# two rows would show one process says each one's start (the ledger's,
# CLOCK_MONOTONIC to 10 ms); a bill without one pid twice has none
"$CL" ledger add --ledger "$TMP/r.db" "$TMP/reused.rec" 2>/dev/null || fail "ledger add"
"$CL" ledger add --ledger "$TMP/o.db" "$TMP/once.rec" 2>/dev/null || fail "ledger add once"
"$CL" bill --ledger "$TMP/r.db" --by process >"$TMP/b.txt" || fail "bill"
grep -q '^h 200 (from 10.05 s after boot) true ' "$TMP/b.txt" || fail "bill: no start: $(cat "$TMP/b.txt")"
grep -q '^h 200 (from 10.10 s after boot) true ' "$TMP/b.txt" || fail "bill: no start: $(cat "$TMP/b.txt")"
grep -q '^h 200 sleep 1 ' "$TMP/b.txt" || fail "bill: the first 200: $(cat "$TMP/b.txt")"
"$CL" bill --ledger "$TMP/r.db" --by thread --format csv >"$TMP/b.csv" || fail "bill csv"
head -1 "$TMP/b.csv" | grep -q '^host,pid,tid,start_ns,comm,' || fail "bill csv: $(head -1 "$TMP/b.csv")"
"$CL" bill --ledger "$TMP/r.db" --by process --format json >"$TMP/b.json" || fail "bill json"
python3 - "$TMP/b.json" <<'PY' || fail "bill json"
import json, sys
r = json.load(open(sys.argv[1]))
got = sorted((x["pid"], x["start_ns"] or 0, x["cpu_ns"]) for x in r["rows"])
assert got == [(100, 0, 3_000_000), (200, 0, 9_000_000), (200, 10_050_000_000, 10_000_000),
               (200, 10_100_000_000, 5_000_000)], got
PY
"$CL" bill --ledger "$TMP/r.db" --by command >"$TMP/bc.txt"
! grep -q 'after boot' "$TMP/bc.txt" || fail "bill by command with a start"
for f in text csv json; do
	"$CL" bill --ledger "$TMP/o.db" --by process --format $f >"$TMP/bo.$f"
done
! grep -q 'after boot' "$TMP/bo.text" || fail "bill without a pid twice: $(cat "$TMP/bo.text")"
! grep -q 'start_ns' "$TMP/bo.csv" || fail "bill csv without a pid twice: $(cat "$TMP/bo.csv")"
python3 - "$TMP/bo.json" <<'PY' || fail "bill json without a pid twice"
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["rows"]) == 2 and all("start_ns" not in x for x in r["rows"]), r["rows"]
PY
echo "pid 200 three times: three rows, by process and by thread, in report and bill"
