# report --format html (issue 16), opened from a file in headless Chromium
# (Debian's chromium), offline:
# - it renders (the page marks the end of its script) with no console
#   message at all, and a screenshot is taken;
# - the DOM holds the figures `report --format json` gives for the same
#   recording: totals, per CPU steal beside the kernel's, every row shown,
#   the accounts' target, control and total, each CPU's series in the
#   chart, and a flame graph of the call stacks;
# - the page fetches nothing: no src= or href= to anywhere;
# - issue 26: rows by thread by default (as text and JSON); the last,
#   partial second drawn as the share of the part recorded (each point
#   checked against the JSON's figure over its bucket's length); an x axis
#   with ticks; the charts' titles clear of the 100 % line; no two CPUs'
#   lines drawn alike; no table row whose every figure is 0.000; a note
#   on the flame graph when the recording has no call stacks (no -g), and
#   none when it has.
. "$(dirname "$0")/../lib.sh"
command -v chromium >/dev/null || skip "chromium is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
need_perf
case ${BUILD:-} in *asan*) skip "the page is the same; chromium under ASan's build adds nothing" ;; esac
cd "$TMP"
yes >/dev/null &
spinner=$!
"$CL" record -a -g --duration 2.5 -o r.rec 2>/dev/null || fail "record"
"$CL" record -a --duration 1 -o flat.rec 2>/dev/null || fail "record without -g"
kill $spinner
"$CL" report -i r.rec --format html -o r.html || fail "report --format html"
"$CL" report -i flat.rec --format html -o flat.html || fail "report --format html (no -g)"
"$CL" report -i r.rec --format json -o r.json || fail "report --format json"
size=$(stat -c %s r.html)
grep -Eq '(src|href)=' r.html && fail "the page refers to something outside it: $(grep -Eo '(src|href)=[^ >]*' r.html | head -3)"
browse() {	# chromium, headless, no sandbox (root), a private profile
	chromium --headless=new --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TMP/profile" --enable-logging=stderr --v=0 "$@"
}
browse --dump-dom "file://$TMP/r.html" >dom.html 2>chromium.err || fail "chromium: $(tail -3 chromium.err)"
browse --dump-dom "file://$TMP/flat.html" >flat-dom.html 2>>chromium.err || fail "chromium: $(tail -3 chromium.err)"
if grep -q "CONSOLE" chromium.err; then
	fail "console messages: $(grep CONSOLE chromium.err | head -5)"
fi
browse --hide-scrollbars --window-size=1280,2000 --screenshot="$TMP/r.png" \
	"file://$TMP/r.html" >/dev/null 2>&1 || fail "chromium --screenshot"
[ -s r.png ] && [ "$(head -c 4 r.png | od -An -c | tr -d ' ')" = "211PNG" ] ||
	fail "no PNG screenshot"
python3 - <<'PY' || fail "the page's figures against the JSON report (above)"
import json
from html.parser import HTMLParser
d = json.load(open("r.json"))

class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.tables, self.table, self.section, self.lines, self.flame = {}, {}, None, None, {}, 0
        self.row = None
        self.polys, self.grid, self.texts, self.text, self.svg = {}, {}, {}, None, None
    def handle_data(self, data):
        if self.text:
            self.texts.setdefault(self.text[0], []).append((self.text[1], data))
            self.text = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids[a["id"]] = a
        if tag == "table":
            self.table = a.get("id")
            self.tables[self.table] = {"body": [], "foot": []}
            self.section = "head"
        elif tag in ("tbody", "tfoot") and self.table:
            self.section = "body" if tag == "tbody" else "foot"
        elif tag == "tr" and self.table and self.section in ("body", "foot"):
            self.row = []
            self.tables[self.table][self.section].append(self.row)
        elif tag == "td" and self.row is not None:
            self.row.append(a.get("data-ns"))
        elif tag == "polyline":
            self.lines[(a.get("id"), a["data-cpu"], self.svg)] = a["data-ns"]
            self.polys.setdefault(self.svg, []).append(a)
        elif tag == "svg":
            self.svg = a.get("id")
        elif tag == "line" and self.svg and a.get("class") != "tick":
            self.grid.setdefault(self.svg, []).append(float(a["y1"]))
        elif tag == "text" and self.svg:
            self.text = (self.svg, a)
        elif tag == "div" and a.get("class") == "f":
            self.flame += 1
    def handle_endtag(self, tag):
        if tag == "table":
            self.table, self.row = None, None
        elif tag == "tr":
            self.row = None

dom = Dom()
dom.feed(open("dom.html").read())
flat = Dom()
flat.feed(open("flat-dom.html").read())
bad = []
def same(what, page, want):
    page = None if page in (None, "null") else int(page)
    if page != want:
        bad.append(f"{what}: page {page}, JSON {want}")
if "render-ok" not in dom.ids:
    bad.append("the page's script did not finish")
