# The agent scraped by a real Prometheus (issue 15): Debian's prometheus,
# started here on loopback with its storage in the test's directory,
# scrapes the agent every second for 40 s while `yes` spins
# (a copy named spinPID, so that other work's `yes` is not counted with
# it; --programs high enough that it has a label of its own on a busy
# machine).
# Through Prometheus's HTTP API:
# - the spinner's rate(cpuledger_cpu_seconds_total[20s]), summed over
#   its accounts, is what it really got over those 20 s (its own
#   /proc/PID/schedstat, which the machine's other work makes less than a
#   CPU) +- 0.05 CPU;
# - its counter at the end equals its schedstat at its exit within 2 %,
#   and the ledger's bill for it within one collection interval's worth
#   (and within 2 %);
# - `promtool check metrics` passes on a scrape, and OpenMetrics is served
#   when asked for;
# - SIGTERM: the agent adds the open interval and exits 0.
. "$(dirname "$0")/../lib.sh"
command -v prometheus >/dev/null || skip "prometheus is not installed"
command -v promtool >/dev/null || skip "promtool is not installed"
command -v curl >/dev/null || command -v python3 >/dev/null || skip "neither curl nor python3"
need_perf
cd "$TMP"
port() {	# a free loopback port
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
get() {	# URL [ACCEPT] -> body
	python3 - "$@" <<'PY'
import sys, urllib.request
req = urllib.request.Request(sys.argv[1])
if len(sys.argv) > 2:
    req.add_header("Accept", sys.argv[2])
sys.stdout.write(urllib.request.urlopen(req, timeout=20).read().decode())
PY
}
AP=$(port)
PP=$(port)
INTERVAL=5
"$CL" agent --ledger "$TMP/a.db" --interval $INTERVAL --programs 10000 --listen "127.0.0.1:$AP" 2>agent.err &
agent=$!
cat >prom.yml <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: cpuledger
    static_configs:
      - targets: ['127.0.0.1:$AP']
EOF
prometheus --config.file=prom.yml --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address="127.0.0.1:$PP" >prom.log 2>&1 &
prom=$!
trap 'kill $agent $prom $spin 2>/dev/null || true; wait 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 50); do
	get "http://127.0.0.1:$AP/metrics" >/dev/null 2>&1 && break
	sleep 0.2
done
get "http://127.0.0.1:$AP/metrics" >scrape.txt || fail "no /metrics: $(cat agent.err)"
promtool check metrics <scrape.txt >lint 2>&1 || fail "promtool: $(cat lint)"
get "http://127.0.0.1:$AP/metrics" "application/openmetrics-text; version=1.0.0" >scrape.om
tail -1 scrape.om | grep -qx "# EOF" || fail "OpenMetrics not served: $(tail -2 scrape.om)"
echo "scrape: promtool check metrics passes; OpenMetrics when asked"

S=spin$$
cp "$(command -v yes)" "$TMP/$S"
"$TMP/$S" >/dev/null &
spin=$!

# a profile of a second: its stacks are written when the window ends,
# not streamed as report's are (a field added to the stacks' view once
# left this path reading a NULL table, and the agent died)
python3 - "http://127.0.0.1:$AP/debug/pprof/profile?seconds=1" >profile.pb.gz <<'PY' ||
import sys, urllib.request
sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1], timeout=30).read())
PY
	fail "no profile: $(cat agent.err)"
gzip -dc profile.pb.gz >profile.pb || fail "the profile is not gzip"
grep -qa "$S" profile.pb || fail "the profile does not name $S"
kill -0 $agent 2>/dev/null || fail "the agent died at a profile: $(cat agent.err)"
echo "profile: a second of it, gzipped, names $S"
ran() {	# the spinner's CPU time so far, in seconds, and the time now
	python3 -c 'import sys, time; print(int(open(sys.argv[1]).read().split()[0]) / 1e9, time.time())' \
		"/proc/$spin/schedstat"
}
query() {	# PromQL [TIME] -> the first value
	get "http://127.0.0.1:$PP/api/v1/query?query=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$1")${2:+&time=$2}" |
		python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")'
}
sleep 20
read -r ran0 t0 < <(ran)
sleep 20
read -r ran1 t1 < <(ran)
got=$(python3 -c "import sys; print('%.3f' % ((float(sys.argv[2]) - float(sys.argv[1])) / (float(sys.argv[4]) - float(sys.argv[3]))))" "$ran0" "$ran1" "$t0" "$t1")
sleep 3	# the agent's snapshot and the scrape of t1's figures
# what the kernel counts is runtime: cpu, and steal too where its runtime
# holds steal (kernel_accounting plain: docs/record.md)
runtime_of() {	# FAMILY-FORM ([TIME]): the cpu series, and steal's added
	local q=${1//FAMILY/cpuledger_cpu_seconds_total}
	if [ "$(query 'count(cpuledger_steal_source_info{kernel_accounting="plain"})')" = 1 ]; then
		q="($q) + (${1//FAMILY/cpuledger_steal_seconds_total})"
	fi
	query "$q" ${2:+"$2"}
}
rate=$(runtime_of "sum(rate(FAMILY{program=\"$S\"}[20s]))" "$t1")
echo "$S over 20 s: rate of its CPU seconds $rate, what it really got (schedstat) $got CPU"
python3 -c "import sys; r, g = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if abs(r - g) <= 0.05 else 1)" "$rate" "$got" ||
	fail "the spinner's rate is $rate, not what it got ($got) +- 0.05"
read -r ran_end _ < <(ran)
kill $spin
wait $spin 2>/dev/null || true
sleep 4	# its last figures, scraped
total=$(query "sum(cpuledger_cpu_seconds_total{program=\"$S\"})")
runtime=$(runtime_of "sum(FAMILY{program=\"$S\"})")
echo "$S: Prometheus $runtime s of runtime, its schedstat $ran_end s (read just before it was killed)"
python3 -c "import sys; p, s = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if abs(p - s) <= 0.02 * s else 1)" "$runtime" "$ran_end" ||
	fail "Prometheus's runtime ($runtime s) and the spinner's schedstat ($ran_end s) differ by more than 2 %"
kill -TERM $agent
wait $agent || fail "the agent did not exit 0 on SIGTERM: $(cat agent.err)"
[ "$(sqlite3 "$TMP/a.db" "SELECT count(*) FROM collections WHERE reason = 'end'")" = 1 ] ||
	fail "SIGTERM: no end collection"
billed=$("$CL" bill --ledger "$TMP/a.db" --by comm --format json | python3 -c '
import json, sys
rows = [r for r in json.load(sys.stdin)["rows"] if r["comm"] == sys.argv[1]]
print(sum(r["cpu_ns"] for r in rows) / 1e9)' "$S")
echo "$S: Prometheus $total s, the ledger's bill $billed s"
python3 -c "
import sys
p, b, i = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
sys.exit(0 if abs(p - b) <= min(i, 0.02 * b) else 1)" "$total" "$billed" "$INTERVAL" ||
	fail "Prometheus's total ($total s) and the bill ($billed s) differ"
echo "agent_prometheus: ok"
