# Signals to the recorder (issue 11):
# - SIGHUP and SIGPIPE end a recording as SIGINT does: the file whole (it
#   reads without --salvage), the last collection in the ledger, the
#   recorded command ended, not orphaned (before: exit 129/141, no END
#   mark, the recording refused, the child left running);
# - `record ... 2>&1 | head -1` records whole;
# - SIGUSR1 (collect) at once after the start is held until the handlers
#   are in place, not fatal (before: it killed a recorder in its first
#   ~2 ms);
# - `collect PID` of a cpuledger that is not a recorder with a ledger is
#   refused and the process is unharmed (before: an import died of it).
. "$(dirname "$0")/../lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
need_perf
cd "$TMP"

for sig in INT HUP PIPE; do
	"$CL" record -a --duration 20 -o $sig.rec --ledger $sig.db 2>$sig.err &
	rec=$!
	sleep 1
	kill -$sig $rec
	set +e
	wait $rec
	st=$?
	set -e
	[ "$st" = 0 ] || fail "SIG$sig: exit $st: $(cat $sig.err)"
	"$CL" report -i $sig.rec --format json >/dev/null 2>$sig.rep ||
		fail "SIG$sig: the recording does not read whole: $(cat $sig.rep)"
	[ "$(sqlite3 $sig.db "SELECT count(*) FROM collections WHERE reason = 'end'")" = 1 ] ||
		fail "SIG$sig: no last collection"
	grep -q "stopped by a signal" $sig.err || fail "SIG$sig: $(cat $sig.err)"
	echo "SIG$sig: exit 0, recording whole, last collection written"
done

# With a command: it is ended too, and its status passed on.
marker="sleep 31.$$"
for sig in HUP PIPE; do
	"$CL" record -a -o cmd$sig.rec -- sh -c "exec $marker" 2>cmd$sig.err &
	rec=$!
	sleep 1
	kill -$sig $rec
	set +e
	wait $rec
	st=$?
	set -e
	sleep 0.2
	! pgrep -f "$marker" >/dev/null || { pkill -f "$marker"; fail "SIG$sig: the command was left running"; }
	[ "$st" -gt 128 ] || fail "SIG$sig with a command: exit $st"
	"$CL" report -i cmd$sig.rec >/dev/null || fail "SIG$sig with a command: not whole"
	echo "SIG$sig with a command: ended with it (exit $st), recording whole"
done

# Its output going to a pipe that closes.
("$CL" record -a --duration 2 -o piped.rec -- "$CL" workload spawn --seconds 1 2>&1 | head -1) >/dev/null
"$CL" report -i piped.rec >/dev/null || fail "record 2>&1 | head -1: not whole"
echo "record 2>&1 | head -1: whole"

# collect (SIGUSR1) as soon as it runs (once the shell has exec'd it),
# twenty times: collect waits until the recorder holds the signal, and
# from its first instruction on the recorder holds it until its handlers
# are in place.
exe=$(readlink -f "$CL")
for i in $(seq 20); do
	"$CL" record -a --duration 0.3 -o u.rec --ledger u.db 2>u.err &
	rec=$!
	until [ "$(readlink /proc/$rec/exe 2>/dev/null)" = "$exe" ]; do :; done
	"$CL" collect $rec 2>collect.err || fail "collect at the start (try $i): $(cat collect.err)"
	wait $rec || fail "an early collect killed the recorder (try $i): $(cat u.err)"
done
echo "collect at once after the start: the recorder survived 20 of 20"

# collect to a cpuledger that is not a recorder with a ledger.
mkfifo fifo
"$CL" import perf-script fifo -o imp.rec 2>imp.err &
imp=$!
sleep 0.5
run "$CL" collect $imp
[ "$(status)" = 2 ] && grep -q "is not a cpuledger recorder" "$TMP/err" || fail "collect of an import: $(cat "$TMP/err")"
cat "$FIX/perf-script-sched.txt" >fifo
wait $imp || fail "the import did not survive collect: $(cat imp.err)"
"$CL" record -a --duration 3 -o nl.rec 2>nl.err &
rec=$!
sleep 1
run "$CL" collect $rec
[ "$(status)" = 1 ] && grep -q "has no ledger" "$TMP/err" || fail "collect of a recorder without a ledger: $(cat "$TMP/err")"
wait $rec || fail "the recorder without a ledger did not survive collect: $(cat nl.err)"
echo "collect: refused for an import and for a recorder without a ledger; both went on"
echo "signals: ok"
