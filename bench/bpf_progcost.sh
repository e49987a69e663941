#!/usr/bin/env bash
# bench/bpf_progcost: the BPF collector's programs' own time a context
# switch, by the kernel's bpf_stats, for builds compared in turn (issue
# 25): under each `cpuledger sched` given, `perf bench sched pipe -l
# LOOPS` runs RUNS times; each run prints run_time_ns / run_cnt of the
# collector's on_switch (bpf_stats' own timing included: about 130 ns on
# the project's PVM guests, an empty program's figure). Used to judge a
# change to the programs: alternate the old and new binaries, compare
# medians.
#
# usage: bench/bpf_progcost.sh CPULEDGER... (env RUNS=5 LOOPS=100000)
set -euo pipefail
RUNS=${RUNS:-5}
LOOPS=${LOOPS:-100000}
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
# the ids of the programs named on_switch loaded now
ids() {
	bpftool prog show --json | python3 -c '
import json, sys
print(" ".join(str(p["id"]) for p in json.load(sys.stdin) if p.get("name") == "on_switch"))'
}
for cl in "$@"; do
	for _ in $(seq "$RUNS"); do
		sysctl -q -w kernel.bpf_stats_enabled=1
		ids | sort >"$TMP/before"
		"$cl" sched >/dev/null 2>"$TMP/err" &
		pid=$!
		for _ in $(seq 50); do grep -q collecting "$TMP/err" && break; sleep 0.1; done
		perf bench sched pipe -l "$LOOPS" >/dev/null 2>&1
		# this collector's programs only: those loaded since it started
		bpftool prog show --json | python3 -c '
import json, sys
old = set(int(x) for x in open(sys.argv[1]).read().split())
for p in json.load(sys.stdin):
    if p.get("name") == "on_switch" and p["id"] not in old:
        print("%s %.0f ns a switch over %d" % (sys.argv[2], p["run_time_ns"] / max(p["run_cnt"], 1), p["run_cnt"]))' "$TMP/before" "$cl"
		kill -INT "$pid"
		wait "$pid" || true
		pid=
		sysctl -q -w kernel.bpf_stats_enabled="$stats0"
	done
done
