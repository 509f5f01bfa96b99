#!/usr/bin/env bash
# bench/hostile.sh: hostile inputs against muster and tmux side by side
# (issue 22). Terminal output: the counts that once wedged the daemon,
# printed into one pane while another is captured; the server's CPU, RSS,
# capture latency of the calm pane and the time to kill the hostile one.
# Usage: bench/hostile.sh [-seconds 5]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tmux >/dev/null || { echo "bench/hostile.sh needs tmux (apt-get install -y tmux)" >&2; exit 1; }
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/muster" ./cmd/muster
go build -o "$bin/hostilebench" ./bench/hostilebench
"$bin/hostilebench" -muster "$bin/muster" "$@"
