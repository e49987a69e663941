# The ledger under an adversary (issue 11), no perf access needed:
# - six `ledger add` at once on a new ledger all succeed (before: 30 of
#   30 tries failed, the schema made and checked outside one transaction);
# - `bill` is a reader: it works on a ledger it cannot write, and leaves
#   nothing beside it;
# - `ledger add A B C` with B refused adds A and C and names B;
# - a recording whose last collections are missing is completed by
#   `ledger add` (what is missing, no more), summing to its report;
# - negative sums print signed, in text and JSON (before: 18446744073.710).
. "$(dirname "$0")/../lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
S=$FIX/perf-script-sched.txt
cd "$TMP"

# Six recordings that are not the same one (their times differ).
for i in 1 2 3 4 5 6; do
	sed -E "s/ 57([78])\.([0-9]{9}):/ 5${i}\1.\2:/" "$S" >s$i.txt
	"$CL" import perf-script s$i.txt -o r$i.rec 2>/dev/null
done

# --- six first users at once
for i in 1 2 3 4 5 6; do
	"$CL" ledger add --ledger six.db r$i.rec 2>add$i.err &
done
failed=0
for job in $(jobs -p); do wait "$job" || failed=$((failed + 1)); done
[ "$failed" = 0 ] || fail "$failed of 6 first users failed: $(cat add*.err)"
n=$(sqlite3 six.db "SELECT count(*) FROM collections")
[ "$n" = 6 ] || fail "six first users: $n collections"
[ "$(sqlite3 six.db 'PRAGMA integrity_check')" = ok ] || fail "six first users: integrity_check"
echo "six first users at once: 6 collections, integrity ok"

# --- bill reads a ledger it cannot write
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v runuser >/dev/null; then
	chmod 755 "$TMP"
	mkdir ro
	cp six.db ro/
	chmod 755 ro
	chmod 644 ro/six.db
	before=$(ls ro)
	runuser -u nobody -- "$CL" bill --ledger ro/six.db --by comm >bill.txt 2>bill.err ||
		fail "bill as a reader: $(cat bill.err)"
	grep -q "^total" bill.txt || fail "bill as a reader: $(cat bill.txt)"
	[ "$(ls ro)" = "$before" ] || fail "bill left $(ls ro) beside the ledger"
	echo "bill as a reader: works read-only, leaves nothing"
else
	echo "bill as a reader: not checked (needs root, nobody and runuser)"
fi

# --- several files, one refused
echo junk >bad.rec
run "$CL" ledger add --ledger several.db r1.rec bad.rec r2.rec
[ "$(status)" = 2 ] || fail "ledger add A B C: status $(status)"
grep -q "'r1.rec' added" "$TMP/err" && grep -q "'r2.rec' added" "$TMP/err" &&
	grep -q "bad.rec" "$TMP/err" || fail "ledger add A B C: $(cat "$TMP/err")"
[ "$(sqlite3 several.db 'SELECT count(*) FROM collections')" = 2 ] ||
	fail "ledger add A B C: not both good ones added"
echo "ledger add A B C: A and C added, B named"

# --- completing a recording whose tail is missing
sums() {	# ledger -> "cpu steal" of every usage row
	sqlite3 "$1" "SELECT coalesce(sum(cpu_ns),0) || ' ' || coalesce(sum(steal_ns),0) FROM usage"
}
report_sums() {
	"$CL" report -i "$1" --format json | python3 -c '
import json, sys
t = json.load(sys.stdin)["totals"]
print(t["run_ns"], t["steal_ns"])'
}
"$CL" ledger add --ledger tail.db r3.rec 2>/dev/null
# a recorder's collections, the last of them lost: keep half of the rows
sqlite3 tail.db "UPDATE collections SET reason = 'interval', seq = 1;
	DELETE FROM usage WHERE rowid IN (SELECT rowid FROM usage ORDER BY rowid LIMIT
	(SELECT count(*) / 2 FROM usage))"
run "$CL" ledger add --ledger tail.db r3.rec
[ "$(status)" = 0 ] || fail "completing: $(cat "$TMP/err")"
grep -q "what was missing added" "$TMP/err" || fail "completing: $(cat "$TMP/err")"
[ "$(sums tail.db)" = "$(report_sums r3.rec)" ] ||
	fail "completed ledger sums $(sums tail.db), the report $(report_sums r3.rec)"
run "$CL" ledger add --ledger tail.db r3.rec
[ "$(status)" = 2 ] && grep -q "already, whole" "$TMP/err" || fail "completing twice: $(cat "$TMP/err")"
echo "a recording's missing tail: added, sums equal the report ($(sums tail.db))"

# --- negative sums print signed
cp six.db neg.db
sqlite3 neg.db "INSERT INTO collections (collected_ns, reason, start_ns, end_ns, host, boot_id,
	recording, seq) VALUES (4102444800000000000, 'interval', 4102444800000000000,
	4102444800000000000, 'h', 'b', 'neg', 1);
	INSERT INTO usage SELECT (SELECT max(id) FROM collections), task_id, account,
	-2 * cpu_ns, -2 * steal_ns - 1000, samples FROM usage WHERE collection_id = 1"
"$CL" bill --ledger neg.db --since 2100-01-01 >neg.txt
grep -q "18446744" neg.txt && fail "negative sums printed unsigned: $(cat neg.txt)"
grep -qE "^total +-[0-9]" neg.txt || fail "negative total not signed: $(cat neg.txt)"
"$CL" bill --ledger neg.db --since 2100-01-01 --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = d["rows"]
assert all(r["cpu_ns"] < 0 for r in rows), rows
assert all(r["steal_ns"] is None or r["steal_ns"] < 0 for r in rows), rows
' || fail "negative sums in JSON"
echo "negative sums: signed in text and JSON"
echo "ledger_safety: ok"
