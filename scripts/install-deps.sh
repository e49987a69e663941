#!/bin/sh
# Installs the Debian packages cpuledger needs to build and test, and only
# those that are missing, so that a second run costs nothing.
set -eu

pkgs="build-essential pkg-config clang libclang-rt-14-dev libcmocka-dev libzstd-dev libdw-dev libelf-dev libsqlite3-dev sqlite3 python3 time valgrind openssl zlib1g-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler golang-github-google-pprof-dev prometheus"

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
