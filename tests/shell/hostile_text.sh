# Text a process controls, through every output (issue 11): its command
# line holds invalid UTF-8, starts like a spreadsheet formula, and is
# longer than a recording keeps.
# - JSON parses strictly, the bad bytes as U+FFFD (before: raw bytes,
#   invalid JSON);
# - OpenMetrics passes `promtool check metrics` (before: one process made
#   the whole scrape fail);
# - pprof decodes with `protoc --decode` (before: invalid UTF-8 in its
#   string table);
# - CSV: the formula-like cell is data ('=...), not a formula;
# - the cut command line is marked " [...]";
# - text reports show control characters as '?' (an escape sequence in a
#   command line would act on the terminal);
# - perf script names with a NUL byte are refused with FILE:LINE.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
command -v promtool >/dev/null || skip "promtool is not installed (package prometheus)"
command -v protoc >/dev/null || skip "protoc is not installed (package protobuf-compiler)"
PROTO=/usr/share/gocode/src/github.com/google/pprof/proto
[ -f "$PROTO/profile.proto" ] || skip "profile.proto is not installed (golang-github-google-pprof-dev)"
need_perf
cd "$TMP"

long=$(head -c 40000 /dev/zero | tr '\0' a)
# argv[0] '=HYPERLINK(...)', then bytes that are not UTF-8, then 40 000 a's
bash -c 'exec -a "=HYPERLINK(\"http://x\")" sh -c "i=0; while [ \$i -lt 1200000 ]; do i=\$((i+1)); done" sh "$(printf "\xff\xfe\xc3(\033]0;owned\007")" "$1"' _ "$long" &
victim=$!
sleep 0.2
"$CL" record -p $victim -o t.rec 2>rec.err || fail "record: $(cat rec.err)"

# JSON, strictly
"$CL" report -i t.rec --by process --format json -o t.json
python3 - t.json <<'PY' || fail "JSON"
import json, sys
raw = open(sys.argv[1], "rb").read()
d = json.loads(raw.decode("utf-8", errors="strict"))
cmds = [r["command"] for r in d["rows"] if r["command"] and "HYPERLINK" in r["command"]]
assert cmds, [(r["command"] or "")[:60] for r in d["rows"]]
c = cmds[0]
assert "\ufffd" in c, repr(c[:80])
assert c.endswith(" [...]"), repr(c[-40:])
assert len(c) < 40000, len(c)
print("JSON: strict UTF-8, %d-character command with U+FFFD, marked cut" % len(c))
PY

# OpenMetrics
"$CL" report -i t.rec --by process --format openmetrics -o t.om
promtool check metrics <t.om >lint 2>&1 || fail "promtool: $(cat lint)"
grep -q HYPERLINK t.om || fail "openmetrics: the command is not there"
echo "OpenMetrics: promtool check metrics passes"

# pprof
"$CL" report -i t.rec --format pprof -o t.pb.gz
zcat t.pb.gz | protoc --decode=perftools.profiles.Profile -I"$PROTO" profile.proto \
	>t.pprof.txt 2>protoc.err || fail "protoc: $(cat protoc.err)"
grep -q HYPERLINK t.pprof.txt || fail "pprof: the command is not there"
echo "pprof: protoc --decode reads it"

# CSV: the cell starts with ' so that a spreadsheet shows it
"$CL" report -i t.rec --by process --format csv -o t.csv
python3 - t.csv <<'PY' || fail "CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8", newline="")))
cells = [v for r in rows for v in r.values() if v and "HYPERLINK" in v]
assert cells, [str(r)[:80] for r in rows[:3]]
assert all(not c.startswith(("=", "+", "-", "@")) for c in cells), cells[0][:40]
assert any(c.startswith("'=") for c in cells), cells[0][:40]
print("CSV: the formula is data: %s..." % cells[0][:24])
PY

# text for a terminal: no escape sequence gets through
"$CL" report -i t.rec --by process --wide -o t.txt
grep -q HYPERLINK t.txt || fail "text: the command is not there"
! grep -q "$(printf '\033')" t.txt || fail "text: an escape sequence reached the report"
echo "text: control characters shown as '?'"

# perf script with a NUL in a name
printf '    a\0b  100/100  [000]   1.000000: cpu-clock:\n\t    1234 f (/bin/x)\n\n' >nul.txt
run "$CL" import perf-script nul.txt -o nul.rec
[ "$(status)" = 2 ] || fail "NUL in perf script: status $(status)"
grep -q "^nul.txt:1: " "$TMP/err" || fail "NUL in perf script: $(cat "$TMP/err")"
[ ! -e nul.rec ] || fail "NUL in perf script: a recording was written"
echo "perf script with a NUL: $(cat "$TMP/err")"
echo "hostile_text: ok"
