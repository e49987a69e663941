#!/usr/bin/env bash
# The main job on a built-in workload, for `make run`: until live recording
# lands, a simulated virtualization host is the workload. It simulates two
# VMs with four vCPUs each for 20 s with 5 % steal, analyses the samples by
# each method, and prints the report beside the simulator's truth.
set -euo pipefail
cl=${1:-build/cpuledger}
out=build/demo
mkdir -p "$out"
"$cl" simulate --seed 42 --vms 2 --vcpus 4 --duration-ms 20000 --steal-pct 5 \
	--jitter-ns 50000 -o "$out/samples.csv" --truth "$out/truth.json"
echo "== cpuledger analyze --by process $out/samples.csv"
"$cl" analyze --by process "$out/samples.csv"
echo
echo "== the three methods against the simulator's truth (steal, seconds)"
for m in preceding bracketed ratio; do
	"$cl" analyze -f json --method "$m" --timestamps -o "$out/report-$m.json" "$out/samples.csv"
done
python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
t = json.load(open(d + "/truth.json"))["totals"]
s = lambda ns: "%8.3f" % (ns / 1e9)
print("truth:      total %s  held by programs %s  at switches %s  while idle %s" %
      (s(t["steal_ns"]), s(t["held_steal_ns"]), s(t["switch_steal_ns"]), s(t["idle_steal_ns"])))
for m in ("preceding", "bracketed", "ratio"):
    r = json.load(open("%s/report-%s.json" % (d, m)))["totals"]
    print("%-10s  total %s  attributed       %s  unattributed %s" %
          (m + ":", s(r["steal_ns"]), s(r["attributed_steal_ns"]), s(r["unattributed_steal_ns"])))
PY
echo
echo "files: $out/samples.csv, $out/truth.json, $out/report-{preceding,bracketed,ratio}.json"
