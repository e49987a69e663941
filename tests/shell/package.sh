# The Debian package (issue 23): `make package` runs `dpkg-buildpackage
# -us -uc -b` in a tree made as `git archive` makes a tarball (no .git:
# --version names the commit from the COMMIT file git archive fills in)
# and builds cpuledger_VERSION_ARCH.deb, whose
# - contents are the binary, man page, completion, docs, Prometheus rules
#   and the agent's unit in systemd's directory, naming /usr/bin/cpuledger
#   and a document the package installs uncompressed;
# - dependencies come from the libraries it links (shlibs);
# - maintainer scripts do not enable the agent (dh_installsystemd
#   --no-enable) and keep the ledger unless purged;
# and lintian finds no error.
. "$(dirname "$0")/../lib.sh"
case ${BUILD:-} in *asan*) skip "builds its own binary (once is enough)" ;; esac
command -v dpkg-buildpackage >/dev/null || skip "dpkg-buildpackage is not installed (dpkg-dev)"
command -v dh >/dev/null || skip "debhelper is not installed"
git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout: the tree is made by git archive"
version=$(sed -n 's/^#define CPULEDGER_VERSION "\(.*\)"/\1/p' "$ROOT/src/cli/cli.h")
arch=$(dpkg --print-architecture)
head -1 "$ROOT/debian/changelog" | grep -qF "cpuledger ($version)" ||
	fail "debian/changelog's version is not $version: $(head -1 "$ROOT/debian/changelog")"

# make package: the tree as git archive makes it (with the working tree's
# changes to tracked files: git stash create makes a commit of them, or
# nothing when there are none), built in $BUILD/package
snap=$(git -C "$ROOT" stash create 2>/dev/null || true)
tree=$(git -C "$ROOT" rev-parse "${snap:-HEAD}^{tree}")
P=$TMP/b/package
(cd "$ROOT" && dpkg-checkbuilddeps) >"$TMP/deps" 2>&1 || skip "build dependencies missing: $(cat "$TMP/deps")"
make -C "$ROOT" BUILD="$TMP/b" package >"$TMP/build.log" 2>&1 || fail "make package: $(tail -20 "$TMP/build.log")"
[ ! -e "$P/src/.git" ] || fail "the archive holds .git"
commit=$(cat "$P/src/COMMIT")
[ "$(git -C "$ROOT" rev-parse "$commit^{tree}" 2>/dev/null)" = "$tree" ] ||
	fail "COMMIT ($commit) is not the commit of this tree, filled in by git archive"
deb=$P/cpuledger_${version}_$arch.deb
[ -f "$deb" ] || fail "no $(basename "$deb"): $(ls "$P")"

dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' | sort >"$TMP/contents"
echo "contents of $(basename "$deb"):"
sed 's/^/  /' "$TMP/contents"
unitdir=$(grep -o '^\./\(usr/\)\?lib/systemd/system/' "$TMP/contents" | head -1)
[ -n "$unitdir" ] || fail "no unit in systemd's directory"
for f in ./usr/bin/cpuledger ./usr/share/man/man1/cpuledger.1.gz \
	 ./usr/share/bash-completion/completions/cpuledger \
	 ./usr/share/doc/cpuledger/README.md ./usr/share/doc/cpuledger/agent.md \
	 ./usr/share/doc/cpuledger/install.md ./usr/share/doc/cpuledger/copyright \
	 ./usr/share/cpuledger/prometheus-rules.yml "${unitdir}cpuledger-agent.service"; do
	grep -qxF "$f" "$TMP/contents" || fail "the package has no $f"
done
! grep -q '^\./usr/local' "$TMP/contents" || fail "the package installs into /usr/local"

depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libc6 libdw1 libelf1 libsqlite3 libzstd1 libmicrohttpd libprotobuf-c libisal2; do
	printf '%s\n' "$depends" | grep -q "$lib" || fail "Depends has no $lib (shlibs): $depends"
done

mkdir "$TMP/x"
dpkg-deb -x "$deb" "$TMP/x"
# the agent loads libmicrohttpd (and its TLS libraries) itself: every
# other command starts without them (src/agent/mhd.h)
! objdump -p "$TMP/x/usr/bin/cpuledger" | grep -E 'NEEDED +lib(microhttpd|gnutls)' ||
	fail "the binary links libmicrohttpd or GnuTLS: each command pays their start-up"
"$TMP/x/usr/bin/cpuledger" --version | grep -qx "cpuledger $version (commit ${commit:0:12})" ||
	fail "--version: $("$TMP/x/usr/bin/cpuledger" --version), want $version and ${commit:0:12}"
unit=$TMP/x/${unitdir#./}cpuledger-agent.service
grep -q '^ExecStart=/usr/bin/cpuledger agent ' "$unit" || fail "the unit: $(grep ExecStart= "$unit")"
grep -q '^StateDirectory=cpuledger$' "$unit" || fail "the unit makes no state directory"
for doc in $(sed -n 's/^Documentation=//p' "$unit"); do
	case $doc in file:*) [ -f "$TMP/x${doc#file:}" ] || fail "Documentation= names $doc, not in the package" ;; esac
done
mkdir "$TMP/ctl"
dpkg-deb -e "$deb" "$TMP/ctl"
# the only `enable` is the one for a unit that was enabled before (upgrade)
awk '/deb-systemd-helper enable/ && !guarded { bad = 1 } /was-enabled/ { guarded = 1 } END { exit bad }' "$TMP/ctl/postinst" ||
	fail "postinst enables the agent on install"
grep -q 'purge.*' "$TMP/ctl/postrm" && grep -q 'rm -rf /var/lib/cpuledger' "$TMP/ctl/postrm" ||
	fail "postrm does not remove the ledger on purge"
echo "package: $(basename "$deb"), $(wc -l <"$TMP/contents") files, the agent not enabled on install"

if command -v lintian >/dev/null; then
	lintian --allow-root "$P"/cpuledger_"${version}"_"$arch".changes >"$TMP/lintian" 2>&1 || true
	sed 's/^/  lintian: /' "$TMP/lintian"
	! grep -q '^E:' "$TMP/lintian" || fail "lintian finds errors"
	echo "lintian: no error"
else
	echo "lintian is not installed: not run"
fi
echo "package: ok"
