#!/usr/bin/env bash
# bench/sources: what the agent and record cost with each event source at
# a high rate of context switches, beside perf recording the same events
# (issue 25: "the agent's own CPU at ~380 000 switches a second at most
# 1 % of a CPU, and the workload's slowdown at most 1.05x").
#
# The workload (WORK) is `perf bench sched pipe -l LOOPS` (pipe: a context
# switch on each pass of a token between two tasks) or the compile loop
# (compile: cc -O2 -c of src/core/*.c, LOOPS/10000 times over). Each round
# runs it
#   alone;
#   under `perf record -a -e sched:sched_switch -e sched:sched_stat_runtime
#     -e cpu-clock` (the events the perf source asks for);
#   under `cpuledger agent --source perf` and `--source bpf` (defaults
#     otherwise: a ledger in a temporary directory, a scrape of /metrics
#     every 5 s from loopback, as Prometheus would);
#   under `cpuledger record -a --source perf` and `--source bpf`;
# in turn, with a run alone between every two, ROUNDS times. Per
# configuration, medians: the workload's rate, its slowdown (the mean
# rate of the two runs alone beside it over its own: the machine's other
# load comes and goes), the switches a second (/proc/stat's ctxt), and
# the tracer's own CPU (its threads' schedstat) as a share of one CPU.
# The BPF programs' own time is charged by the kernel to the tasks that
# switch (no tracer's CPU shows it): bench/bpf.sh measures it apart
# (bpf_stats); the slowdown column is where it shows here.
#
# usage: [CONFIGS="perf agent-bpf ..."] bench/sources.sh [ROUNDS [LOOPS [WORK]]]
# (default every configuration, 5 rounds,
# 200000 loops, pipe)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
LOOPS=${2:-200000}
WORK=${3:-pipe}
SRC=$PWD/src
CL=${CPULEDGER:-$PWD/build/cpuledger}
[ -x "$CL" ] || make -s all
command -v perf >/dev/null || { echo "bench/sources: perf is not installed" >&2; exit 1; }
TMP=$(mktemp -d /var/tmp/sources.XXXXXX)
tracer= scraper=
cleanup() {
	[ -n "$scraper" ] && kill "$scraper" 2>/dev/null
	[ -n "$tracer" ] && kill "$tracer" 2>/dev/null
	wait 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT
. bench/switch_work.sh

port=$((20000 + RANDOM % 20000))

# Starts a tracer (its argv), waits until it is collecting: a second after
# its first words (the agent and record say what they record on standard
# error), or perf's file.
start() {
	"$@" >"$TMP/out" 2>"$TMP/err" &
	tracer=$!
	for _ in $(seq 100); do
		[ -s "$TMP/err" ] && break
		[ -e "$TMP/perf.data" ] && break
		sleep 0.1
	done
	sleep 1
}
stop() {
	[ -n "$scraper" ] && kill "$scraper" 2>/dev/null
	wait "$scraper" 2>/dev/null || true
	scraper=
	kill -INT "$tracer"
	wait "$tracer" || true
	tracer=
	rm -rf "$TMP/perf.data" "$TMP/perf.data.old" "$TMP/rec" "$TMP/a.db"*
}
scrape_every() {
	while sleep 5; do
		curl -s -o /dev/null "http://127.0.0.1:$port/metrics" || true
	done
}

# One run of the workload under config $1: "ops switches_per_s tracer_cpu_share wall_ns"
one() {
	local cfg=$1 c0 c1 t0 t1 x0 x1 ops
	case $cfg in
	alone) ;;
	perf) start perf record -q -a -e sched:sched_switch -e sched:sched_stat_runtime \
		-e cpu-clock -o "$TMP/perf.data" ;;
	agent-*) start "$CL" agent --source "${cfg#agent-}" --ledger "$TMP/a.db" \
		--listen "127.0.0.1:$port"
		scrape_every & scraper=$! ;;
	record-*) start "$CL" record -a --source "${cfg#record-}" -o "$TMP/rec" ;;
	esac
	c0=$([ -n "$tracer" ] && cpu_ns "$tracer" || echo 0)
	x0=$(ctxt)
	t0=$(now_ns)
	ops=$(work)
	t1=$(now_ns)
	x1=$(ctxt)
	c1=$([ -n "$tracer" ] && cpu_ns "$tracer" || echo 0)
	[ -n "$tracer" ] && stop
	echo "${ops:-0} $(( (x1 - x0) * 1000000000 / (t1 - t0) ))" \
		"$(echo "scale=6; ($c1 - $c0) / ($t1 - $t0)" | bc) $((t1 - t0))"
}

configs=${CONFIGS:-"perf agent-perf agent-bpf record-perf record-bpf"}
for r in $(seq "$ROUNDS"); do
	echo "$r alone $(one alone)" >>"$TMP/runs"
	for cfg in $configs; do
		echo "$r $cfg $(one "$cfg")" >>"$TMP/runs"
		echo "$r alone $(one alone)" >>"$TMP/runs"
	done
	echo "round $r of $ROUNDS done" >&2
done

python3 - "$TMP/runs" "$ROUNDS" "$LOOPS" "$WORK" $configs <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
runs, ratios = {}, {}
for i, (r, cfg, ops, sw, share, wall) in enumerate(rows):
    runs.setdefault(cfg, []).append((float(ops), int(sw), float(share)))
    if cfg != "alone":
        base = (float(rows[i - 1][2]) + float(rows[i + 1][2])) / 2
        ratios.setdefault(cfg, []).append(base / float(ops))
med = lambda cfg, i: st.median(x[i] for x in runs[cfg])
work = ("perf bench sched pipe -l %s" % sys.argv[3] if sys.argv[4] == "pipe" else
        "compile loop (src/core/*.c x %d)" % (int(sys.argv[3]) // 10000))
print("bench/sources: %s, %s rounds, medians" % (work, sys.argv[2]))
print("%-44s %9s %10s %11s %11s %13s" % ("", "ops/s", "slowdown", "switches/s", "tracer CPU",
                                         "vs perf rec."))
names = {"alone": "alone", "perf": "perf record -a (2 sched events, cpu-clock)",
         "agent-perf": "cpuledger agent --source perf",
         "agent-bpf": "cpuledger agent --source bpf",
         "record-perf": "cpuledger record -a --source perf",
         "record-bpf": "cpuledger record -a --source bpf"}
for cfg in ["alone"] + sys.argv[5:]:
    slow = "-" if cfg == "alone" else "%.3fx" % st.median(ratios[cfg])
    vs = ("-" if cfg in ("alone", "perf") or "perf" not in runs or not med("perf", 2) else
          "%.2fx" % (med(cfg, 2) / med("perf", 2)))
    print("%-44s %9.1f %10s %11.0f %10.2f%% %13s" % (names[cfg], med(cfg, 0), slow,
          med(cfg, 1), 100 * med(cfg, 2), vs))
PY
