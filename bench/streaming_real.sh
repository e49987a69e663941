#!/usr/bin/env bash
# bench/streaming_real: reports of real recordings, beside the synthetic
# ones of bench/streaming.sh (issue 27).
#
# The recordings are made while this tree builds again and again (a
# scratch copy, make -j2), unless RECDIR holds them from a run before:
#   live1.rec, live8.rec  cpuledger record -a -g for MINUTES and for
#                         8 x MINUTES minutes (both at once, so of one load)
#   perf1.txt             perf record -a -g -F 1000 -e cpu-clock -e
#                         sched:sched_switch -e sched:sched_stat_runtime
#                         for MINUTES minutes, as perf script --ns -F +pid
#   perf8.txt             eight copies of it, each moved in time past the
#                         one before (a recording eight times as long)
#   imp1.rec, imp8.rec    cpuledger import perf-script of each
#   tp1.rec               cpuledger record -a -g --source perf for MINUTES
#                         minutes (after the others, under its own compile
#                         loop): the scheduler's tracepoints, a switch and
#                         a runtime event for each stint, where the live
#                         ones above have the BPF collector's clocks (this
#                         machine's default); reported at 1x only
# perf1.txt and perf8.txt are also reported as they are ("perf script
# text": report -i perf-script:FILE imports into memory and reads that;
# its folded is the reference collapser's fold of the text).
# Each is reported pinned to one core, best of 3, with --format json
# (stacks not resolved), json --by comm (rows that do not grow with the
# tasks a compile loop makes), folded and pprof (stacks resolved): wall
# and CPU seconds (user + system: the machine may be shared), samples a
# CPU second, peak RSS (the median of the 3); then peak RSS at 8x over 1x.
# Last, the 8x recordings with every CPU the machine has (a live
# recording's items read and made events in time order on a second
# thread, replay/rec_split.h; an import's blocks read and decompressed
# ahead there; perf script text's lines read and looked at ahead of its
# parser, format/lines_ahead.h, and its items made, compressed and written
# behind it, format/recording.h; its folder's lines read ahead): wall
# seconds against one core's, and samples a wall second. Wall seconds are bash's clock ($EPOCHREALTIME) around the
# command, to the microsecond: time(1)'s hundredths were 4 % of a
# quarter-second report (the fork of time and taskset is counted in).
#
# usage: bench/streaming_real.sh [MINUTES]   (default 1; RECDIR=DIR keeps
#        the recordings there and uses those it finds; CPULEDGER=BINARY
#        reports with another build, an older one to compare; recordings
#        of an older version are made this version's, for the same data
#        in both, by build/bench/restack IN OUT; CORE=N pins the one-core
#        reports to core N, default 0: a shared host may slow one)
set -euo pipefail
cd "$(dirname "$0")/.."
MIN=${1:-1}
CORE=${CORE:-0}	# the core the one-core reports are pinned to
make -s all
CL=${CPULEDGER:-$PWD/build/cpuledger}
TMP=$(mktemp -d /var/tmp/streaming_real.XXXXXX)
DIR=${RECDIR:-$TMP/rec}
mkdir -p "$DIR"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# perf script text IN, N times over, each copy's times moved past the last
lengthen() {
	local hdr='^[^\t].*\s\K\d+(?=\.\d{9}:\s)' first last k
	first=$(grep -m1 -oP "$hdr" "$1")
	last=$(grep -oP "$hdr" "$1" | tail -1)
	for ((k = 0; k < $2; k++)); do
		SHIFT=$((k * (last - first + 2))) perl -pe \
			's/(\s)(\d+)(\.\d{9}:\s)/$1.($2 + $ENV{SHIFT}).$3/e unless /^\t/' "$1"
	done
}

record() {
	git clone -q . "$TMP/load"
	( while :; do
		make -s -C "$TMP/load" -j2 BUILD="$TMP/tree" all >/dev/null 2>&1
		rm -rf "$TMP/tree"
	done ) &
	pids+=("$!")
	sleep 5
	"$CL" record -a -g --duration $((MIN * 480)) -o "$DIR/live8.rec" 2>"$TMP/r8.err" &
	local r8=$!
	pids+=("$r8")
	"$CL" record -a -g --duration $((MIN * 60)) -o "$DIR/live1.rec" 2>"$TMP/r1.err" &
	local r1=$!
	pids+=("$r1")
	perf record -q -a -g -F 1000 -e cpu-clock -e sched:sched_switch \
		-e sched:sched_stat_runtime -o "$TMP/perf.data" -- sleep $((MIN * 60)) \
		2>"$TMP/perf.err"
	wait $r1 || { echo "record failed: $(cat "$TMP/r1.err")" >&2; exit 1; }
	perf script -i "$TMP/perf.data" --ns -F +pid >"$DIR/perf1.txt" 2>/dev/null
	rm -f "$TMP/perf.data"
	wait $r8 || { echo "record failed: $(cat "$TMP/r8.err")" >&2; exit 1; }
	kill "${pids[0]}" 2>/dev/null || true
}

