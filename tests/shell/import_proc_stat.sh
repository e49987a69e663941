# import perf-script --proc-stat START,END (issue 21, item 5): the traced
# guest's /proc/stat before and after, from the kernel model (a plain
# kernel: runtime holds steal; steal in 0.1 ms episodes, which leave no
# missed tick to judge the accounting by). With the copies the recording
# holds each CPU's steal as the kernel counted it, the report's per-CPU
# steal is that (to the nanosecond shares' rounding), the accounting is
# judged by it and said so, and each thread's steal is within the kernel
# model's tolerance; without them the accounting stays unjudged and the
# steal is not found. Bad copies are FILE:LINE or the option at fault,
# exit 2, and no recording.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
python3 "$ROOT/tests/kmodel.py" "$TMP/m.txt" "$TMP/truth.json" --steal 0.3 \
	--episode-ms 0.1 --accounting plain --seconds 4 --seed 5 --proc-stat "$TMP/ps" ||
	fail "the model failed"
run "$CL" import perf-script "$TMP/m.txt" --proc-stat "$TMP/ps.start,$TMP/ps.end" -o "$TMP/m.rec"
[ "$(status)" = 0 ] || fail "import: $(cat "$TMP/err")"
"$CL" report -i "$TMP/m.rec" --by thread --format json >"$TMP/with.json" || fail "report"
"$CL" report -i "perf-script:$TMP/m.txt" --proc-stat "$TMP/ps.start,$TMP/ps.end" \
	--by thread --format json >"$TMP/direct.json" || fail "report -i perf-script: --proc-stat"
cmp -s "$TMP/with.json" "$TMP/direct.json" || fail "report -i perf-script: differs from import"
"$CL" report -i "perf-script:$TMP/m.txt" --by thread --format json >"$TMP/without.json" ||
	fail "report without --proc-stat"
python3 - "$TMP" <<'PY' || fail "figures"
import json, sys
d = sys.argv[1]
w, wo = json.load(open(d + "/with.json")), json.load(open(d + "/without.json"))
def ticks(name):
    return {int(l.split()[0][3:]): int(l.split()[8]) for l in open(d + "/ps." + name)
            if l.startswith("cpu") and l[3].isdigit()}
s0, s1 = ticks("start"), ticks("end")
assert w["steal_clock"] is True and w["steal_scaled"] is True, (w["steal_clock"], w["steal_scaled"])
assert w["kernel_accounting"] == "plain", w["kernel_accounting"]
assert "the kernel counted" in w["kernel_accounting_source"], w["kernel_accounting_source"]
for c in w["cpus"]:
    k = (s1[c["cpu"]] - s0[c["cpu"]]) * 10**7
    assert c["kernel_steal_ns"] == k, (c, k)
    # shares of the kernel's count, each rounded down
    assert k - 1000 <= c["steal_ns"] <= k, (c, k)
    print("cpu %d: kernel %.3f s, attributed %.3f s" % (c["cpu"], k / 1e9, c["steal_ns"] / 1e9))
assert wo["steal_scaled"] is False and wo["kernel_accounting"] == "auto", wo["kernel_accounting"]
print("without --proc-stat: accounting %s, steal %.3f s" % (wo["kernel_accounting"],
      wo["totals"]["steal_ns"] / 1e9))
PY
python3 "$ROOT/tests/kmodel.py" --check "$TMP/with.json" "$TMP/truth.json" 2 2 1 0 2 ||
	fail "threads out of the kernel model's tolerance"

bad() {	# name expected-stderr START END
	rm -f "$TMP/bad.rec"
	run "$CL" import perf-script "$TMP/m.txt" --proc-stat "$3,$4" -o "$TMP/bad.rec"
	[ "$(status)" = 2 ] || fail "$1: exit $(status), want 2"
	[ ! -e "$TMP/bad.rec" ] || fail "$1: wrote a recording"
	[ -z "$(find "$TMP" -maxdepth 1 -name 'bad.rec*')" ] || fail "$1: left a temporary file"
	grep -qF -- "$2" "$TMP/err" || fail "$1: stderr '$(cat "$TMP/err")', want '$2'"
}
printf 'cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 2 3\n' >"$TMP/short"
bad short "$TMP/short:2: a cpuN line without the eight figures" "$TMP/ps.start" "$TMP/short"
printf 'intr 0\nctxt 0\n' >"$TMP/nocpu"
bad nocpu "$TMP/nocpu:1: no cpuN line" "$TMP/nocpu" "$TMP/ps.end"
bad swapped "cpu0's steal went down" "$TMP/ps.end" "$TMP/ps.start"
bad missing "cannot open '$TMP/none'" "$TMP/none" "$TMP/ps.end"
head -c 2000000 /dev/zero >"$TMP/big"
bad big "larger than 1 MiB" "$TMP/big" "$TMP/ps.end"
run "$CL" import perf-script "$TMP/m.txt" --proc-stat "$TMP/ps.start" -o "$TMP/bad.rec"
[ "$(status)" = 2 ] && grep -q "is not START,END" "$TMP/err" || fail "one file: $(cat "$TMP/err")"
run "$CL" report -i "$TMP/m.rec" --proc-stat "$TMP/ps.start,$TMP/ps.end"
[ "$(status)" = 2 ] && grep -q "only with -i perf-script:FILE" "$TMP/err" ||
	fail "--proc-stat of a recording: $(cat "$TMP/err")"
echo "import --proc-stat: the kernel's steal per CPU, judged and placed"
