# bill for the people who pay, on a ledger of known collections (two
# hosts, three months, kernel threads of two kinds, a long cc1 command, a
# usage of unknown steal): the period and hosts in every format, CPU-hours,
# prices per account with a total, periods by hour, day and month,
# relative dates, kworkers grouped as /metrics groups them, keys cut in
# their middle in text and never in CSV or JSON. Text and CSV against
# fixtures/bill.*, worked out by hand (cc1: 4 h of program at 0.05 and
# 0.5 h of kernel at 0.01 cost 0.205). The dates are
# of 2025, far from the relative ones.
. "$(dirname "$0")/../lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
cd "$TMP"
"$CL" import perf-script "$FIX/perf-script-sched.txt" -o k.rec 2>/dev/null
"$CL" ledger add --ledger bill.db k.rec 2>/dev/null	# the schema
H=3600000000000	# an hour in ns
ns() { echo "$(date -u -d "$1" +%s)000000000"; }
cc1="/usr/lib/gcc/x86_64-linux-gnu/12/cc1 -quiet -I include -I /usr/src/project/with/a/long/include/path -D NDEBUG -O2 -fstack-protector-strong -o /tmp/ccAbCdEf.s /usr/src/project/kept/at-the-end.c"
sqlite3 bill.db "DELETE FROM usage; DELETE FROM collections; DELETE FROM tasks;
INSERT INTO tasks (id, host, boot_id, pid, tid, uid, command, executable, comm)
	VALUES (1, 'web1', 'b', 100, 100, 1000, '$cc1', '/usr/lib/gcc/x86_64-linux-gnu/12/cc1', 'cc1'),
	(2, 'web1', 'b', 12, 12, 0, '[kworker/u8:0-events_unbound]', NULL, 'kworker/u8:0-events_unbound'),
	(3, 'web1', 'b', 58, 58, 0, '[kworker/1:1H-kblockd]', NULL, 'kworker/1:1H-kblockd'),
	(4, 'web2', 'b', 200, 200, 1000, 'python3 app.py', '/usr/bin/python3.11', 'python3');
INSERT INTO collections (id, collected_ns, reason, start_ns, end_ns, host, boot_id, recording, seq) VALUES
	(1, $(ns 2025-10-15T12:00), 'interval', $(ns 2025-10-15T11:00), $(ns 2025-10-15T12:00), 'web1', 'b', 'r1', 0),
	(2, $(ns 2025-11-30T08:30), 'interval', $(ns 2025-11-30T08:00), $(ns 2025-11-30T08:30), 'web1', 'b', 'r1', 1),
	(3, $(ns 2025-11-30T09:30), 'interval', $(ns 2025-11-30T08:30), $(ns 2025-11-30T09:30), 'web1', 'b', 'r1', 2),
	(4, $(ns 2025-11-30T09:45), 'end', $(ns 2025-11-30T09:00), $(ns 2025-11-30T09:45), 'web2', 'b', 'r2', 0);
INSERT INTO usage (collection_id, task_id, account, cpu_ns, steal_ns, samples) VALUES
	(1, 1, 'program', 2 * $H, 36000000000, 7200000),
	(2, 1, 'program', $H, 18000000000, 3600000),
	(2, 1, 'kernel', $H / 2, 0, 1800000),
	(2, 2, 'kernel', $H / 4, 900000000, 900000),
	(3, 3, 'kernel', $H / 4, NULL, 900000),
	(3, 1, 'program', $H, 0, 3600000),
	(4, 4, 'program', 3 * $H, 54000000000, 10800000);"

check() {	# expected-file args...
	local want=$1; shift
	"$CL" bill --ledger bill.db "$@" >got || fail "bill $*: exit $?"
	diff -u "$FIX/$want" got || fail "bill $* differs from $want"
}
check bill.comm.priced.txt --price 0.05 --price kernel=0.01
check bill.hour.command.txt --by command --per hour --since 2025-11-30 --until 2025-12-01
check bill.day.process.csv --per day --by process --format csv
grep -q '+ ' got && fail "a key cut with '+'"

# vm is the key's one name in every command (core/keys.c); host, as the
# ledger and the bill's columns call it, is the same key
"$CL" bill --ledger bill.db --by vm,comm --format csv >vm.csv
"$CL" bill --ledger bill.db --by host,comm --format csv >host.csv
cmp -s vm.csv host.csv || fail "bill --by vm and --by host differ"
grep -q '^host,comm,' vm.csv || fail "bill --by vm: CSV header $(head -1 vm.csv)"

# JSON: the period, hosts, prices; costs sum; keys whole; months
"$CL" bill --ledger bill.db --per month --by host,comm --price 0.05 --price kernel=0.01 \
	--since 2025-10-01 --until 2025-12-01 --format json >m.json
"$CL" bill --ledger bill.db --by command --format json >c.json
python3 - "$cc1" <<'PY' || fail "JSON bill (above)"
import json, sys
d = json.load(open("m.json"))
p = d["period"]
assert (p["start"], p["end"]) == ("2025-10-01T00:00:00Z", "2025-12-01T00:00:00Z"), p
assert (p["since"], p["until"]) == (p["start"], p["end"]), p
assert d["hosts"] == ["web1", "web2"] and d["collections"] == 4, d
assert d["prices"] == [{"account": None, "per_cpu_hour": 0.05},
                       {"account": "kernel", "per_cpu_hour": 0.01}], d["prices"]
