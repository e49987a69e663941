# report --format html (issue 16), opened from a file in headless Chromium
# (Debian's chromium), offline:
# - it renders (the page marks the end of its script) with no console
#   message at all, and a screenshot is taken;
# - the DOM holds the figures `report --format json` gives for the same
#   recording: totals, per CPU steal beside the kernel's, every row shown,
#   the accounts' target, control and total, each CPU's series in the
#   chart, and a flame graph of the call stacks;
# - the page fetches nothing: no src= or href= to anywhere.
. "$(dirname "$0")/../lib.sh"
command -v chromium >/dev/null || skip "chromium is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
need_perf
case ${BUILD:-} in *asan*) skip "the page is the same; chromium under ASan's build adds nothing" ;; esac
cd "$TMP"
yes >/dev/null &
spinner=$!
"$CL" record -a -g --duration 3 -o r.rec 2>/dev/null || fail "record"
kill $spinner
"$CL" report -i r.rec --format html -o r.html || fail "report --format html"
"$CL" report -i r.rec --by comm --format json -o r.json || fail "report --format json"
size=$(stat -c %s r.html)
grep -Eq '(src|href)=' r.html && fail "the page refers to something outside it: $(grep -Eo '(src|href)=[^ >]*' r.html | head -3)"
browse() {	# chromium, headless, no sandbox (root), a private profile
	chromium --headless=new --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TMP/profile" --enable-logging=stderr --v=0 "$@"
}
browse --dump-dom "file://$TMP/r.html" >dom.html 2>chromium.err || fail "chromium: $(tail -3 chromium.err)"
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
        elif tag == "svg":
            self.svg = a.get("id")
        elif tag == "div" and a.get("class") == "f":
            self.flame += 1
    def handle_endtag(self, tag):
        if tag == "table":
            self.table, self.row = None, None
        elif tag == "tr":
            self.row = None

dom = Dom()
dom.feed(open("dom.html").read())
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
if len(rows) != min(100, len(d["rows"])):
    bad.append(f"rows: {len(rows)} on the page, {len(d['rows'])} in JSON")
for row, r in zip(rows, d["rows"]):	# key, APPARENT_S, STEAL_S, CPU_S
    same(f"row {r['comm']} cpu", row[3], r["cpu_ns"])
    same(f"row {r['comm']} apparent", row[1], r["apparent_ns"])
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
print(f"page: {len(rows)} rows, {len(d['cpus'])} CPUs, {dom.flame} flame boxes, figures as the JSON's")
if bad:
    raise SystemExit("\n".join(bad))
PY
echo "html: $size bytes, rendered by chromium with no console message; screenshot $(stat -c %s r.png) bytes"
