# The house rules a newcomer relies on (issue 24), checked by
# scripts/house.py: no folders that include each other, no files that call
# each other in a loop, no function over 80 lines, one second in ns only as
# NSEC_PER_SEC, core/banned.h in every .c file, a README.md in every
# folder. First the checker is shown to catch each breach in a small
# made-up tree, then src/ must have none.
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
command -v python3 >/dev/null || skip "no python3 for scripts/house.py"

t=$TMP/src
mkdir -p "$t/core" "$t/a" "$t/b"
echo "# core" >"$t/core/README.md"
echo "# a" >"$t/a/README.md"
printf '/* one second */\n#define NSEC_PER_SEC 1000000000ull\n' >"$t/core/units.h"
printf '#define BANNED(f) f\n' >"$t/core/banned.h"
printf 'int b_f(void);\n' >"$t/b/b.h"
printf '#include "../b/b.h"\nint a_f(void);\nint a_g(void);\n' >"$t/a/a.h"
printf '#include "../a/a.h"\n#include "../core/banned.h"\nint b_f(void)\n{\n\treturn a_f() + 1e9;\n}\n' >"$t/b/b.c"
{
	printf '#include "a.h"\nint a_f(void)\n{\n\treturn a_g();\n}\n'
	printf 'static int long_one(int x)\n{\n'
	for i in $(seq 1 79); do printf '\tx += %d;\n' "$i"; done
	printf '\treturn x;\n}\n'
} >"$t/a/a.c"
printf '#include "a.h"\n#include "../core/banned.h"\nint a_g(void)\n{\n\treturn a_f() * 1000000000ULL;\n}\n' >"$t/a/a2.c"
run python3 scripts/house.py "$t"
[ "$(status)" = 1 ] || fail "the made-up tree: exit $(status), not 1: $(cat "$TMP/out" "$TMP/err")"
for want in \
	"src/a/a.h:1: folders include each other (a/ -> b/ -> a/)" \
	"src/b/b.c:1: folders include each other (a/ -> b/ -> a/)" \
	"src/a/a.c:4: files call each other in a loop (a/a.c -> a/a2.c -> a/a.c): a/a.c calls a_g()" \
	"src/a/a2.c:5: files call each other in a loop (a/a.c -> a/a2.c -> a/a.c): a/a2.c calls a_f()" \
	"src/a/a.c:7: function 'long_one' is 82 lines (at most 80)" \
	"src/b/b.c:5: one second in ns written '1e9'" \
	"src/a/a2.c:5: one second in ns written '1000000000ULL'" \
	"src/a/a.c:1: does not include core/banned.h" \
	"src/b/README.md:1: no README.md"; do
	grep -qF "$want" "$TMP/out" || fail "not caught: '$want' in: $(cat "$TMP/out")"
done
grep -q "core/units.h" "$TMP/out" && ! grep -q "^src/core/units.h" "$TMP/out" ||
	fail "units.h: its own constant is a breach, or the hint is missing: $(cat "$TMP/out")"
echo "checker: each breach in a made-up tree caught with FILE:LINE"

run python3 scripts/house.py src
[ "$(status)" = 0 ] || fail "src/ breaks the house rules:
$(cat "$TMP/out" "$TMP/err")"
tail -1 "$TMP/out"
