# Bad input: FILE:LINE: reason on stderr, exit 2, nothing on stdout, and no
# output file (nor a temporary one) left behind.
. "$(dirname "$0")/../lib.sh"
H='vm,vcpu,time_ns,pid,tid,function,state'
case_() {	# name expected-stderr content
	local name=$1 want=$2
	printf '%b' "$3" >"$TMP/$name.csv"
	mkdir -p "$TMP/outdir"
	run "$CL" analyze -o "$TMP/outdir/report.txt" "$TMP/$name.csv"
	[ "$(status)" = 2 ] || fail "$name: exit $(status), want 2"
	[ ! -s "$TMP/out" ] || fail "$name: wrote to stdout"
	[ -z "$(ls -A "$TMP/outdir")" ] || fail "$name: left $(ls "$TMP/outdir")"
	local got; got=$(cat "$TMP/err")
	[ "$got" = "$TMP/$name.csv:$want" ] || fail "$name: stderr '$got', want '$TMP/$name.csv:$want'"
}
case_ empty "1: empty file, expected the header '$H'" ''
case_ header "1: bad header 'vm,cpu', expected '$H'" 'vm,cpu\n'
case_ number "3: bad time_ns '12x': not an integer from 0 to 18446744073709551615" "$H\nvm0,0,1,,,,idle\nvm0,0,12x,,,,idle\n"
case_ state "2: unknown state 'halt' (expected run, steal or idle)" "$H\nvm0,0,1,,,,halt\n"
case_ nopid "2: run sample without pid" "$H\nvm0,0,1,,7,f,run\n"
case_ back "4: time_ns 2 is not after 3, the time of line 3 in the same stream (vm 'vm0', vcpu 0)" "$H\nvm0,0,1,,,,idle\nvm0,0,3,,,,idle\nvm0,0,2,,,,idle\n"
case_ columns "2: expected 7 columns (vm,vcpu,time_ns,pid,tid,function,state), found 5" "$H\nvm0,0,1,,idle\n"
# A bad line after many good ones still writes nothing.
{ echo "$H"; for i in $(seq 1 5000); do echo "vm0,0,$i,1,1,f,run"; done; echo "vm0,0,1,1,1,f,run"; } >"$TMP/late.csv"
run "$CL" analyze --format json "$TMP/late.csv"
[ "$(status)" = 2 ] && [ ! -s "$TMP/out" ] || fail "late error: exit $(status) or output written"
grep -q "late.csv:5002: time_ns 1 is not after 5000" "$TMP/err" || fail "late error: $(cat "$TMP/err")"
# A missing file is the user's error too.
run "$CL" analyze "$TMP/nonexistent.csv"
[ "$(status)" = 2 ] || fail "missing file: exit $(status)"
grep -q "cannot open '$TMP/nonexistent.csv': No such file or directory" "$TMP/err" || fail "missing file: $(cat "$TMP/err")"
