# bench/switch_work: what bench/bpf.sh and bench/sources.sh share, sourced
# by both: the workload they time under each tracer (WORK pipe: `perf
# bench sched pipe -l LOOPS`, a context switch a pass; compile: cc -O2 -c
# of src/core/*.c, LOOPS/10000 times over; SRC and TMP set by the
# caller), and the counters they read around it.

# A process's threads' run time so far (schedstat), ns.
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'; }
# Context switches of the machine so far (/proc/stat).
ctxt() { awk '/^ctxt/ { print $2 }' /proc/stat; }
now_ns() { date +%s%N; }

# The workload once; its rate (operations a second) on standard output.
work() {
	if [ "$WORK" = pipe ]; then
		perf bench sched pipe -l "$LOOPS" 2>/dev/null | awk '/ops\/sec/ { print $1 }'
		return
	fi
	local t0 n=0 i f
	t0=$(now_ns)
	for i in $(seq $((LOOPS / 10000))); do
		for f in "$SRC"/core/*.c; do
			cc -std=c11 -O2 -D_GNU_SOURCE -I"$SRC" -c -o "$TMP/o.o" "$f"
			n=$((n + 1))
		done
	done
	echo "scale=3; $n * 1000000000 / ($(now_ns) - $t0)" | bc
}
