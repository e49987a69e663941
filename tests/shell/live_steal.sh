# Live recording against the kernel's own figures (issue 3's must-show).
# `record -a -- workload threads` for 20 s, two threads spinning. Then:
# - per CPU, |attributed steal - /proc/stat steal| <= 10 ms + 2 % (one
#   USER_HZ tick: /proc/stat counts in 10 ms ticks, read at each end);
# - each spinning thread's run time is within 1 % (issue 3 asks 2 %) of the
#   kernel's count of it, the first field of its schedstat
#   (sum_exec_runtime), which the workload prints as each thread ends: its
#   cpu_ns where the kernel's runtime excludes steal, cpu_ns + steal_ns
#   where it includes it (kernel_accounting plain: docs/record.md). The
#   recording holds the threads' whole lives (record -a -- CMD holds the
#   command until recording has begun), so no window is to be lined up: a
#   slower recorder (the ASan build) starts and stops no differently.
#   Both are what the threads really got, whatever else the machine runs;
#   but where the kernel dropped records (a busy machine: the ring full)
#   the time they held is in no figure, so the test says how many and
#   skips rather than judge figures it knows are short.
# Skipped, saying why, where the kernel refuses perf_event_open.
. "$(dirname "$0")/../lib.sh"
# perf's path: steal per stint from the sched tracepoints is its subject; the BPF collector's is live_source_bpf.sh.
export CPULEDGER_SOURCE=perf
command -v python3 >/dev/null || skip "python3 is not installed"
SECONDS_=${LIVE_SECONDS:-20}
need_perf
# A kernel without a steal clock (no "kvm-stealtime" at boot; /proc/stat's
# steal 0 on every CPU since boot) cannot see steal at all, so it is no
# reference: there the per-CPU figures are printed, not compared. Seen on
# this project's Firecracker/PVM machine: time the hypervisor kept while a
# thread held the CPU (27 ms on the guest agent's vsock thread, with the
# timer silent as long) shows in cpuledger and never in /proc/stat.
blind=0
if ! dmesg 2>/dev/null | grep -qi "stealtime" &&
   awk '/^cpu[0-9]/ && $9 != 0 { seen = 1 } END { exit seen }' /proc/stat; then
	blind=1
fi
"$CL" record -a -o "$TMP/live.rec" -- "$CL" workload threads --threads 2 \
	--seconds "$SECONDS_" --schedstat 2>"$TMP/rec.err" || fail "record: $(cat "$TMP/rec.err")"
grep "^schedstat " "$TMP/rec.err" >"$TMP/schedstat" || fail "the workload printed no schedstat: $(cat "$TMP/rec.err")"
"$CL" report -i "$TMP/live.rec" --format json >"$TMP/r.json" || fail "report failed"
python3 - "$TMP" "$blind" <<'PY' || { s=$?; [ $s = 77 ] && skip "records were lost on this busy machine: not judged"; fail "live figures out of tolerance"; }
import json, sys
d, blind = sys.argv[1], sys.argv[2] == "1"
r = json.load(open(d + "/r.json"))
assert r["steal_source"] == "tracepoints", r["steal_source"]
ok = True
for c in r["cpus"]:
    k, a = c["kernel_steal_ns"], c["steal_ns"]
    tol = 10e6 + 0.02 * (k or 0)
    good = k is not None and abs(a - k) <= tol
    if not blind:
        ok &= good
    print("cpu %d: attributed %.3f ms, kernel %s ms, tolerance %.0f ms %s" %
          (c["cpu"], a / 1e6, "%.3f" % (k / 1e6) if k is not None else "unknown",
           tol / 1e6, "not compared: the kernel has no steal clock" if blind else
           "ok" if good else "FAIL"))
kernel = {int(l.split()[1]): int(l.split()[2]) for l in open(d + "/schedstat")}
assert len(kernel) == 2, kernel
rows = {row["tid"]: row for row in r["rows"]}
print("steal source:", r["steal_method"], "kernel accounting:", r["kernel_accounting"],
      "(" + r["kernel_accounting_source"] + ")")
for t, ran in sorted(kernel.items()):
    cpu = rows[t]["cpu_ns"] if t in rows else 0
    if t in rows and r["kernel_accounting"] == "plain":
        cpu += rows[t]["steal_ns"]	# runtime holds it
    err = abs(cpu - ran) / ran
    good = err <= 0.01
    ok &= good
    print("thread %d: cpu_ns %.3f s, schedstat %.3f s, error %.2f %% %s" %
          (t, cpu / 1e9, ran / 1e9, 100 * err, "ok" if good else "FAIL"))
if not ok and (r["lost"] or r["lossy_stints"]):
    print("lost %d records, %d stints with losses: the figures are short by what they held" %
          (r["lost"], r["lossy_stints"]))
    sys.exit(77)
if not ok:	# who holds the steal, to tell a loss from a misreading
    for row in sorted(r["rows"], key=lambda x: -(x["steal_ns"] or 0))[:5]:
        print("  steal %.3f ms: %d/%d %s" % ((row["steal_ns"] or 0) / 1e6, row["pid"],
              row["tid"], row["command"]))
    print("  lost %d, lossy stints %d, bad records %d" %
          (r["lost"], r["lossy_stints"], r["bad_records"]))
sys.exit(0 if ok else 1)
PY
