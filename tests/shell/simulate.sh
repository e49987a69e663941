# simulate: deterministic, as many samples as asked, a truth file that
# parses and adds up, and analyze's totals that agree with the truth within
# the sampling error; steal is conserved in every method's report.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
args=(--seed 3 --vms 2 --vcpus 4 --duration-ms 30000 --steal-pct 6 --jitter-ns 100000)
"$CL" simulate "${args[@]}" -o "$TMP/a.csv" --truth "$TMP/t.json"
"$CL" simulate "${args[@]}" >"$TMP/b.csv"
cmp "$TMP/a.csv" "$TMP/b.csv" || fail "same seed, different samples"
[ "$(wc -l <"$TMP/a.csv")" = $((2 * 4 * 30000 + 1)) ] || fail "sample count"
for m in preceding bracketed ratio; do
	"$CL" analyze --format json --method $m --timestamps "$TMP/a.csv" >"$TMP/$m.json"
done
python3 - "$TMP" <<'PY' || fail "truth check"
import json, sys
d = sys.argv[1]
truth = json.load(open(d + "/t.json"))
t = truth["totals"]
assert sum(p["cpu_ns"] for p in truth["programs"]) == t["run_ns"]
assert sum(p["steal_ns"] for p in truth["programs"]) == t["held_steal_ns"]
window = truth["vms"] * truth["vcpus"] * truth["duration_ms"] * 10**6
assert t["run_ns"] + t["idle_ns"] + t["steal_ns"] == window
for m in ("preceding", "bracketed", "ratio"):
    r = json.load(open(d + "/%s.json" % m))["totals"]
    assert r["attributed_steal_ns"] + r["unattributed_steal_ns"] == r["steal_ns"], m
    # Sampled figures against continuous truth: within 1 % of the window.
    for k in ("run_ns", "steal_ns", "idle_ns"):
        assert abs(r[k] - t[k]) < window / 100, (m, k, r[k], t[k])
print("ok")
PY
