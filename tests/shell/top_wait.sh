# top's WAIT% (issue 25, CPU denied) in a real terminal (tmux, as top.sh):
# two `yes` pinned on one CPU are always runnable, so each one's time is
# run, stolen or waited on the run queue: per refresh, CPU% + STEAL% +
# WAIT% of each thread is 100 (the median over five refreshes within 10
# points: CPU% comes from the engine, WAIT% from schedstat read at the
# refresh). A row first seen shows WAIT% '?' (unknown), never 0; DENIED% is
# STEAL% + WAIT% on every row (? with WAIT%).
. "$(dirname "$0")/../lib.sh"
command -v tmux >/dev/null || skip "tmux is not installed"
command -v taskset >/dev/null || skip "taskset is not installed"
[ -r /proc/self/schedstat ] || skip "the kernel keeps no schedstat"
need_perf
cd "$TMP"
CPU=$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')
taskset -c "$CPU" yes >/dev/null & y1=$!
taskset -c "$CPU" yes >/dev/null & y2=$!
S=$TMP/tmux.sock
tmux -f /dev/null -S "$S" -D >/dev/null 2>&1 & server=$!
trap 'kill $y1 $y2 2>/dev/null || true; tmux -S "$S" kill-server 2>/dev/null || true; kill $server 2>/dev/null || true; rm -rf "$TMP"' EXIT
for _ in $(seq 50); do [ -S "$S" ] && break; sleep 0.1; done
tmux -S "$S" new-session -d -x 100 -y 24 "$CL top -H -d 1 -p $y1,$y2; echo EXIT=\$?; sleep 30" ||
	fail "tmux new-session"
screen() { tmux -S "$S" capture-pane -p; }
seen_unknown=0
: >sums
for i in $(seq 40); do
	sleep 0.5
	screen >screen.txt
	grep -q "CPU% STEAL%  *WAIT%" screen.txt || continue
	# PID TID USER NI RES S CPU% STEAL% WAIT% DENIED%
	awk -v a=$y1 -v b=$y2 '$2 == a || $2 == b { print $2, $7, $8, $9, $10 }' screen.txt >rows
	grep -q " ? ?$" rows && seen_unknown=1
	# DENIED% is STEAL% + WAIT% (each rounded to a tenth), or ? with WAIT%
	awk '$4 == "?" && $5 != "?" || $4 != "?" && ($5 - $3 - $4 > 0.11 || $3 + $4 - $5 > 0.11) {
		bad = 1 } END { exit bad }' rows || fail "DENIED% is not STEAL% + WAIT%: $(cat rows)"
	cut -d' ' -f1-4 rows >rows4 && mv rows4 rows
	[ "$(awk '$4 != "?"' rows | wc -l)" = 2 ] || continue
	cmp -s rows last 2>/dev/null && continue	# the same refresh
	cp rows last
	awk '{ print $1, $2 + $3 + $4 }' rows >>sums
	[ "$(wc -l <sums)" -ge 10 ] && break
done
[ "$(wc -l <sums)" -ge 10 ] || fail "no five refreshes with WAIT% of both spinners: $(cat screen.txt)"
python3 - <<'PY' || fail "CPU% + STEAL% + WAIT% of an always runnable thread (above)"
import statistics, sys
by = {}
for line in open("sums"):
    tid, s = line.split()
    by.setdefault(tid, []).append(float(s))
bad = []
for tid, v in by.items():
    m = statistics.median(v)
    print(f"yes {tid}: CPU% + STEAL% + WAIT% per refresh {v}, median {m:.1f}")
    if not 90 <= m <= 110:
        bad.append(f"{tid}: median {m:.1f}, not 100 +- 10")
if bad:
    sys.exit("\n".join(bad))
PY
grep -q "WAIT%" screen.txt || fail "no WAIT% column"
echo "top WAIT%: ok (a row first seen showed '?': $seen_unknown)"
