#!/usr/bin/env bash
# bench/hostile.sh: hostile and heavy inputs against the Muster daemon
# (issue 22). Sections, each runnable alone:
#   transcripts  daemon CPU and RSS while an agent appends to a 20 MB and a
#                200 MB transcript of each provider (bench/hostilebench);
#                goal: CPU proportional to what was appended, the same at
#                both sizes, not to the file.
# Usage: bench/hostile.sh [output] [transcripts] [-- flags of the
#        section's program: output -seconds 5; transcripts -providers
#        claude,codex -sizes 20,200 -secs 20 -every 250ms]
set -euo pipefail
cd "$(dirname "$0")/.."
sections=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do sections+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ ${#sections[@]} -eq 0 ] && sections=(output transcripts)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/muster" ./cmd/muster
for s in "${sections[@]}"; do
	case "$s" in
	output)
		command -v tmux >/dev/null || { echo "bench/hostile.sh output needs tmux (apt-get install -y tmux)" >&2; exit 1; }
		echo "== output: hostile terminal output, muster and tmux side by side"
		go build -o "$bin/outputbench" ./bench/outputbench
		"$bin/outputbench" -muster "$bin/muster" "$@"
		;;
	transcripts)
		echo "== transcripts: daemon CPU while an agent appends (muster $(git rev-parse --short HEAD))"
		go build -o "$bin/hostilebench" ./bench/hostilebench
		"$bin/hostilebench" -muster "$bin/muster" "$@"
		;;
	*) echo "bench/hostile.sh: unknown section $s (known: output, transcripts)" >&2; exit 2 ;;
	esac
done
