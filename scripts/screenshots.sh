#!/usr/bin/env bash
# Makes the README's pictures (docs/top.png, docs/report-html.png) from
# real runs: `cpuledger top` in a tmux window while the built-in workload
# and a build run, its screen drawn as a terminal would by headless
# Chromium; and the HTML report of a recording of the same, as Chromium
# shows it. Needs root (system-wide recording), tmux and chromium.
#   scripts/screenshots.sh [RECORDING]   (default: record 20 s now)
set -euo pipefail
cd "$(dirname "$0")/.."
CL=${CPULEDGER:-$PWD/build/cpuledger}
TMP=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; tmux -S "$TMP/s" kill-server 2>/dev/null || true; rm -rf "$TMP"' EXIT
shot() {	# URL OUT WIDTH HEIGHT
	chromium --headless=new --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
		--user-data-dir="$TMP/profile" --window-size="$3,$4" --screenshot="$2" "$1" \
		>/dev/null 2>&1
}
"$CL" workload threads --threads 1 --seconds 60 >/dev/null 2>&1 &
pids+=($!)
(while :; do make -s -C "$PWD" -B BUILD="$TMP/b" "$TMP/b/libcore.a" >/dev/null 2>&1 || true; done) &
pids+=($!)

# top, 100 x 32, after three refreshes
tmux -f /dev/null -S "$TMP/s" -D >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$TMP/s" ] && break; sleep 0.1; done
tmux -S "$TMP/s" new-session -d -x 100 -y 32 "$CL top -d 2; sleep 30"
sleep 7
tmux -S "$TMP/s" capture-pane -p >"$TMP/top.txt"
tmux -S "$TMP/s" send-keys q
python3 - "$TMP/top.txt" "$TMP/top.html" <<'PY'
import html, sys
lines = open(sys.argv[1]).read().rstrip("\n").split("\n")
out = []
for i, l in enumerate(lines):
    l = html.escape(l.ljust(100))
    # the column titles are drawn in reverse video
    out.append(f'<span class="rev">{l}</span>' if l.lstrip().startswith(("PID", "PROCS")) else l)
open(sys.argv[2], "w").write(
    '<!DOCTYPE html><html><head><meta charset="utf-8"><style>'
    'body{margin:0;background:#1e1e1e}pre{margin:0;padding:10px 12px;color:#d8d8d8;'
    'font:14px/1.4 "DejaVu Sans Mono",monospace}.rev{display:inline-block;background:#d8d8d8;color:#1e1e1e}'
    '</style></head><body><pre>' + "\n".join(out) + "</pre></body></html>")
PY
shot "file://$TMP/top.html" docs/top.png 860 650

# the HTML report
rec=${1:-}
if [ -z "$rec" ]; then
	rec=$TMP/r.rec
	"$CL" record -a -g --duration 20 -o "$rec" 2>/dev/null
fi
"$CL" report -i "$rec" --format html -o "$TMP/r.html"
shot "file://$TMP/r.html" docs/report-html.png 1280 1900
echo "docs/top.png, docs/report-html.png made"
