#!/usr/bin/env bash
# The main job on built-in workloads, for `make run`:
# 1. live: `cpuledger run` records two spinning threads for 5 s, prints
#    their time like time(1) and adds it to the ledger build/demo/cpuledger.db
#    (it grows by one collection a run); `cpuledger report` then shows the
#    recording per thread, with per CPU the steal attributed beside the
#    kernel's; `cpuledger bill` sums the ledger by command.
# 2. sampling data recorded elsewhere: a simulated VM host, analysed by
#    each of seed 001's methods and set beside the simulator's truth.
set -euo pipefail
cl=${1:-build/cpuledger}
out=build/demo
mkdir -p "$out/bin"
# the binary as `cpuledger`, the name README.md shows its command by
# (scripts/doc-outputs.sh records the same way when this has not run)
ln -sf "$(realpath "$cl")" "$out/bin/cpuledger"
export PATH="$PWD/$out/bin:$PATH"

echo "== cpuledger run --source perf --ledger $out/cpuledger.db -- cpuledger workload threads --seconds 5"
cpuledger run --source perf -o "$out/live.rec" --ledger "$out/cpuledger.db" -- cpuledger workload threads --threads 2 --seconds 5
echo
echo "== cpuledger report -i $out/live.rec --by thread"
"$cl" report -i "$out/live.rec" --by thread | cut -c1-160 | head -20
echo
echo "== cpuledger bill --ledger $out/cpuledger.db --by command"
"$cl" bill --ledger "$out/cpuledger.db" --by command | cut -c1-160
echo

"$cl" simulate --seed 42 --vms 2 --vcpus 4 --duration-ms 20000 --steal-pct 5 \
	--jitter-ns 50000 -o "$out/samples.csv" --truth "$out/truth.json"
echo "== cpuledger analyze --by process $out/samples.csv (a simulated VM host)"
"$cl" analyze --by process "$out/samples.csv"
echo
echo "== the three methods against the simulator's truth (steal, seconds)"
for m in preceding bracketed ratio; do
	"$cl" analyze --format json --method "$m" --timestamps -o "$out/report-$m.json" "$out/samples.csv"
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
echo "files: $out/live.rec (the recording), $out/cpuledger.db (the ledger), $out/samples.csv, $out/truth.json, $out/report-*.json"
