# One reader of perf script frames for folding and import (issue 23):
# every frame shape the reference collapser reads, in
# fixtures/perf-script-frames.txt (no function name as perf before 3.16
# printed it, no indentation, spaces and parentheses in names and
# modules, deleted and empty modules, inlined chains "a->b"):
# - folded as the reference folds them (the expected files are its
#   output, by default and with --all);
# - imported: each frame with its function and module ("[unknown]" for a
#   nameless one, a deleted file's module whole);
# - the same text with every line's indentation stripped reads the same;
# - a line that is no frame is still refused (FILE:LINE, exit 2).
. "$(dirname "$0")/../lib.sh"
in=$FIX/perf-script-frames.txt
"$CL" report -i "perf-script:$in" --format folded >"$TMP/folded" || fail "fold"
diff -u "$FIX/perf-script-frames.folded" "$TMP/folded" || fail "folded stacks differ from the reference's"
"$CL" report -i "perf-script:$in" --format folded --folded all >"$TMP/folded.all" || fail "fold --folded all"
diff -u "$FIX/perf-script-frames.all.folded" "$TMP/folded.all" || fail "--folded all differs from the reference's"

functions() {	# recording -> "function|dso" lines, sorted
	"$CL" report -i "$1" --by function,dso --format json |
		python3 -c 'import json, sys
for r in json.load(sys.stdin)["rows"]: print("%s|%s" % (r["function"], r["dso"]))' | sort
}
run "$CL" import perf-script "$in" -o "$TMP/frames.rec"
[ "$(status)" = 0 ] || fail "import: $(cat "$TMP/err")"
grep -q "3 cpu-clock sample(s), 17 frame(s)" "$TMP/err" || fail "import read: $(cat "$TMP/err")"
functions "$TMP/frames.rec" >"$TMP/functions"
for want in "[unknown]|/lib/x86_64-linux-gnu/libc-2.15.so" "main|/tmp/dd" \
	    "native_write_msr_safe|[kernel.kallsyms]" "x86_pmu_enable|[kernel.kallsyms]" \
	    "foo|/tmp/my dir/a.so" "bar|/usr/lib/libbar.so (deleted)" "baz|" \
	    "std::vector<int, std::allocator<int> >::push_back(int const&)|/tmp/app"; do
	grep -qxF -- "$want" "$TMP/functions" || fail "import: no '$want' in: $(cat "$TMP/functions")"
done
echo "frames: folded as the reference folds them; imported with their names and modules"

# no indentation at all
sed 's/^[[:space:]]*//' "$in" >"$TMP/flat.txt"
"$CL" report -i "perf-script:$TMP/flat.txt" --format folded >"$TMP/flat.folded" || fail "fold, no indentation"
diff -u "$TMP/folded" "$TMP/flat.folded" || fail "fold: indentation changes the stacks"
run "$CL" import perf-script "$TMP/flat.txt" -o "$TMP/flat.rec"
[ "$(status)" = 0 ] || fail "import, no indentation: $(cat "$TMP/err")"
diff -u "$TMP/functions" <(functions "$TMP/flat.rec") || fail "import: indentation changes the frames"
echo "frames: the same without indentation"

# not a frame: refused by both, at its line
printf 'ab 1 [000] 1.0: cpu-clock: \n\t4005d0 foo\n\n' >"$TMP/bad.txt"
run "$CL" import perf-script "$TMP/bad.txt" -o "$TMP/bad.rec"
[ "$(status)" = 2 ] && grep -q "bad.txt:2:" "$TMP/err" || fail "import of a non-frame: exit $(status), $(cat "$TMP/err")"
[ ! -e "$TMP/bad.rec" ] || fail "import of a non-frame wrote a recording"
run "$CL" report -i "perf-script:$TMP/bad.txt" --format folded
[ "$(status)" = 2 ] && grep -q "bad.txt:2:" "$TMP/err" || fail "fold of a non-frame: exit $(status), $(cat "$TMP/err")"

