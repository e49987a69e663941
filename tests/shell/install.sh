# make install and make uninstall (issue 23), as GNU and Debian expect:
# - DESTDIR=$TMP/d (PREFIX /usr/local) installs exactly the binary, the
#   man page (this version on its header), the bash completion (the one
#   `completion bash` prints), the agent's unit naming the installed
#   binary and an installed document, the Prometheus rules and the docs;
# - the agent's address and ledger are --help's wherever they are written;
# - PREFIX=$TMP/p (no DESTDIR): the unit's paths are real, and
#   systemd-analyze verifies it; the installed binary runs;
# - make uninstall takes away every file install wrote.
. "$(dirname "$0")/../lib.sh"
case ${BUILD:-} in *asan*) skip "installs the optimized build (the tree is the same)" ;; esac
command -v make >/dev/null || skip "make is not installed"
B=${BUILD:-build}
version=$(sed -n 's/^#define CPULEDGER_VERSION "\(.*\)"/\1/p' "$ROOT/src/cli/cli.h")
mk() { make -s -C "$ROOT" BUILD="$B" "$@" >"$TMP/make.out" 2>&1 || fail "make $*: $(tail -5 "$TMP/make.out")"; }

D=$TMP/d
mk install DESTDIR="$D"
(cd "$D" && find . -type f | sort) >"$TMP/files"
{
	echo ./usr/local/bin/cpuledger
	echo ./usr/local/lib/systemd/system/cpuledger-agent.service
	echo ./usr/local/share/bash-completion/completions/cpuledger
	for f in "$ROOT"/contrib/*.yml "$ROOT"/contrib/*.json; do
		[ -e "$f" ] && echo "./usr/local/share/cpuledger/$(basename "$f")"
	done
	for f in "$ROOT"/README.md "$ROOT"/docs/*.md; do
		echo "./usr/local/share/doc/cpuledger/$(basename "$f")"
	done
	echo ./usr/local/share/man/man1/cpuledger.1
} | sort >"$TMP/want"
diff -u "$TMP/want" "$TMP/files" || fail "make install DESTDIR: the tree is not as expected"
[ "$(stat -c %a "$D/usr/local/bin/cpuledger")" = 755 ] || fail "the binary is not 0755"
"$D/usr/local/bin/cpuledger" --version | grep -qE "^cpuledger $version \(commit [0-9a-f]{7,}|unknown\)" ||
	fail "--version: $("$D/usr/local/bin/cpuledger" --version)"
head -1 "$D/usr/local/share/man/man1/cpuledger.1" | grep -qF "\"cpuledger $version\"" ||
	fail "the man page's header: $(head -1 "$D/usr/local/share/man/man1/cpuledger.1")"
cmp -s "$D/usr/local/share/bash-completion/completions/cpuledger" <("$CL" completion bash) ||
	fail "the installed completion is not what 'completion bash' prints"
bash -c '. "$1" && complete -p cpuledger' _ "$D/usr/local/share/bash-completion/completions/cpuledger" >/dev/null ||
	fail "the completion does not complete cpuledger"
unit=$D/usr/local/lib/systemd/system/cpuledger-agent.service
grep -qx 'ExecStart=/usr/local/bin/cpuledger agent --listen 127.0.0.1:9465' "$unit" ||
	fail "the unit's ExecStart: $(grep ExecStart= "$unit")"
for doc in $(sed -n 's/^Documentation=//p' "$unit"); do
	case $doc in
	file:*) [ -f "$D${doc#file:}" ] || fail "the unit's Documentation= names $doc, which is not installed" ;;
	man:cpuledger\(1\)) ;;
	*) fail "the unit's Documentation= names $doc" ;;
	esac
done
if command -v man >/dev/null; then
	MANPATH=$D/usr/local/share/man man -w cpuledger >/dev/null 2>&1 || fail "man does not find the page"
fi
echo "install: DESTDIR tree as expected ($(wc -l <"$TMP/files") files)"

# the agent's address and ledger as --help gives them, everywhere they
# are written (README said 9464 and ledger.db)
"$CL" agent --help >"$TMP/help"
grep -q "default /var/lib/cpuledger/cpuledger.db" "$TMP/help" || fail "agent --help: no default ledger"
grep -q "127.0.0.1:9465" "$TMP/help" || fail "agent --help: no 127.0.0.1:9465"
others=$(grep -HnoE "127\.0\.0\.1:94[0-9]{2}|/var/lib/cpuledger/[A-Za-z_.-]+\.db" \
	"$ROOT/README.md" "$ROOT"/docs/*.md "$ROOT"/docs/cpuledger.1 "$ROOT"/contrib/* |
	grep -vE ":(127\.0\.0\.1:9465|/var/lib/cpuledger/cpuledger\.db)$" || true)
[ -z "$others" ] || fail "an address or ledger other than --help's: $others"

mk uninstall DESTDIR="$D"
left=$(cd "$D" && find . -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "uninstall: no file left"

P=$TMP/p
mk install PREFIX="$P"
"$P/bin/cpuledger" --version >/dev/null || fail "the installed binary does not run"
grep -q "^ExecStart=$P/bin/cpuledger " "$P/lib/systemd/system/cpuledger-agent.service" ||
	fail "PREFIX: the unit's ExecStart: $(grep ExecStart= "$P/lib/systemd/system/cpuledger-agent.service")"
if command -v systemd-analyze >/dev/null; then
	cp "$P/lib/systemd/system/cpuledger-agent.service" "$TMP/"
	MANPATH=$P/share/man systemd-analyze verify "$TMP/cpuledger-agent.service" 2>"$TMP/verify.err" ||
		fail "the installed unit: $(cat "$TMP/verify.err")"
fi
if command -v promtool >/dev/null; then
	for f in "$P"/share/cpuledger/*.yml; do
		promtool check rules "$f" >/dev/null || fail "promtool check rules $f"
	done
fi
mk uninstall PREFIX="$P"
left=$(find "$P" -type f)
[ -z "$left" ] || fail "make uninstall PREFIX left: $left"
echo "install: ok"
