# The agent for two minutes under churn (issue 15's soak, short; bench/
# agent.sh runs it for 30 minutes): 50 short-lived processes a second and
# two threads busy part of the time; killed with -9 half way and started
# again. Memory and CPU per second stay flat in each half, every
# collection is in the ledger in order, and the kill loses at most one
# interval. Then SIGHUP reads the accounts file again (and a bad one is
# refused, the rules before going on), and the unit file and Prometheus
# rules in contrib/ check.
. "$(dirname "$0")/../lib.sh"
case ${BUILD:-} in *asan*) skip "the soak runs on the optimized build (ASan's memory and CPU say nothing)" ;; esac
command -v python3 >/dev/null || skip "python3 is not installed"
command -v bc >/dev/null || skip "bc is not installed"
need_perf
CPULEDGER=$CL SOAK_ONLY=1 "$ROOT/bench/agent.sh" --check 2 5 || fail "the soak"

# SIGHUP: the accounts file again
cd "$TMP"
printf 'spin executable\n' >rules
yes >/dev/null &
spinner=$!
"$CL" agent --ledger l.db --interval 1 --accounts rules --duration 6 2>agent.err &
a=$!
sleep 2
printf 'burn executable\n' >rules
kill -HUP $a
sleep 1.5
printf 'bad rule here\n' >rules
kill -HUP $a
wait $a || fail "the agent after SIGHUP: $(cat agent.err)"
kill $spinner
grep -q "accounts read again" agent.err || fail "SIGHUP did not read the rules: $(cat agent.err)"
grep -q "not read again; the rules before go on" agent.err || fail "a bad file on SIGHUP: $(cat agent.err)"
accounts=$(sqlite3 l.db "SELECT group_concat(DISTINCT account) FROM usage")
case $accounts in *spin*burn* | *burn*spin*) ;; *) fail "accounts in the ledger: $accounts" ;; esac
echo "SIGHUP: accounts read again ($accounts); a bad file refused"

command -v promtool >/dev/null && promtool check rules "$ROOT/contrib/prometheus-rules.yml" >/dev/null ||
	fail "contrib/prometheus-rules.yml"
if command -v systemd-analyze >/dev/null; then
	sed "s|/usr/local/bin/cpuledger|$CL|" "$ROOT/contrib/cpuledger-agent.service" >cpuledger-agent.service
	# its Documentation= names the man page, which verify looks up
	mkdir -p man/man1 && cp "$ROOT/docs/cpuledger.1" man/man1/
	MANPATH=$PWD/man systemd-analyze verify ./cpuledger-agent.service 2>verify.err ||
		fail "the unit file: $(cat verify.err)"
fi
echo "agent_soak: ok"