# a frame met again is known by what follows its address (a shared
# library is at another address in each process): its address is still
# its own (the kernel's by it, or not), and an address of one character
# with no function after it is still no frame
printf 'a 1/1 [000] 1.0: 1000000 cpu-clock: \n\tffffffff81000010 f+0x1 (m)\n\n' >"$TMP/again.txt"
printf 'a 1/1 [000] 1.001: 1000000 cpu-clock: \n\t1000 f+0x1 (m)\n\n' >>"$TMP/again.txt"
printf 'a 1/1 [000] 1.002: 1000000 cpu-clock: \n\t1001 f+0x1 (m)\n\n' >>"$TMP/again.txt"
rows() {	# perf script text, --by KEYS -> "KEY:KEY:SAMPLES ..." sorted
	"$CL" report -i "perf-script:$1" --by "$2" --format json |
		python3 -c 'import json, sys
keys = sys.argv[1].split(",")
print(" ".join(sorted(":".join([r[k] for k in keys] + [str(r["samples"])])
                      for r in json.load(sys.stdin)["rows"])))' "$2"
}
rows "$TMP/again.txt" function,account >"$TMP/again.rows"
[ "$(cat "$TMP/again.rows")" = "f:kernel:1 f:library:2" ] || fail "frames met again: $(cat "$TMP/again.rows")"
# a file is the sample's executable by the sample's comm: the same frame
# line is the program's in dd, a library's in sh, and dd's again after
printf 'dd 1/1 [000] 1.0: 1000000 cpu-clock: \n\t1000 main+0x1 (/tmp/dd)\n\n' >"$TMP/exe.txt"
printf 'sh 2/2 [000] 1.001: 1000000 cpu-clock: \n\t1000 main+0x1 (/tmp/dd)\n\n' >>"$TMP/exe.txt"
printf 'dd 1/1 [000] 1.002: 1000000 cpu-clock: \n\t1000 main+0x1 (/tmp/dd)\n\n' >>"$TMP/exe.txt"
rows "$TMP/exe.txt" comm,account >"$TMP/exe.rows"
[ "$(cat "$TMP/exe.rows")" = "dd:program:2 sh:library:1" ] || fail "executable by comm: $(cat "$TMP/exe.rows")"
printf 'a 1/1 [000] 1.0: cpu-clock: \n\t77 (/lib/libc.so)\n\na 1/1 [000] 1.1: cpu-clock: \n\t7 (/lib/libc.so)\n\n' >"$TMP/one.txt"
run "$CL" import perf-script "$TMP/one.txt" -o "$TMP/one.rec"
[ "$(status)" = 2 ] && grep -q "one.txt:5:" "$TMP/err" || fail "a one-character address after a longer: exit $(status), $(cat "$TMP/err")"
# the folder, too, knows a frame line met again by what follows its
# address, and by what it takes of the address: its last character (a
# nameless frame's function), whether it has more than one; a line that
# is no frame is known by the whole of it (perf's "Warning:" is noise,
# the same past its first word is not)
sed 's/^a 1/ab 1/' "$TMP/one.txt" >"$TMP/one.ab.txt"	# the reference's comm: 2 characters at least
run "$CL" report -i "perf-script:$TMP/one.ab.txt" --format folded
[ "$(status)" = 2 ] && grep -q "one.ab.txt:5:" "$TMP/err" || fail "fold: a one-character address after a longer: exit $(status), $(cat "$TMP/err")"
printf 'ab 1/1 [000] 1.0: cpu-clock: \n\t7f1e2215d058 (/lib/libc.so)\n\n' >"$TMP/last.txt"
printf 'ab 1/1 [000] 1.1: cpu-clock: \n\t7f1e2215d059 (/lib/libc.so)\n\n' >>"$TMP/last.txt"
"$CL" report -i "perf-script:$TMP/last.txt" --format folded >"$TMP/last.folded" || fail "fold of nameless frames"
[ "$(tr '\n' ' ' <"$TMP/last.folded")" = "ab;8 1 ab;9 1 " ] || fail "fold: nameless frames: $(cat "$TMP/last.folded")"
printf 'ab 1/1 [000] 1.0: cpu-clock: \n\tf+0x1 (m)\n\tWarning: x\n\n' >"$TMP/warn.txt"
printf 'ab 1/1 [000] 1.1: cpu-clock: \n\tXarning: x\n\n' >>"$TMP/warn.txt"
run "$CL" report -i "perf-script:$TMP/warn.txt" --format folded
[ "$(status)" = 2 ] && grep -q "warn.txt:6:" "$TMP/err" || fail "fold: no frame past a noise line's word: exit $(status), $(cat "$TMP/err")"
# a line with no address among a sample's frames: perf's source lines
# are noise, folded past; another is refused at its line
printf 'ab 1/1 [000] 1.0: cpu-clock: \n\t7f1 f (m)\n\t??:0\n\t/usr/src/x.c:12\n\n' >"$TMP/src.txt"
"$CL" report -i "perf-script:$TMP/src.txt" --format folded >"$TMP/src.folded" || fail "fold with source lines: $(cat "$TMP/src.folded")"
[ "$(cat "$TMP/src.folded")" = "ab;f 1" ] || fail "fold with source lines: $(cat "$TMP/src.folded")"
printf 'ab 1/1 [000] 1.0: cpu-clock: \n\t7f1 f (m)\n\t(x\n\n' >"$TMP/noaddr.txt"
run "$CL" report -i "perf-script:$TMP/noaddr.txt" --format folded
[ "$(status)" = 2 ] && grep -q "noaddr.txt:3:" "$TMP/err" || fail "fold: a line with no address: exit $(status), $(cat "$TMP/err")"
echo "frames: met again, each with its own address, its file the executable by comm"

# issue 26: the sched tracepoints' one-line records among the samples are
# no samples left open: no warning; a sample that is left open still is
run "$CL" report -i "perf-script:$FIX/perf-script-sched.txt" --format folded
[ "$(status)" = 0 ] && [ -s "$TMP/out" ] || fail "fold of sched text: exit $(status), $(cat "$TMP/err")"
! grep -q "not ended by a blank line" "$TMP/err" || fail "tracepoints said to be open samples: $(cat "$TMP/err")"
printf 'a 1/1 [000] 1.0: 1 cpu-clock:\n\tffff f+0x1 (m)\na 1/1 [000] 1.1: 1 cpu-clock:\n\tffff g+0x1 (m)\n' >"$TMP/open.txt"
run "$CL" report -i "perf-script:$TMP/open.txt" --format folded
grep -q "open.txt: 2 sample(s) not ended by a blank line" "$TMP/err" || fail "open samples not said: $(cat "$TMP/err")"
echo "script_frames: ok"
