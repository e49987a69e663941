# Charge accounts on live recordings (issue 4's must-shows for openssl and
# dd): `run -- openssl speed -seconds 3 sha256` with libcrypto mapped to
# "crypto" puts >= 80 % of the process there; dd's time is >= 70 %
# "kernel" by the default rules; --control splits target from control; a
# bad rules file is FILE:LINE, exit 2, nothing recorded.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
command -v openssl >/dev/null || skip "openssl is not installed"
need_perf
cat >"$TMP/accounts" <<'RULES'
# the examples of docs/accounts.md
crypto   path */libcrypto.so*
runtime  path */libc.so*
runtime  path */ld-linux*
RULES
"$CL" run --accounts "$TMP/accounts" -o "$TMP/ossl.rec" -- openssl speed -seconds 3 sha256 >/dev/null 2>&1 ||
	fail "run openssl failed"
share() {	# recording account [report args...] -> percent of the process
	local rec=$1 acc=$2; shift 2
	"$CL" report -i "$rec" --by process,account --format json "$@" | python3 -c '
import json, sys
rows = json.load(sys.stdin)["rows"]
total = sum(r["cpu_ns"] for r in rows)
print("%.1f" % (100 * sum(r["cpu_ns"] for r in rows if r["account"] == sys.argv[1]) / total))' "$acc"
}
c=$(share "$TMP/ossl.rec" crypto)
echo "openssl: crypto $c %"
python3 -c "import sys; sys.exit(0 if $c >= 80 else 1)" || fail "crypto is $c % of openssl, want >= 80 %"
# The rules were stored: a report without --accounts uses them; with other
# rules, those.
printf 'everything path *\n' >"$TMP/all"
[ "$(share "$TMP/ossl.rec" everything --accounts "$TMP/all")" = "100.0" ] || fail "report --accounts did not override"
# --control: the control program's time, the rest the target's.
"$CL" report -i "$TMP/ossl.rec" --by process --format json --control runtime,kernel | python3 -c '
import json, sys
r = json.load(sys.stdin)["rows"][0]
assert r["target_ns"] + r["control_ns"] == r["cpu_ns"], r
assert 0 < r["control_ns"] < 0.2 * r["cpu_ns"], r
' || fail "target and control"

"$CL" record -o "$TMP/dd.rec" -- dd if=/dev/zero of=/dev/null bs=1M count=30000 2>/dev/null
k=$(share "$TMP/dd.rec" kernel)
echo "dd: kernel $k %"
python3 -c "import sys; sys.exit(0 if $k >= 70 else 1)" || fail "kernel is $k % of dd, want >= 70 %"

# Bad rules: FILE:LINE, exit 2, no recording written.
printf 'ok path /x\nbad pathh /y\n' >"$TMP/bad"
run "$CL" record --accounts "$TMP/bad" -o "$TMP/none.rec" -- true
[ "$(status)" = 2 ] || fail "bad rules: exit $(status)"
[ "$(cat "$TMP/err")" = "$TMP/bad:2: unknown match 'pathh' (path, symbol, range, kernel or executable)" ] ||
	fail "bad rules: $(cat "$TMP/err")"
[ ! -e "$TMP/none.rec" ] || fail "bad rules: a recording was written"
run "$CL" report -i "$TMP/dd.rec" --accounts "$TMP/bad"
[ "$(status)" = 2 ] && [ ! -s "$TMP/out" ] || fail "report with bad rules: exit $(status)"
