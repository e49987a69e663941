# Rows of whole threads wait for the report in a temporary file, not in
# memory (core/rows.h's row_store, output/scratch.c): a recording written
# here of 1 500 short processes, each with a command line of its own,
# some pids given again. Reported by thread and by process,thread in
# every format that lists rows, with --percent-limit, --sort and --top,
# with $TMPDIR a directory (rows stored)
# and with $TMPDIR missing (no scratch file: rows kept in memory): the
# same bytes. Each row names its own command line and run time, the
# scratch file has no name left behind, and a scratch file that cannot
# be written or read back fails the report (exit 1, saying where and why,
# nothing written). A profile's samples (pprof) wait there too: a recording
# of 30 000 distinct stacks (1.2 MB of packed samples, several runs of
# them), the same profile stored and kept, and on one CPU (each run
# deflated where it is sealed, no thread for it), and the same failures; and
# the same recording with its start said again, steal unknown the second
# time (a start META read mid-file: the samples packed with both values
# as the threads went are packed again with cpu alone, run by run, from
# the file), the same profile stored and kept, one value a sample. A
# profile's long strings (64 bytes and more) wait there too: the same
# stacks with C++-like names (7 200 of them, 0.8 MB, each met again in
# other libraries after it was put), the same profile stored and kept; and
# 600 processes of 40 long command lines in turn (each string looked up
# again and again), the same profile stored and kept.
. "$(dirname "$0")/../lib.sh"
command -v zstd >/dev/null || skip "zstd is not installed (package zstd)"
# make's children, one after another: 1 500 of commands of their own,
# the last 100 pids given again (many.rec); 600 of 40 long command lines
# in turn, each long string looked up again and again (the ones seen
# lately are kept, the others read back from the store) (cmds.rec)
PYTHONPATH="$ROOT/tests" python3 - "$TMP/many.rec" "$TMP/cmds.rec" <<'PY' || fail "writing the recordings"
import sys
from recitems import Recording, EXIT, FORK
def children(path, n, pid_of, command_of, ran_of):
    r = Recording('source=test\nhost=h\ninterval_ns=1000000\nclk_tck=100\ncallchain=0\n'
                  'steal_source=tracepoints\nscope=all\n')
    r.task(100, b'make')
    r.proc(0, 100, b'make -j1', b'/usr/bin/make')
    t = 1
    for i in range(n):
        pid, ran = pid_of(i), ran_of(i)
        r.taskev(FORK, t, pid, 100)
        r.proc(t, pid, command_of(i), b'/usr/lib/gcc/cc1')
        r.stint(pid, t + 1, t + 1 + ran)
        r.taskev(EXIT, t + 1 + ran, pid, 100)
        t += ran + 2
    r.stint(100, t, t + 3)
    r.write(path, end_ms=t + 10)
children(sys.argv[1], 1500, lambda i: 1000 + i % 1400,
         lambda i: b'cc1 -O2 -o obj/%d.o src/file%d.c' % (i, i), lambda i: 1 + i % 5)
children(sys.argv[2], 600, lambda i: 2000 + i,
         lambda i: b'cc1 -O2 -fno-omit-frame-pointer -Wall -Wextra -Iinclude -c src/unit%d.c'
         % (i % 40), lambda i: 1 + i % 3)
PY

# 500 threads of 60 stacks each, 6 frames deep (tests/many_stacks.py)
python3 "$ROOT/tests/many_stacks.py" >"$TMP/stacks.txt"
"$CL" import perf-script "$TMP/stacks.txt" -o "$TMP/stacks.rec" 2>"$TMP/err" ||
	fail "import of the stacks: $(cat "$TMP/err")"
python3 "$ROOT/tests/many_stacks.py" --long-names >"$TMP/long.txt"
"$CL" import perf-script "$TMP/long.txt" -o "$TMP/long.rec" 2>"$TMP/err" ||
	fail "import of the long names: $(cat "$TMP/err")"
