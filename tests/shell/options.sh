# Bad options name the option at fault and exit 2 (a typo of a command or
# option is answered with the nearest, as git does); help exits 0; the man
# page and the help text name the same options; completion for bash, zsh
# and fish from the same tables, each tried in its own shell.
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
bad "unknown command 'analyse'; did you mean 'analyze'?" analyse x
bad "unknown command 'reprot'; did you mean 'report'?" reprot
bad "unknown option '--metod'; did you mean '--method'?" report --metod preceding
bad "unknown option '--formt=json'; did you mean '--format'?" report --formt=json
bad "unknown option '--pre'; did you mean '--per'?" bill --pre day
bad "completion: give one shell: bash, zsh or fish" completion tcsh
run "$CL" zzzzzz
grep -q "did you mean" "$TMP/err" && fail "a suggestion for a word near nothing: $(cat "$TMP/err")"
grep -q "^usage: cpuledger COMMAND" "$TMP/err" || fail "no usage for a word near nothing"
run "$CL" report --xyzzy
grep -q "did you mean" "$TMP/err" && fail "a suggestion for --xyzzy: $(cat "$TMP/err")"
bad "--jitter-ns must be less than half the period" simulate --jitter-ns 500000
bad "--steal-pct must be from 0 to 90" simulate --steal-pct 95
bad "--steal-pct: 'lots' is not a number" simulate --steal-pct lots
bad "--vms: '0' is not an integer from 1 to 1000" simulate --vms 0
bad "nothing to record: give -a, -p PID or -- COMMAND" record
bad "--pid: 'x' is not a list of process ids" record -p x
bad "--freq: '0' is not an integer" record -a -F 0
bad "--duration: '-1' is not a number of seconds" record -a --duration -1
# durations and intervals: one parser, one bound in every command (agent
# --duration 20000000000 overflowed nanoseconds and stopped at once)
for c in "record -a" "run" "agent"; do
	bad "--duration: '20000000000' is not a number of seconds from 0.001 to 31536000" \
		$c --duration 20000000000
	bad "--duration: 'nan' is not a number of seconds" $c --duration nan
	bad "--duration: '1e400' is not a number of seconds" $c --duration 1e400
done
for c in "record -a --ledger $TMP/l.db" "agent --ledger $TMP/l.db"; do
	bad "--interval: '86401' is not a number of seconds from 0.1 to 86400" $c --interval 86401
	bad "--interval: 'inf' is not a number of seconds" $c --interval inf
done
bad "--delay: '1e30' is not a number of seconds from 0.1 to 3600" top --batch --delay 1e30
bad "--wait: '1e20' is not a number of seconds from 0 to 86400" ledger add --wait 1e20 x.rec
[ ! -e "$TMP/l.db" ] || fail "a refused option left a ledger"
bad "no command given" run
bad "unknown workload 'fly'" workload fly
bad "cannot open '/nonexistent.rec'" report -i /nonexistent.rec
bad "--by: 'week' is not a key" bill --by week
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
run "$CL" -V
cmp -s "$TMP/out" <("$CL" --version) && [ "$(status)" = 0 ] || fail "-V is not --version"

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

# zsh: its own completion system, driven in a pseudo-terminal (zpty)
bin=$TMP/bin
mkdir -p "$bin"
ln -s "$(realpath "$(command -v "$CL")")" "$bin/cpuledger"
if command -v zsh >/dev/null; then
	"$CL" completion zsh >"$TMP/_cpuledger"
	zsh -n "$TMP/_cpuledger" || fail "completion zsh: not zsh"
	cat >"$TMP/ztab.zsh" <<'ZSH'
zmodload zsh/zpty
zpty z 'PS1="> " TERM=dumb zsh -f -i'
zpty -w z "PATH=$BIN:\$PATH; autoload -U compinit; compinit -u -D; source $SCRIPT; print RE''ADY"
zpty -r z out '*READY*'
zpty -w -n z "$1"$'\t'
sleep 1
out=
while zpty -r -t z chunk; do out+=$chunk; done
print -r -- "$out"
zpty -d z
ZSH
	ztab() {	# a command line -> what zsh shows after TAB
		BIN=$bin SCRIPT=$TMP/_cpuledger timeout 30 zsh -f "$TMP/ztab.zsh" "$1" |
			tr -d '\r' | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g'
	}
	ztab 'cpuledger rep' | grep -q 'cpuledger report $' || fail "zsh: rep: $(ztab 'cpuledger rep')"
	ztab 'cpuledger report --me' | grep -q 'report --method $' || fail "zsh: report --me"
	ztab 'cpuledger bill --per m' | grep -q 'bill --per month $' || fail "zsh: bill --per m"
	ztab 'cpuledger report --method ' | grep -q 'bracketed  *preceding  *ratio' ||
		fail "zsh: --method's values: $(ztab 'cpuledger report --method ')"
	echo "completion zsh: commands, options and values in zsh"
else
	echo "completion zsh: not tried (no zsh)"
fi
if command -v fish >/dev/null; then
	"$CL" completion fish >"$TMP/cpuledger.fish"
	ftab() { PATH=$bin:$PATH fish -c "source $TMP/cpuledger.fish; complete -C '$1'" | cut -f1; }
	[ "$(ftab 'cpuledger rep')" = report ] || fail "fish: rep: $(ftab 'cpuledger rep')"
	[ "$(ftab 'cpuledger report --me')" = --method ] || fail "fish: report --me"
	[ "$(ftab 'cpuledger completion ' | tr '\n' ' ')" = "bash fish zsh " ] || fail "fish: completion"
	for c in record report run bill analyze top; do
		for o in $("$CL" "$c" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
			ftab "cpuledger $c $o" | grep -qx -- "$o" || fail "fish: $c has no $o"
		done
	done
	echo "completion fish: commands, options and values in fish"
else
	echo "completion fish: not tried (no fish)"
fi
echo "options: help, man page and completion agree"
