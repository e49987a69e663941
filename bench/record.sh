#!/usr/bin/env bash
# bench/record: the cost of recording, cpuledger against perf, in one run.
# A fixed amount of work (cpuledger workload threads --threads 2
# --iterations N) runs alone, then under `cpuledger record -a -g -F 1000`,
# then under `perf record -e cpu-clock -a -g -F 1000`, three rounds in turn.
# Each recorder starts before the workload and is stopped with SIGINT when
# it ends; /usr/bin/time measures the recorder alone (user + system CPU,
# including what perf does after the signal). Figures: the recorder's CPU
# time, the workload's slowdown against running alone, and bytes per
# cpu-clock sample of the file written; medians of the rounds, and ratios.
#
# usage: bench/record.sh [ITERATIONS]   (default 2000000, about 4 s)
set -euo pipefail
cd "$(dirname "$0")/.."
iter=${1:-2000000}
cl=build/cpuledger
out=bench/out/record
mkdir -p "$out"
[ -x "$cl" ] || make -s all
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 1; }

workload() { /usr/bin/time -f "%e" -o "$out/wl.time" "$cl" workload threads --threads 2 --iterations "$iter"; cat "$out/wl.time"; }

# name file cmd...: records around one workload run; prints
# "wall_of_workload recorder_cpu_s bytes samples"
under() {
	local name=$1 file=$2; shift 2
	rm -f "$file"
	/usr/bin/time -f "%U %S" -o "$out/$name.rtime" "$@" >/dev/null 2>"$out/$name.err" &
	local timer=$!
	sleep 1
	local wall; wall=$(workload)
	pkill -INT -P "$timer" || true
	wait "$timer" || true
	local cpu; cpu=$(tail -n 1 "$out/$name.rtime" | awk '{print $1 + $2}')
	local samples
	if [ "$name" = cpuledger ]; then
		samples=$("$cl" report -i "$file" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["clock_samples"])')
	else
		samples=$(perf report -i "$file" --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
	fi
	echo "$wall $cpu $(stat -c %s "$file") $samples"
}

: >"$out/rounds"
for round in 1 2 3; do
	echo "alone $(workload)" >>"$out/rounds"
	echo "cpuledger $(under cpuledger "$out/cpuledger.rec" "$cl" record -a -g -F 1000 -o "$out/cpuledger.rec")" >>"$out/rounds"
	echo "perf $(under perf "$out/perf.data" perf record -q -e cpu-clock -a -g -F 1000 -o "$out/perf.data")" >>"$out/rounds"
done

python3 - "$out/rounds" "$iter" <<'PY' | tee "$out/record.txt"
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = lambda name, i: statistics.median(float(r[i]) for r in rows if r[0] == name)
alone = med("alone", 1)
print("bench/record: workload threads --threads 2 --iterations %s, recorders -a -g -F 1000, median of 3 rounds" % sys.argv[2])
print("%-10s %12s %10s %14s %12s %14s" % ("", "workload s", "slowdown", "recorder CPU s", "samples", "bytes/sample"))
print("%-10s %12.3f %10s %14s %12s %14s" % ("alone", alone, "-", "-", "-", "-"))
fig = {}
for name in ("cpuledger", "perf"):
    wall, cpu, size, n = med(name, 1), med(name, 2), med(name, 3), med(name, 4)
    fig[name] = (wall / alone - 1, cpu, size / n)
    print("%-10s %12.3f %9.1f%% %14.3f %12.0f %14.1f" % (name, wall, 100 * (wall / alone - 1), cpu, n, size / n))
c, p = fig["cpuledger"], fig["perf"]
print("ratios cpuledger/perf: recorder CPU %.2f, bytes per sample %.2f; slowdown %.1f%% vs %.1f%%" %
      (c[1] / p[1], c[2] / p[2], 100 * c[0], 100 * p[0]))
PY
