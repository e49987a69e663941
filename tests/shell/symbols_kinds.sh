# Functions named while recording, for the kinds of code perf names
# (issue 14), each built here from a few lines with Debian's compilers
# and recorded with `record -g -- PROGRAM`:
# - C++: demangled as perf shows it (`ns::hot_loop`), raw with --no-demangle;
# - Rust (legacy mangling): demangled (`rsbin::hot_loop`);
# - a non-PIE executable;
# - a stripped executable with MiniDebugInfo (.gnu_debugdata): its static
#   function, which no .dynsym holds, is named;
# - JIT code from /tmp/perf-PID.map, under that file;
# - the vDSO (clock_gettime), from the kernel's image;
# - code no symbol holds is [unknown] under its own file, not one
#   [unknown] for all.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
command -v g++ >/dev/null || skip "g++ is not installed"
need_perf
cd "$TMP"

fn_of() {	# recording dso-substring -> "function samples" lines of that dso
	"$CL" report -i "$1" --by dso,function --format json ${3:-} | python3 -c '
import json, sys
for r in json.load(sys.stdin)["rows"]:
    if sys.argv[1] in (r["dso"] or "") and r["samples"]:
        print(r["function"], r["samples"])' "$2"
}
busy_for() {	# C body of a loop -> a main that runs it for ~1 s
	printf '#include <time.h>\nint main(void) { time_t e = time(0) + 1; while (time(0) <= e) { %s } return 0; }\n' "$1"
}

# --- C++
cat >cxx.cc <<'EOF'
#include <ctime>
namespace ns { __attribute__((noinline)) long hot_loop(long n) { volatile long s = 0; for (long i = 0; i < n; i++) s += i; return s; } }
int main() { std::time_t e = std::time(nullptr) + 1; while (std::time(nullptr) <= e) ns::hot_loop(100000); }
EOF
g++ -O1 -fno-omit-frame-pointer -o cxx cxx.cc
"$CL" record -g -o cxx.rec -- ./cxx 2>/dev/null
fn_of cxx.rec /cxx | grep "^ns::hot_loop " >/dev/null || fail "C++: $(fn_of cxx.rec /cxx | head -5)"
fn_of cxx.rec /cxx --no-demangle | grep -q "^_ZN2ns8hot_loopEl " || fail "C++ --no-demangle: $(fn_of cxx.rec /cxx --no-demangle | head -3)"
echo "C++: ns::hot_loop (raw _ZN2ns8hot_loopEl with --no-demangle)"

# --- Rust
if command -v rustc >/dev/null; then
	cat >rsbin.rs <<'EOF'
#[inline(never)]
fn hot_loop(n: u64) -> u64 { let mut s = 0u64; for i in 0..n { s = s.wrapping_add(std::hint::black_box(i)); } s }
fn main() { let e = std::time::Instant::now(); let mut t = 0; while e.elapsed().as_secs() < 1 { t += hot_loop(100000); } std::process::exit((t & 1) as i32); }
EOF
	rustc -C opt-level=1 -C force-frame-pointers=yes -o rsbin rsbin.rs 2>rustc.err || fail "rustc: $(cat rustc.err)"
	"$CL" record -g -o rs.rec -- ./rsbin 2>/dev/null || true
	fn_of rs.rec /rsbin | grep -q "^rsbin::hot_loop " || fail "Rust: $(fn_of rs.rec /rsbin | head -5)"
	echo "Rust: rsbin::hot_loop"
else
	echo "Rust: not checked (rustc is not installed)"
fi

# --- non-PIE
busy_for 'volatile int x = 0; for (int i = 0; i < 100000; i++) x += i;' >nopie.c
sed -i 's/int main(void) {/__attribute__((noinline)) static void spin_nopie(void) { volatile int x = 0; for (int i = 0; i < 100000; i++) x += i; }\nint main(void) {/; s/{ volatile int x = 0; for (int i = 0; i < 100000; i++) x += i; } return/{ spin_nopie(); } return/' nopie.c
gcc -O1 -no-pie -fno-omit-frame-pointer -o nopie nopie.c
"$CL" record -g -o nopie.rec -- ./nopie 2>/dev/null
fn_of nopie.rec /nopie | grep -q "^spin_nopie " || fail "non-PIE: $(fn_of nopie.rec /nopie | head -5)"
echo "non-PIE: spin_nopie"

# --- stripped, with MiniDebugInfo (as Fedora's find-debuginfo makes it)
sed 's/spin_nopie/spin_minidebug/g' nopie.c >mdi.c
gcc -O1 -fno-omit-frame-pointer -o mdi mdi.c
nm -D mdi --format=posix --defined-only | awk '{ print $1 }' | sort >dynsyms
nm mdi --format=posix --defined-only | awk '$2 == "T" || $2 == "t" { print $1 }' | sort >funcsyms
comm -13 dynsyms funcsyms >keep
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=keep mdi mini
xz -f mini
strip --strip-all mdi
objcopy --add-section .gnu_debugdata=mini.xz mdi
nm mdi 2>&1 | grep -q spin_minidebug && fail "MiniDebugInfo: the test binary is not stripped"
"$CL" record -g -o mdi.rec -- ./mdi 2>/dev/null
fn_of mdi.rec /mdi | grep -q "^spin_minidebug " || fail "MiniDebugInfo: $(fn_of mdi.rec /mdi | head -5)"
echo "stripped with MiniDebugInfo: spin_minidebug"

# --- JIT code and its perf map
cat >jit.c <<'EOF'
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void) {
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) return 1;
	memcpy(code, "\xeb\xfe", 2);	/* jmp . */
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	fprintf(f, "%lx 2 jitted_spin_loop\n", (unsigned long)code);
	fclose(f);
	alarm(1);	/* the loop never returns: SIGALRM ends it */
	((void (*)(void))code)();
	return 0;
}
EOF
gcc -O1 -o jit jit.c
"$CL" record -g -o jit.rec -- ./jit 2>/dev/null || true
fn_of jit.rec /tmp/perf- | grep -q "^jitted_spin_loop " || fail "JIT: $("$CL" report -i jit.rec --by dso,function | head -12)"
map=$("$CL" report -i jit.rec --by dso --format json | python3 -c '
import json, sys
print([r["dso"] for r in json.load(sys.stdin)["rows"] if r["dso"] and r["dso"].startswith("/tmp/perf-")][0])')
rm -f "$map"	# the test's own: no other process's map is touched
echo "JIT: jitted_spin_loop, under $map"

# --- the vDSO
busy_for 'struct timespec ts; for (int i = 0; i < 1000; i++) clock_gettime(CLOCK_MONOTONIC, &ts);' >vdso.c
gcc -O1 -o vdso vdso.c
"$CL" record -g -o vdso.rec -- ./vdso 2>/dev/null
named=$(fn_of vdso.rec "[vdso]" | grep -v '^\[unknown\] ' | head -1)
[ -n "$named" ] || fail "vDSO: $(fn_of vdso.rec "[vdso]" | head -3)"
echo "vDSO: $named"

# --- [unknown] stays under its own file
"$CL" report -i jit.rec --by dso,function --format json | python3 -c '
import json, sys
rows = [r for r in json.load(sys.stdin)["rows"] if r["function"] == "[unknown]"]
assert all(r["dso"] for r in rows) or not rows, rows
' || fail "an [unknown] function without its file"
echo "symbols_kinds: ok"