t = d["totals"]
same("run", dom.ids["sum-run"]["data-ns"], t["run_ns"])
same("steal", dom.ids["sum-steal"]["data-ns"], t["steal_ns"])
same("idle", dom.ids["sum-idle"]["data-ns"], t["idle_ns"])
for row, c in zip(dom.tables["cpus"]["body"], d["cpus"]):
    same(f"cpu {c['cpu']} steal", row[1], c["steal_ns"])
    same(f"cpu {c['cpu']} kernel steal", row[2], c["kernel_steal_ns"])
if len(dom.tables["cpus"]["body"]) != len(d["cpus"]):
    bad.append("CPUs: %d on the page, %d in JSON" % (len(dom.tables["cpus"]["body"]), len(d["cpus"])))
rows = dom.tables["rows"]["body"]
if d["by"] != "thread":
    bad.append(f"the JSON's default key is {d['by']}")
def tiny(*v):
    return all(x is None or x < 500000 for x in v)
big = [r for r in d["rows"] if not tiny(r["apparent_ns"], r["steal_ns"], r["cpu_ns"])]
if len(rows) != min(100, len(big)):
    bad.append(f"rows: {len(rows)} on the page, {len(big)} of 0.5 ms or more in JSON")
if len(big) < len(d["rows"]) and "rows-tiny" not in dom.ids:
    bad.append("rows left out and not said")
for row, r in zip(rows, big):	# key, APPARENT_S, STEAL_S, CPU_S
    same(f"row {r['tid']} cpu", row[3], r["cpu_ns"])
    same(f"row {r['tid']} apparent", row[1], r["apparent_ns"])
for name in ("rows", "accounts", "cgroups"):
    for row in dom.tables.get(name, {"body": []})["body"]:
        if all(v in (None, "null") or int(v) < 500000 for v in row):
            bad.append(f"{name}: a row of 0.000 only: {row}")
# the charts: ticks, titles clear of the 100 % line, CPUs told apart, and
# the last, partial bucket as a share of its part
S = d["series"]
n = len(S["cpus"][0]["cpu_ns"])
last = d["duration_ns"] - (n - 1) * S["bucket_ns"]
if not 0 < last < S["bucket_ns"]:
    last = S["bucket_ns"]
for svg in ("chart-cpu",):
    labels = [x for a, x in dom.texts.get(svg, []) if a.get("class") == "tick-label"]
    if len(labels) < 4:
        bad.append(f"{svg}: x axis ticks {labels}")
    top = min(dom.grid[svg])
    for a, x in dom.texts[svg]:
        if a.get("class") == "chart-title" and float(a["y"]) > top - 8:
            bad.append(f"{svg}: title '{x}' at y {a['y']} on the top line at {top}")
    # colour alone does not do: a line drawn over another hides it
    dash = [p.get("stroke-dasharray", "") for p in dom.polys[svg]][:3]
    if len(set(dash)) != len(dash):
        bad.append(f"{svg}: CPUs' lines dashed alike {dash}")
    H, B, T = 190, 24, 24
    for p, c in zip(dom.polys[svg], S["cpus"]):
        y = float(p["points"].split()[-1].split(",")[1])
        want = H - B - min(100, 100 * c["cpu_ns"][-1] / last) / 100 * (H - B - T)
        if abs(y - want) > 0.2:
            bad.append(f"{svg} CPU {c['cpu']}: last point at y {y}, {want:.1f} for "
                       f"{c['cpu_ns'][-1]} ns in its last {last} ns")
if "no-stacks" in dom.ids:
    bad.append("a recording with -g said to have no call stacks")
if "no-stacks" not in flat.ids:
    bad.append("a recording without -g: no note that it has no call stacks")
acc = {"target": 0, "control": 0}
for a in d["accounts"]:
    acc["control" if a["control"] else "target"] += a["cpu_ns"]
same("accounts target", dom.ids["acc-target"]["data-ns"], acc["target"])
same("accounts control", dom.ids["acc-control"]["data-ns"], acc["control"])
same("accounts total", dom.ids["acc-total"]["data-ns"], acc["target"] + acc["control"])
if acc["target"] + acc["control"] != t["run_ns"]:
    bad.append(f"accounts sum {acc['target'] + acc['control']} is not the run {t['run_ns']}")
for c in d["series"]["cpus"]:
    got = dom.lines.get((None, str(c["cpu"]), "chart-cpu"))
    if got != ",".join(str(v) for v in c["cpu_ns"]):
        bad.append(f"chart of CPU {c['cpu']}: {got} vs {c['cpu_ns']}")
if sum(sum(c["cpu_ns"]) for c in d["series"]["cpus"]) != t["run_ns"]:
    bad.append("the series does not sum to the run")
if dom.flame < 10:
    bad.append(f"the flame graph has {dom.flame} boxes")
print(f"page: {len(rows)} rows, {len(d['cpus'])} CPUs, {dom.flame} flame boxes, figures as the JSON's; "
      f"last bucket {last / 1e9:.3f} s of {S['bucket_ns'] / 1e9:.0f}")
if bad:
    raise SystemExit("\n".join(bad))
PY
echo "html: $size bytes, rendered by chromium with no console message; screenshot $(stat -c %s r.png) bytes"
