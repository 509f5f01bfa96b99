#!/usr/bin/env bash
# bench/resume.sh: `muster resume --all` of N restorable sessions (issue 22
# item 10: 100 sessions took 150.6 s, one every 1.5 s, nothing printed
# until the end). Each session is `sleep`; the daemon is stopped so all
# become restorable, then `resume --all` is timed: wall time, and when its
# first line was printed.
#
# With -base REV, muster is also built at that git revision (from
# `git archive`, no worktree) and measured in the same run, after this
# tree's build.
#
# Usage: bench/resume.sh [-base REV] [N]     (default 100 sessions)
set -euo pipefail
cd "$(dirname "$0")/.."
base=""
if [[ "${1:-}" == "-base" ]]; then
	base=$2
	shift 2
fi
n=${1:-100}
work=$(mktemp -d /tmp/mrb.XXXXXX)
trap 'for h in "$work"/home-*; do MUSTER_HOME=$h "$work/muster" daemon stop --force >/dev/null 2>&1 || true; done; rm -rf "$work"' EXIT
go build -o "$work/muster" ./cmd/muster
bins=("$work/muster")
if [[ -n "$base" ]]; then
	mkdir "$work/src"
	git archive "$base" | tar -x -C "$work/src"
	(cd "$work/src" && go build -o "$work/muster-base" ./cmd/muster)
	bins+=("$work/muster-base")
fi
for bin in "${bins[@]}"; do
	home="$work/home-$(basename "$bin")"
	mkdir -p "$home"
	export MUSTER_HOME=$home
	for i in $(seq -w 1 "$n"); do
		"$bin" new --detach --name "s$i" --cmd "sleep 100000" >/dev/null
	done
	"$bin" daemon stop --force >/dev/null 2>&1
	start=$(date +%s.%N)
	first=""
	count=0
	while IFS= read -r line; do
		count=$((count + 1))
		if [[ -z "$first" ]]; then first=$(date +%s.%N); fi
	done < <("$bin" resume --all 2>&1)
	end=$(date +%s.%N)
	printf '%-13s %d sessions: %d lines, first after %.2f s, all after %.2f s\n' "$(basename "$bin")" "$n" "$count" \
		"$(echo "$first - $start" | bc)" "$(echo "$end - $start" | bc)"
	"$bin" daemon stop --force >/dev/null 2>&1
done
