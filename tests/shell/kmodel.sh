# The kernel model (issue 21): guests simulated by tests/kmodel.py with the
# truth per thread known by construction, written as perf script text and
# reported by `report -i perf-script:FILE --by thread --format json`, in
# each kernel accounting, at 0-50 % steal in episodes of 0.1-10 ms, ticks
# at HZ 250 and 1000, threads of long stints and of sub-millisecond ones.
# Prints a line per scenario (the table of docs/record.md) and fails when
# a thread is off by more than its steal source's tolerance:
# - residuals (runtime excludes steal): steal within 2 % or 2 ms, cpu 1 %;
# - sample gaps (runtime includes steal, or IRQ time too; not scaled here:
#   an import has no /proc/stat), episodes of 1 ms and more: steal within
#   10 % or 5 ms (threads of sub-millisecond stints see a few late samples,
#   each counted to the interval), cpu within 1 % or as much as its steal (where steal is
#   taken out of runtime, an error in one is the same in the other).
#   Shorter episodes are printed, not judged:
#   a gap under 50 us is not told from timer latency (docs/record.md);
# - sample gaps scaled to the kernel's steal (the guest's /proc/stat before
#   and after given with --proc-stat): steal within 2 % or 2 ms or three
#   binomial deviations of the grid points counted, at every episode
#   length (the kernel's count judges the accounting where no missed tick
#   does), cpu as steal.
# KMODEL_SECONDS (default 6) sets each scenario's length.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
secs=${KMODEL_SECONDS:-6}
failed=0
scenario() {	# accounting option share episode_ms hz steal_pct steal_ms cpu_pct [cpu_ms [gaps]]
	local acc=$1 opt=$2 share=$3 ep=$4 hz=$5
	local name="$acc${opt:+ ($opt)} steal $share episodes ${ep}ms HZ $hz" stat=
	# --proc-stat: the guest's /proc/stat before and after, from the model
	if [ "$opt" = --proc-stat ]; then
		stat="--proc-stat $TMP/ps"
		opt="--proc-stat $TMP/ps.start,$TMP/ps.end"
	fi
	# shellcheck disable=SC2086
	python3 "$ROOT/tests/kmodel.py" "$TMP/m.txt" "$TMP/truth.json" --steal "$share" \
		--episode-ms "$ep" --accounting "$acc" --hz "$hz" --seconds "$secs" \
		--seed "${#name}" $stat || fail "$name: the model failed"
	# shellcheck disable=SC2086
	run "$CL" report -i "perf-script:$TMP/m.txt" $opt --by thread --format json
	[ "$(status)" = 0 ] || fail "$name: report: $(cat "$TMP/err")"
	cp "$TMP/out" "$TMP/report.json"
	set +e
	line=$(python3 "$ROOT/tests/kmodel.py" --check "$TMP/report.json" "$TMP/truth.json" \
	       "$6" "$7" "$8" "${9:-0}" "${10:-0}")
	rc=$?
	set -e
	printf '%-58s %s\n' "$name" "$line"
	[ $rc = 0 ] || failed=$((failed + 1))
}

echo "accounting, steal share, episodes, HZ: worst errors of any thread"
# runtime excludes steal (PARAVIRT_TIME_ACCOUNTING): residuals, judged from
# the data, and told
for share in 0 0.1 0.3 0.5; do
	for ep in 0.1 0.5 3 10; do
		[ "$share" = 0 ] && [ "$ep" != 0.1 ] && continue
		hz=250; [ "$ep" = 0.5 ] && hz=1000
		scenario paravirt "" $share $ep $hz 2 2 1
	done
done
scenario paravirt "--kernel-accounting paravirt" 0.3 1 250 2 2 1
# runtime includes steal (Debian, Ubuntu, SUSE): sample gaps, judged from
# the data, and told
for share in 0.1 0.3 0.5; do
	for ep in 1 3 10; do
		hz=250; [ "$ep" = 3 ] && hz=1000
		scenario plain "" $share $ep $hz 10 5 1 3 1
	done
done
scenario plain "--kernel-accounting plain" 0.3 3 250 10 5 1 3 1
# with the guest's /proc/stat beside the text (--proc-stat): each CPU's
# steal is the kernel's, placed by the gaps; the accounting judged by it
# where no missed tick tells (episodes under the interval)
for share in 0.1 0.3 0.5; do
	for ep in 0.1 0.5 1 3 10; do
		hz=250; [ "$ep" = 3 ] && hz=1000
		scenario plain --proc-stat $share $ep $hz 2 2 1 0 2
	done
done
scenario paravirt --proc-stat 0.3 0.5 250 2 2 1
scenario plain "" 0.3 0.5 250 1000 1000 100 1000
scenario plain "" 0.3 0.1 250 1000 1000 100 1000
# runtime excludes steal and IRQ time (RHEL, Fedora): told, sample gaps
for share in 0.1 0.5; do
	scenario paravirt+irq "--kernel-accounting paravirt+irq" $share 3 1000 10 5 1 3
done
scenario paravirt+irq "--kernel-accounting paravirt+irq" 0.3 10 250 10 5 1 3
[ $failed = 0 ] || fail "$failed scenarios out of tolerance"
