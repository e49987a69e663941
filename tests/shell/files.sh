# Files cpuledger writes, tried as an adversary would (issue 11), with no
# perf access needed (tests/shell/files_live.sh has the recorder's):
# - an output that is a device node stays a device (before: `report -o`
#   as root renamed its temporary file over /dev/null);
# - an output path that is a symbolic link is refused, its target
#   untouched (report, analyze, bill, import, ledger add --ledger);
# - what is written is 0600, unless CPULEDGER_FILE_MODE says otherwise;
# - input and output the same file is refused, the file untouched (before:
#   `report -i x.rec -o x.rec` overwrote the recording with its report);
# - a run that fails leaves an existing output as it was;
# - a FIFO output is written in place.
. "$(dirname "$0")/../lib.sh"
S=$FIX/perf-script-sched.txt
cd "$TMP"
"$CL" simulate --duration-ms 200 -o s.csv
"$CL" import perf-script "$S" -o x.rec 2>/dev/null

unchanged() {	# file sum what
	[ "$(md5sum <"$1")" = "$2" ] || fail "$3: '$1' changed"
}

# --- a device node at the output path stays one
if mknod dn c 1 3 2>/dev/null; then
	for cmd in "analyze s.csv -o dn" "report -i x.rec -o dn" "report -i x.rec --format json -o dn"; do
		# shellcheck disable=SC2086
		run "$CL" $cmd
		[ "$(status)" = 0 ] || fail "$cmd: $(cat "$TMP/err")"
		[ -c dn ] || fail "$cmd: the device node became $(stat -c %F dn)"
	done
	echo "device node: written in place, still a character device"
else
	echo "device node: not checked (mknod needs root)"
fi

# --- symbolic links at the output path: refused, the target untouched
echo "not yours" >target
sum=$(md5sum <target)
ln -s target link
for cmd in "analyze s.csv -o link" "report -i x.rec -o link" \
	   "import perf-script $S -o link" "ledger add --ledger link x.rec"; do
	# shellcheck disable=SC2086
	run "$CL" $cmd
	[ "$(status)" != 0 ] || fail "$cmd: followed the link"
	grep -q "symbolic link" "$TMP/err" || fail "$cmd: $(cat "$TMP/err")"
	unchanged target "$sum" "$cmd"
	[ -L link ] || fail "$cmd: the link was replaced"
done
: >empty_target
ln -s empty_target ledger_link
run "$CL" ledger add --ledger ledger_link x.rec
[ "$(status)" != 0 ] && [ ! -s empty_target ] || fail "--ledger through a link made a database"
echo "symbolic links: refused, targets untouched"

# --- modes: 0600, or what CPULEDGER_FILE_MODE asks
umask 022
"$CL" report -i x.rec --format json -o r.json
"$CL" import perf-script "$S" -o y.rec 2>/dev/null
"$CL" ledger add --ledger l.db x.rec >/dev/null 2>&1
"$CL" bill --ledger l.db -o b.txt
for f in r.json y.rec l.db b.txt; do
	[ "$(stat -c %a "$f")" = 600 ] || fail "$f is $(stat -c %a "$f"), not 600"
done
CPULEDGER_FILE_MODE=0640 "$CL" report -i x.rec -o r640.txt
CPULEDGER_FILE_MODE=0640 "$CL" ledger add --ledger l640.db x.rec >/dev/null 2>&1
for f in r640.txt l640.db; do
	[ "$(stat -c %a $f)" = 640 ] || fail "CPULEDGER_FILE_MODE=0640 gave $f $(stat -c %a $f)"
done
run env CPULEDGER_FILE_MODE=0666x "$CL" report -i x.rec -o bad.txt
[ "$(status)" = 2 ] && [ ! -e bad.txt ] || fail "a bad CPULEDGER_FILE_MODE: $(cat "$TMP/err")"
echo "modes: 600 by default, CPULEDGER_FILE_MODE honoured"

# --- the same file as input and output: refused, untouched
sum=$(md5sum <x.rec)
for cmd in "report -i x.rec -o x.rec" "report -i ./x.rec -o $TMP/x.rec" \
	   "report -i perf-script:$S -o $S" "import perf-script x.rec -o x.rec" \
	   "analyze s.csv -o s.csv" "bill --ledger l.db -o l.db" "record -a -o l.db --ledger l.db"; do
	# shellcheck disable=SC2086
	run "$CL" $cmd
	[ "$(status)" = 2 ] || fail "$cmd: status $(status)"
	grep -q "too: refused" "$TMP/err" || fail "$cmd: $(cat "$TMP/err")"
done
unchanged x.rec "$sum" "report -i x.rec -o x.rec"
"$CL" report -i x.rec >/dev/null || fail "x.rec no longer reads"
echo "same input and output: refused"

# --- a failed run leaves what was there
printf 'not perf script\n' >bad.txt
sum=$(md5sum <y.rec)
run "$CL" import perf-script bad.txt -o y.rec
[ "$(status)" = 2 ] || fail "bad import: status $(status)"
unchanged y.rec "$sum" "a failed import"
sum=$(md5sum <r.json)
run "$CL" report -i bad.txt -o r.json
[ "$(status)" = 2 ] || fail "report of no recording: status $(status)"
unchanged r.json "$sum" "a failed report"
[ -z "$(ls ./*.tmp.* 2>/dev/null)" ] || fail "temporary files left: $(ls ./*.tmp.*)"
echo "failed runs: outputs as they were, no temporary files"

# --- a FIFO: written in place
mkfifo fifo
cat fifo >fifo.out &
reader=$!
"$CL" report -i x.rec --format csv -o fifo
wait $reader
[ -p fifo ] && [ -s fifo.out ] || fail "FIFO: replaced or nothing came through"
echo "files: ok"
