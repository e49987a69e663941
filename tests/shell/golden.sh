# analyze on tests/fixtures/figs.csv (FIG. 7A, 10E, steal at a stream's
# start, idle before steal, irregular timestamps, a quoted function), one
# method, key and format each, against expected files worked out by hand.
. "$(dirname "$0")/../lib.sh"
check() {	# expected-file args...
	local want=$1; shift
	"$CL" analyze "$@" "$FIX/figs.csv" >"$TMP/got"
	diff -u "$FIX/$want" "$TMP/got" || fail "analyze $* differs from $want"
}
check figs.preceding.function.txt --method preceding --by function
check figs.bracketed.thread.csv --method bracketed --by thread --format csv
check figs.ratio.process.timestamps.json --method ratio --by process --timestamps --format json
# Defaults are preceding, thread, text; stdin reads the same as the file.
"$CL" analyze - <"$FIX/figs.csv" >"$TMP/a"
"$CL" analyze --method preceding --by thread --format text "$FIX/figs.csv" >"$TMP/b"
diff -u "$TMP/b" "$TMP/a" || fail "stdin and defaults differ"
# -o writes the same report to a file and nothing to stdout.
"$CL" analyze --format json -o "$TMP/r.json" --method ratio --by process --timestamps "$FIX/figs.csv" >"$TMP/stdout"
[ ! -s "$TMP/stdout" ] || fail "-o also wrote to stdout"
diff -u "$FIX/figs.ratio.process.timestamps.json" "$TMP/r.json" || fail "-o output differs"
