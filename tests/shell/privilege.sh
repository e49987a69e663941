# A recorder started as root through sudo (issue 7) goes on as the user
# who ran sudo once its perf descriptors are open: the recording and a
# ledger it creates belong to that user, and kernel functions are still
# named (their addresses are read before root is given up). sudo's
# variables (SUDO_UID, SUDO_GID, SUDO_USER) are set here as sudo sets
# them, for the user nobody. Skipped unless run as root with perf access.
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || skip "not root"
id nobody >/dev/null 2>&1 || skip "no user nobody"
need_perf
uid=$(id -u nobody) gid=$(id -g nobody)
chmod 755 "$TMP"
mkdir -m 777 "$TMP/home"
run env SUDO_UID="$uid" SUDO_GID="$gid" SUDO_USER=nobody \
	"$CL" record -a -g --duration 2 -o "$TMP/home/s.rec" --ledger "$TMP/home/l.db" -- \
	"$CL" workload syscall --seconds 1
[ "$(status)" = 0 ] || fail "record as sudo: status $(status): $(cat "$TMP/err")"
grep -q "recording as user $uid" "$TMP/err" || fail "the recorder did not say it gave up root: $(cat "$TMP/err")"
for f in s.rec l.db; do
	owner=$(stat -c %u:%g "$TMP/home/$f")
	[ "$owner" = "$uid:$gid" ] || fail "$f belongs to $owner, not $uid:$gid"
done
"$CL" report -i "$TMP/home/s.rec" --by thread,function --format csv >"$TMP/fn.csv" || fail "report"
# the syscall workload spends its time in the kernel: named functions there
grep -q ',\[kernel.kallsyms\],' "$TMP/fn.csv" || fail "no kernel functions in the report"
named=$(grep ',\[kernel.kallsyms\],' "$TMP/fn.csv" | grep -vc ',\[unknown\],' || true)
[ "$named" -gt 0 ] || fail "kernel functions went unnamed after root was given up"
echo "privilege: recording and ledger owned by $uid:$gid; $named kernel functions named"
