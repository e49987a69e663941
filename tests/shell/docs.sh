# The documentation's commands and outputs are real (issue 18):
# - every command line of a ```sh block in README.md and docs/*.md runs
#   and exits 0, in a scratch directory that holds the files they name
#   (a recording, perf's text and perf.data, sampling data, rules, a cut
#   recording), with durations cut to a second (a process recorded until
#   it exits, for a second) and `make -j2` replaced by
#   a built-in workload; a tool that is not installed (go, flamegraph.pl)
#   is said and its line not run;
# - each output README.md shows has the shape of what its command prints
#   now (scripts/doc-outputs.sh --check: numbers may differ, words,
#   columns and lines may not).
. "$(dirname "$0")/../lib.sh"
command -v perf >/dev/null || skip "perf is not installed"
need_perf
case ${BUILD:-} in *asan*) skip "runs on the optimized build (the outputs' shape is the same)" ;; esac

mkdir -p "$TMP/bin" "$TMP/work"
ln -s "$CL" "$TMP/bin/cpuledger"
export PATH="$TMP/bin:$PATH"
cd "$TMP/work"
# what the examples read
cpuledger record -a -g --duration 1 -o cpuledger.rec 2>/dev/null
cp cpuledger.rec app.rec
head -c 20000 cpuledger.rec >cut.rec
perf record -q -a -g -o perf.data -- sleep 0.5 2>/dev/null
perf script -i perf.data > out.perf 2>/dev/null
perf script -i perf.data --ns -F +pid > perf.txt 2>/dev/null
cpuledger import perf-script perf.txt -o perf.rec 2>/dev/null
printf 'kernel  kernel\nprogram executable\n' >rules
cpuledger simulate --duration-ms 2000 -o samples.csv 2>/dev/null
sleep 600 &
victim=$!
trap 'kill $victim 2>/dev/null || true; rm -rf "$TMP"' EXIT

# the lines of ```sh blocks, continuation lines joined
# (and lines inside an open double quote: a multi-line SQL statement)
extract() {
	awk '/^```sh$/ { inb = 1; next } /^```/ { inb = 0; next }
	     inb { if (sub(/\\$/, "")) { acc = acc $0; next }
		   acc = acc $0
		   if (gsub(/"/, "\"", acc) % 2) { acc = acc " "; next }
		   print acc; acc = "" }' "$1"
}
ran=0 skipped=0
for f in "$ROOT/README.md" "$ROOT"/docs/*.md; do
	while IFS= read -r line; do
		[ -n "${line// }" ] || continue
		cmd=$(printf '%s\n' "$line" | sed -E \
			-e 's/--duration [0-9]+/--duration 1/g; s/--interval 60/--interval 1/g' \
			-e 's/--duration-ms [0-9]+/--duration-ms 2000/g; s/-- sleep [0-9]+/-- sleep 1/g' \
			-e "s/-p 1234/-p $victim/g; s/make -j2/cpuledger workload threads --seconds 1/g" \
			-e 's/^sudo //')
		# a process recorded until it exits: a second of it
		case $cmd in *"-p $victim"*--duration*) ;;
		*"-p $victim"*) cmd=${cmd/"-p $victim"/"-p $victim --duration 1"} ;; esac
		first=$(printf '%s\n' "$cmd" | awk '{ print $1 }')
		if ! command -v "$first" >/dev/null; then
			echo "not run ($first is not installed): $line"
			skipped=$((skipped + 1))
			continue
		fi
		if ! bash -o pipefail -c "$cmd" >out 2>err </dev/null; then
			fail "$(basename "$f"): '$line' failed: $(tail -3 err)"
		fi
		ran=$((ran + 1))
	done < <(extract "$f")
done
echo "examples: $ran command lines ran, $skipped not run"
[ "$ran" -ge 20 ] || fail "only $ran example lines found"

cd "$ROOT"
CPULEDGER_BIN=$CL scripts/doc-outputs.sh --check README.md || fail "README.md's outputs are stale"
echo "docs: ok"
