# report --format openmetrics and pprof (issue 6), on perf script text
# imported (with steal measured, and without) and on a recording made here:
# - openmetrics passes `promtool check metrics` (Debian's prometheus); its
#   cpu counters sum to the JSON report's rows; without measured steal,
#   no steal counter is written (absent, not zero);
# - pprof is gzip of a profile.proto that `protoc --decode` reads with
#   the profile.proto Debian ships with pprof: sample types cpu and steal
#   in nanoseconds, values summing to the JSON report's rows by function
#   (each stack's share rounded down: at most 1 ns per stack less), every
#   function with time of its own there, call stacks deeper than one frame
#   where perf recorded them, every location's function and mapping there,
#   each thread's samples labelled with its pid, tid, command and account
#   summing to its rows;
# - folded stacks of a recording (`-f folded` without perf-script:) count
#   as many samples as the report's rows, and with --dso as many as that
#   file's row; every folded stack is a pprof sample's, with the same
#   functions (pprof packs a stack's locations once, by its id), and
#   pprof has no other but a thread's time that no sample placed.
. "$(dirname "$0")/../lib.sh"
command -v promtool >/dev/null || skip "promtool is not installed (package prometheus)"
command -v protoc >/dev/null || skip "protoc is not installed (package protobuf-compiler)"
PROTO=${PROTO_DIR:-/usr/share/gocode/src/github.com/google/pprof/proto}
[ -f "$PROTO/profile.proto" ] || skip "no $PROTO/profile.proto (package golang-github-google-pprof-dev)"
DATA=${TESTDATA:-$ROOT/../shared/testdata}/flamegraph
inputs="perf-script:$FIX/perf-script-sched.txt perf-script:$FIX/perf-script-oneline.txt"
# the shared test data, where it is beside the clone
[ -f "$DATA/perf-iperf-stacks-pidtid-01.txt" ] &&
	inputs="$inputs perf-script:$DATA/perf-iperf-stacks-pidtid-01.txt"
# a recording of cpuledger's own, where the kernel allows one
if "$CL" record -g -o "$TMP/live.rec" -- "$CL" workload libcall --seconds 1 >/dev/null 2>&1; then
	inputs="$inputs $TMP/live.rec"
else
	echo "no recording of cpuledger's own: perf_event_open refused"
fi
# a profile of more samples than pprof keeps in one run (128 KB packed,
# deflated), of no steal (the recording says
# so at its start: the samples are packed with cpu alone as the threads go)
python3 "$ROOT/tests/many_stacks.py" >"$TMP/many.txt"
"$CL" import perf-script "$TMP/many.txt" -o "$TMP/many.rec" 2>/dev/null || fail "import of many stacks"
inputs="$inputs $TMP/many.rec"
# and of more stacks than pprof's memo of their locations has slots
python3 "$ROOT/tests/many_stacks.py" --distinct >"$TMP/distinct.txt"
"$CL" import perf-script "$TMP/distinct.txt" -o "$TMP/distinct.rec" 2>/dev/null ||
	fail "import of distinct stacks"
inputs="$inputs $TMP/distinct.rec"
for input in $inputs; do
	name=$(basename "$input")
	"$CL" report -i "$input" --format openmetrics -o "$TMP/om.txt" 2>/dev/null || fail "$name: openmetrics"
	promtool check metrics <"$TMP/om.txt" >"$TMP/lint" 2>&1 || fail "$name: promtool: $(cat "$TMP/lint")"
	tail -1 "$TMP/om.txt" | grep -qx '# EOF' || fail "$name: no # EOF"
	"$CL" report -i "$input" --by process,account --format json -o "$TMP/acc.json" 2>/dev/null
	"$CL" report -i "$input" --by thread,function --format json -o "$TMP/fn.json" 2>/dev/null
	"$CL" report -i "$input" --by thread,account --format json -o "$TMP/ta.json" 2>/dev/null
	"$CL" report -i "$input" --format pprof -o "$TMP/p.pb.gz" 2>/dev/null || fail "$name: pprof"
	# folded stacks of a recording: as many samples as the report's rows
	rec=no	# a recording (not perf-script:): it has folded stacks, f.folded
	[ "${input#perf-script:}" = "$input" ] && rec=yes
	if [ "$rec" = yes ]; then
		"$CL" report -i "$input" --format folded -o "$TMP/f.folded" || fail "$name: folded"
		"$CL" report -i "$input" --format json -o "$TMP/th.json"
		python3 - "$TMP/f.folded" "$TMP/th.json" <<'PY' || fail "$name: folded samples differ"
