# run as time(1) users read it: how the command ended (its exit status or
# signal, also run's own status), user and sys from the kernel's count and
# maximum RSS beside cpu, steal and apparent (each figure once), and the
# command echoed as the shell would quote it (never raw control bytes),
# cut in its middle when long. The layout is held against
# fixtures/run.exit3.txt with every number replaced by N.
. "$(dirname "$0")/../lib.sh"
need_perf
ulimit -c 0	# "killed by SIGSEGV", without a core

run "$CL" run -- sh -c 'exit 3'
[ "$(status)" = 3 ] || fail "run -- sh -c 'exit 3' exited $(status), want 3: $(cat "$TMP/err")"
# (how the tracepoints found steal depends on the kernel: docs/record.md)
# (runs of spaces as one: right-aligned numbers of other widths, a pid of
# six digits, move the spaces before them)
sed -E 's/[0-9]+(\.[0-9]+)?/N/g; s/ +$//; s/ +/ /g; s/(steal source: tracepoints)[^;]*;/\1;/' \
	"$TMP/err" >"$TMP/layout"
# the steal source is the host's (tracepoints, or gaps without them)
grep -q "steal source: tracepoints" "$TMP/err" &&
	{ sed -E 's/ +/ /g' "$FIX/run.exit3.txt" | diff -u - "$TMP/layout" ||
		fail "run's layout differs"; }
[ "$(grep -c "corrected" "$TMP/err")" = 1 ] || fail "corrected time named twice or not at all"

run "$CL" run -- sh -c 'kill -SEGV $$'
[ "$(status)" = 139 ] || fail "killed by SIGSEGV: run exited $(status), want 139"
grep -qx "  killed by SIGSEGV" "$TMP/err" || fail "no 'killed by SIGSEGV': $(cat "$TMP/err")"
run "$CL" run --duration 0.5 -- sleep 30
[ "$(status)" = 143 ] || fail "stopped at --duration: run exited $(status), want 143"
grep -qx "  killed by SIGTERM" "$TMP/err" || fail "no 'killed by SIGTERM': $(cat "$TMP/err")"

# user + sys (the kernel's) and cpu (cpuledger's) count the same spin
run "$CL" run -- "$CL" workload spin --seconds 1
fig() { awk -v k="$1" '$1 == k { print $2; exit }' "$TMP/err"; }
awk -v u="$(fig user)" -v s="$(fig sys)" -v c="$(fig cpu)" 'BEGIN {
	r = (u + s) / c; exit !(c > 0.05 && r > 0.8 && r < 1.25) }' ||
	fail "user $(fig user) + sys $(fig sys) far from cpu $(fig cpu)"
if command -v python3 >/dev/null; then
	run "$CL" run -- python3 -c 'b = bytearray(80 << 20); b[::4096] = b"x" * len(b[::4096])'
	awk -v m="$(awk '$1 == "max" { print $3 }' "$TMP/err")" 'BEGIN { exit !(m >= 80) }' ||
		fail "max RSS under the 80 MiB touched: $(grep "max RSS" "$TMP/err")"
fi

# quoting: what the shell reads back is the argv run ran
args=(printf '%s\n' $'a\nb' "it's" $'\e[31mred' $'\xff' '' plain)
run "$CL" run -- "${args[@]}"
line=$(grep "^cpuledger run: " "$TMP/err")
[ "$line" = "cpuledger run: printf '%s\n' \$'a\nb' 'it'\\''s' \$'\\x1b[31mred' \$'\\xff' '' plain" ] ||
	fail "quoting: $line"
eval "set -- ${line#cpuledger run: }"
[ "$#" = "${#args[@]}" ] || fail "quoting: $# words read back, want ${#args[@]}"
for ((i = 0; i < $#; i++)); do
	w=("$@")
	[ "${w[i]}" = "${args[i]}" ] || fail "quoting: word $i read back as '${w[i]}'"
done
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$TMP/err"; then
	fail "raw control bytes on stderr: $(od -c "$TMP/err" | head)"
fi

# a long command: cut in its middle, its end kept
long=$(printf 'x%.0s' $(seq 400))
run "$CL" run -- sh -c ': "$@"' sh "$long" /src/kept-at-the-end.c
line=$(grep "^cpuledger run: " "$TMP/err")
case $line in
*...*/src/kept-at-the-end.c) ;;
*) fail "long command not cut in its middle: $line" ;;
esac
[ "${#line}" -le 220 ] || fail "long command line of ${#line} characters"
grep -q "+$" "$TMP/err" && fail "a line cut with '+': $(grep "+$" "$TMP/err")"
echo "run: exit status and signal, user/sys/max RSS, quoting and middle cuts"