PYTHONPATH="$ROOT/tests" python3 - "$TMP/stacks.rec" "$TMP/flip.rec" <<'PY' || fail "the flipped recording"
import re, struct, sys
from recitems import read_items, write_items, META, END
version, items = read_items(sys.argv[1])
start = items[0][1]
assert b'steal_source=unknown' in start
items[0] = (META, re.sub(rb'steal_source=[^\n]*', b'steal_source=tracepoints', start))
items.insert(1, (META, start))
items[-1] = (END, struct.pack('<Q', len(items) - 1))
write_items(sys.argv[2], items, version)
PY

mkdir "$TMP/scratch"
INPUT=$TMP/many.rec
same() {	# name, report's options: stored and kept, the same bytes
	local name=$1; shift
	TMPDIR="$TMP/scratch" "$CL" report -i "$INPUT" "$@" \
		>"$TMP/stored.$name" 2>"$TMP/err" || fail "$*, stored: $(cat "$TMP/err")"
	TMPDIR="$TMP/missing" "$CL" report -i "$INPUT" "$@" \
		>"$TMP/kept.$name" 2>"$TMP/err" || fail "$*, in memory: $(cat "$TMP/err")"
	cmp -s "$TMP/stored.$name" "$TMP/kept.$name" ||
		fail "$*: stored and kept rows differ: $(diff "$TMP/stored.$name" "$TMP/kept.$name" | head -5)"
	[ -z "$(ls -A "$TMP/scratch")" ] || fail "a scratch file left behind: $(ls -A "$TMP/scratch")"
}
for by in thread process,thread; do
	for f in json csv text openmetrics; do
		same "$f" --by $by --format $f
	done
done
# rows dropped from the middle of the order (--percent-limit keeps those
# of 3 ms and more; --sort samples, all 0 here, leaves them in pid order),
# a sort of its own, the rows past --top summed
same limit.csv --sort samples --percent-limit 0.05 --format csv
same limit.json --sort cpu --percent-limit 0.05 --format json
same top.text --top 20 --format text
[ "$(grep -c '^[0-9]' "$TMP/stored.limit.csv")" -gt 500 ] &&
	[ "$(grep -c '^[0-9]' "$TMP/stored.limit.csv")" -lt 1000 ] ||
	fail "--percent-limit 0.05 kept $(grep -c '^[0-9]' "$TMP/stored.limit.csv") rows, not those of 3 ms and more"
same json --format json
INPUT=$TMP/stacks.rec same pprof --format pprof
INPUT=$TMP/stacks.rec same pprof.comm --format pprof --by comm,function
INPUT=$TMP/flip.rec same pprof.flip --format pprof
INPUT=$TMP/long.rec same pprof.long --format pprof
INPUT=$TMP/cmds.rec same pprof.cmds --format pprof
# the runs deflated where they are sealed, with no thread to do it on one
# CPU: the same bytes as with one
if command -v taskset >/dev/null; then
	for rec in stacks flip; do
		TMPDIR="$TMP/scratch" taskset -c 0 "$CL" report -i "$TMP/$rec.rec" --format pprof \
			-o "$TMP/one.$rec" 2>"$TMP/err" || fail "pprof on one CPU: $(cat "$TMP/err")"
		[ "$rec" = stacks ] && want=$TMP/stored.pprof || want=$TMP/stored.pprof.flip
		cmp -s "$TMP/one.$rec" "$want" || fail "pprof of $rec.rec on one CPU differs"
	done
else
	echo "pprof on one CPU not checked: no taskset (package util-linux)"
fi
[ "$(zcat "$TMP/stored.pprof.cmds" | grep -ao 'src/unit[0-9]*\.c' | sort -u | wc -l)" = 40 ] ||
	fail "the profile of 40 command lines names $(zcat "$TMP/stored.pprof.cmds" |
		grep -ao 'src/unit[0-9]*\.c' | sort -u | wc -l)"
# the profiles whole: every stack of every thread, once; one sample type
# (cpu) and one value a sample where steal is unknown
cat >"$TMP/profile.py" <<'PY'
import sys
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        if key & 7 == 0:
            v, i = varint(b, i); yield key >> 3, v
        else:
            n, i = varint(b, i); yield key >> 3, b[i:i + n]; i += n
p = sys.stdin.buffer.read()
types = sum(1 for f, _ in fields(p) if f == 1)
samples = [s for f, s in fields(p) if f == 2]
values = set()
for s in samples:
    for f, v in fields(s):
        if f == 2:      # value: packed varints
            i = n = 0
            while i < len(v): _, i = varint(v, i); n += 1
            values.add(n)
