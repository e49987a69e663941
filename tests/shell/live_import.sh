# perf's own recording, imported (issue 6): `perf record` of cpu-clock with
# sched:sched_switch and sched:sched_stat_runtime while two threads spin,
# then `perf script` text imported by cpuledger. Checks:
# - steal is measured from the tracepoints (not unknown);
# - each spinner's runtime (cpu_ns, and steal_ns too where the text is
#   judged to hold steal in runtime) is the sum of its sched_stat_runtime
#   in the text (worked out here with awk, apart from cpuledger), within
#   0.1 %;
# - the steal cpuledger finds, summed over CPUs, is within one 10 ms tick
#   per CPU + 2 % of /proc/stat's growth across the recording, where the
#   kernel has a steal clock (it has counted steal since boot; as
#   live_steal.sh, a machine whose kernel never does is no reference:
#   printed, not compared). /proc/stat counts each CPU's steal in whole
#   ticks, so each CPU's growth is off by up to one and their sum by up
#   to one per CPU (a CI run: 9.5 ms found against 20 ms). /proc/stat is
#   read before perf starts and after it has written its file, while the
#   spinners run on: the steal of those moments, outside the recording,
#   is allowed too, as /proc/stat's steal rate times their length;
# - `import -o` then `report` equals `report -i perf-script:` on the text.
# Skipped, saying why, without perf or where the kernel refuses it.
. "$(dirname "$0")/../lib.sh"
# perf's path: the recorder's tracepoint figures beside perf script's are its
# subject; the BPF collector's is live_source_bpf.sh.
export CPULEDGER_SOURCE=perf
command -v perf >/dev/null || skip "perf is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
need_perf
SECS=${LIVE_SECONDS:-8}
"$CL" workload threads --threads 2 --seconds $((SECS + 4)) &
wl=$!
trap 'kill $wl 2>/dev/null || true; rm -rf "$TMP"' EXIT
sleep 0.5
steal() { awk '/^cpu[0-9]/ { s += $9 } END { print s }' /proc/stat; }
s0=$(steal)
t0=$(date +%s%N)
blind=0; [ "$s0" = 0 ] && blind=1
perf record -q -o "$TMP/p.data" -a -g -e cpu-clock/freq=1000/ -e sched:sched_switch \
	-e sched:sched_stat_runtime -- sleep "$SECS" >"$TMP/perf.err" 2>&1 ||
	skip "perf record refused: $(tail -1 "$TMP/perf.err")"
t1=$(date +%s%N)
s1=$(steal)
kill $wl 2>/dev/null || true
perf script -i "$TMP/p.data" --ns -F +pid >"$TMP/p.txt" 2>"$TMP/script.err" ||
	fail "perf script: $(cat "$TMP/script.err")"
grep -q sched_stat_runtime "$TMP/p.txt" || skip "perf recorded no sched_stat_runtime"

run "$CL" report -i "perf-script:$TMP/p.txt" --format json
[ "$(status)" = 0 ] || fail "report: $(cat "$TMP/err")"
cp "$TMP/out" "$TMP/direct.json"
run "$CL" import perf-script "$TMP/p.txt" -o "$TMP/p.rec"
[ "$(status)" = 0 ] || fail "import: $(cat "$TMP/err")"
grep -q "steal: tracepoints" "$TMP/err" || fail "import did not find the tracepoints: $(cat "$TMP/err")"
"$CL" report -i "$TMP/p.rec" --format json >"$TMP/rec.json" || fail "report of the import"
cmp -s "$TMP/direct.json" "$TMP/rec.json" || fail "import -o then report differs from report -i perf-script:"

# sum of sched_stat_runtime per tid, straight from the text
awk '/sched:sched_stat_runtime:/ { for (i = 1; i <= NF; i++) {
	if ($i ~ /^pid=/) p = substr($i, 5); if ($i ~ /^runtime=/) r = substr($i, 9) }
	sum[p] += r } END { for (p in sum) printf "%d %.0f\n", p, sum[p] }' "$TMP/p.txt" >"$TMP/runtime"
python3 - "$TMP" "$wl" "$s0" "$s1" "$(getconf CLK_TCK)" "$blind" "$((t1 - t0))" "$(getconf _NPROCESSORS_ONLN)" <<'PY' || fail "imported figures out of tolerance"
import json, sys
d, wl, s0, s1, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
blind = sys.argv[6] == "1"
window, ncpus = int(sys.argv[7]), int(sys.argv[8])
r = json.load(open(d + "/direct.json"))
ok = r["steal_source"] == "tracepoints"
print("steal source:", r["steal_source"])
runtime = dict(map(int, l.split()) for l in open(d + "/runtime"))
rows = [row for row in r["rows"] if row["pid"] == wl]
spinners = sorted(rows, key=lambda row: row["cpu_ns"])[-2:]
print("steal method:", r["steal_method"], "kernel accounting:", r["kernel_accounting"],
      "(" + r["kernel_accounting_source"] + ")")
for row in spinners:
    want = runtime.get(row["tid"], 0)
    # where runtime includes steal (judged from the text), cpu + steal is it
    got = row["cpu_ns"] + (row["steal_ns"] if r["kernel_accounting"] == "plain" else 0)
    err = abs(got - want) / max(want, 1)
    good = want > 0 and err <= 0.001
    ok &= good
    print("thread %d: runtime %.3f s, runtime in the text %.3f s %s" %
          (row["tid"], got / 1e9, want / 1e9, "ok" if good else "FAIL"))
kernel = (s1 - s0) * 1e9 / hz
found = r["totals"]["steal_ns"]
outside = max(0, window - r["duration_ns"])
ticks = ncpus * 1e9 / hz
tol = ticks + 0.02 * kernel + kernel * outside / max(window, 1)
good = found is not None and (blind or abs(found - kernel) <= tol)
ok &= good
print("steal: found %.3f ms, /proc/stat %.3f ms over %.3f s (recorded %.3f s), "
      "tolerance %.1f ms (%d ticks, 2 %%, %.3f s outside) %s" %
      (found / 1e6, kernel / 1e6, window / 1e9, r["duration_ns"] / 1e9, tol / 1e6,
       ncpus, outside / 1e9, "ok" if good else "FAIL"),
      "(not compared: the kernel has counted no steal since boot)" if blind else "")
sys.exit(0 if ok else 1)
PY