import json, re, sys
n = sum(int(l.rsplit(' ', 1)[1]) for l in open(sys.argv[1]))
ok = all(re.match(r'^[^ ;]+(;[^;]+)+ \d+$', l.rstrip('\n')) for l in open(sys.argv[1]))
want = sum(r["samples"] for r in json.load(open(sys.argv[2]))["rows"])
print("folded: %d samples (report %d)" % (n, want))
sys.exit(0 if ok and n == want else 1)
PY
		# --dso keeps the stacks whose leaf is in the files named: as many
		# samples as that file's row
		"$CL" report -i "$input" --by dso --format json -o "$TMP/dso.json"
		dso=$(python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
print(max(rows, key=lambda r: r["samples"])["dso"])' "$TMP/dso.json")
		"$CL" report -i "$input" --format folded --dso "$dso" -o "$TMP/d.folded" ||
			fail "$name: folded --dso"
		python3 - "$TMP/d.folded" "$TMP/dso.json" "$dso" <<'PY' || fail "$name: folded --dso $dso"
import json, sys
n = sum(int(l.rsplit(' ', 1)[1]) for l in open(sys.argv[1]))
want = sum(r["samples"] for r in json.load(open(sys.argv[2]))["rows"] if r["dso"] == sys.argv[3])
print("folded --dso %s: %d samples (report %d)" % (sys.argv[3], n, want))
sys.exit(0 if n == want and n > 0 else 1)
PY
	fi
	gzip -t "$TMP/p.pb.gz" || fail "$name: pprof is not gzip"
	zcat "$TMP/p.pb.gz" | protoc --decode=perftools.profiles.Profile -I"$PROTO" profile.proto \
		>"$TMP/p.txt" 2>"$TMP/protoc.err" || fail "$name: protoc: $(cat "$TMP/protoc.err")"
	python3 - "$TMP" "$name" "$rec" <<'PY' || fail "$name: formats disagree with the report"
import json, re, sys
d, name, rec = sys.argv[1], sys.argv[2], sys.argv[3] == "yes"
ok = True
# openmetrics
acc = json.load(open(d + "/acc.json"))
cpu = steal = 0.0
steal_lines = 0
for line in open(d + "/om.txt"):
    m = re.match(r'(cpuledger_\w+)\{.*\} (\S+)$', line)
    if m and m.group(1) == "cpuledger_cpu_seconds_total":
        cpu += float(m.group(2))
    elif m:
        steal += float(m.group(2))
        steal_lines += 1
want = sum(r["cpu_ns"] for r in acc["rows"]) / 1e9
known = acc["totals"]["steal_ns"] is not None and not acc["steal_source"].startswith("unknown")
ok &= abs(cpu - want) < 1e-6 * max(1, len(acc["rows"]))
ok &= (steal_lines > 0) == known
print("%s: openmetrics cpu %.6f s (report %.6f s), %d steal samples, steal %s" %
      (name, cpu, want, steal_lines, "known" if known else "unknown"))
# pprof, from protoc's text form
text = open(d + "/p.txt").read()
strings = [json.loads(s) for s in re.findall(r'^string_table: (".*")$', text, re.M)]
types = [(strings[int(t)], strings[int(u)]) for t, u in
         re.findall(r'sample_type \{\s*type: (\d+)\s*unit: (\d+)\s*\}', text)]
# steal not measured: no steal values at all, rather than zeros
ok &= types == [("cpu", "nanoseconds"), ("steal", "nanoseconds")][:2 if known else 1]
values = [list(map(int, re.findall(r'value: (-?\d+)', s)))
          for s in re.findall(r'^sample \{(.*?)^\}', text, re.M | re.S)]
funcs = {int(i): strings[int(n)] for i, n in
         re.findall(r'^function \{\s*id: (\d+)\s*name: (\d+)', text, re.M)}
maps = set(int(i) for i in re.findall(r'^mapping \{\s*id: (\d+)', text, re.M))
for loc in re.findall(r'^location \{(.*?)^\}', text, re.M | re.S):
    mid = re.search(r'mapping_id: (\d+)', loc)
    fid = re.search(r'function_id: (\d+)', loc)
    ok &= bool(mid and fid) and int(mid.group(1)) in maps and int(fid.group(1)) in funcs
fn = json.load(open(d + "/fn.json"))
rows = [r for r in fn["rows"]]
# each stack's share is rounded down: at most 1 ns per stack apart
slack = len(values)
ok &= 0 <= sum(r["cpu_ns"] for r in rows) - sum(v[0] for v in values) <= slack
if known:
    ok &= 0 <= sum(r["steal_ns"] for r in rows) - sum(v[1] for v in values) <= slack
# every function with time of its own is there (callers too, with -g)
ok &= set(r["function"] for r in rows) <= set(funcs.values())
# each thread's samples labelled as its rows are: its cpu, summed by
# (pid, tid, command, account), the rows' (within 1 ns a stack and a
# function of the thread: each is its share rounded down, and the rows'
# leftover goes to the thread's busiest function)
per = {}
for s in re.findall(r'^sample \{(.*?)^\}', text, re.M | re.S):
    lab = {}
    for k, kind, v in re.findall(r'label \{\s*key: (\d+)\s*(str|num): (-?\d+)', s):
        lab[strings[int(k)]] = strings[int(v)] if kind == "str" else int(v)
    c = per.setdefault(tuple(lab.get(k) for k in ("pid", "tid", "command", "account")), [0, 0])
    c[0] += int(re.findall(r'value: (-?\d+)', s)[0])
    c[1] += 1
want = {}
for r in json.load(open(d + "/ta.json"))["rows"]:
    # (no account: pprof's "[unknown]", as its function has)
    k = tuple(r.get(k) for k in ("pid", "tid", "command")) + (r["account"] or "[unknown]",)
    want[k] = want.get(k, 0) + r["cpu_ns"]
nfn = {}
for r in rows:
    t = tuple(r.get(k) for k in ("pid", "tid", "command"))
    nfn[t] = nfn.get(t, 0) + 1
apart = [k for k in set(per) | set(want)
         if abs(want.get(k, 0) - per.get(k, [0, 0])[0]) > per.get(k, [0, 0])[1] + nfn.get(k[:3], 0)]
ok &= not apart
if apart:
    print("%s: pprof threads unlike the rows: %s" % (name, apart[:3]))
# each folded stack is a sample's: the same functions, root first (pprof
# lists a sample's locations leaf first; a folded line starts with its
# program, and its names have ';' as ':' and ' ' as '_', report/folded.c);
# pprof's others are a thread's time that no sample placed, which folded
# (samples) leaves out: one frame (core/engine_tasks.c, unsampled_stacks)
if rec:
    loc_fn = {int(i): funcs[int(f)].replace(";", ":").replace(" ", "_") for i, f in
              re.findall(r'^location \{\s*id: (\d+).*?function_id: (\d+)', text, re.M | re.S)}
    got = set()
    for s in re.findall(r'^sample \{(.*?)^\}', text, re.M | re.S):
        got.add(tuple(loc_fn[int(i)] for i in reversed(re.findall(r'location_id: (\d+)', s))))
    folded = set(tuple(l.rsplit(' ', 1)[0].split(';')[1:]) for l in open(d + "/f.folded"))
    ok &= folded <= got and all(len(s) == 1 for s in got - folded)
    print("%s: pprof %d stacks, folded %d, %d of pprof's not folded (deepest %d), %d of folded's not in pprof" %
          (name, len(got), len(folded), len(got - folded), max(map(len, got - folded), default=0),
           len(folded - got)))
depth = max(len(re.findall(r'location_id:', s))
            for s in re.findall(r'^sample \{(.*?)^\}', text, re.M | re.S))
ok &= depth > 1 or "oneline" in name
print("%s: pprof %d samples, %d threads, %d functions, %d mappings, deepest stack %d, cpu %d ns (report %d ns) %s" %
      (name, len(values), len(per), len(funcs), len(maps), depth, sum(v[0] for v in values),
       sum(r["cpu_ns"] for r in rows), "ok" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
done
run "$CL" report -i "perf-script:$FIX/perf-script-sched.txt" --format pprof --by process
[ "$(status)" = 2 ] || fail "pprof --by process: status $(status)"
echo "formats: ok"
