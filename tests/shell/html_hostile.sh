# report --format html with hostile names (issue 22), in headless
# Chromium: processes named `<!--<script>` and `</script>`, a function
# named `</script><script>document.title='owned'</script>&amp;` with
# U+2028 and U+2029 in it. Before, only "</" was escaped: `<!--<script>`
# put the HTML parser in the script-data double-escaped state, the data
# block swallowed the page's own script, and the page came up blank.
# Now the data holds no '<', '>' or '&' (\u003c, \u003e, \u0026) and
# U+2028/2029 as \u2028/\u2029. Checked:
# - the page's data has none of those bytes;
# - the page renders (its script marks the end), with no console message,
#   and its title is its own;
# - the tables (CPUs, rows: as many as the JSON report's of 0.5 ms or more), the charts
#   (a line per CPU) and the flame graph are there, and the hostile names
#   show as text, exactly.
# Once from an imported perf script (the names put in a recorded text),
# once live (processes renamed through /proc/PID/comm and argv[0]) when
# the kernel lets cpuledger record.
. "$(dirname "$0")/../lib.sh"
command -v chromium >/dev/null || skip "chromium is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
case ${BUILD:-} in *asan*) skip "the page is the same; chromium under ASan's build adds nothing" ;; esac
cd "$TMP"
browse() {	# chromium, headless, no sandbox (root), a private profile
	chromium --headless=new --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TMP/profile" --enable-logging=stderr --v=0 "$@"
}
FUNC=$(printf "</script><script>document.title='owned'</script>&amp;\xe2\x80\xa8\xe2\x80\xa9f")

check_page() {	# REC LABEL NAME...: the page of REC by comm, checked
	local rec=$1 label=$2
	shift 2
	"$CL" report -i "$rec" --by comm --format html -o p.html || fail "$label: report --format html"
	"$CL" report -i "$rec" --by comm --format json -o p.json || fail "$label: report --format json"
	python3 - p.html <<'PY' || fail "$label: the page's data holds bytes the script-data state reads"
import sys
page = open(sys.argv[1], "rb").read()
for tag in (b'id="cpuledger-data">', b'id="cpuledger-flame">'):
    start = page.index(tag) + len(tag)
    data = page[start:page.index(b"</script>", start)]
    bad = [c for c in (b"<", b">", b"&", "\u2028".encode(), "\u2029".encode()) if c in data]
    assert not bad, "%s: %r" % (tag, bad)
PY
	browse --dump-dom "file://$TMP/p.html" >dom.html 2>chromium.err ||
		fail "$label: chromium: $(tail -3 chromium.err)"
	grep -q CONSOLE chromium.err && fail "$label: console messages: $(grep CONSOLE chromium.err | head -5)"
	python3 - "$label" "$@" <<'PY' || fail "$label: the page (above)"
import json, sys
from html.parser import HTMLParser
label, names = sys.argv[1], sys.argv[2:]
d = json.load(open("p.json"))

class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.rows, self.table, self.lines, self.flame = set(), {}, None, 0, 0
        self.title, self.in_title, self.text = "", False, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "table":
            self.table = a.get("id")
            self.rows[self.table] = 0
        elif tag == "tbody":
            self.body = True
        elif tag == "tr" and self.table and getattr(self, "body", False):
            self.rows[self.table] += 1
        elif tag == "polyline":
            self.lines += 1
        elif tag == "div" and a.get("class") == "f":
            self.flame += 1
        elif tag == "title":
            self.in_title = True
    def handle_endtag(self, tag):
        if tag == "table":
            self.table, self.body = None, False
        elif tag == "title":
            self.in_title = False
    def handle_data(self, data):
        if self.in_title:
            self.title += data
        self.text.append(data)

dom = Dom()
dom.feed(open("dom.html", encoding="utf-8").read())
text = "\n".join(dom.text)
bad = []
if "render-ok" not in dom.ids:
    bad.append("the page's script did not finish (a blank page)")
if "owned" in dom.title:
    bad.append("a name ran as script: title %r" % dom.title)
# rows whose every figure is under 0.5 ms (0.000 s) are left out (issue 26)
big = [r for r in d["rows"] if any(v is not None and v >= 500000
       for v in (r["apparent_ns"], r["steal_ns"], r["cpu_ns"]))]
if dom.rows.get("rows", 0) != min(100, len(big)) or not big:
    bad.append("rows: %s on the page, %d of 0.5 ms or more in JSON" % (dom.rows.get("rows"), len(big)))
if dom.rows.get("cpus", 0) != len(d["cpus"]) or not d["cpus"]:
    bad.append("CPUs: %s on the page, %d in JSON" % (dom.rows.get("cpus"), len(d["cpus"])))
if dom.lines < len(d["series"]["cpus"]) or not dom.lines:
    bad.append("charts: %d lines for %d CPUs" % (dom.lines, len(d["series"]["cpus"])))
if dom.flame < 3:
    bad.append("the flame graph has %d boxes" % dom.flame)
comms = [r.get("comm") for r in d["rows"]]
for n in names:
    if n not in comms:
        bad.append("name %r is not a row of the JSON report: %r" % (n, comms[:10]))
    elif n not in text:
        bad.append("name %r is not shown as text on the page" % n)
print("%s: %d rows, %d CPUs, %d chart lines, %d flame boxes, names shown as text" % (
      label, dom.rows.get("rows", 0), dom.rows.get("cpus", 0), dom.lines, dom.flame))
if bad:
    raise SystemExit("\n".join(bad))
PY
}

