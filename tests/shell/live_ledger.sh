# The ledger with live recordings: record and run add a collection when
# they end, `ledger add` a recording made earlier (twice: refused); the
# bill's totals equal those of report on the same recordings; a file that
# is not a ledger is refused and left as it was.
. "$(dirname "$0")/../lib.sh"
# perf's path: it needs steal measured, which the BPF collector (the
# default) leaves unknown where the hypervisor writes no steal clock, as
# on this project's machines; the collector's test is live_source_bpf.sh.
export CPULEDGER_SOURCE=perf
command -v python3 >/dev/null || skip "python3 is not installed"
need_perf
db=$TMP/cpuledger.db
"$CL" record --ledger "$db" -o "$TMP/a.rec" -- "$CL" workload spin --seconds 1 2>/dev/null ||
	fail "record --ledger"
[ "$(stat -c %a "$db")" = 600 ] || fail "the ledger is mode $(stat -c %a "$db"), want 600"
"$CL" run --ledger "$db" -o "$TMP/b.rec" -- "$CL" workload threads --seconds 1 2>/dev/null ||
	fail "run --ledger"
"$CL" record -o "$TMP/c.rec" -- "$CL" workload syscall --seconds 1 2>/dev/null
"$CL" ledger add --ledger "$db" "$TMP/c.rec" || fail "ledger add"
run "$CL" ledger add --ledger "$db" "$TMP/c.rec"
[ "$(status)" = 2 ] && grep -q "in the ledger already" "$TMP/err" || fail "adding twice: exit $(status), $(cat "$TMP/err")"
for r in a b c; do "$CL" report -i "$TMP/$r.rec" --format json >"$TMP/$r.json"; done
"$CL" bill --ledger "$db" --by command --format json >"$TMP/bill.json"
python3 - "$TMP" <<'PY' || fail "bill totals differ from the reports'"
import json, sys
d = sys.argv[1]
cpu = steal = 0
for r in "abc":
    t = json.load(open("%s/%s.json" % (d, r)))["totals"]
    cpu += t["run_ns"]
    steal += t["steal_ns"]
b = json.load(open(d + "/bill.json"))
print("reports: cpu %d ns, steal %d ns; bill: cpu %d ns, steal %d ns, %d rows" %
      (cpu, steal, b["totals"]["cpu_ns"], b["totals"]["steal_ns"], len(b["rows"])))
assert b["totals"]["cpu_ns"] == cpu and b["totals"]["steal_ns"] == steal
assert sum(r["cpu_ns"] for r in b["rows"]) == cpu
assert len(b["rows"]) == 3
PY
# tasks carry who ran them and when they were seen, within the recordings
now=$(date +%s)
sqlite3 "$db" "SELECT count(*) FROM tasks WHERE uid IS NULL OR start_ns IS NULL OR end_ns < start_ns
	OR start_ns < ($now - 600) * 1000000000 OR end_ns > ($now + 60) * 1000000000" | grep -qx 0 ||
	fail "tasks without uid or a sensible span: $(sqlite3 "$db" "SELECT pid, tid, uid, start_ns, end_ns FROM tasks")"
"$CL" bill --ledger "$db" --until 2000-01-01 --format json | python3 -c '
import json, sys
assert json.load(sys.stdin)["rows"] == []' || fail "--until 2000-01-01 should hold nothing"
run "$CL" bill --ledger "$db" --since 'last tuesday'
[ "$(status)" = 2 ] && grep -q -- "--since: 'last tuesday' is not" "$TMP/err" || fail "bad --since"
echo "just notes" >"$TMP/notes"
run "$CL" bill --ledger "$TMP/notes"
[ "$(status)" = 2 ] && grep -q "is not a cpuledger ledger" "$TMP/err" || fail "not a ledger: $(cat "$TMP/err")"
[ "$(cat "$TMP/notes")" = "just notes" ] || fail "a non-ledger file was changed"
