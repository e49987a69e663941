#!/usr/bin/env bash
# bench/bpf_progcost: the BPF collector's programs' own time a context
# switch, by the kernel's bpf_stats, for builds compared in turn (issue
# 25): under each `cpuledger sched` given, `perf bench sched pipe -l
# LOOPS` runs; each run prints run_time_ns / run_cnt of the collector's
# on_switch (bpf_stats' own timing included: 130-190 ns on the project's
# PVM guests, an empty program's figure), and the end the median of each
# build. Used to judge a change to the programs. The builds take turns
# run by run (old, new, old, new...), not all of one build's runs first:
# this machine's load changes by the minute. Only the programs the
# collector under test holds (its /proc/PID/fdinfo) are read: other
# collectors loaded meanwhile (tests) have programs of the same name.
# PIN=CPU runs both ends of the pipe on that one CPU: every switch is
# then task to task (the thread leaving has an entry to update), none to
# or from idle, and the figure varies less than when the scheduler
# places the two ends on two CPUs or one from run to run.
#
# usage: bench/bpf_progcost.sh CPULEDGER... (env RUNS=5 LOOPS=100000 PIN=)
set -euo pipefail
RUNS=${RUNS:-5}
LOOPS=${LOOPS:-100000}
PIN=${PIN:-}
[ $# -gt 0 ] || { echo "usage: bench/bpf_progcost.sh CPULEDGER..." >&2; exit 2; }
TMP=$(mktemp -d /var/tmp/bpfcost.XXXXXX)
stats0=$(sysctl -n kernel.bpf_stats_enabled)
pid=
cleanup() {
	[ -n "$pid" ] && kill -INT "$pid" 2>/dev/null && wait "$pid" || true
	sysctl -q -w kernel.bpf_stats_enabled="$stats0"
	rm -rf "$TMP"
}
trap cleanup EXIT
pin=()
[ -z "$PIN" ] || pin=(taskset -c "$PIN")
# the ids of the BPF programs process $1 holds
held() {
	grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u
}
for _ in $(seq "$RUNS"); do
	for cl in "$@"; do
		sysctl -q -w kernel.bpf_stats_enabled=1
		"$cl" sched >/dev/null 2>"$TMP/err" &
		pid=$!
		for _ in $(seq 50); do grep -q collecting "$TMP/err" && break; sleep 0.1; done
		held "$pid" >"$TMP/ids"
		"${pin[@]}" perf bench sched pipe -l "$LOOPS" >/dev/null 2>&1
		bpftool prog show --json | python3 -c '
import json, sys
ours = set(int(x) for x in open(sys.argv[1]).read().split())
for p in json.load(sys.stdin):
    if p.get("name") == "on_switch" and p["id"] in ours:
        print("%s %.0f ns a switch over %d" % (sys.argv[2], p["run_time_ns"] / max(p["run_cnt"], 1), p["run_cnt"]))' "$TMP/ids" "$cl" | tee -a "$TMP/all"
		kill -INT "$pid"
		wait "$pid" || true
		pid=
		sysctl -q -w kernel.bpf_stats_enabled="$stats0"
	done
done
# the median of each build's runs
python3 -c '
import sys, collections
runs = collections.OrderedDict()
for line in open(sys.argv[1]):
    w = line.split()
    runs.setdefault(w[0], []).append(int(w[1]))
for cl, v in runs.items():
    v.sort()
    m = v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
    print("median %s %.0f ns a switch (%d runs: %s)" % (cl, m, len(v), " ".join(map(str, v))))' "$TMP/all"
