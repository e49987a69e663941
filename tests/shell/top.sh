# cpuledger top (issue 16) in a real terminal: tmux, its server started in
# the foreground on a private socket (a daemonized one dies at once on
# these machines), an 80x24 window running top while `yes` spins:
# - within 10 s (a timeout: a loaded machine is slow) the screen shows the header (per-CPU lines) and the
#   spinner's row at about 100 % CPU (on a quiet machine: with a load
#   average over 1.5, any share);
# - the spinner's row has top's columns: NI, RES (KiB), S (R, running)
#   and TIME+ (M:SS.hh) beside CPU% and STEAL%;
# - P, M and T sort by CPU%, memory (RES) and time as in top; g shows
#   programs (it was P);
# - H shows its threads (a TID column, the spinner's pid and tid);
# - q exits 0 and leaves the alternate screen (the terminal restored);
# - --batch -n 2 prints two refreshes as text, without the keys' hint, and
#   exits 0; the header's own CPU is a share of a CPU, like its row's.
. "$(dirname "$0")/../lib.sh"
command -v tmux >/dev/null || skip "tmux is not installed"
need_perf
cd "$TMP"
yes >/dev/null &
spinner=$!
S=$TMP/tmux.sock
tmux -f /dev/null -S "$S" -D >/dev/null 2>&1 &
server=$!
trap 'kill $spinner 2>/dev/null; tmux -S "$S" kill-server 2>/dev/null; kill $server 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 50); do [ -S "$S" ] && break; sleep 0.1; done
tmux -S "$S" new-session -d -x 80 -y 24 "$CL top; echo EXIT=\$?; sleep 30" ||
	fail "tmux new-session"
t0=$(date +%s%N)
screen() { tmux -S "$S" capture-pane -p; }
# waits up to $1 s for the screen to match the awk program $2
wait_screen() {
	local end=$(( $(date +%s%N) + $1 * 1000000000 ))
	while [ "$(date +%s%N)" -lt $end ]; do
		screen >screen.txt
		awk "$2" screen.txt && return 0
		sleep 0.2
	done
	return 1
}
# a CPU of its own only on a quiet machine: under other load, any share
busy=90
awk '{ exit !($1 > 1.5) }' /proc/loadavg && busy=0.1
wait_screen 10 "/^cpuledger top/ { h = 1 } /^CPU0 / { c = 1 }
	      /^ *$spinner / && \$6 + 0 >= $busy { r = 1 } END { exit !(h && c && r) }" ||
	fail "no header and spinner row at $busy % or more within 10 s: $(cat screen.txt)"
echo "top: header and the spinner at $(awk "/^ *$spinner /"' { print $6 }' screen.txt) % after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
[ "$(tmux -S "$S" display -p '#{alternate_on}')" = 1 ] || fail "top is not on the alternate screen"
awk -v p="$spinner" '$1 == p && $3 ~ /^-?[0-9]+$/ && $4 + 0 > 0 && $5 == "R" &&
	$8 ~ /^[0-9]+:[0-5][0-9]\.[0-9][0-9]$/ { ok = 1 } END { exit !ok }' screen.txt ||
	fail "the spinner's NI, RES, S, TIME+: $(grep "^ *$spinner " screen.txt)"
grep -q "PID USER  *NI  *RES S  *CPU% STEAL%  *TIME+" screen.txt || fail "columns: $(grep PID screen.txt)"
tmux -S "$S" send-keys M
wait_screen 3 '/sort RES;/ { s = 1 } END { exit !s }' || fail "M did not sort by RES: $(cat screen.txt)"
awk '/ PID / { on = 1; next } on && $4 ~ /^[0-9]+$/ { if (last != "" && $4 + 0 > last + 0) bad = 1; last = $4 }
     END { exit bad }' screen.txt || fail "M: rows not by RES: $(cat screen.txt)"
tmux -S "$S" send-keys P
wait_screen 3 '/sort CPU%;/ { s = 1 } END { exit !s }' || fail "P did not sort by CPU%: $(cat screen.txt)"
tmux -S "$S" send-keys g
wait_screen 3 '/^programs: / { s = 1 } / PROGRAM *$/ { t = 1 } END { exit !(s && t) }' ||
	fail "g did not show programs: $(cat screen.txt)"
tmux -S "$S" send-keys g
echo "top: NI, RES, S, TIME+; P, M sort as in top; g shows programs"
tmux -S "$S" send-keys H
wait_screen 3 "/ TID / { t = 1 } /^ *$spinner +$spinner / && \$7 + 0 >= $busy { r = 1 } END { exit !(t && r) }" ||
	fail "H did not show the spinner's thread: $(cat screen.txt)"
echo "top: H shows the spinner's thread"
tmux -S "$S" send-keys q
wait_screen 3 '/EXIT=/ { found = 1 } END { exit !found }' || fail "q did not end top: $(cat screen.txt)"
grep -q "EXIT=0" screen.txt || fail "top exited with $(grep EXIT= screen.txt)"
[ "$(tmux -S "$S" display -p '#{alternate_on}')" = 0 ] || fail "the terminal was not restored"
echo "top: q exits 0, the terminal restored"

"$CL" top --batch -n 2 -d 0.5 >batch.txt 2>batch.err || fail "--batch: $(cat batch.err)"
[ "$(grep -c '^cpuledger top' batch.txt)" = 2 ] || fail "--batch -n 2 printed: $(cat batch.txt)"
grep -q "^ *$spinner .* yes" batch.txt || fail "--batch: no row of the spinner: $(cat batch.txt)"
grep -q "q quit" batch.txt && fail "--batch shows the keys' hint: $(grep "q quit" batch.txt)"
grep -qE "top's own CPU [0-9]+\.[0-9]%" batch.txt || fail "--batch: top's own CPU: $(cat batch.txt)"
"$CL" top 2>err </dev/null >/dev/null && fail "top without a terminal ran"
grep -q "needs a terminal" err || fail "top without a terminal: $(cat err)"
echo "top: --batch -n 2 printed 2 refreshes; without a terminal it says so"
