# Outputs tell the truth (issue 18), no perf access needed:
# - steal that was not measured is never 0: text "unknown", CSV empty,
#   JSON null, OpenMetrics and pprof absent, the ledger NULL, the bill
#   "unknown" (and '*' with the share it covers when partly so);
# - every JSON row has every key of its kind; every CSV row one field per
#   value (bill --by process: host, pid and command apart);
# - one name for one quantity: every key of report's and bill's JSON is
#   in docs/vocabulary.md, and bill's corrected time is CPU_S as report's;
# - options are checked: a --control account no rule defines, an unknown
#   value of an enumerated option, --folded where it means nothing, report
#   -F (perf's letter), and a file that is not a recording is named for
#   what it is with the command that reads it; a full output names itself.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
# steal unknown: perf script text without the sched tracepoints, the
# shared recordings' where they are beside the clone, else a fixture
DATA=${TESTDATA:-$ROOT/../shared/testdata}/flamegraph
nosched=$DATA/perf-dd-stacks-01.txt
if [ ! -f "$nosched" ]; then	# its program named dd, as the shared one's is
	nosched=$TMP/dd.txt
	sed -E 's/^( *)cpuledger /\1dd /' "$FIX/perf-script-oneline.txt" >"$nosched"
fi
PROTO=/usr/share/gocode/src/github.com/google/pprof/proto
cd "$TMP"
"$CL" import perf-script "$nosched" -o unknown.rec 2>/dev/null
"$CL" import perf-script "$FIX/perf-script-sched.txt" -o known.rec 2>/dev/null

# --- unknown steal, format by format
"$CL" report -i unknown.rec >u.txt
grep -q "STEAL_S" u.txt && grep -qE "^ +[0-9]+ +[0-9]+ +unknown +unknown " u.txt ||
	fail "text: steal and apparent not unknown: $(head -6 u.txt)"
"$CL" report -i unknown.rec --format csv >u.csv
"$CL" report -i unknown.rec --format json >u.json
"$CL" report -i unknown.rec --format openmetrics >u.om
python3 - <<'PY' || fail "unknown steal shown as a number"
import csv, json
rows = list(csv.DictReader(open("u.csv")))
assert rows and all(r["steal_ns"] == "" and r["apparent_ns"] == "" for r in rows), rows[0]
d = json.load(open("u.json"))
assert all(r["steal_ns"] is None and r["apparent_ns"] is None for r in d["rows"]), d["rows"][0]
t = d["totals"]
assert t["steal_ns"] is None and t["attributed_steal_ns"] is None, t
assert all(c["steal_ns"] is None and c["kernel_steal_ns"] is None for c in d["cpus"]), d["cpus"]
om = open("u.om").read()
assert "cpuledger_cpu_seconds_total{" in om and "steal" not in om.split("# HELP cpuledger_cpu")[1].split("# EOF")[0].replace("steal taken out", ""), om[:300]
PY
if command -v protoc >/dev/null && [ -f "$PROTO/profile.proto" ]; then
	"$CL" report -i unknown.rec --format pprof -o u.pb.gz
	zcat u.pb.gz | protoc --decode=perftools.profiles.Profile -I"$PROTO" profile.proto >u.pprof
	[ "$(grep -c '^sample_type' u.pprof)" = 1 ] || fail "pprof: a steal sample type though steal is unknown"
	grep -q 'steal unknown' u.pprof || fail "pprof: the comment does not say steal is unknown"
fi
echo "unknown steal: unknown in text, empty in CSV, null in JSON, absent in OpenMetrics and pprof"

# --- the ledger and the bill
"$CL" ledger add --ledger l.db unknown.rec known.rec 2>/dev/null
[ "$(sqlite3 l.db "SELECT count(*) FROM usage WHERE steal_ns IS NULL")" -gt 0 ] || fail "ledger: unknown steal is not NULL"
[ "$(sqlite3 l.db "SELECT count(*) FROM usage WHERE steal_ns IS NOT NULL")" -gt 0 ] || fail "ledger: known steal is NULL"
"$CL" bill --ledger l.db --by comm >b.txt
grep -qE "^dd +.* unknown +unknown " b.txt || fail "bill: dd's steal not unknown: $(cat b.txt)"
grep -qE "^total .*[0-9]\* +[0-9.]+\* " b.txt || fail "bill: the total's partly known steal not marked: $(cat b.txt)"
grep -q "Steal was measured for" b.txt || fail "bill: the share measured not said"
"$CL" bill --ledger l.db --by comm --format json >b.json
"$CL" bill --ledger l.db --by comm,day --format csv >b.csv
python3 - <<'PY' || fail "bill: unknown steal"
import csv, json
d = json.load(open("b.json"))
dd = [r for r in d["rows"] if r["comm"] == "dd"][0]
assert dd["steal_ns"] is None and dd["apparent_ns"] is None and dd["unknown_steal_cpu_ns"] == dd["cpu_ns"], dd
t = d["totals"]
assert 0 < t["unknown_steal_cpu_ns"] < t["cpu_ns"] and t["steal_ns"] is not None, t
for r in csv.DictReader(open("b.csv")):
    assert r["day"] == "", r          # an import's day is not known: not 1970-01-01
    if r["comm"] == "dd":
        assert r["steal_ns"] == "" and r["apparent_ns"] == "", r
