# The agent's per-CPU steal against the kernel's (issue 21's live
# must-show, for the agent; live_steal.sh and live_import.sh do record and
# import): /metrics scraped before and after LIVE_SECONDS (default 20; the
# issue's 60 s with LIVE_SECONDS=60) of two spinners on every CPU, per CPU
# the growth of cpuledger_cpu_steal_seconds_total (what the agent gave the
# threads on it), plus, where the agent reads the steal clock (the BPF
# collector), that of cpuledger_cpu_idle_steal_seconds_total (what was
# stolen while the CPU was idle: the window holds idle seconds before and
# after the load, and a vCPU woken from idle on a busy host waits for it,
# steal no thread held; in one CI run a CPU's threads had 6 ms of its
# 20 ms), within one USER_HZ tick (10 ms) plus 2 % of the growth of
# cpuledger_kernel_steal_seconds_total (/proc/stat's), and the latter
# equal to /proc/stat's own growth over the same time to a tick at each
# end. The agent shares the kernel's steal out at each scrape, so the two
# agree at a scrape. cpuledger_steal_source_info names the method and the
# accounting. A kernel that has counted no steal since boot is no
# reference (live_steal.sh says why): there the figures are printed, not
# compared. Skipped, saying why, where the kernel refuses perf_event_open.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
need_perf
SECONDS_=${LIVE_SECONDS:-20}
cd "$TMP"
blind=0
if ! dmesg 2>/dev/null | grep -qi "stealtime" &&
   awk '/^cpu[0-9]/ && $9 != 0 { seen = 1 } END { exit seen }' /proc/stat; then
	blind=1
fi
AP=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$CL" agent --ledger "$TMP/a.db" --interval 5 --listen "127.0.0.1:$AP" 2>agent.err &
agent=$!
spins=
trap 'kill $agent $spins 2>/dev/null || true; wait 2>/dev/null; rm -rf "$TMP"' EXIT
scrape() {	# FILE: /metrics, with /proc/stat read just after it
	python3 - "http://127.0.0.1:$AP/metrics" "$1" <<'PY'
import sys, urllib.request
body = urllib.request.urlopen(sys.argv[1], timeout=20).read().decode()
stat = open("/proc/stat").read()
open(sys.argv[2], "w").write(body)
open(sys.argv[2] + ".stat", "w").write(stat)
PY
}
for _ in $(seq 100); do
	scrape before 2>/dev/null && break
	kill -0 $agent 2>/dev/null || fail "the agent stopped: $(cat agent.err)"
	sleep 0.2
done
[ -s before ] || fail "no /metrics: $(cat agent.err)"
ncpu=$(getconf _NPROCESSORS_ONLN)
for _ in $(seq $((2 * ncpu))); do
	timeout "$SECONDS_" sh -c 'while :; do :; done' &
	spins="$spins $!"
done
wait $spins 2>/dev/null || true
spins=
# the second scrape once the load has ended and two snapshots (one a
# second) have been taken since: a snapshot's /proc/stat is read as it is
# taken, its attributed steal is the engine's, settled to the events it
# has taken out of its queue (a window behind, longer under ASan), and
# the spinners' last stints close when they exit. Scraped at once, a
# snapshot taken under load held /proc/stat's steal of moments the
# engine had not reached: in a CI run under ASan a CPU's attributed 0.010 s
# stood against /proc/stat's 0.020 s, past the 0.0104 s allowed, where the
# tick's rounding alone makes under 0.010.
sleep 3
scrape after || fail "the second scrape: $(cat agent.err)"
kill -TERM $agent
wait $agent || fail "agent: exit $?: $(cat agent.err)"
python3 - "$blind" <<'PY' || fail "per-CPU steal out of tolerance"
import re, sys
blind = sys.argv[1] == "1"
def metrics(f):
    out = {}
    for l in open(f):
        m = re.match(r'(cpuledger_(?:cpu|cpu_idle|kernel)_steal_seconds_total)\{cpu="(\d+)"\} (\S+)', l)
        if m:
            out[(m.group(1), int(m.group(2)))] = float(m.group(3))
    return out
def proc(f):
    return {int(l.split()[0][3:]): int(l.split()[8]) / 100.0 for l in open(f)
            if l.startswith("cpu") and l[3].isdigit()}
b, a = metrics("before"), metrics("after")
pb, pa = proc("before.stat"), proc("after.stat")
info = [l.strip() for l in open("after") if l.startswith("cpuledger_steal_source_info{")]
assert info and 'method="' in info[0] and 'kernel_accounting="' in info[0], info
print(info[0])
cpus = sorted(c for (n, c) in a if n == "cpuledger_cpu_steal_seconds_total")
assert cpus, "no cpuledger_cpu_steal_seconds_total in /metrics"
ok = True
for c in cpus:
    got = a[("cpuledger_cpu_steal_seconds_total", c)] - b.get(("cpuledger_cpu_steal_seconds_total", c), 0)
    kname = ("cpuledger_kernel_steal_seconds_total", c)
    kern = a[kname] - b.get(kname, 0) if kname in a else None
    iname = ("cpuledger_cpu_idle_steal_seconds_total", c)
    idle = a[iname] - b.get(iname, 0) if iname in a else None
    proc_growth = pa[c] - pb[c]
    tol = 0.010 + 0.02 * (kern or 0)
    good = kern is not None and abs(got + (idle or 0) - kern) <= tol and \
        abs(kern - proc_growth) <= 0.020
    if not blind:
        ok &= good
    print("cpu %d: attributed %.3f s + idle %s s, kernel %s s (/proc/stat %.3f s), tolerance %.3f s %s" %
          (c, got, "%.3f" % idle if idle is not None else "unknown",
           "%.3f" % kern if kern is not None else "unknown", proc_growth, tol,
           "not compared: the kernel has no steal clock" if blind else "ok" if good else "FAIL"))
sys.exit(0 if ok else 1)
PY
