#!/usr/bin/env bash
# bench/tail.sh: what following agents' transcripts costs the Muster daemon
# (issue 10: 20 live agent panes, idle, <= 1% of a core), beside the same
# daemon with idle shells and tmux with the same agents, in one run. The
# agents are internal/testing/fakeagent as Claude Code, Codex and Gemini
# CLI, hook-less, under temporary homes; -busy adds a measure of agents
# that run a turn every -every.
# Usage: bench/tail.sh [-panes 20] [-secs 30] [-busy] [-every 5s]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tmux >/dev/null || { echo "bench/tail.sh needs tmux (apt-get install -y tmux)" >&2; exit 1; }
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/muster" ./cmd/muster
go build -o "$bin/tailbench" ./bench/tailbench
mkdir "$bin/agents"
go build -o "$bin/agents/fakeagent" ./internal/testing/fakeagent
for p in claude codex gemini; do ln -s fakeagent "$bin/agents/$p"; done
"$bin/tailbench" -muster "$bin/muster" -fakeagent "$bin/agents" "$@"
