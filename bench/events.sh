#!/usr/bin/env bash
# bench/events.sh: events.sock of a real `muster daemon`, whole process,
# against a bare Unix-socket JSON echo server (another process) measured in
# the same run (issue 3). Prints ack latency p50/p99 with one connection per
# event, sustained durable events/s from parallel clients, and the ratios.
# Targets: p50 <= 3x the echo floor, p99 <= 1 ms, >= 20,000 events/s.
#
# Usage: bench/events.sh [-n 5000] [-burst 20000] [-bursts 3] [-clients 16] [-sessions 8]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/muster" ./cmd/muster
go build -o "$bin/eventsbench" ./bench/eventsbench
"$bin/eventsbench" -muster "$bin/muster" "$@"