rows = d["rows"]
assert [r["month"] for r in rows] == ["2025-10", "2025-11", "2025-11", "2025-11"], rows
kw = [r for r in rows if r["comm"] == "kworker"]
assert len(kw) == 1 and kw[0]["cpu_ns"] == 1800000000000, rows
assert abs(sum(r["cost"] for r in rows) - d["totals"]["cost"]) < 1e-9, d["totals"]
assert abs(d["totals"]["cost"] - 0.36) < 1e-9 and d["totals"]["cpu_hours"] == 8, d["totals"]
c = json.load(open("c.json"))
assert sys.argv[1] in [r["command"] for r in c["rows"]], "the long command cut in JSON"
assert c["period"]["since"] is None and c["period"]["start"] == "2025-10-15T11:00:00Z", c["period"]
PY

# run-queue wait (schema 5): a task's wait per collection, counted once
# whatever its accounts (cc1 has two in collection 2); DENIED = steal +
# wait; unknown where no wait was kept (the kworker of unknown steal) or
# by account; WAIT_S in text only when some row's wait is known
cp bill.db w.db
sqlite3 w.db "INSERT INTO waits (collection_id, task_id, wait_ns) VALUES
	(1, 1, 2000000000), (2, 1, 5000000000), (2, 2, 3000000000), (4, 4, 1000000000)"
"$CL" bill --ledger w.db --by process --format json >w.json
"$CL" bill --ledger w.db --by account --format json >wa.json
"$CL" bill --ledger w.db --per day --by process --format csv >wd.csv
"$CL" bill --ledger w.db --by process >w.txt
"$CL" bill --ledger w.db --by account >wa.txt
python3 <<'PY' || fail "bill's wait (above)"
import csv, json
rows = {r["pid"]: (r["wait_ns"], r["denied_ns"]) for r in json.load(open("w.json"))["rows"]}
assert rows == {100: (7000000000, 61000000000), 200: (1000000000, 55000000000),
                12: (3000000000, 3900000000), 58: (None, None)}, rows
t = json.load(open("w.json"))["totals"]
assert t["wait_ns"] == 11000000000, t
assert all(r["wait_ns"] is None and r["denied_ns"] is None
           for r in json.load(open("wa.json"))["rows"]), "a wait by account"
days = {(r["day"], r["pid"]): r["wait_ns"] for r in csv.DictReader(open("wd.csv"))}
assert days[("2025-10-15", "100")] == "2000000000" and days[("2025-11-30", "100")] == "5000000000" \
    and days[("2025-11-30", "58")] == "", days
text = open("w.txt").read().splitlines()
head = text[4].split()
assert head[-2:] == ["WAIT_S", "DENIED_S"], head
cc1 = [l for l in text if " 100 " in l][0].split()
assert cc1[-2:] == ["7.000", "61.000"], cc1
assert [l for l in text if " 58 " in l][0].split()[-2:] == ["unknown", "unknown"], text
assert [l for l in text if l.startswith("total")][0].split()[-2:][0] == "11.000", text
assert "WAIT_S" not in open("wa.txt").read(), "WAIT_S by account"
PY

# relative dates: now, today, yesterday, -Nd beside what they mean
now=$(date -u +%s)
mid=$(date -u -d "$(date -u +%F)" +%s)
sqlite3 bill.db "INSERT INTO collections (id, collected_ns, reason, start_ns, end_ns, host, boot_id, recording, seq) VALUES
	(5, ${now}000000000, 'end', $(( now - 2 * 86400 ))000000000, $(( now - 2 * 86400 ))000000000, 'web3', 'b', 'r3', 0),
	(6, ${now}000000000, 'end', $(( mid - 60 ))000000000, $(( mid - 60 ))000000000, 'web3', 'b', 'r4', 0);
	INSERT INTO usage VALUES (5, 4, 'program', 1000, NULL, 1), (6, 4, 'program', 2000, NULL, 1)"
cpu() { "$CL" bill --ledger bill.db --format json "$@" | python3 -c '
import json, sys; print(json.load(sys.stdin)["totals"]["cpu_ns"])'; }
[ "$(cpu --since -3d --until -1d)" = 1000 ] || fail "--since -3d --until -1d: $(cpu --since -3d --until -1d)"
[ "$(cpu --since -72h --until now)" = 3000 ] || fail "--since -72h --until now: $(cpu --since -72h --until now)"
[ "$(cpu --since yesterday --until today)" = 2000 ] || fail "--since yesterday --until today"
[ "$(cpu --since today)" = 0 ] || fail "--since today holds what ended before it"
[ "$(cpu --since -1w)" = "$(cpu --since @$(( now - 7 * 86400 - 2 )))" ] || fail "-1w is not a week ago"

# refused, saying why, writing nothing
bad() {	# expected-substring args...
	local want=$1; shift
	run "$CL" bill --ledger bill.db "$@"
	[ "$(status)" = 2 ] || fail "bill $*: exit $(status), want 2"
	grep -qF -- "$want" "$TMP/err" || fail "bill $*: $(cat "$TMP/err")"
	[ ! -s "$TMP/out" ] || fail "bill $*: wrote to stdout"
}
bad "--price: 'x' is not [ACCOUNT=]P" --price x
bad "--price: '-1' is not" --price -1
bad "--price: '=3' is not" --price =3
bad "--price: two prices for 'kernel'" --price kernel=1 --price kernel=2
bad "--price: no account 'kernal' in the ledger" --price kernal=1
bad "--per: 'week' is not hour, day or month" --per week
bad "--by: one period only" --by day,month
bad "--by: 'dso' is not a key (vm, process, thread," --by dso
bad "--per day: --by has another period" --by hour --per day
bad "--since: '-3y' is not" --since -3y
bad "--since: 'tomorrow' is not" --since tomorrow
bad "--since is after --until" --since today --until yesterday
echo "bill: period, hosts, CPU-hours, prices, periods, relative dates, kworkers grouped, keys whole"
