#!/usr/bin/env bash
# bench/import: folding `perf script` text into stacks, cpuledger beside the
# reference collapser (FlameGraph's stackcollapse-perf.pl), both pinned to
# one core, on the same file: the test data's perf script outputs
# concatenated until the file reaches SIZE_MB. Outputs must be identical.
#
# The reference is not part of this tree (other people's code). Set REF to
# a stackcollapse-perf.pl, or put one at bench/out/FlameGraph/ (ignored by
# git).
#
# usage: bench/import.sh [SIZE_MB]   (default 1024)
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-1024}
cl=build/cpuledger
out=bench/out
data=../shared/testdata/flamegraph
mkdir -p "$out"
[ -x "$cl" ] || make -s all
ref=${REF:-$out/FlameGraph/stackcollapse-perf.pl}
if [ ! -f "$ref" ]; then
	echo "bench/import: no reference collapser: set REF to a stackcollapse-perf.pl" \
		"(FlameGraph), or put one at $ref" >&2
	exit 2
fi
cpu=$(( $(nproc) - 1 ))

f=$out/perf-script-${mb}M.txt
if [ ! -s "$f" ]; then
	echo "building $f from $data/perf-*.txt" >&2
	: >"$f.tmp"
	while [ "$(stat -c %s "$f.tmp")" -lt $((mb * 1024 * 1024)) ]; do
		# a blank line after each file ends its last sample, as perf
		# script itself would
		for t in "$data"/perf-*.txt; do cat "$t"; echo; done >>"$f.tmp"
	done
	mv "$f.tmp" "$f"
fi
bytes=$(stat -c %s "$f")
lines=$(wc -l <"$f")

timed() {	# label cmd... -> "label seconds maxrss_kb"
	local label=$1; shift
	/usr/bin/time -f "%e %M" -o "$out/time" taskset -c "$cpu" "$@" >"$out/$label.folded"
	echo "$label $(cat "$out/time")"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

runs=()
for i in 1 2 3; do
	runs+=("$(timed cpuledger $cl report -i "perf-script:$f" --format folded)")
done
cl_s=$(printf '%s\n' "${runs[@]}" | awk '{print $2}' | median)
cl_kb=$(printf '%s\n' "${runs[@]}" | awk '{print $3}' | sort -n | tail -1)
r=$(timed reference perl "$ref" "$f")
ref_s=$(echo "$r" | awk '{print $2}') ref_kb=$(echo "$r" | awk '{print $3}')

# the whole import, into a recording, and a pprof profile from it (no
# reference does these: for scale)
imp=()
for i in 1 2 3; do
	/usr/bin/time -f "%e %M" -o "$out/time" taskset -c "$cpu" \
		$cl import perf-script "$f" -o "$out/import.rec" 2>/dev/null
	imp+=("$(cat "$out/time")")
done
imp_s=$(printf '%s\n' "${imp[@]}" | awk '{print $1}' | median)
imp_kb=$(printf '%s\n' "${imp[@]}" | awk '{print $2}' | sort -n | tail -1)
rec_bytes=$(stat -c %s "$out/import.rec")
/usr/bin/time -f "%e %M" -o "$out/time" taskset -c "$cpu" \
	$cl report -i "$out/import.rec" --format pprof -o "$out/import.pb.gz"
read -r pp_s pp_kb <"$out/time"

cmp -s "$out/cpuledger.folded" "$out/reference.folded" ||
	{ echo "cpuledger and the reference collapser disagree" >&2; exit 1; }
stacks=$(wc -l <"$out/cpuledger.folded")

awk -v b="$bytes" -v l="$lines" -v s="$stacks" -v cs="$cl_s" -v ck="$cl_kb" \
	-v rs="$ref_s" -v rk="$ref_kb" -v is="$imp_s" -v ik="$imp_kb" -v rb="$rec_bytes" \
	-v ps="$pp_s" -v pk="$pp_kb" 'BEGIN {
	printf "bench/import: perf script text, %.2f GB, %d lines, %d distinct stacks, one core\n", b / 1e9, l, s
	printf "%-32s %10s %12s %12s\n", "", "seconds", "MB/s", "peak RSS"
	printf "%-32s %10.2f %12.1f %9.1f MB\n", "cpuledger report --format folded (med 3)", cs, b / cs / 1e6, ck / 1024
	printf "%-32s %10.2f %12.1f %9.1f MB\n", "stackcollapse-perf.pl", rs, b / rs / 1e6, rk / 1024
	printf "ratio cpuledger/reference: speed %.1fx, peak RSS %.2f\n", rs / cs, ck / rk
	printf "outputs identical: yes\n"
	printf "%-32s %10.2f %12.1f %9.1f MB\n", "cpuledger import -o REC (med 3)", is, b / is / 1e6, ik / 1024
	printf "%-32s %10.2f %12s %9.1f MB\n", "cpuledger report -i REC --format pprof", ps, "", pk / 1024
	printf "recording %.1f MB (%.1f%% of the text)\n", rb / 1e6, 100 * rb / b
}' | tee "$out/import.txt"