ok = len(samples) == 30000 and types == 1 and values == {1}
sys.exit(0 if ok else "%d samples, %d sample types, values a sample %s" % (len(samples), types, values))
PY
for f in pprof pprof.flip pprof.long; do
	zcat "$TMP/stored.$f" | python3 "$TMP/profile.py" || fail "the profile stored ($f)"
done
# the long names whole in the string table, each once
zcat "$TMP/stored.pprof.long" | python3 -c '
import sys
exec(open(sys.argv[1]).read().split("p = sys.stdin")[0])
strings = [s.decode() for f, s in fields(sys.stdin.buffer.read()) if f == 6]
names = [s for s in strings if "::Widget<" in s]
want = {"ns%d::Widget<std::basic_string<char>>::fn_%d_%d(std::vector<int> const&) const"
        % (n, st, k) for n in range(20) for st in range(60) for k in range(6)}
sys.exit(0 if len(names) == len(want) and set(names) == want else
         "%d long names, %d distinct, %d wanted" % (len(names), len(set(names)), len(want)))
' "$TMP/profile.py" || fail "the long names of the profile stored"

# every process its row, its own command line and run time (a row's
# attributes read back for another row would show here)
python3 - "$TMP/stored.json" <<'PY' || fail "the rows"
import json, re, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in d["rows"] if r["command"] and r["command"].startswith("cc1")]
assert len(rows) == 1500, len(rows)
seen = set()
for r in rows:
    i = int(re.search(r'file(\d+)\.c', r["command"]).group(1))
    assert r["pid"] == 1000 + i % 1400, (r["pid"], r["command"])
    assert r["cpu_ns"] == (1 + i % 5) * 1_000_000, (r["cpu_ns"], r["command"])
    assert "obj/%d.o" % i in r["command"], r["command"]
    seen.add(i)
assert len(seen) == 1500
runs = [r["cpu_ns"] for r in d["rows"]]
assert runs == sorted(runs, reverse=True), "not largest first"
PY

# a scratch file that cannot be written (a full $TMPDIR) or read back:
# exit 1, saying where and why, no report written (LD_PRELOAD of a pwrite
# or pread that fails: the only way to fail a file the kernel just made
# from outside)
if command -v cc >/dev/null; then
	for call in pwrite:ENOSPC pread:EIO; do
		fn=${call%:*} e=${call#*:}
		cat >"$TMP/fail$fn.c" <<C
#define _GNU_SOURCE
#include <errno.h>
#include <sys/types.h>
ssize_t $fn(int fd, void *buf, size_t n, off_t off)
{
	(void)fd; (void)buf; (void)n; (void)off;
	errno = $e;
	return -1;
}
ssize_t ${fn}64(int fd, void *buf, size_t n, off_t off) __attribute__((alias("$fn")));
C
		cc -shared -fPIC -o "$TMP/fail$fn.so" "$TMP/fail$fn.c" || fail "cc $fn"
		# (under ASan, which wants to be the first library loaded: told not to mind)
		for what in json:many:"the rows of gone threads" pprof:stacks:"the profile's samples and strings" \
			    pprof:long:"the profile's samples and strings"; do
			f=${what%%:*} rec=${what#*:} rec=${rec%%:*} held=${what##*:}
			run env TMPDIR="$TMP/scratch" LD_PRELOAD="$TMP/fail$fn.so" \
				ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
				"$CL" report -i "$TMP/$rec.rec" --format "$f" -o "$TMP/out.$f"
			[ "$(status)" = 1 ] || fail "$f, $fn failing: exit $(status): $(cat "$TMP/err")"
			grep -q "cannot keep $held in a temporary file in $TMP/scratch: " "$TMP/err" ||
				fail "$f, $fn failing: $(cat "$TMP/err")"
			grep -q "$( [ $e = ENOSPC ] && echo 'No space left' || echo 'Input/output error')" "$TMP/err" ||
				fail "$f, $fn failing: not its error: $(cat "$TMP/err")"
			[ ! -e "$TMP/out.$f" ] || fail "$f, $fn failing: a report was written"
		done
	done
fi
