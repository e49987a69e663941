# Load (issue 7): `record -a` for LOAD_SECONDS (60) while short processes
# start as fast as `workload spawn` can reach 2 000 a second and one
# process runs 1 000 threads (each spinning 0.1 % of the time, so that the
# spawner gets CPU too). Then:
# - the recorder exits 0 and says its peak memory, under 256 MB: it
#   streams to the file, so its memory does not grow with the length;
# - `report` reads it; its peak memory is said, under 256 MB: it streams
#   through the engine (before the streaming engine it held every event,
#   504 MB for such a minute);
# - the records the kernel lost are counted, the same in the recorder's
#   summary and the report;
# - the spawn rate reached and the processes seen are printed.
# Runs on the optimized build only (ASan's memory would make the bounds
# meaningless); skipped where the kernel refuses perf.
. "$(dirname "$0")/../lib.sh"
case ${BUILD:-} in *asan*) skip "the load test runs on the optimized build" ;; esac
command -v python3 >/dev/null || skip "python3 is not installed"
need_perf
SECS=${LOAD_SECONDS:-60}
"$CL" workload threads --threads 1000 --duty 0.001 --seconds $((SECS + 4)) &
thr=$!
"$CL" workload spawn --rate 2000 --seconds $((SECS + 2)) 2>"$TMP/spawn.err" &
spw=$!
trap 'kill $thr $spw 2>/dev/null || true; rm -rf "$TMP"' EXIT
sleep 1
run /usr/bin/time -f "%M" "$CL" record -a --duration "$SECS" -o "$TMP/load.rec"
[ "$(status)" = 0 ] || fail "record under load: status $(status): $(cat "$TMP/err")"
wait $spw || true
kill $thr 2>/dev/null || true
summary=$(grep "records lost" "$TMP/err")
rec_kb=$(tail -1 "$TMP/err")
said_lost=$(echo "$summary" | sed -n 's/.* \([0-9]*\) records lost.*/\1/p')
said_mb=$(echo "$summary" | sed -n 's/.*peak memory \([0-9.]*\) MB.*/\1/p')
[ -n "$said_lost" ] && [ -n "$said_mb" ] || fail "the recorder did not say lost records and peak memory: $summary"
run /usr/bin/time -f "%M" "$CL" report -i "$TMP/load.rec" --by process --format json -o "$TMP/load.json"
[ "$(status)" = 0 ] || fail "report under load: $(cat "$TMP/err")"
rep_kb=$(tail -1 "$TMP/err")
python3 - "$TMP/load.json" "$said_lost" "$said_mb" "$rec_kb" "$rep_kb" "$(cat "$TMP/spawn.err")" \
	"$(stat -c %s "$TMP/load.rec")" <<'PY' || fail "load figures"
import json, sys
r = json.load(open(sys.argv[1]))
said_lost, said_mb, rec_kb, rep_kb = int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
ok = r["lost"] == said_lost and said_mb < 256 and rec_kb / 1024 < 256 and rep_kb / 1024 < 256
print(sys.argv[6])
print("record: %s MB peak said, %.1f MB by time(1), %d records lost, %.1f MB written" %
      (said_mb, rec_kb / 1024, said_lost, int(sys.argv[7]) / 1e6))
print("report: %.1f MB peak, %d processes, %d lost in the report, %d samples" %
      (rep_kb / 1024, len(r["rows"]), r["lost"], r["clock_samples"]))
sys.exit(0 if ok else 1)
PY
echo "load: ok"
