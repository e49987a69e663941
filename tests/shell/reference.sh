# Differential test: analyze's JSON equals that of the reference
# implementation (bench/ref_analyze.py, written separately from the spec)
# for every method, key and duration rule, on simulated data with jitter,
# several VMs and a quoted function name.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
"$CL" simulate --seed 7 --vms 3 --vcpus 3 --duration-ms 2000 --steal-pct 10 \
	--jitter-ns 300000 -o "$TMP/s.csv"
canon() { python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), sort_keys=True, indent=0))'; }
for m in preceding bracketed ratio; do
	for by in process thread function; do
		for ts in "" --timestamps; do
			"$CL" analyze --format json --method $m --by $by $ts "$TMP/s.csv" | canon >"$TMP/a"
			python3 "$ROOT/bench/ref_analyze.py" --method $m --by $by $ts "$TMP/s.csv" | canon >"$TMP/b"
			diff -u "$TMP/b" "$TMP/a" >"$TMP/d" || { head -40 "$TMP/d"; fail "$m $by $ts differs from the reference"; }
		done
	done
done
