# JIT maps as perf reads them (issue 22): /tmp is anybody's, so
# /tmp/perf-PID.map is read only when it is a regular file (not through a
# symbolic link) owned by root or by the process's user. A JIT program
# (anonymous executable memory, its map in /tmp) runs as root:
# - its own map (root's): its function is named (the baseline);
# - the map owned by another user (nobody), as if that user wrote it:
#   the function is not named from it (before: FORGED in the report);
# - the map a symbolic link to a root-only file: not read (before: the
#   file's lines became names, in reports and the agent's profiles);
# and as nobody, its map its own: named.
. "$(dirname "$0")/../lib.sh"
command -v gcc >/dev/null || skip "gcc is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
[ "$(id -u)" = 0 ] || skip "needs root (to chown a map to another user)"
id nobody >/dev/null 2>&1 || skip "no user nobody"
need_perf
cd "$TMP"
cat >jit.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
/* jit MODE SECRET: MODE own, forged (the map given to nobody), link (the
 * map a link to SECRET), user (setuid nobody, then its own map) */
int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "own";
	if (!strcmp(mode, "user") && setuid(65534)) return 1;
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) return 1;
	memcpy(code, "\xeb\xfe", 2);	/* jmp . */
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	printf("%s\n", path);	/* for the test to remove */
	fflush(stdout);
	if (!strcmp(mode, "link")) {
		FILE *s = fopen(argv[2], "w");
		fprintf(s, "%lx 2 SECRET_LINE\n", (unsigned long)code);
		fclose(s);
		if (symlink(argv[2], path)) return 1;
	} else {
		FILE *f = fopen(path, "w");
		fprintf(f, "%lx 2 %s\n", (unsigned long)code,
			!strcmp(mode, "forged") ? "FORGED" : "jitted_spin_loop");
		fclose(f);
		if (!strcmp(mode, "forged") && chown(path, 65534, 65534)) return 1;
	}
	alarm(1);	/* the loop never returns: SIGALRM ends it */
	((void (*)(void))code)();
	return 0;
}
C
gcc -O1 -o jit jit.c
chmod 755 "$TMP" jit
names() {	# MODE -> the functions of its samples in /tmp/perf-*.map code
	"$CL" record -g -o "$1.rec" -- ./jit "$1" "$TMP/secret-$1" 2>/dev/null >"$1.map" || true
	rm -f "$(cat "$1.map")"	# the test's own: no other process's is touched
	"$CL" report -i "$1.rec" --by dso,function --format json | python3 -c '
import json, sys
for r in json.load(sys.stdin)["rows"]:
    dso = r["dso"] or ""
    if r["samples"] and (dso.startswith("/tmp/perf-") or dso == "[anon]"):
        print(r["function"], r["samples"], dso)'
}
for mode in own forged link user; do
	names $mode >$mode.names
done
grep -q "^jitted_spin_loop " own.names || fail "own map: $(cat own.names)"
"$CL" report -i forged.rec --by dso,function >forged.txt
grep -q "FORGED" forged.txt && fail "another user's map was read: $(cat forged.names)"
[ -s forged.names ] || fail "forged: no samples in the JIT code"
"$CL" report -i link.rec --by dso,function >link.txt
grep -q "SECRET_LINE" link.txt && fail "a linked map was read: $(cat link.names)"
[ -s link.names ] || fail "link: no samples in the JIT code"
grep -q "^jitted_spin_loop " user.names || fail "a user's own map: $(cat user.names)"
echo "root's own map named; nobody's map for a root process: $(awk '{ print $1 " under " $3 }' forged.names | sort -u)"
echo "a link to a root-only file: $(awk '{ print $1 " under " $3 }' link.names | sort -u); nobody's own: named"
echo "hostile_jit: ok"
