# Every shape of `perf script` perf prints (issue 12): one perf recording
# (cpu-clock with call chains, sched_switch, sched_stat_runtime, with -k
# mono so that perf can print the time of day, while
# processes start and exit) written as text in each field combination
# docs/import.md lists. For each, the samples cpuledger counts per event
# equal the header lines of that event in the text (counted here with a
# regular expression on the event name alone); with time, cpu and the
# tracepoints present, steal comes from the tracepoints; without time or
# cpu, the samples are read all the same and steal is unknown, saying why.
. "$(dirname "$0")/../lib.sh"
command -v perf >/dev/null || skip "perf is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
need_perf
cd "$TMP"
"$CL" workload spawn --exec --rate 300 --seconds 3 2>/dev/null &
spawn=$!
"$CL" workload threads --threads 2 --seconds 3 &
thr=$!
perf record -q -k mono -o p.data -a -g -e cpu-clock/freq=1000/ -e sched:sched_switch \
	-e sched:sched_stat_runtime -- sleep 2 >perf.err 2>&1 ||
	skip "perf record refused: $(tail -1 perf.err)"
wait $spawn $thr 2>/dev/null || true

shapes=("default:" "ns,pid:--ns -F +pid" "no time:-F -time" "no cpu:-F -cpu"
	"no call chains:-G" "period:-F +period" "tod:-F +tod" "us, no pid:-F -pid")
for shape in "${shapes[@]}"; do
	name=${shape%%:*} opts=${shape#*:}
	# shellcheck disable=SC2086
	if ! perf script -i p.data $opts >t.txt 2>script.err; then
		echo "$name: perf $(perf --version | cut -d' ' -f3) cannot print it ($(head -1 script.err)); not checked"
		continue
	fi
	run "$CL" report -i perf-script:t.txt --format json
	[ "$(status)" = 0 ] || fail "$name: $(cat "$TMP/err")"
	python3 - t.txt "$TMP/out" "$name" "$(cat "$TMP/err")" <<'PY' || fail "$name: counts or steal source"
import json, re, sys
from collections import Counter
ev = re.compile(r'\s(cpu-clock[^\s:]*|sched:sched_switch|sched:sched_stat_runtime):(\s|$)')
want = Counter()
for line in open(sys.argv[1], errors="replace"):
    m = ev.search(line)
    if m and not line.startswith(("\t", "#")):
        want[m.group(1)] += 1
r = json.load(open(sys.argv[2]))
name, err = sys.argv[3], sys.argv[4]
got = Counter(r["events"])
ok = got == want and r["clock_samples"] == sum(v for k, v in want.items() if k.startswith("cpu-clock"))
timed = name not in ("no time", "no cpu")
src = r["steal_source"]
if timed:
    ok &= src == "tracepoints"
else:
    ok &= src.startswith("unknown (perf script without") and r["totals"]["steal_ns"] is None
    ok &= "steal unknown" in err
print("%s: %s; steal source %s %s" % (name, ", ".join("%s %d" % kv for kv in sorted(got.items())),
      src if len(src) < 40 else src[:40] + "...", "ok" if ok else "FAIL (text has %s)" % dict(want)))
sys.exit(0 if ok else 1)
PY
done
echo "live_script_shapes: ok"
