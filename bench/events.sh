#!/usr/bin/env bash
# bench/events.sh: events.sock of a real `muster daemon`, whole process,
# against a bare Unix-socket JSON echo server (another process) measured in
# the same run (issue 3). Prints ack latency p50/p99 with one connection per
# event, sustained durable events/s from parallel clients, and the ratios;
# then a hook's ack latency while another process holds 5,000 idle
# connections (issue 9).
# Targets: p50 <= 3x the echo floor, p99 <= 1 ms, >= 20,000 events/s.
#
# With -base REV, muster is also built at that git revision and measured in
# the same run, alternating with this tree's build event by event, so that
# a busy machine slows both alike (issue 14: before and after).
#
# Usage: bench/events.sh [-base REV] [-cpuprofile PREFIX] [-n 5000] [-burst 20000] [-bursts 3] [-clients 16] [-sessions 8] [-idle 5000] [-idle-hooks 300]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
base=""
if [[ "${1:-}" == "-base" ]]; then
	base=$2
	shift 2
fi
cleanup() {
	if [[ -n "$base" ]]; then git worktree remove --force "$bin/base" 2>/dev/null || true; fi
	rm -rf "$bin"
}
trap cleanup EXIT
go build -o "$bin/muster" ./cmd/muster
go build -o "$bin/eventsbench" ./bench/eventsbench
args=()
if [[ -n "$base" ]]; then
	git worktree add --detach "$bin/base" "$base" >/dev/null 2>&1
	(cd "$bin/base" && go build -o "$bin/muster-base" ./cmd/muster)
	args=(-baseline "$bin/muster-base")
fi
"$bin/eventsbench" -muster "$bin/muster" "${args[@]}" "$@"
