# The Grafana dashboard and the Prometheus rules in contrib/ (issue 23),
# against the agent scraped by a real Prometheus (as agent_prometheus.sh):
# - promtool check rules passes on the recording and alerting rules, and
#   promtool test rules on fixtures/prometheus-alerts.test.yml (each alert
#   fires when it should and not before);
# - with a spinner in a cgroup whose quota throttles it, every query of
#   every panel of contrib/grafana-dashboard.json ($__rate_interval as
#   10s, the variables as .*) returns series, and so do the variables'
#   own queries;
# - Prometheus loads both rule files (health ok), and each recording rule,
#   evaluated every second here, gives series.
. "$(dirname "$0")/../lib.sh"
case ${BUILD:-} in *asan*) skip "the queries are the same for every build" ;; esac
command -v prometheus >/dev/null || skip "prometheus is not installed"
command -v promtool >/dev/null || skip "promtool is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
promtool check rules "$ROOT/contrib/prometheus-rules.yml" "$ROOT/contrib/prometheus-alerts.yml" >"$TMP/check" 2>&1 ||
	fail "promtool check rules: $(cat "$TMP/check")"
promtool test rules "$ROOT/tests/fixtures/prometheus-alerts.test.yml" >"$TMP/ptest" 2>&1 ||
	fail "promtool test rules: $(cat "$TMP/ptest")"
echo "rules: promtool check rules and test rules pass"
need_perf
[ "$(id -u)" = 0 ] || skip "making a cgroup with a CPU quota (the throttling panel) needs root"
cd "$TMP"

# a cgroup with a quota of a tenth of a CPU, in v2 or, on hybrid hosts,
# in the v1 cpu hierarchy at the same path (as cgroups.sh makes them)
V2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
CPU1=$(awk '$9 == "cgroup" && $NF ~ /(^|,)cpu(,|$)/ { print $5; exit }' /proc/self/mountinfo)
G=cpltest-$$-dash
dirs=()
spin=""
trap 'kill $agent $prom $spin 2>/dev/null || true; wait 2>/dev/null || true
      for d in "${dirs[@]}"; do rmdir "$d" 2>/dev/null || true; done; rm -rf "$TMP"' EXIT
if [ -n "$CPU1" ]; then
	for h in ${V2:+"$V2"} "$CPU1"; do mkdir "$h/$G" || skip "cannot make a cgroup under $h"; dirs+=("$h/$G"); done
	echo 100000 >"$CPU1/$G/cpu.cfs_period_us"
	echo 10000 >"$CPU1/$G/cpu.cfs_quota_us"
elif [ -n "$V2" ] && grep -qw cpu "$V2/cgroup.controllers"; then
	echo +cpu >"$V2/cgroup.subtree_control" 2>/dev/null || skip "cannot enable the cpu controller"
	mkdir "$V2/$G" || skip "cannot make a cgroup under $V2"
	dirs+=("$V2/$G")
	echo "10000 100000" >"$V2/$G/cpu.max"
else
	skip "no cgroup hierarchy with the cpu controller: the throttling panel would be empty"
fi
procs=""
for d in "${dirs[@]}"; do procs="$procs $d/cgroup.procs"; done

port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
get() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode())' "$1"; }
AP=$(port)
PP=$(port)
"$CL" agent --ledger "$TMP/a.db" --interval 5 --listen "127.0.0.1:$AP" 2>agent.err &
agent=$!
sh -c "for f in $procs; do echo \$\$ >\$f; done; exec yes" >/dev/null &
spin=$!
# the recording rules every second, so that a few seconds give series
sed 's/interval: 1m/interval: 1s/' "$ROOT/contrib/prometheus-rules.yml" >rules.yml
cp "$ROOT/contrib/prometheus-alerts.yml" alerts.yml
cat >prom.yml <<EOF2
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [rules.yml, alerts.yml]
scrape_configs:
  - job_name: cpuledger
    static_configs:
      - targets: ['127.0.0.1:$AP']
EOF2
prometheus --config.file=prom.yml --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address="127.0.0.1:$PP" >prom.log 2>&1 &
prom=$!
for _ in $(seq 50); do
	get "http://127.0.0.1:$AP/metrics" >scrape.txt 2>/dev/null && break
	sleep 0.2
done
[ -s scrape.txt ] || fail "no /metrics: $(cat agent.err)"
sleep 20
get "http://127.0.0.1:$AP/metrics" >scrape.txt
grep -q "^cpuledger_cgroup_throttled_seconds_total{cgroup=\"/$G\"}" scrape.txt ||
	fail "no throttling of /$G in /metrics: $(grep throttled scrape.txt)"

python3 - "$ROOT/contrib/grafana-dashboard.json" "$ROOT/contrib/prometheus-rules.yml" "http://127.0.0.1:$PP" <<'PY' || fail "a query returned no series"
import json, re, sys, urllib.parse, urllib.request
dash, rules, base = sys.argv[1:4]
def query(q):
    url = base + "/api/v1/query?query=" + urllib.parse.quote(q)
    r = json.load(urllib.request.urlopen(url, timeout=20))
    if r["status"] != "success":
        raise SystemExit("query failed: %s: %s" % (q, r))
    return r["data"]["result"]
def fill(q):
    return q.replace("$__rate_interval", "10s").replace("$instance", ".*").replace("$job", ".*")
d = json.load(open(dash))
bad = 0
queries = 0
for v in d["templating"]["list"]:
    if v["type"] != "query":
        continue
    m = re.match(r"label_values\((.*), *(\w+)\)$", v["definition"])
    series = query(fill(m.group(1)))
    ok = any(m.group(2) in s["metric"] for s in series)
    print("variable %-10s %s" % (v["name"], "ok" if ok else "NO SERIES"))
    bad += not ok
for p in d["panels"]:
    if p["type"] == "row":
        continue
    if not p.get("targets"):
        print("panel %r has no query" % p["title"]); bad += 1
    for t in p["targets"]:
        n = len(query(fill(t["expr"])))
        queries += 1
        print("panel %-50s %s: %d series" % (p["title"][:50], t["refId"], n))
        bad += n == 0
# recording rules: each recorded name, as Prometheus evaluated it
recs = re.findall(r"^\s*- record: (\S+)", open(rules).read(), re.M)
for name in recs:
    n = len(query(name))
    print("recording rule %-50s %d series" % (name, n))
    bad += n == 0
r = json.load(urllib.request.urlopen(base + "/api/v1/rules", timeout=20))
health = [(rule["name"], rule["health"]) for g in r["data"]["groups"] for rule in g["rules"]]
for name, h in health:
    if h != "ok":
        print("rule %s: health %s" % (name, h)); bad += 1
print("%d panel queries, %d recording rules, %d rules loaded" % (queries, len(recs), len(health)))
sys.exit(1 if bad else 0)
PY
echo "dashboard: ok"
