#!/usr/bin/env bash
# bench/report_ab: the CPU one report takes with two builds, side by side:
# a build of another commit (BASE) against this tree's, on one recording,
# each pinned to one core, `perf stat -r 3` task-clock, ROUNDS rounds of
# the two in turn (a shared machine drifts: taking turns spreads it over
# both), the median of each and their ratio. The outputs must be the same
# bytes (gzip: once decompressed). CORE=all runs them on every core (a
# live recording's items read on a second thread): the wall time, perf's
# duration_time, is then the figure, beside the CPU. BASE_REC=FILE has the
# base build read FILE instead: the same recording in the version that
# build reads (a newer one made an older one's by bench/restack, or kept).
#
# usage: [CORE=N|all] [BASE_REC=FILE] BASE=path/to/cpuledger bench/report_ab.sh RECORDING [ROUNDS] -- [report options...]
#   e.g. git worktree add /tmp/base 286bd6b && make -C /tmp/base -s all
#        BASE=/tmp/base/build/cpuledger bench/report_ab.sh live8.rec 5 -- --format json
set -euo pipefail
cd "$(dirname "$0")/.."
rec=${1:?usage: BASE=BINARY bench/report_ab.sh RECORDING [ROUNDS] -- [options...]}
shift
rounds=5
if [ $# -gt 0 ] && [ "$1" != -- ]; then rounds=$1; shift; fi
[ "${1:-}" = -- ] && shift
base=${BASE:?BASE names the cpuledger of the other build}
base_rec=${BASE_REC:-$rec}
core=${CORE:-1}	# the core both are pinned to (a shared host may slow one)
new=$PWD/build/cpuledger
[ -x "$new" ] || make -s all
command -v perf >/dev/null || { echo "bench/report_ab: perf is not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$base" report -i "$base_rec" "$@" >"$tmp/base.out"
"$new" report -i "$rec" "$@" >"$tmp/new.out"
cmp -s "$tmp/base.out" "$tmp/new.out" && same=yes || same=NO
# gzip (pprof): the same once decompressed, whatever the level
if [ "$same" = NO ] && gzip -t "$tmp/base.out" 2>/dev/null && gzip -t "$tmp/new.out" 2>/dev/null &&
	cmp -s <(zcat "$tmp/base.out") <(zcat "$tmp/new.out"); then
	same="yes, decompressed"
fi
for _ in $(seq "$rounds"); do
	for b in base new; do
		bin=$new in=$rec; [ $b = base ] && bin=$base in=$base_rec
		pin=(taskset -c "$core")
		[ "$core" = all ] && pin=()
		perf stat -x, -e task-clock,duration_time -r 3 "${pin[@]}" "$bin" report -i "$in" \
			"$@" -o /dev/null >/dev/null 2>"$tmp/stat"
		awk -F, '/task-clock/ { print $1 }' "$tmp/stat" >>"$tmp/$b"
		awk -F, '/duration_time/ { print $1 / 1e6 }' "$tmp/stat" >>"$tmp/$b.wall"
	done
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mb=$(median "$tmp/base") mn=$(median "$tmp/new")
printf 'bench/report_ab: %s %s, %d rounds, task-clock medians\n' "$(basename "$rec")" "$*" "$rounds"
printf '  base %8.1f ms   this %8.1f ms   this/base %.3f   outputs the same: %s\n' \
	"$mb" "$mn" "$(echo "$mn / $mb" | bc -l)" "$same"
if [ "$core" = all ]; then
	wb=$(median "$tmp/base.wall") wn=$(median "$tmp/new.wall")
	printf '  wall: base %8.1f ms   this %8.1f ms   this/base %.3f\n' \
		"$wb" "$wn" "$(echo "$wn / $wb" | bc -l)"
fi
[ "${same%%,*}" = yes ]
