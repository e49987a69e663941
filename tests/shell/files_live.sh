# The recorder's files, tried as an adversary would (issue 11):
# - a recording is 0600 (it holds every process's command line);
# - a command that cannot be run, or an option refused, leaves an earlier
#   recording at the path as it was (before: replaced by a 26 KB one);
#   `--call-graph dwarf` is refused, not taken for the command `dwarf`;
# - a second recorder into the same -o is refused while the first runs,
#   and the first's recording is whole;
# - -o or --ledger through a symbolic link is refused, the target kept;
# - under sudo, a root-owned file at the output path survives untouched
#   and keeps its owner (before: truncated and handed to the user).
. "$(dirname "$0")/../lib.sh"
need_perf
cd "$TMP"

"$CL" record -a --duration 0.3 -o keep.rec 2>/dev/null
[ "$(stat -c %a keep.rec)" = 600 ] || fail "recording mode $(stat -c %a keep.rec)"
sum=$(md5sum <keep.rec)

run "$CL" record -o keep.rec -- /nonexistent/cmd
[ "$(status)" = 127 ] || fail "/nonexistent/cmd: status $(status)"
[ "$(md5sum <keep.rec)" = "$sum" ] || fail "a command that could not run replaced keep.rec"
run "$CL" record --call-graph dwarf -o keep.rec -- true
[ "$(status)" = 2 ] || fail "--call-graph dwarf: status $(status): $(cat "$TMP/err")"
grep -q -- "--call-graph" "$TMP/err" || fail "--call-graph dwarf: $(cat "$TMP/err")"
[ "$(md5sum <keep.rec)" = "$sum" ] || fail "--call-graph dwarf replaced keep.rec"
[ -z "$(ls keep.rec.* 2>/dev/null)" ] || fail "left behind: $(ls keep.rec.*)"
echo "failed starts: keep.rec as it was"

# --- two recorders, one path
"$CL" record -a --duration 3 -o two.rec 2>first.err &
first=$!
sleep 1
run "$CL" record -a --duration 1 -o two.rec
[ "$(status)" != 0 ] || fail "a second recorder into two.rec was let in"
grep -q "another cpuledger records into" "$TMP/err" || fail "second recorder: $(cat "$TMP/err")"
wait $first || fail "the first recorder: $(cat first.err)"
"$CL" report -i two.rec --format json >/dev/null || fail "the first recording does not read"
echo "two recorders: the second refused, the first whole"

# --- symbolic links
echo "root's" >target
ln -s target link.rec
ln -s target link.db
run "$CL" record -a --duration 0.2 -o link.rec
[ "$(status)" != 0 ] && grep -q "symbolic link" "$TMP/err" || fail "-o link: $(cat "$TMP/err")"
run "$CL" record -a --duration 0.2 -o l.rec --ledger link.db
[ "$(status)" != 0 ] && grep -q "symbolic link" "$TMP/err" || fail "--ledger link: $(cat "$TMP/err")"
[ "$(cat target)" = "root's" ] || fail "the link's target was written"
echo "symbolic links: refused"

# --- sudo: a root-owned file at the path
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	uid=$(id -u nobody) gid=$(id -g nobody)
	mkdir -m 777 shared
	echo "root's secret" >shared/root_owned
	chmod 644 shared/root_owned
	run env SUDO_UID="$uid" SUDO_GID="$gid" SUDO_USER=nobody \
		"$CL" record -a --duration 0.5 -o shared/root_owned
	[ "$(status)" != 0 ] || fail "sudo: wrote over root's file"
	[ "$(cat shared/root_owned)" = "root's secret" ] || fail "sudo: root's file changed"
	[ "$(stat -c %u:%a shared/root_owned)" = "0:644" ] || fail "sudo: root's file is now $(stat -c %u:%a shared/root_owned)"
	echo "sudo: root's file untouched ($(tail -1 "$TMP/err"))"
else
	echo "sudo: not checked (needs root and the user nobody)"
fi
echo "files_live: ok"
