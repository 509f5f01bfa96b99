#!/usr/bin/env bash
# Pane output path vs a raw PTY, tmux and a minimal Go relay (the floor of a
# Go client and daemon), measured in one run (issues 2 and 11). Echo latency
# also times Go and C servers holding the terminal (the C one when cc is
# installed), which show the floor of a Go program and of none.
# Usage: bench/core.sh [-mb 200] [-idle 60] [-keys 300] [-rss-panes 10] [-rounds 3]
#        [-phases throughput,latency,esc,rss,idle] [-esc 200] [-kinds muster,tmux,relay,direct,epoll,cepoll]
# (-phases socket: throughput's raw PTY and socket clients only)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tmux >/dev/null || { echo "bench/core.sh needs tmux (apt-get install -y tmux)" >&2; exit 1; }
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/muster" ./cmd/muster
go build -o "$bin/corebench" ./bench/corebench
"$bin/corebench" -muster "$bin/muster" "$@"
