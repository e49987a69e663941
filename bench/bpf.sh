#!/usr/bin/env bash
# bench/bpf: what the BPF collector (`cpuledger sched`, src/bpf/) costs at
# a high rate of context switches, beside perf recording the scheduler's
# tracepoints (issue 25).
#
# The workload (WORK) is `perf bench sched pipe -l LOOPS` (pipe, the
# default): two tasks passing a token through pipes, a context switch on
# each pass; or a compile loop (compile: cc -O2 -c of src/core/*.c, one
# after the other, LOOPS/10000 times over). Each round runs it
#   alone;
#   under `cpuledger sched` at its defaults (per-thread maps, no stints);
#   under `perf record -a -e sched:sched_switch -e sched:sched_stat_runtime
#     -e cpu-clock` (the events cpuledger record asks for);
#   under `cpuledger record -a` (the perf path, at its defaults);
#   under `cpuledger sched` with kernel.bpf_stats_enabled=1, for the BPF
#     programs' own run time (bpftool prog show: run_time_ns, run_cnt),
#     which the kernel charges to whatever task was switching, so that no
#     tracer CPU shows it: it is printed apart, as a share of a CPU;
# in turn, with a run alone between every two, ROUNDS times; medians are
# printed. Per configuration: the workload's rate (ops/s), its slowdown
# (the mean rate of the two runs alone beside it over its own: the
# machine's other load comes and goes), the switches a second
# (/proc/stat's ctxt), and the tracer's own CPU (its threads' schedstat)
# as a share of one CPU while the workload ran.
#
# usage: bench/bpf.sh [ROUNDS [LOOPS [WORK]]]   (default 10 rounds,
# 200000 loops, pipe)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-10}
LOOPS=${2:-200000}
WORK=${3:-pipe}
SRC=$PWD/src
CL=${CPULEDGER:-$PWD/build/cpuledger}
[ -x "$CL" ] || make -s all
command -v perf >/dev/null || { echo "bench/bpf: perf is not installed" >&2; exit 1; }
command -v bpftool >/dev/null || { echo "bench/bpf: bpftool is not installed" >&2; exit 1; }
TMP=$(mktemp -d /var/tmp/bpfbench.XXXXXX)
tracer=
stats0=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	[ -n "$tracer" ] && kill "$tracer" 2>/dev/null
	wait 2>/dev/null || true
	sysctl -q -w kernel.bpf_stats_enabled="$stats0"
	rm -rf "$TMP"
}
trap cleanup EXIT
. bench/switch_work.sh

# run time of the collector's programs, ns and runs, summed: those
# loaded since the program ids in $TMP/before were listed (another
# collector loaded meanwhile, a test's, is not counted)
prog_stats() {
	bpftool prog show --json | python3 -c '
import json, sys
names = ("on_switch", "on_free", "on_wakeup", "on_wakeup_new")
old = set(int(x) for x in open(sys.argv[1]).read().split())
t = c = 0
for p in json.load(sys.stdin):
    if p.get("name") in names and (sys.argv[2] == "list" or p["id"] not in old):
        if sys.argv[2] == "list":
            print(p["id"])
        t += p.get("run_time_ns", 0); c += p.get("run_cnt", 0)
if sys.argv[2] != "list":
    print(t, c)' "$TMP/before" "${1:-sum}"
}


# Starts a tracer (its argv), waits until it is collecting.
start() {
	"$@" >"$TMP/out" 2>"$TMP/err" &
	tracer=$!
	for _ in $(seq 100); do
		grep -q "collecting\|recording" "$TMP/err" && break
		[ -e "$TMP/perf.data" ] || [ -e "$TMP/perf.data.part" ] && break
		sleep 0.1
	done
	sleep 0.5
}
stop() {
	kill -INT "$tracer"
	wait "$tracer" || true
	tracer=
	rm -f "$TMP/perf.data" "$TMP/perf.data.part"
}

