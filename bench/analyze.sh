#!/usr/bin/env bash
# bench/analyze: samples per second and peak memory of `cpuledger analyze`,
# side by side with the reference implementation (bench/ref_analyze.py) on
# the same file, both pinned to one core; and cpuledger's peak memory on a
# file ten times smaller, to show it does not grow with the sample count.
# Both programs' JSON must agree, or the figures mean nothing.
#
# usage: bench/analyze.sh [SAMPLES]   (default 100000000; 16 streams)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000000}
cl=build/cpuledger
out=bench/out
mkdir -p "$out"
[ -x "$cl" ] || make -s all
cpu=$(( $(nproc) - 1 ))
timed() {	# label file cmd... -> "label seconds maxrss_kb"
	local label=$1 file=$2; shift 2
	/usr/bin/time -f "%e %M" -o "$out/time" taskset -c "$cpu" "$@" "$file" >"$out/$label.json"
	echo "$label $(cat "$out/time")"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for size in $n $((n / 10)); do
	f=$out/samples-$size.csv
	if [ ! -s "$f" ]; then
		echo "simulating $size samples into $f" >&2
		$cl simulate --seed 1 --vms 4 --vcpus 4 --duration-ms $((size / 16)) \
			--steal-pct 5 --jitter-ns 50000 -o "$f"
	fi
done
big=$out/samples-$n.csv small=$out/samples-$((n / 10)).csv
bytes=$(stat -c %s "$big")

runs=()
for i in 1 2 3; do runs+=("$(timed cpuledger "$big" $cl analyze --timestamps --format json)"); done
cl_s=$(printf '%s\n' "${runs[@]}" | awk '{print $2}' | median)
cl_kb=$(printf '%s\n' "${runs[@]}" | awk '{print $3}' | sort -n | tail -1)
small_kb=$(timed small "$small" $cl analyze --timestamps --format json | awk '{print $3}')
ref=$(timed reference "$big" python3 bench/ref_analyze.py --timestamps)
ref_s=$(echo "$ref" | awk '{print $2}') ref_kb=$(echo "$ref" | awk '{print $3}')

canon() { python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' "$1"; }
[ "$(canon "$out/cpuledger.json")" = "$(canon "$out/reference.json")" ] ||
	{ echo "cpuledger and the reference disagree" >&2; exit 1; }

awk -v n="$n" -v b="$bytes" -v cs="$cl_s" -v ck="$cl_kb" -v sk="$small_kb" \
	-v rs="$ref_s" -v rk="$ref_kb" -v cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" 'BEGIN {
	printf "bench/analyze: %d samples, %.2f GB CSV, 16 streams, --timestamps, one core (%s)\n", n, b / 1e9, cpu
	printf "%-26s %10s %16s %12s\n", "", "seconds", "samples/s", "peak RSS"
	printf "%-26s %10.2f %16.0f %9.1f MB\n", "cpuledger (median of 3)", cs, n / cs, ck / 1024
	printf "%-26s %10.2f %16.0f %9.1f MB\n", "reference (Python)", rs, n / rs, rk / 1024
	printf "speed ratio cpuledger/reference: %.1fx; input %.0f MB/s\n", rs / cs, b / cs / 1e6
	printf "cpuledger peak RSS at %d samples: %.1f MB; at %d: %.1f MB\n", n / 10, sk / 1024, n, ck / 1024
	printf "outputs identical: yes\n"
}' | tee "$out/analyze.txt"
