#!/usr/bin/env bash
# bench/cost.sh: what sampling each pane's process tree costs the daemon
# (issue 25, cost per agent: at most 0.5% of a core with 50 panes at the
# default interval). Two daemons run side by side over the same window,
# each with N panes of a small process tree (bash with two sleeps): one
# with [cost] interval "off", one with the default interval (or
# INTERVAL). Each daemon's CPU time (utime+stime from /proc/PID/stat)
# over the window is printed as a share of one core, and the difference.
#
# Usage: bench/cost.sh [N] [SECONDS]        (default 50 panes, 120 s)
#        INTERVAL=1s bench/cost.sh          (sample more often)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-50}
window=${2:-120}
work=$(mktemp -d /tmp/mcb.XXXXXX)
trap 'for h in "$work"/home-*; do MUSTER_HOME=$h "$work/muster" daemon stop >/dev/null 2>&1 || true; done; rm -rf "$work"' EXIT
go build -o "$work/muster" ./cmd/muster
tick=$(getconf CLK_TCK)
ticks() { awk '{ s = $0; sub(/.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }
declare -A pid
for mode in off on; do
	home="$work/home-$mode"
	mkdir -p "$home/config"
	if [[ $mode == off ]]; then
		printf '[cost]\ninterval = "off"\n' >"$home/config/config.toml"
	elif [[ -n "${INTERVAL:-}" ]]; then
		printf '[cost]\ninterval = "%s"\n' "$INTERVAL" >"$home/config/config.toml"
	fi
	for i in $(seq -w 1 "$n"); do
		MUSTER_HOME=$home "$work/muster" new --detach --name "p$i" -- bash -c 'sleep 100000 & sleep 100000 & wait' >/dev/null
	done
	pid[$mode]=$(MUSTER_HOME=$home "$work/muster" daemon status --json | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' | head -1)
done
sleep 10 # let the launches settle
declare -A t0
for mode in off on; do t0[$mode]=$(ticks "${pid[$mode]}"); done
sleep "$window"
declare -A pct
for mode in off on; do
	d=$(($(ticks "${pid[$mode]}") - t0[$mode]))
	pct[$mode]=$(echo "scale=3; $d * 100 / $tick / $window" | bc)
	printf 'sampling %-3s %d panes: daemon used %d ticks in %d s = %s%% of a core\n' "$mode" "$n" "$d" "$window" "${pct[$mode]}"
done
echo "sampling cost: $(echo "${pct[on]} - ${pct[off]}" | bc)% of a core (processes on the machine: $(ls /proc | grep -c '^[0-9]'))"
MUSTER_HOME="$work/home-on" "$work/muster" ls | head -3
