#!/usr/bin/env bash
# Muster on a host vs plain ssh, on a loopback sshd (issue 24): keystroke-to-
# echo p50/p99 through `muster attach h1:x` vs `ssh -tt h1 cat` (cat in both),
# `muster ls` across one host vs a local `muster ls`, and the time until an
# attach shows live output again after its ssh connection is killed. Needs
# root (it creates a Unix user for the remote side) and openssh-server.
# Usage: bench/hosts.sh [-keys 300] [-ls 30] [-drops 10]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/sbin/sshd ] || { echo "bench/hosts.sh needs openssh-server (apt-get install -y openssh-server)" >&2; exit 1; }
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/muster" ./cmd/muster
go build -o "$bin/muster-hook" ./cmd/muster-hook
go build -o "$bin/hostsbench" ./bench/hostsbench
"$bin/hostsbench" -muster "$bin/muster" "$@"
