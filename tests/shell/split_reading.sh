# A recording's items are read on a thread of their own where the report
# may run on more than one CPU and its own work is the heavier half (call
# stacks resolved, rows by thread or process: replay/rec_split.h, the
# blocks read, decompressed, made engine events and put in time order
# there, or without stacks (json, csv, text) in the engine's own queue
# here; the engine fed, the report made, here). Its reports (and those
# read as before: by comm) are the same bytes as read on one CPU (taskset
# -c 0: one thread does it all), in every format, of: a live `record -a
# -g` of two spinning threads and a loop of short processes (the BPF
# collector's clocks and waits where the machine has them, whose waits
# reach the rows) and the same with `--source perf` (switches and
# runtime), each read twice; and an import of perf script text, read as
# before (its blocks read ahead, its events made on this thread: it is
# the reading that takes an import's time) the same bytes either way. A recording cut short, or with a damaged block, fails the same
# way (the offset, exit 2, nothing written), and --salvage keeps the same
# part of it. Under an address-space limit the report is read as before.
. "$(dirname "$0")/../lib.sh"
command -v taskset >/dev/null || skip "taskset is not installed (package util-linux)"
[ "$(nproc)" -gt 1 ] || skip "one CPU: a recording is read on this thread alone"
need_perf

load() {
	"$CL" workload threads --threads 2 --seconds 2 >/dev/null 2>&1 &
	local w=$!
	for _ in $(seq 300); do /bin/true; done
	wait "$w"
}
"$CL" record -a -g -o "$TMP/live.rec" -- bash -c "$(declare -f load); CL='$CL' load" \
	2>"$TMP/rec.err" || fail "record: $(cat "$TMP/rec.err")"
"$CL" record -a -g --source perf -o "$TMP/tp.rec" -- bash -c "$(declare -f load); CL='$CL' load" \
	2>"$TMP/rec.err" || fail "record --source perf: $(cat "$TMP/rec.err")"
"$CL" import perf-script "$FIX/perf-script-sched.txt" -o "$TMP/imp.rec" 2>"$TMP/err" ||
	fail "import: $(cat "$TMP/err")"

# report ARGS... twice on every CPU, once on one: the same bytes
same() {
	local rec=$1
	shift
	"$CL" report -i "$rec" "$@" -o "$TMP/a" 2>"$TMP/err" || fail "report $* of $rec: $(cat "$TMP/err")"
	"$CL" report -i "$rec" "$@" -o "$TMP/b" 2>"$TMP/err" || fail "report $* of $rec: $(cat "$TMP/err")"
	taskset -c 0 "$CL" report -i "$rec" "$@" -o "$TMP/c" 2>"$TMP/err" ||
		fail "report $* of $rec on one CPU: $(cat "$TMP/err")"
	[ -s "$TMP/a" ] || fail "report $* of $rec wrote nothing"
	cmp -s "$TMP/a" "$TMP/b" || fail "report $* of $rec: two runs differ"
	cmp -s "$TMP/a" "$TMP/c" || fail "report $* of $rec: read on a second thread and on one CPU differ"
}
for rec in live tp imp; do
	for f in "--format json" "--format json --by comm,cgroup" "--format folded" \
		 "--format pprof" "--format text --by function" "--format csv --by process,thread" \
		 "--format json --by function" "--format pprof --method ratio" \
		 "--format folded --method bracketed" "--format html"; do
		# shellcheck disable=SC2086
		same "$TMP/$rec.rec" $f
	done
done
# under an address-space limit (ulimit -v: the pinned tables' 17 GiB of
# room would count against it) the report is read as before: it does not
# fail, and says the same (a sanitizer's build cannot run so limited)
if ! grep -aq __asan_init "$CL"; then
	( ulimit -v 2000000; "$CL" report -i "$TMP/live.rec" --format pprof -o "$TMP/lim" ) \
		2>"$TMP/err" || fail "report under ulimit -v: $(cat "$TMP/err")"
	"$CL" report -i "$TMP/live.rec" --format pprof -o "$TMP/free" || fail "report of live.rec"
	cmp -s "$TMP/lim" "$TMP/free" || fail "under ulimit -v the profile differs"
fi

# the run-queue waits (the clocks' and the ends', taken on this thread
# as the other reads them) reached the threads' rows
"$CL" report -i "$TMP/live.rec" --format json -o "$TMP/w.json" || fail "report of live.rec"
python3 - "$TMP/w.json" <<'PY' || fail "no row of live.rec has its run-queue wait"
import json, sys
rows = json.load(open(sys.argv[1]))['rows']
assert any(r.get('wait_ns') for r in rows), rows[:3]
PY

# the live recording cut within its blocks, and a block's bytes damaged
size=$(stat -c %s "$TMP/live.rec")
head -c $((size * 2 / 3)) "$TMP/live.rec" >"$TMP/cut.rec"
cp "$TMP/live.rec" "$TMP/bad.rec"
printf '\xff\xff\xff\xff\xff\xff\xff\xff' |
	dd of="$TMP/bad.rec" bs=1 seek=$((size / 2)) conv=notrunc status=none
for rec in cut bad; do
	run "$CL" report -i "$TMP/$rec.rec" --format json -o "$TMP/x.json"
	s2=$(status)
	cp "$TMP/err" "$TMP/err2"
	run taskset -c 0 "$CL" report -i "$TMP/$rec.rec" --format json -o "$TMP/y.json"
	[ "$s2" = 2 ] || fail "$rec.rec: exit $s2, not 2: $(cat "$TMP/err2")"
	[ "$(status)" = 2 ] || fail "$rec.rec on one CPU: exit $(status), not 2"
	cmp -s "$TMP/err" "$TMP/err2" || fail "$rec.rec: says $(cat "$TMP/err2") and on one CPU $(cat "$TMP/err")"
	[ ! -e "$TMP/x.json" ] && [ ! -e "$TMP/y.json" ] || fail "$rec.rec: a report was written"
	grep -q "$rec.rec" "$TMP/err" || fail "$rec.rec: the error does not name the file: $(cat "$TMP/err")"
	same "$TMP/$rec.rec" --salvage --format json
	same "$TMP/$rec.rec" --salvage --format pprof
done
