# Faults that need no perf access (issue 7):
# - SIGINT while importing: the import stops, exit status says the signal,
#   and no recording nor temporary file is left;
# - a recording cut short or with a damaged block: `report` refuses it
#   naming the offset of the damage; `report --salvage` reports what comes
#   before it, saying where it stopped;
# - the ledger locked by another writer: `ledger add --wait 1` gives up
#   after a second with a clear error; without --wait it waits its turn
#   and succeeds; the ledger on a read-only filesystem: a clear error,
#   exit status not 0, the file unchanged.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
S=$FIX/perf-script-sched.txt

# --- SIGINT during an import: the text comes through a FIFO that stays open
mkfifo "$TMP/fifo"
mkdir "$TMP/outdir"
# (bash starts background jobs with SIGINT ignored: give it back)
env --default-signal=INT "$CL" import perf-script "$TMP/fifo" -o "$TMP/outdir/int.rec" 2>"$TMP/int.err" &
imp=$!
exec 3>"$TMP/fifo"	# held open: the import waits for more
cat "$S" >&3
sleep 1
kill -INT $imp
set +e
wait $imp
st=$?
set -e
exec 3>&-
[ "$st" = 130 ] || fail "SIGINT during import: exit status $st, expected 130"
[ -z "$(ls -A "$TMP/outdir")" ] || fail "SIGINT during import left: $(ls "$TMP/outdir")"
echo "SIGINT during import: exit 130, nothing left behind"

# --- damaged recordings: a recording of several blocks, from the fixture
# repeated 100 times, each copy 1000 s after the one before (times that go
# back are refused: docs/import.md), every block holding 1 MiB of items:
# four blocks, so that the middle of the file has whole ones before it
for i in $(seq 100); do
	awk -v off=$((i * 1000)) '{ if (match($0, / [0-9]+\.[0-9]+: /)) {
		t = substr($0, RSTART + 1, RLENGTH - 3); split(t, p, ".")
		$0 = substr($0, 1, RSTART) (p[1] + off) "." p[2] substr($0, RSTART + RLENGTH - 2) }
		print }' "$S"
	echo
done >"$TMP/big.txt"
"$CL" import perf-script "$TMP/big.txt" -o "$TMP/big.rec" 2>/dev/null
"$CL" report -i "$TMP/big.rec" --format json >"$TMP/full.json"
size=$(stat -c %s "$TMP/big.rec")
head -c $((size * 2 / 3)) "$TMP/big.rec" >"$TMP/cut.rec"
cp "$TMP/big.rec" "$TMP/bad.rec"
at=$((size / 2))
printf '\xff\xff\xff\xff' | dd of="$TMP/bad.rec" bs=1 seek=$at conv=notrunc status=none
for f in cut bad; do
	run "$CL" report -i "$TMP/$f.rec" -o "$TMP/$f.out"
	[ "$(status)" = 2 ] || fail "$f recording: status $(status)"
	grep -q "^$TMP/$f.rec: offset [0-9]*: .*--salvage" "$TMP/err" || fail "$f recording: $(cat "$TMP/err")"
	[ ! -e "$TMP/$f.out" ] || fail "$f recording: a report was written"
	off=$(sed -n 's/.*: offset \([0-9]*\):.*/\1/p' "$TMP/err")
	limit=$([ $f = cut ] && echo $((size * 2 / 3)) || echo $at)
	[ "$off" -le "$limit" ] || fail "$f recording: damage at $off, after $limit"
	run "$CL" report --salvage -i "$TMP/$f.rec" --format json
	[ "$(status)" = 0 ] || fail "$f --salvage: status $(status): $(cat "$TMP/err")"
	grep -q "offset $off: .*reported up to there" "$TMP/err" || fail "$f --salvage: $(cat "$TMP/err")"
	python3 - "$TMP/out" "$TMP/full.json" "$f" <<'PY' || fail "$f --salvage: not a part of the whole"
import json, sys
part, whole = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
p, w = part["clock_samples"], whole["clock_samples"]
print("%s recording, salvaged: %d of %d samples" % (sys.argv[3], p, w))
sys.exit(0 if 0 < p < w else 1)
PY
done

# --- the ledger locked by another writer
"$CL" import perf-script "$FIX/perf-script-oneline.txt" -o "$TMP/one.rec" 2>/dev/null
"$CL" ledger add --ledger "$TMP/l.db" "$TMP/big.rec"
hold() {	# hold the ledger's write lock for $1 seconds
	python3 -c "
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute('BEGIN EXCLUSIVE'); open(sys.argv[1] + '.held', 'w').close()
time.sleep(float(sys.argv[2])); c.execute('COMMIT')" "$TMP/l.db" "$1" &
	while [ ! -e "$TMP/l.db.held" ]; do sleep 0.05; done
	rm -f "$TMP/l.db.held"
}
hold 4
holder=$!
run "$CL" ledger add --ledger "$TMP/l.db" --wait 1 "$TMP/one.rec"
[ "$(status)" = 1 ] && grep -q "locked" "$TMP/err" || fail "locked ledger, --wait 1: status $(status): $(cat "$TMP/err")"
wait $holder
hold 2
start=$(date +%s%N)
"$CL" ledger add --ledger "$TMP/l.db" "$TMP/one.rec" || fail "locked ledger: did not wait its turn"
waited=$(( ($(date +%s%N) - start) / 1000000 ))
wait
[ "$waited" -ge 1000 ] || fail "locked ledger: added after $waited ms, while another held it"
python3 -c "
import sqlite3, sys
n = sqlite3.connect(sys.argv[1]).execute('select count(*) from collections').fetchone()[0]
sys.exit(0 if n == 2 else 1)" "$TMP/l.db" || fail "locked ledger: collections lost or doubled"
echo "locked ledger: --wait 1 gave up with a clear error; without it, waited ${waited} ms and added"

# --- the ledger on a read-only filesystem (needs mount: root)
mkdir "$TMP/ro"
if mount -t tmpfs -o size=4m tmpfs "$TMP/ro" 2>/dev/null; then
	trap 'umount "$TMP/ro" 2>/dev/null || true; rm -rf "$TMP"' EXIT
	cp "$TMP/l.db" "$TMP/ro/l.db"
	mount -o remount,ro "$TMP/ro"
	sum=$(sha256sum <"$TMP/ro/l.db")
	run "$CL" ledger add --ledger "$TMP/ro/l.db" "$TMP/big.rec"
	[ "$(status)" != 0 ] || fail "read-only ledger: exit 0"
	grep -qi "read-only\|readonly" "$TMP/err" || fail "read-only ledger: $(cat "$TMP/err")"
	[ "$(sha256sum <"$TMP/ro/l.db")" = "$sum" ] || fail "read-only ledger: changed"
	echo "read-only ledger: status $(status), $(head -1 "$TMP/err")"
	umount "$TMP/ro"
else
	echo "read-only ledger: not checked (mount needs root)"
fi
echo "faults: ok"
