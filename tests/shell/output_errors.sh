# Output that cannot be written is a runtime error (exit 1) with a message,
# never a silent success: a full disk, a missing directory.
. "$(dirname "$0")/../lib.sh"
run "$CL" analyze "$FIX/figs.csv" -o "$TMP/no/such/dir/out.txt"
[ "$(status)" = 1 ] || fail "missing directory: exit $(status)"
grep -q "cannot create '$TMP/no/such/dir/out.txt'" "$TMP/err" || fail "missing directory: $(cat "$TMP/err")"
if [ -w /dev/full ]; then
	set +e
	"$CL" analyze --format json "$FIX/figs.csv" >/dev/full 2>"$TMP/err"
	s=$?
	set -e
	[ "$s" = 1 ] || fail "/dev/full: exit $s"
	grep -q "No space left on device" "$TMP/err" || fail "/dev/full: $(cat "$TMP/err")"
	set +e
	"$CL" simulate --duration-ms 100 >/dev/full 2>"$TMP/err"
	s=$?
	set -e
	[ "$s" = 1 ] || fail "simulate to /dev/full: exit $s"
fi
