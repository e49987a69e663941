#!/usr/bin/env bash
# bench/top: what `cpuledger top` costs, beside procps top, while this tree
# builds in a loop: both refresh every second for N refreshes (default
# 60); each one's CPU time (user + system, GNU time) as a share of one
# CPU, and cpuledger top's own CPU per refresh (rows and drawing; it says
# so when it exits).
#   bench/top.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-60}
CL=${CPULEDGER:-$PWD/build/cpuledger}
[ -x "$CL" ] || make -s all
TMP=$(mktemp -d /var/tmp/top.XXXXXX)
loop=
trap '[ -n "$loop" ] && kill $loop 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
(while :; do make -s -B BUILD="$TMP/b" "$TMP/b/libcore.a" >/dev/null 2>&1 || true; done) &
loop=$!
sleep 3
/usr/bin/time -f "%e %U %S" -o "$TMP/cl.time" "$CL" top --batch -n "$N" -d 1 >"$TMP/cl.out" 2>"$TMP/cl.err" &
a=$!
/usr/bin/time -f "%e %U %S" -o "$TMP/top.time" top -b -n "$N" -d 1 >"$TMP/top.out" 2>&1 &
b=$!
wait $a $b
read -r ce cu cs <"$TMP/cl.time"
read -r te tu ts <"$TMP/top.time"
per=$(grep -o '[0-9.]* ms of CPU each' "$TMP/cl.err" | awk '{ print $1 }')
rows=$(awk '/^ *PID/ { n = 0; next } /^$/ { if (n) last = n } { n++ } END { print last }' "$TMP/cl.out")
python3 - "$N" "$ce" "$cu" "$cs" "$te" "$tu" "$ts" "$per" "$rows" <<'PY'
import sys
n, ce, cu, cs, te, tu, ts, per, rows = sys.argv[1:]
c = (float(cu) + float(cs)) / float(ce) * 100
t = (float(tu) + float(ts)) / float(te) * 100
print(f"bench/top: {n} refreshes a second apart while this tree builds in a loop")
print(f"{'':24s} {'wall s':>8s} {'CPU s':>8s} {'% of a CPU':>11s}")
print(f"{'cpuledger top --batch':24s} {float(ce):8.1f} {float(cu) + float(cs):8.2f} {c:10.2f}%")
print(f"{'procps top -b':24s} {float(te):8.1f} {float(tu) + float(ts):8.2f} {t:10.2f}%")
print(f"ratio cpuledger / procps: {c / t:.2f}x")
print(f"cpuledger top: {per} ms of CPU a refresh for rows and text (about {rows} rows a refresh); "
      f"the rest is the recording of every CPU")
PY
