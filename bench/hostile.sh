#!/usr/bin/env bash
# bench/hostile: the agent on a shared host for longer (issue 22): each of
# tests/shell/hostile_host.sh's attacks (a rename loop, a JIT map
# rewritten, cgroups made and removed; then 100 connections held, two
# users' profiles, TLS with basic auth scraped by Prometheus) for SECONDS
# (600) against an agent at its defaults, and the agent's RSS before,
# at most during and after each, and its CPU meanwhile.
#
# usage: bench/hostile.sh [SECONDS]   (as root; about 3.5 x SECONDS)
set -euo pipefail
cd "$(dirname "$0")/.."
CL=${CPULEDGER:-$PWD/build/cpuledger}
[ -x "$CL" ] || make -s all
HOSTILE_SECONDS=${1:-600} CPULEDGER=$CL bash tests/shell/hostile_host.sh |
	grep -E '^(rename|jitmap|cgroups|connections|profiles|tls|hostile_host):'
