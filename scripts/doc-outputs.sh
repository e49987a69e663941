#!/usr/bin/env bash
# Regenerates the outputs shown in README.md from real runs: each block
# between "<!-- output: COMMAND -->" and "<!-- end output -->" becomes
# what COMMAND prints (standard output and error) now, run from the
# repository with build/cpuledger as `cpuledger`. With --check, writes
# nothing and fails when a shown output does not have the shape of a
# fresh run's (numbers, and how many rows of a kind, may differ; words,
# columns and the kinds of line may not):
# tests/shell/docs.sh runs that.
# A `cpuledger run` block is the README's first screen: it is there to
# show steal (perf's path, --source perf: the BPF collector leaves steal
# unknown where the hypervisor writes no steal clock, as here), so a run that found none is made again (up to 3 times), and
# --check fails on a shown `steal 0.000 s`.
#
# usage: scripts/doc-outputs.sh [--check] [FILE...]   (default README.md)
set -euo pipefail
cd "$(dirname "$0")/.."
check=false
[ "${1:-}" = --check ] && { check=true; shift; }
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(README.md)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
ln -s "${CPULEDGER_BIN:-$PWD/build/cpuledger}" "$bin/cpuledger"
export PATH="$bin:$PATH"

# the recording the README's report shows, as `make run` makes it
mkdir -p build/demo
[ -s build/demo/live.rec ] ||
	cpuledger run --source perf -o build/demo/live.rec -- cpuledger workload threads --threads 2 --seconds 5 2>/dev/null

shape() {	# text -> its shape: numbers (signed too: a bias may be
	# negative) as 9, runs of spaces as one; the kinds of line, not how
	# many of each (a run may have a thread more). How steal is found
	# depends on the kernel (docs/record.md): the steal source line is
	# its first words only. A row of a thread that had gone before its
	# sample was placed (TID -1, no COMM: kept, never dropped) comes in
	# some runs and not others: not a kind of line of its own.
	sed -E '/^ *[0-9]+ +-1 /d' |
		sed -E 's/-?[0-9]+/9/g; s/ +/ /g; s/9(\.9)+/9/g' |
		sed -E 's/^( *steal source: [a-z-]+).*/\1 .../' | sort -u
}

status=0
for f in "${files[@]}"; do
	out=$(mktemp)
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$out"
		cmd=$(printf '%s\n' "$line" | sed -n 's/^<!-- output: \(.*\) -->$/\1/p')
		[ -n "$cmd" ] || continue
		# the old block: its fence, lines, fence, then the end marker
		shown=$(mktemp)
		while IFS= read -r old && [ "$old" != "<!-- end output -->" ]; do
			printf '%s\n' "$old" >>"$shown"
		done
		fresh=$(bash -c "$cmd" 2>&1 || true)
		case $cmd in "cpuledger run "*)
			for _ in 1 2; do
				printf '%s\n' "$fresh" | grep -qE '^ +steal +0\.000 s' || break
				fresh=$(bash -c "$cmd" 2>&1 || true)
			done
			if $check && grep -qE '^ +steal +0\.000 s' "$shown"; then
				echo "$f: the output shown for '$cmd' has no steal: make it again where the host steals" >&2
				status=1
			elif printf '%s\n' "$fresh" | grep -qE '^ +steal +0\.000 s'; then
				echo "$f: '$cmd' found no steal in 3 runs: this host shows none" >&2
			fi ;;
		esac
		if $check; then
			if [ "$(sed '1d;$d' "$shown" | shape)" != "$(printf '%s\n' "$fresh" | shape)" ]; then
				echo "$f: the output shown for '$cmd' is not what it prints now:" >&2
				diff <(sed '1d;$d' "$shown" | shape) <(printf '%s\n' "$fresh" | shape) >&2 || true
				status=1
			fi
		fi
		{ echo '```'; printf '%s\n' "$fresh"; echo '```'; echo '<!-- end output -->'; } >>"$out"
		rm -f "$shown"
	done <"$f"
	if $check; then
		rm -f "$out"
	else
		mv "$out" "$f"
	fi
done
exit $status
