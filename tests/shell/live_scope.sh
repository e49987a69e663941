# Live recording's scopes and stops: -- CMD (its rows only, its exit
# status), -p PID, SIGINT keeping what was recorded, the sample-gap steal
# source, and an unprivileged user (steal unknown, never zero).
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
need_perf
rows() {	# recording -> "pid tid command" per row, and the steal source
	"$CL" report -i "$1" --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("source", d["steal_source"])
for r in d["rows"]:
    print(r["pid"], r["tid"], r["cpu_ns"], r["steal_ns"], r["command"])'
}

# -- CMD: the command's exit status, and only its process tree.
run "$CL" record -o "$TMP/cmd.rec" -- sh -c "$CL workload spin --seconds 1; exit 3"
[ "$(status)" = 3 ] || fail "record -- CMD exited $(status), want the command's 3"
rows "$TMP/cmd.rec" >"$TMP/rows"
grep -q "workload spin" "$TMP/rows" || fail "the workload is not in the report: $(cat "$TMP/rows")"
if grep -v "^source" "$TMP/rows" | grep -vq -e "sh -c" -e "workload spin"; then
	fail "rows outside the command's tree: $(cat "$TMP/rows")"
fi
# A short command's row carries its own command line, not the recorder's.
"$CL" record -o "$TMP/short.rec" -- "$CL" workload spin --iterations 1000 2>/dev/null
# (grep reads it all: -q would stop at the match and, under pipefail,
# the writer's broken pipe would fail the check)
rows "$TMP/short.rec" | grep " $CL workload spin --iterations 1000\$" >/dev/null ||
	fail "short command's line: $(rows "$TMP/short.rec")"
# Children that never exec run their parent's program: its command line,
# not an empty one, even when they are gone before /proc is read.
"$CL" record -o "$TMP/forks.rec" -- "$CL" workload spawn --rate 100 --seconds 1 2>/dev/null
rows "$TMP/forks.rec" >"$TMP/rows"
[ "$(grep -vc "^source" "$TMP/rows")" -gt 10 ] || fail "too few forks seen: $(cat "$TMP/rows")"
if grep -v "^source" "$TMP/rows" | grep -vq " $CL workload spawn --rate 100 --seconds 1\$"; then
	fail "a fork without exec has another command: $(grep -v "workload spawn" "$TMP/rows" | head)"
fi
# run: like time(1), with the command's status.
# (perf: a steal line to check; the collector leaves steal unknown where
# the hypervisor writes no steal clock)
run "$CL" run --source perf -- "$CL" workload spin --seconds 1
[ "$(status)" = 0 ] || fail "run exited $(status)"
grep -q "^  cpu  *[0-9.]* s" "$TMP/err" || fail "run printed no cpu line: $(cat "$TMP/err")"
grep -q "^  steal  *[0-9.]* s" "$TMP/err" || fail "run printed no steal line: $(cat "$TMP/err")"
run "$CL" run -- false
[ "$(status)" = 1 ] || fail "run -- false exited $(status)"

# -p PID: that process only.
"$CL" workload spin --seconds 3 &
wl=$!
"$CL" workload spin --seconds 3 &
other=$!
sleep 0.2
"$CL" record -p $wl --duration 1 -o "$TMP/pid.rec" 2>/dev/null
rows "$TMP/pid.rec" >"$TMP/rows"
awk '$1 != "source" && $1 != '"$wl"' { bad = 1 } END { exit bad }' "$TMP/rows" ||
	fail "-p $wl reported other processes: $(cat "$TMP/rows")"
grep -q "^$wl " "$TMP/rows" || fail "-p $wl: not in the report"

# SIGINT: stops, exits 0, keeps a complete recording.
"$CL" record -a -o "$TMP/int.rec" 2>"$TMP/int.err" &
rec=$!
sleep 1
kill -INT $rec
wait $rec || fail "record after SIGINT exited $?: $(cat "$TMP/int.err")"
grep -q "stopped by a signal" "$TMP/int.err" || fail "no word of the signal: $(cat "$TMP/int.err")"
"$CL" report -i "$TMP/int.rec" >/dev/null || fail "the interrupted recording does not read"
wait $wl $other 2>/dev/null || true

# Without tracepoints: the kernel's steal shared over sample gaps, named.
"$CL" record -a --no-tracepoints --duration 0.5 -o "$TMP/gaps.rec" 2>/dev/null
rows "$TMP/gaps.rec" >"$TMP/rows"	# whole: grep -q would close the pipe on python
grep -q "^source sample-gaps" "$TMP/rows" || fail "steal source is not sample-gaps"
"$CL" report -i "$TMP/gaps.rec" --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for c in d["cpus"]:
    assert c["kernel_steal_ns"] is not None and c["steal_ns"] <= c["kernel_steal_ns"], c
' || fail "sample-gap steal exceeds the kernel figure"

# Unprivileged: own user-space samples, steal unknown (null), never zero.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
   [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ]; then
	chmod 1777 "$TMP"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$CL" record -o "$TMP/user.rec" -- "$CL" workload spin --seconds 1 2>"$TMP/user.err" ||
		fail "unprivileged record failed: $(cat "$TMP/user.err")"
	[ "$(grep -c "steal unknown" "$TMP/user.err")" = 1 ] || fail "unprivileged: not said once: $(cat "$TMP/user.err")"
	"$CL" report -i "$TMP/user.rec" --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["steal_source"].startswith("unknown"), d["steal_source"]
assert d["totals"]["steal_ns"] is None
spin = [r for r in d["rows"] if "workload spin" in r["command"] and r["cpu_ns"] > 0]
assert spin and all(r["steal_ns"] is None for r in spin), d["rows"]
' || fail "unprivileged report shows a steal figure"
	"$CL" report -i "$TMP/user.rec" | grep "steal unknown" >/dev/null || fail "unprivileged text report"
fi
