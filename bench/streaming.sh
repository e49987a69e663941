#!/usr/bin/env bash
# bench/streaming: the streaming engine over time and over size.
#
# Part 1, a long recording (issue 13): `cpuledger record -a -g --ledger DB
# --interval 1` for MINUTES minutes (default 10) while this tree builds in
# a loop, with `perf record -a -g -F 1000 -e cpu-clock` beside it as the
# peer. The recorders' CPU time per second in the second minute and in
# the last, and their resident memory at one minute and at the end (from
# /proc/PID/stat and status): a streaming recorder's last minute costs
# what its second did.
#
# Part 2, reports of 1x and 8x the samples (bench/mkrec recordings:
# SAMPLES, default 2 million, 64 threads on 2 CPUs), pinned to one core:
# seconds, samples a second and peak memory, with one frame a sample
# (json) and with 16-frame stacks (json, pprof).
#
# Reports of real recordings (record -a -g and perf script imports of a
# compile loop) are bench/streaming_real.sh's.
#
# usage: bench/streaming.sh [MINUTES [SAMPLES]]    (MINUTES 0: part 2 only)
set -euo pipefail
cd "$(dirname "$0")/.."
MIN=${1:-10}
SAMPLES=${2:-2000000}
make -s all build/bench/mkrec
CL=$PWD/build/cpuledger
TMP=$(mktemp -d /var/tmp/streaming.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }	# utime + stime
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

if [ "$MIN" -gt 0 ]; then
	# the load: this tree built again and again
	( while :; do make -s -j2 BUILD="$TMP/tree" all >/dev/null 2>&1; rm -rf "$TMP/tree"; done ) &
	pids+=($!)
	"$CL" record -a -g --ledger "$TMP/l.db" --interval 1 -o "$TMP/s.rec" \
		--duration $((MIN * 60 + 5)) 2>"$TMP/rec.err" &
	rec=$!
	pids+=($rec)
	perf record -q -a -g -F 1000 -e cpu-clock -o "$TMP/perf.data" 2>"$TMP/perf.err" &
	perf_pid=$!
	pids+=($perf_pid)
	hz=$(getconf CLK_TCK)
	at() {	# seconds -> sleeps until then since the start
		local now; now=$(( $(date +%s) - start ))
		[ "$1" -gt "$now" ] && sleep $(( $1 - now )) || true
	}
	start=$(date +%s)
	declare -A c r
	for t in 60 120 $((MIN * 60 - 60)) $((MIN * 60)); do
		at "$t"
		c[cl,$t]=$(cpu_ticks $rec) c[perf,$t]=$(cpu_ticks $perf_pid)
		r[cl,$t]=$(rss_kb $rec) r[perf,$t]=$(rss_kb $perf_pid)
	done
	kill -INT $perf_pid
	wait $rec || { echo "record failed: $(cat "$TMP/rec.err")" >&2; exit 1; }
	wait $perf_pid || true
	end=$((MIN * 60)) last=$((MIN * 60 - 60))
	collections=$(sqlite3 "$TMP/l.db" "SELECT count(*) FROM collections" 2>/dev/null || echo "?")
	echo "bench/streaming part 1: record -a -g --ledger --interval 1 for $MIN min while this tree builds, beside perf record -a -g -F 1000"
	printf "%-10s %16s %16s %8s %14s %14s %8s\n" "" "CPU/s min 2" "CPU/s last min" "ratio" \
		"RSS at 1 min" "RSS at end" "ratio"
	for who in cl perf; do
		a=$(echo "(${c[$who,120]} - ${c[$who,60]}) / 60 / $hz * 100" | bc -l)
		b=$(echo "(${c[$who,$end]} - ${c[$who,$last]}) / 60 / $hz * 100" | bc -l)
		printf "%-10s %15.2f%% %15.2f%% %7.2fx %11.1f MB %11.1f MB %7.2fx\n" \
			"$([ $who = cl ] && echo cpuledger || echo perf)" "$a" "$b" \
			"$(echo "$b / ($a + 0.0001)" | bc -l)" "$(echo "${r[$who,60]} / 1024" | bc -l)" \
			"$(echo "${r[$who,$end]} / 1024" | bc -l)" \
			"$(echo "${r[$who,$end]} / ${r[$who,60]}" | bc -l)"
	done
	echo "cpuledger: $(grep "records lost" "$TMP/rec.err"); $collections collections"
	echo "perf: $(du -h "$TMP/perf.data" | cut -f1) written"
	rm -f "$TMP/perf.data" "$TMP/s.rec"
	kill "${pids[0]}" 2>/dev/null || true
fi

# Part 2: report of 1x and 8x the samples
echo "bench/streaming part 2: report of bench/mkrec recordings, one core ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2))"
printf "%-34s %10s %8s %14s %12s\n" "" "samples" "seconds" "samples/s" "peak RSS"
declare -A rss
for depth in 1 16; do
	for x in 1 8; do
		n=$((SAMPLES * x))
		build/bench/mkrec "$TMP/r.rec" "$n" 64 2 "$depth"
		for fmt in json pprof; do
			[ "$depth" = 1 ] && [ "$fmt" = pprof ] && continue
			best=""
			for _ in 1 2 3; do
				/usr/bin/time -f "%e %M" -o "$TMP/time" taskset -c 0 "$CL" report \
					-i "$TMP/r.rec" --format "$fmt" -o "$TMP/out" 2>/dev/null
				read -r s kb <"$TMP/time"
				if [ -z "$best" ] || [ "$(echo "$s < $best" | bc)" = 1 ]; then best=$s; fi
			done
			rss[$depth,$fmt,$x]=$kb
			printf "%-34s %10d %8.2f %14.0f %9.1f MB\n" \
				"depth $depth, --format $fmt, ${x}x" "$n" "$best" \
				"$(echo "$n / $best" | bc -l)" "$(echo "$kb / 1024" | bc -l)"
		done
	done
done
for key in "1,json" "16,json" "16,pprof"; do
	printf "peak RSS 8x / 1x, depth %s: %.2f\n" "${key/,/, --format }" \
		"$(echo "${rss[$key,8]} / ${rss[$key,1]}" | bc -l)"
done
