#!/usr/bin/env bash
# bench/jit_maps: what a user who rewrites a JIT map in a loop costs the
# recorder (issue 22). A program spins in code it made (1 MiB, anonymous,
# executable) while a child of it rewrites its /tmp/perf-PID.map with
# 20 000 new names about 11 times a second (a new file renamed over the
# old, its size changing). `cpuledger record -a -g` runs beside it for
# SECONDS; its user and system CPU and peak RSS (GNU time) and the JIT
# samples it named are printed, for each binary given (default: this
# tree's), RUNS times each, alternating.
#
# usage: bench/jit_maps.sh [SECONDS [RUNS [CPULEDGER...]]]  (10, 2)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
runs=${2:-2}
shift $(( $# > 2 ? 2 : $# ))
bins=("${@:-$PWD/build/cpuledger}")
[ -x /usr/bin/time ] || { echo "needs GNU time (/usr/bin/time)"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat >"$out/jit.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
int main(int argc, char **argv) {
	int secs = argc > 1 ? atoi(argv[1]) : 10;
	unsigned char *code = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) return 1;
	memset(code, 0x90, 1 << 20);
	memcpy(code + 0x1000, "\xeb\xfe", 2);	/* jmp . */
	char path[64], tmp[80];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	pid_t child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (unsigned gen = 0;; gen++) {
			FILE *f = fopen(tmp, "w");
			if (!f) _exit(1);
			for (int i = 0; i < 20000 + (int)(gen % 7); i++)
				fprintf(f, "%lx 34 fn_%u_%d\n", (unsigned long)code + i * 52, gen, i);
			fclose(f);
			rename(tmp, path);
			usleep(90000);
		}
	}
	alarm(secs);
	signal(SIGALRM, SIG_DFL);
	((void (*)(void))code)();
	return 0;
}
C
gcc -O1 -o "$out/jit" "$out/jit.c"
for ((r = 0; r < runs; r++)); do
	for b in "${bins[@]}"; do
		"$out/jit" $((secs + 3)) &
		jit=$!
		sleep 1
		/usr/bin/time -f "%U %S %M" -o "$out/t" "$b" record -a -g --duration "$secs" \
			-o "$out/r.rec" 2>/dev/null
		wait $jit 2>/dev/null || true
		rm -f "/tmp/perf-$jit.map" "/tmp/perf-$jit.map.tmp"
		named=$("$b" report -i "$out/r.rec" --by function --format json | python3 -c '
import json, sys
print(sum(r["samples"] for r in json.load(sys.stdin)["rows"] if (r["function"] or "").startswith("fn_")))')
		read -r u s m <"$out/t"
		echo "$b: cpu $(awk "BEGIN { printf \"%.2f\", $u + $s }") s (user $u, sys $s), peak RSS $((m / 1024)) MB, JIT samples named $named"
	done
done
