#!/usr/bin/env bash
# Muster on a host vs plain ssh, on a loopback sshd (issue 24): keystroke-to-
# echo p50/p99 through `muster attach h1:x` vs `ssh -tt h1 tmux attach` to a
# tmux session running cat (the issue's anchor) and vs `ssh -tt h1 cat`,
# warm `muster ls` across one and across three hosts vs a local `muster ls`
# (goal: <= 100 ms p50 across three), output throughput through `muster
# attach` vs `ssh -tt h1 cat` of the same flood (goal: >= 0.8x), and the time
# until an attach shows live output again after its ssh connection is killed.
# Needs root (it creates three Unix users for the hosts) and openssh-server.
# Usage: bench/hosts.sh [-keys 300] [-ls 30] [-flood 32] [-floods 3] [-drops 10]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tmux >/dev/null || { echo "bench/hosts.sh needs tmux" >&2; exit 1; }
[ -x /usr/sbin/sshd ] || { echo "bench/hosts.sh needs openssh-server (apt-get install -y openssh-server)" >&2; exit 1; }
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/muster" ./cmd/muster
go build -o "$bin/muster-hook" ./cmd/muster-hook
go build -o "$bin/hostsbench" ./bench/hostsbench
"$bin/hostsbench" -muster "$bin/muster" "$@"
