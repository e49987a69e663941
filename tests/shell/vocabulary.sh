# Every name an output shows is in docs/vocabulary.md (issue 26): the
# column titles of report's text tables (every --by, the per-CPU and
# cgroup tables), bill's and run's; every CSV header field of report and
# bill; every JSON key of report and bill. The outputs are real: a run of
# the built-in workload recorded live, a perf script text imported, and a
# ledger of both. A name added to any of them without a line in the
# vocabulary fails here. Also: no output names the sources the project
# implements (seed, FIG., patent numbers): those are for docs only; an
# import's report and bill do not call the host "unknown"; --by cgroup
# shows the cgroups table (throttling, wait) even with the root alone.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
need_perf
cd "$TMP"
"$CL" run -o live.rec -- "$CL" workload threads --threads 2 --seconds 1 >run.txt 2>&1 ||
	fail "run: $(tail -3 run.txt)"
"$CL" import perf-script "$FIX/perf-script-sched.txt" -o imp.rec 2>/dev/null
"$CL" ledger add --ledger l.db live.rec imp.rec 2>/dev/null
mkdir text csv json
n=0
for by in thread process comm command executable user dso function account cpu cgroup \
	  thread,function comm,account; do
	for rec in live imp; do
		n=$((n + 1))
		"$CL" report -i $rec.rec --by $by --top 0 >text/$n || fail "report --by $by"
		"$CL" report -i $rec.rec --by $by --format csv >csv/$n || fail "report csv --by $by"
		"$CL" report -i $rec.rec --by $by --format json >json/$n || fail "report json --by $by"
	done
done
for by in comm process thread command executable user account cgroup day comm,hour; do
	n=$((n + 1))
	"$CL" bill --ledger l.db --by $by --price 0.05 >text/$n || fail "bill --by $by"
	"$CL" bill --ledger l.db --by $by --format csv >csv/$n || fail "bill csv --by $by"
	"$CL" bill --ledger l.db --by $by --price 0.05 --format json >json/$n || fail "bill json --by $by"
done
cp run.txt text/run
python3 - "$ROOT/docs/vocabulary.md" <<'PY' || fail "names missing from docs/vocabulary.md (above)"
import glob, json, re, sys
doc = open(sys.argv[1]).read()
quoted = re.findall(r"`([^`]+)`", doc)
upper = set(t for q in quoted for t in re.findall(r"[A-Z][A-Z0-9_]*%?", q))
lower = set(t for q in quoted for t in re.findall(r"[a-z][a-z0-9_]*", q))
missing = {}
def need(name, where, known):
    if name not in known:
        missing.setdefault(name, where)
titles = re.compile(r"^ *(?:[A-Z][A-Z0-9_%]*|SHARE \(95% CI\))(?: +(?:[A-Z][A-Z0-9_%]*|SHARE \(95% CI\)))+ *$")
nheads = 0
for f in glob.glob("text/*"):
    for line in open(f):
        if titles.match(line):
            nheads += 1
            for t in re.findall(r"[A-Z][A-Z0-9_]*%?", line):
                need(t, f"{f}: {line.strip()}", upper)
csvf = 0
for f in glob.glob("csv/*"):
    head = open(f).readline().strip()
    csvf += 1
    for k in head.split(","):
        need(k, f"{f} header", lower)
keys = set()
def walk(o, f):
    if isinstance(o, dict):
        for k, v in o.items():
            keys.add(k)
            need(k, f"{f} JSON", lower)
            if k != "events":	# an import's header lines, keyed by event
                walk(v, f)
    elif isinstance(o, list):
        for v in o:
            walk(v, f)
for f in glob.glob("json/*"):
    walk(json.load(open(f)), f)
if nheads < 20 or csvf < 20 or len(keys) < 40:
    sys.exit(f"too few names read: {nheads} title lines, {csvf} CSV headers, {len(keys)} JSON keys")
for k, where in sorted(missing.items()):
    print(f"not in docs/vocabulary.md: {k} ({where})")
if missing:
    sys.exit(1)
print(f"vocabulary: {nheads} title lines, {csvf} CSV headers, {len(keys)} JSON keys, all documented")
PY
# the sources are cited in docs, not in outputs
"$CL" report -i live.rec --format html -o page.html
if grep -EiHn '\bseed\b|FIG\. ?[0-9]|JP[0-9]{7}' text/* csv/* page.html; then
	fail "an output cites the project's sources (above)"
fi
"$CL" analyze --help >help.txt 2>&1 || true
! grep -Ei '\bseed [0-9]|FIG\.|JP[0-9]{7}' help.txt || fail "analyze --help cites a source"

# an import records no host: not printed as one
"$CL" report -i imp.rec >imp.txt
! grep -q "on unknown" imp.txt || fail "an import's report: $(head -1 imp.txt)"
"$CL" ledger add --ledger imp.db imp.rec 2>/dev/null
"$CL" bill --ledger imp.db >imp-bill.txt
grep -q "host not recorded" imp-bill.txt && ! grep -q "host unknown" imp-bill.txt ||
	fail "an import's bill: $(sed -n 3p imp-bill.txt)"
# by cgroup: the section with throttling and wait whenever JSON has cgroups
"$CL" report -i live.rec --by cgroup >cg.txt
"$CL" report -i live.rec --by cgroup --format json >cg.json
python3 -c 'import json,sys; sys.exit(0 if json.load(open("cg.json"))["cgroups"] else 1)' &&
	{ grep -q "THROTTLED_S" cg.txt || fail "--by cgroup hides the cgroups section: $(tail -4 cg.txt)"; }
echo "vocabulary: no source cited, no host called unknown, the cgroups section by cgroup"
