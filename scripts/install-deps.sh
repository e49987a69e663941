#!/bin/sh
# Installs the Debian packages cpuledger needs, and only those that are
# missing, so that a second run costs nothing.
#   install-deps.sh run    to build it and run it (make run)
#   install-deps.sh [test] to build it and run its test suite too (make test)
set -eu

# building (profile.proto comes with pprof's Go package; clang and bpftool
# build the BPF collector, which links libbpf) and the demo
run="build-essential pkg-config clang bpftool libzstd-dev libdw-dev libelf-dev libiberty-dev libsqlite3-dev libmicrohttpd-dev libbpf-dev zlib1g-dev libisal-dev libncurses-dev libprotobuf-c-dev protobuf-c-compiler golang-github-google-pprof-dev python3"
# the suite: libFuzzer, cmocka, peers and clients (sqlite3, promtool, protoc),
# compilers of the test programs, the tools the tests time and check with,
# and what building the Debian package takes (tests/shell/package.sh)
test="tmux zsh fish chromium clang libclang-rt-14-dev libcmocka-dev sqlite3 rustc xz-utils time valgrind openssl protobuf-compiler prometheus dpkg-dev debhelper lintian"
case ${1:-test} in
run) pkgs=$run ;;
test) pkgs="$run $test" ;;
*) echo "usage: install-deps.sh [run|test]" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages:$missing; run as root or install them" >&2
	exit 1
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
