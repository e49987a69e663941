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
for c in record report run workload analyze simulate bill collect ledger import agent sched; do
	run "$CL" "$c" --help
	[ "$(status)" = 0 ] || fail "$c --help: exit $(status)"
	grep -q "^usage: cpuledger $c" "$TMP/out" || fail "$c --help: no usage line"
	# Every option in the help (long, and short letters at the start of
	# an option's line) is in the man page's section, and back.
	{ grep -o -- '--[a-z][a-z-]*' "$TMP/out"
	  grep -oE '^  -[a-zA-Z]\b' "$TMP/out" | tr -d ' '; } | sort -u >"$TMP/help"
	sec=$(sed -n "/^\.SS $c/,/^\.S[SH] /p" "$ROOT/docs/cpuledger.1" | sed '$d')
	{ printf '%s\n' "$sec" | grep -o -- '\\-\\-[a-z][a-z\\-]*' | sed 's/\\//g'
	  printf '%s\n' "$sec" | grep -oE '^\.BR \\-[a-zA-Z]\b' | sed 's/^\.BR \\//'; } |
		sort -u >"$TMP/man"
	diff -u "$TMP/help" "$TMP/man" || fail "$c: help and man page options differ"
done
run "$CL" --version
grep -q '^cpuledger [0-9]' "$TMP/out" || fail "--version"

# bash completion from the same tables: commands, options, values.
"$CL" completion bash >"$TMP/compl.bash" || fail "completion bash"
complete_words() {	# words... -> what completing the last one offers
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _cpuledger
		 printf "%s\n" "${COMPREPLY[@]}"' _ "$TMP/compl.bash" cpuledger "$@"
}
[ "$(complete_words rep)" = report ] || fail "completion: 'rep' gives '$(complete_words rep)'"
[ "$(complete_words report --me)" = --method ] || fail "completion: report --me"
[ "$(complete_words report --format j)" = json ] || fail "completion: --format j"
[ "$(complete_words bill --by da)" = day ] || fail "completion: bill --by da"
[ -z "$(complete_words record -F 1)" ] || fail "completion: -F offers files"
for c in record report run bill analyze; do
	for o in $("$CL" "$c" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		complete_words "$c" "$o" | grep -qx -- "$o" || fail "completion: $c has no $o"
	done
done
echo "options: help, man page and completion agree"
