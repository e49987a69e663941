# The agent's run-queue wait per program (issue 25, CPU denied):
# cpuledger_wait_seconds_total{program,cgroup}. Two spinners of a program
# made here (cpltwaitspin) share one CPU for 3 s after the agent started;
# they block on a FIFO before and after, so their schedstat run_delay
# stands still while the agent and this test read it. The counter a
# scrape shows once they are blocked again equals the growth of their
# run_delay summed (within 1 %); promtool check metrics passes on the
# scrape, and Debian's Prometheus scraping the agent holds the same
# figure.
. "$(dirname "$0")/../lib.sh"
command -v promtool >/dev/null || skip "promtool is not installed"
command -v prometheus >/dev/null || skip "prometheus is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
command -v cc >/dev/null || skip "no C compiler for the spinner"
[ -r /proc/self/schedstat ] || skip "the kernel keeps no schedstat"
need_perf
cd "$TMP"
cat >spin.c <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
int main(int argc, char **argv)	/* GO STOP CPU SECONDS */
{
	cpu_set_t s;
	char c;
	CPU_ZERO(&s);
	CPU_SET(atoi(argv[3]), &s);
	if (argc != 5 || sched_setaffinity(0, sizeof(s), &s))
		return 1;
	int fd = open(argv[1], O_RDONLY);	/* blocks until the work starts */
	while (read(fd, &c, 1) > 0)
		;
	for (double end = now() + atof(argv[4]); now() < end;)
		;
	fd = open(argv[2], O_RDONLY);		/* blocks until released */
	while (read(fd, &c, 1) > 0)
		;
	return 0;
}
EOF
cc -O1 -o cpltwaitspin spin.c || skip "cannot build the spinner"
mkfifo go stop
CPU=$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')
./cpltwaitspin go stop "$CPU" 3 & s1=$!
./cpltwaitspin go stop "$CPU" 3 & s2=$!
port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
get() {	# URL -> body
	python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode())' "$1"
}
delay() {	# PID -> its run_delay now
	awk '{ print $2 }' "/proc/$1/task/$1/schedstat"
}
AP=$(port)
PP=$(port)
prom=
"$CL" agent --programs 10000 --listen "127.0.0.1:$AP" 2>agent.err & agent=$!
trap 'kill $agent $prom $s1 $s2 2>/dev/null || true; wait 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do
	get "http://127.0.0.1:$AP/metrics" >/dev/null 2>&1 && break
	sleep 0.2
done
get "http://127.0.0.1:$AP/metrics" >first.txt || fail "no /metrics: $(cat agent.err)"
grep -q "^# TYPE cpuledger_wait_seconds_total counter" first.txt ||
	fail "no cpuledger_wait_seconds_total family"
cat >prom.yml <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: cpuledger
    static_configs:
      - targets: ['127.0.0.1:$AP']
EOF
prometheus --config.file=prom.yml --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address="127.0.0.1:$PP" >prom.log 2>&1 & prom=$!
b1=$(delay $s1) b2=$(delay $s2)
: >go					# the work starts (EOF at once)
sleep 4
a1=$(delay $s1) a2=$(delay $s2)		# blocked on stop by now
[ "$(cat /proc/$s1/wchan)" != "0" ] || fail "the spinner still runs after 4 s"
sleep 12				# waits read (every 10 s), Prometheus scraped
get "http://127.0.0.1:$AP/metrics" >scrape.txt || fail "no /metrics"
promtool check metrics <scrape.txt >lint 2>&1 || fail "promtool: $(cat lint)"
[ "$(delay $s1) $(delay $s2)" = "$a1 $a2" ] || fail "the blocked spinners' run_delay moved"
q=$(python3 -c 'import urllib.parse; print(urllib.parse.quote("sum(cpuledger_wait_seconds_total{program=\"cpltwaitspin\"})"))')
get "http://127.0.0.1:$PP/api/v1/query?query=$q" >prom.json || fail "Prometheus query: $(tail -3 prom.log)"
: >stop
python3 - "$b1" "$b2" "$a1" "$a2" <<'PY' || fail "the wait per program (above)"
import json, re, sys
b1, b2, a1, a2 = (int(x) for x in sys.argv[1:])
want = (a1 - b1) + (a2 - b2)
text = open("scrape.txt").read()
got = [float(v) for v in re.findall(
    r'^cpuledger_wait_seconds_total\{program="cpltwaitspin",cgroup="[^"]*"\} (\S+)$', text, re.M)]
if not got:
    sys.exit("no cpuledger_wait_seconds_total series for cpltwaitspin:\n" +
             "\n".join(l for l in text.splitlines() if "wait" in l))
got = sum(got) * 1e9
off = abs(got - want) / want if want else 1
print(f"cpltwaitspin: cpuledger_wait_seconds_total {got / 1e9:.4f} s, the spinners' "
      f"run_delay grew {want / 1e9:.4f} s ({100 * off:.3f} % apart)")
bad = []
if want < 0.5e9:
    bad.append(f"run_delay grew only {want} ns: no contention made")
if off > 0.01:
    bad.append(f"wait {got} vs run_delay growth {want}")
r = json.load(open("prom.json"))["data"]["result"]
pv = float(r[0]["value"][1]) * 1e9 if r else None
print(f"Prometheus: {pv and pv / 1e9} s")
if pv is None or abs(pv - got) > 0.01 * want:
    bad.append(f"Prometheus holds {pv}, the scrape {got}")
if bad:
    sys.exit("\n".join(bad))
PY
echo "ok"