# One run of the workload under config $1: "ops switches_per_s tracer_cpu_share prog_ns prog_runs"
one() {
	local cfg=$1 c0 c1 t0 t1 x0 x1 ops p0=(0 0) p1=(0 0)
	case $cfg in
	alone) ;;
	sched) start "$CL" sched ;;
	stats) sysctl -q -w kernel.bpf_stats_enabled=1
		: >"$TMP/before"
		prog_stats list >"$TMP/before.new"
		mv "$TMP/before.new" "$TMP/before"
		start "$CL" sched ;;
	perf) start perf record -q -a -e sched:sched_switch -e sched:sched_stat_runtime \
		-e cpu-clock -o "$TMP/perf.data" ;;
	record) start "$CL" record -a -o "$TMP/perf.data" ;;
	esac
	[ "$cfg" = stats ] && read -r -a p0 < <(prog_stats)
	c0=$([ -n "$tracer" ] && cpu_ns "$tracer" || echo 0)
	x0=$(ctxt)
	t0=$(now_ns)
	ops=$(work)
	t1=$(now_ns)
	x1=$(ctxt)
	c1=$([ -n "$tracer" ] && cpu_ns "$tracer" || echo 0)
	[ "$cfg" = stats ] && read -r -a p1 < <(prog_stats)
	[ -n "$tracer" ] && stop
	sysctl -q -w kernel.bpf_stats_enabled="$stats0"
	echo "${ops:-0} $(( (x1 - x0) * 1000000000 / (t1 - t0) )) $(echo "scale=6; ($c1 - $c0) / ($t1 - $t0)" | bc)" \
		"$((p1[0] - p0[0])) $((p1[1] - p0[1])) $((t1 - t0))"
}

# alone between every two tracers: each tracer's run is judged against
# the mean of the two runs alone beside it, as the machine's other load
# comes and goes by the second
order="alone sched alone perf alone record alone stats alone"
for r in $(seq "$ROUNDS"); do
	for cfg in $order; do
		echo "$r $cfg $(one "$cfg")" >>"$TMP/runs"
	done
	echo "round $r of $ROUNDS done" >&2
done

python3 - "$TMP/runs" "$ROUNDS" "$LOOPS" "$WORK" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
runs, ratios = {}, {}
for i, (r, cfg, ops, sw, share, pns, pcnt, wall) in enumerate(rows):
    runs.setdefault(cfg, []).append((float(ops), int(sw), float(share), int(pns), int(pcnt), int(wall)))
    if cfg != "alone":
        base = (float(rows[i - 1][2]) + float(rows[i + 1][2])) / 2
        ratios.setdefault(cfg, []).append(base / float(ops))
med = lambda cfg, i: st.median(x[i] for x in runs[cfg])
work = ("perf bench sched pipe -l %s" % sys.argv[3] if sys.argv[4] == "pipe" else
        "compile loop (src/core/*.c x %d)" % (int(sys.argv[3]) // 10000))
print("bench/bpf: %s, %s rounds, medians" % (work, sys.argv[2]))
print("%-44s %9s %10s %11s %11s" % ("", "ops/s", "slowdown", "switches/s", "tracer CPU"))
names = {"alone": "alone", "sched": "cpuledger sched",
         "perf": "perf record -a (2 sched events, cpu-clock)",
         "record": "cpuledger record -a",
         "stats": "cpuledger sched, bpf_stats_enabled"}
for cfg in ("alone", "sched", "perf", "record", "stats"):
    slow = "-" if cfg == "alone" else "%.3fx" % st.median(ratios[cfg])
    print("%-44s %9.1f %10s %11.0f %10.2f%%" % (names[cfg], med(cfg, 0), slow, med(cfg, 1),
          100 * med(cfg, 2)))
ns_per_run = st.median(x[3] / x[4] for x in runs["stats"] if x[4])
share = st.median(x[3] / x[5] for x in runs["stats"])
print("BPF programs (stats run): %.0f ns a run (the kernel's own timing of each run "
      "included), %.2f%% of a CPU at %.0f switches/s" % (ns_per_run, 100 * share, med("stats", 1)))
print("cpuledger sched in all (its user space + its BPF programs): %.2f%% of a CPU" %
      (100 * (med("sched", 2) + share)))
PY