# an imported perf script whose threads are so named
python3 - "$FIX/perf-script-sched.txt" "$FUNC" >hostile.txt <<'PY'
import re, sys
func = sys.argv[2]
for line in open(sys.argv[1], encoding="utf-8"):
    line = re.sub(r"^(\s*)cpuledger ", r"\1<!--<script> ", line)
    line = re.sub(r"^(\s*)perf-exec ", r"\1</script> ", line)
    line = line.replace("comm=cpuledger ", "comm=<!--<script> ")
    line = line.replace("comm=perf-exec ", "comm=</script> ")
    line = line.replace("spin_a+", func + "+")
    sys.stdout.write(line)
PY
grep -q '^ *<!--<script> ' hostile.txt && grep -q '^ *</script> ' hostile.txt || fail "names not put"
"$CL" import perf-script hostile.txt -o hostile.rec 2>/dev/null || fail "import"
check_page hostile.rec "imported" "<!--<script>" "</script>"
grep -qF "$FUNC" dom.html 2>/dev/null || python3 -c '
import sys, html
t = open("dom.html", encoding="utf-8").read()
sys.exit(0 if html.escape(sys.argv[1], quote=False) in t or sys.argv[1] in html.unescape(t) else 1)' "$FUNC" ||
	fail "imported: the function's name is not in the flame graph"

# live: two processes renamed, spinning
set +e
"$CL" record -a --duration 0.1 -o probe.rec >/dev/null 2>&1
live=$?
set -e
if [ "$live" != 0 ]; then
	echo "html_hostile: imported ok; live part not run: no perf_event access"
	exit 0
fi
# the shell names itself (a builtin's redirection: /proc/self is the
# shell), after its exec; argv[0] is the name too
cat >spin.sh <<'SH'
printf '%s' "$1" >/proc/self/comm
i=0; while [ $i -lt 2000000 ]; do i=$((i+1)); done
SH
bash -c 'exec -a "$1" sh spin.sh "$1"' _ '<!--<script>' &
a=$!
bash -c 'exec -a "$1" sh spin.sh "$1"' _ '</script>' &
b=$!
sleep 0.3
"$CL" record -a -g --duration 2 -o live.rec 2>/dev/null || fail "record"
kill $a $b 2>/dev/null || true
wait $a $b 2>/dev/null || true
check_page live.rec "live" "<!--<script>" "</script>"
echo "html_hostile: ok"