PY
echo "ledger: NULL; bill: unknown, the total marked *, the day of an import unknown"

# --- every JSON row has every key; every CSV row one field per value
for by in thread process account comm,function dso cpu user executable command thread,account; do
	"$CL" report -i known.rec --by "$by" --format json >k.json
	"$CL" report -i known.rec --by "$by" --format csv >k.csv
	python3 - "$by" <<'PY' || fail "--by $by: rows differ in keys or fields"
import csv, json, sys
field = {"thread": "tid", "process": "pid", "account": "account", "comm": "comm",
         "function": "function", "dso": "dso", "cpu": "cpu", "user": "uid",
         "executable": "executable", "command": "command"}
rows = json.load(open("k.json"))["rows"]
keys = set(rows[0])
assert all(set(r) == keys for r in rows), sys.argv[1]
for k in sys.argv[1].split(","):
    assert field[k] in keys, (k, keys)
lines = list(csv.reader(open("k.csv")))
assert all(len(l) == len(lines[0]) for l in lines), lines[:2]
PY
done
"$CL" bill --ledger l.db --by process --format csv >bp.csv
python3 - <<'PY' || fail "bill --by process CSV"
import csv
lines = list(csv.reader(open("bp.csv")))
assert lines[0][:3] == ["host", "pid", "command"], lines[0]
assert all(len(l) == len(lines[0]) for l in lines), lines[:3]
PY
echo "keys: every JSON row has every key; CSV one field per value"

# --- one vocabulary
grep -q "CPU_S" b.txt && ! grep -q "TOTAL_S" b.txt || fail "bill does not call the corrected time CPU_S"
"$CL" report -i known.rec --by thread,function --format json >v.json
"$CL" bill --ledger l.db --by thread,day --format json >vb.json
python3 - "$ROOT/docs/vocabulary.md" <<'PY' || fail "a JSON key is not in docs/vocabulary.md"
import json, re, sys
doc = set(re.findall(r"`([a-z_]+)`", open(sys.argv[1]).read()))
keys = set()
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            keys.add(k)
            if k != "events":
                walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(json.load(open("v.json")))
walk(json.load(open("vb.json")))
missing = sorted(k for k in keys if k not in doc and k not in ("version", "by", "rows", "totals", "cpus", "method", "host", "scope", "steal_source", "timestamps"))
assert not missing, missing
print("vocabulary: %d JSON keys, all in docs/vocabulary.md" % len(keys))
PY

# --- options checked
bad() {	# expected-substring args...
	local want=$1; shift
	run "$CL" "$@"
	[ "$(status)" = 2 ] || fail "$*: exit $(status), want 2"
	grep -qF -- "$want" "$TMP/err" || fail "$*: $(cat "$TMP/err")"
}
bad "--control: no account 'kernal'" report -i known.rec --control kernal
bad "--control: no account 'kernal'" bill --ledger l.db --control kernal
bad "--format: unknown format 'xml'" report -i known.rec --format xml
bad "--method: unknown method" report -i known.rec --method first
bad "--sort" report -i known.rec --sort biggest
bad "--by: 'month' is not a key" report -i known.rec --by month
bad "--folded: only with --format folded of perf-script:FILE" report -i known.rec --format folded --folded pid
bad "unknown option '-F'" report -F 1000
bad "--call-graph" record -a --call-graph dwarf -- true
printf 'vm,vcpu,time_ns,pid,tid,function,state\n' >s.csv
bad "it is sampling data (CSV): 'cpuledger analyze FILE' reads it" report -i s.csv
bad "it is perf script text" report -i "$FIX/perf-script-sched.txt"
printf 'PERFILE2\0\0\0\0\0\0\0\0' >p.data
bad "it is a perf.data file" report -i p.data
head -c 64 /dev/zero >z.bin
bad "not a cpuledger recording" report -i z.bin
if [ -w /dev/full ]; then
	run "$CL" report -i known.rec --format json -o /dev/full
	[ "$(status)" = 1 ] && grep -q "'/dev/full': No space left on device" "$TMP/err" ||
		fail "a full output: $(cat "$TMP/err")"
fi
echo "options: checked; files named for what they are"
echo "truth: ok"