# the tracepoints' recording, under a compile loop of its own
record_tp() {
	[ -d "$TMP/load" ] || git clone -q . "$TMP/load"
	( while :; do
		make -s -C "$TMP/load" -j2 BUILD="$TMP/tree" all >/dev/null 2>&1
		rm -rf "$TMP/tree"
	done ) &
	local load=$!
	pids+=("$load")
	sleep 5
	"$CL" record -a -g --source perf --duration $((MIN * 60)) -o "$DIR/tp1.rec" \
		2>"$TMP/tp.err" || { echo "record failed: $(cat "$TMP/tp.err")" >&2; exit 1; }
	kill "$load" 2>/dev/null || true
}

if [ ! -f "$DIR/live8.rec" ] || [ ! -f "$DIR/perf1.txt" ]; then record; fi
[ -f "$DIR/tp1.rec" ] || record_tp
[ -f "$DIR/perf8.txt" ] || lengthen "$DIR/perf1.txt" 8 >"$DIR/perf8.txt"
for x in 1 8; do
	[ -f "$DIR/imp$x.rec" ] || "$CL" import perf-script "$DIR/perf$x.txt" \
		-o "$DIR/imp$x.rec" 2>/dev/null
done

echo "bench/streaming_real: reports of real recordings (a compile loop, $MIN min at 1x), one core ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2))"
printf "%-48s %10s %8s %8s %12s %11s\n" "" "samples" "wall s" "CPU s" "samples/CPU s" "peak RSS"
declare -A rss wall samples
for what in live tp imp txt; do
	for fmt in json "json --by comm" folded pprof; do
		for x in 1 8; do
			rec="$DIR/$what$x.rec"
			[ "$what" != txt ] || rec="perf-script:$DIR/perf$x.txt"
			[ -f "${rec#perf-script:}" ] || continue	# tp: 1x only
			n=$("$CL" report -i "$rec" --format json | grep -o '"clock_samples":[0-9]*' | cut -d: -f2)
			best="" cpu="" kbs=()
			for _ in 1 2 3; do
				# shellcheck disable=SC2086
				t0=$EPOCHREALTIME
				/usr/bin/time -f "%U %S %M" -o "$TMP/time" taskset -c "$CORE" "$CL" report \
					-i "$rec" --format $fmt -o "$TMP/out" 2>/dev/null
				s=$(echo "$EPOCHREALTIME - $t0" | bc -l)
				read -r u k kb <"$TMP/time"
				kbs+=("$kb")
				c=$(echo "$u + $k" | bc -l)
				if [ -z "$cpu" ] || [ "$(echo "$c < $cpu" | bc)" = 1 ]; then cpu=$c; fi
				if [ -z "$best" ] || [ "$(echo "$s < $best" | bc)" = 1 ]; then best=$s; fi
			done
			kb=$(printf "%s\n" "${kbs[@]}" | sort -n | sed -n 2p)
			rss[$what,$fmt,$x]=$kb
			wall[$what,$fmt,$x]=$best
			samples[$what,$fmt,$x]=$n
			case $what in
			live) name="record -a -g" ;;
			tp) name="record -a -g --source perf" ;;
			imp) name="perf script import" ;;
			*) name="perf script text" ;;
			esac
			printf "%-48s %10d %8.3f %8.2f %12.0f %8.1f MB\n" "$name, $fmt, ${x}x" "$n" \
				"$best" "$cpu" "$(echo "$n / ($cpu + 0.001)" | bc -l)" \
				"$(echo "$kb / 1024" | bc -l)"
		done
	done
done
for what in live imp txt; do
	for fmt in json "json --by comm" folded pprof; do
		printf "peak RSS 8x / 1x, %s, %s: %.2f\n" "$what" "$fmt" \
			"$(echo "${rss[$what,$fmt,8]} / ${rss[$what,$fmt,1]}" | bc -l)"
	done
done

# The recordings again with every CPU the machine has: a second thread
# reads and decompresses the blocks ahead (format/recording.h); wall
# seconds, best of 3, against the one core's above.
echo
echo "bench/streaming_real: recordings on $(nproc) cores (live: items read on a second thread; imports: blocks read ahead; text: lines read ahead of the parser, items made behind it), against one"
printf "%-48s %10s %11s %11s %8s %14s\n" "" "samples" "wall s, 1" "wall s, $(nproc)" "ratio" "samples/wall s"
for what in live imp txt; do
	for fmt in json "json --by comm" folded pprof; do
		x=8
		rec="$DIR/$what$x.rec"
		[ "$what" != txt ] || rec="perf-script:$DIR/perf$x.txt"
		best=""
		for _ in 1 2 3; do
			# shellcheck disable=SC2086
			t0=$EPOCHREALTIME
			"$CL" report -i "$rec" --format $fmt -o "$TMP/out" 2>/dev/null
			s=$(echo "$EPOCHREALTIME - $t0" | bc -l)
			if [ -z "$best" ] || [ "$(echo "$s < $best" | bc)" = 1 ]; then best=$s; fi
		done
		one=${wall[$what,$fmt,$x]}
		n=${samples[$what,$fmt,$x]}
		name="record -a -g"
		[ $what = imp ] && name="perf script import"
		[ $what = txt ] && name="perf script text"
		printf "%-48s %10d %11.3f %11.3f %8.2f %14.0f\n" "$name, $fmt, ${x}x" "$n" "$one" \
			"$best" "$(echo "$best / $one" | bc -l)" "$(echo "$n / $best" | bc -l)"
	done
done
