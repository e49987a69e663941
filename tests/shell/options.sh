# Bad options name the option at fault and exit 2; help exits 0; the man
# page and the help text name the same options.
. "$(dirname "$0")/../lib.sh"
bad() {	# expected-stderr-substring args...
	local want=$1; shift
	run "$CL" "$@"
	[ "$(status)" = 2 ] || fail "$*: exit $(status), want 2"
	grep -qF -- "$want" "$TMP/err" || fail "$*: stderr $(cat "$TMP/err")"
	[ ! -s "$TMP/out" ] || fail "$*: wrote to stdout"
}
bad "--method: unknown method 'first'" analyze --method first "$FIX/figs.csv"
bad "--by: unknown key 'vm'" analyze --by vm "$FIX/figs.csv"
bad "--format: unknown format 'xml'" analyze --format xml "$FIX/figs.csv"
bad "--period-ns: '0' is not an integer" analyze --period-ns 0 "$FIX/figs.csv"
bad "--period-ns: '-5' is not an integer" analyze --period-ns -5 "$FIX/figs.csv"
bad "no input FILE given" analyze
bad "only one input FILE" analyze a b
bad "unknown command 'analyse'" analyse x
bad "--jitter-ns must be less than half the period" simulate --jitter-ns 500000
bad "--steal-pct must be from 0 to 90" simulate --steal-pct 95
bad "--steal-pct: 'lots' is not a number" simulate --steal-pct lots
bad "--vms: '0' is not an integer from 1 to 1000" simulate --vms 0
bad "nothing to record: give -a, -p PID or -- COMMAND" record
bad "--pid: 'x' is not a list of process ids" record -p x
bad "--freq: '0' is not an integer" record -a -F 0
bad "--duration: '-1' is not a number of seconds" record -a --duration -1
bad "no command given" run
bad "unknown workload 'fly'" workload fly
bad "cannot open '/nonexistent.rec'" report -i /nonexistent.rec
bad "--by: 'month' is not a key" bill --by month
bad "no ledger '/nonexistent.db'" bill --ledger /nonexistent.db
bad "give a subcommand: add" ledger
bad "--interval needs --ledger" record -a --interval 1
bad "is not a cpuledger recorder" collect 1
for c in record report run workload analyze simulate bill collect; do
	run "$CL" "$c" --help
	[ "$(status)" = 0 ] || fail "$c --help: exit $(status)"
	grep -q "^usage: cpuledger $c" "$TMP/out" || fail "$c --help: no usage line"
	# Every long option in the help is in the man page, and back.
	grep -o -- '--[a-z][a-z-]*' "$TMP/out" | sort -u >"$TMP/help"
	sed -n "/^\.SS $c\$/,/^\.S[SH] /p" "$ROOT/docs/cpuledger.1" |
		grep -o -- '\\-\\-[a-z][a-z\\-]*' | sed 's/\\//g' | sort -u >"$TMP/man"
	diff -u "$TMP/help" "$TMP/man" || fail "$c: help and man page options differ"
done
run "$CL" --version
grep -q '^cpuledger [0-9]' "$TMP/out" || fail "--version"
