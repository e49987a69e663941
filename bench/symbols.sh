#!/usr/bin/env bash
# bench/symbols: the cost of naming functions, cpuledger against perf, on
# one run. A 60 s system-wide recording with call chains is made by
# `cpuledger record -a -g -F 1000` and `perf record -a -g -F 1000 -B` at the
# same time, while a compiler builds cpuledger over and over (many
# functions, in cc1, as, ld and libraries). Then:
# - cpuledger: what naming is left when recording ends (it names
#   functions as it records; the time from the end of the recording to the
#   recorder's exit), plus `cpuledger report --by dso,function`;
# - perf: `perf report --sort dso,sym` on its perf.data, which names
#   functions at report time.
# Report times are medians of 3; ratios cpuledger/perf.
#
# usage: bench/symbols.sh [SECONDS]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
cl=$PWD/build/cpuledger
out=$PWD/bench/out/symbols
mkdir -p "$out"
[ -x "$cl" ] || make -s all
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 1; }

# the load: builds of a copy of this tree, until told to stop
rm -rf "$out/tree" && mkdir -p "$out/tree" && cp -r Makefile src scripts "$out/tree/"
( while [ ! -e "$out/stop" ]; do make -s -C "$out/tree" BUILD=b clean >/dev/null 2>&1 || true
	make -s -C "$out/tree" BUILD=b b/cpuledger >/dev/null 2>&1 || true; done ) &
load=$!
rm -f "$out/stop"
sleep 2
perf record -q -B -e cpu-clock -a -g -F 1000 -o "$out/perf.data" -- sleep $((secs + 2)) 2>/dev/null &
perf=$!
sleep 0.5
/usr/bin/time -f "%e" -o "$out/cl.elapsed" "$cl" record -a -g -F 1000 --duration "$secs" -o "$out/cl.rec" 2>"$out/cl.err"
wait $perf
touch "$out/stop"
wait $load || true

# cpuledger names functions as it records: what is left at the end is the
# time from the end of recording to the recorder's exit (its whole
# elapsed time less the span it says it recorded, so its start is counted
# too)
span=$(sed -n 's/.*record: \([0-9.]*\) s, .*/\1/p' "$out/cl.err")
elapsed=$(cat "$out/cl.elapsed")
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
t() { /usr/bin/time -f "%e" -o "$out/t" "$@" >/dev/null 2>&1; cat "$out/t"; }
cl_rep=$(for i in 1 2 3; do t "$cl" report -i "$out/cl.rec" --by dso,function; done | median)
perf_rep=$(for i in 1 2 3; do t perf report -i "$out/perf.data" --stdio --sort dso,sym; done | median)
perf_samples=$(perf report -i "$out/perf.data" --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
cl_samples=$("$cl" report -i "$out/cl.rec" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["clock_samples"])')

python3 - "$secs" "$span" "$elapsed" "$cl_rep" "$perf_rep" "$cl_samples" "$perf_samples" <<'PY' | tee "$out/symbols.txt"
import sys
secs, span, elapsed, clr, pr, cls, ps = sys.argv[1:]
naming = float(elapsed) - float(span)
clr, pr = float(clr), float(pr)
print("bench/symbols: %s s system-wide with call chains (-a -g -F 1000) while compiling; one run" % secs)
print("  cpuledger: %s samples; naming left at the end %.3f s (exit %.3f s after a %.3f s span); report --by dso,function %.3f s (median of 3)" % (cls, naming, float(elapsed), float(span), clr))
print("  perf:      %s samples; perf report --sort dso,sym %.3f s (median of 3)" % (ps, pr))
print("ratio cpuledger/perf: naming at the end + report %.2f; report alone %.2f" % ((naming + clr) / pr, clr / pr))
PY
