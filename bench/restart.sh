#!/usr/bin/env bash
# bench/restart.sh: `muster daemon restart` with N live panes (issue 23,
# Required 6: goal ≤ 1 s and no byte lost). Each pane prints a numbered
# line every 10 ms (bash builtins only: no fork per line). The daemon is
# restarted R times while they print; then every pane's history is read
# back and checked for a gap or a repeat in its numbers.
#
# Reported: the wall time of each `muster daemon restart` (the command
# returns once the new image answers with its report), and the daemon's
# own figure from the request to every adopted pane's reader running
# again, which bounds the longest time any pane's output went unread.
#
# Usage: bench/restart.sh [N] [R]     (default 50 panes, 5 restarts)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-50}
rounds=${2:-5}
work=$(mktemp -d /tmp/mrs.XXXXXX)
# Built before HOME moves: the Go caches stay the user's.
go build -o "$work/muster" ./cmd/muster
export MUSTER_HOME=$work/home HOME=$work/user XDG_RUNTIME_DIR=
mkdir -p "$MUSTER_HOME" "$HOME"
trap '"$work/muster" daemon stop --force >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
m="$work/muster"
cat > "$work/ticker" <<'SH'
#!/usr/bin/env bash
exec 9<> <(:)
i=0
while :; do
	printf 'tick %d %s\n' "$i" "$EPOCHREALTIME"
	i=$((i + 1))
	read -r -t 0.01 -u 9 || true
done
SH
chmod +x "$work/ticker"
for i in $(seq -w 1 "$n"); do
	"$m" new --detach --name "p$i" --cmd "$work/ticker" >/dev/null
done
sleep 1
log=$(find "$MUSTER_HOME" -name daemon.log | head -1)
for r in $(seq 1 "$rounds"); do
	start=$(date +%s%N)
	out=$("$m" daemon restart 2>&1)
	end=$(date +%s%N)
	adopt=$(grep '"adopted the panes of a restart"' "$log" | tail -1 | sed -E 's/.*"ms":([0-9]+).*/\1/')
	printf 'restart %d: wall %d ms, request to readers running %s ms: %s\n' "$r" $(((end - start) / 1000000)) "$adopt" "$out"
	sleep 0.5
done
lost=0
repeats=0
lines=0
for i in $(seq -w 1 "$n"); do
	read -r l rp c < <("$m" capture "p$i" --scrollback 100000 | awk '
		$1 == "tick" { if (seen && $2 != prev + 1) { if ($2 > prev + 1) lost += $2 - prev - 1; else rep++ } prev = $2; seen = 1; c++ }
		END { print lost + 0, rep + 0, c + 0 }')
	lost=$((lost + l))
	repeats=$((repeats + rp))
	lines=$((lines + c))
done
printf '%d panes, %d restarts: %d lines read back, %d lost, %d repeated\n' "$n" "$rounds" "$lines" "$lost" "$repeats"
