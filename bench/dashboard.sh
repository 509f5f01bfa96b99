#!/usr/bin/env bash
# bench/dashboard.sh: CPU of the dashboard process while 20 panes stream
# output, with the preview on (issue 12; target <= 5% of a core).
#
#   bash bench/dashboard.sh [-panes 20] [-secs 30] [-size 160x48] [-idle]
#
# With -idle the panes print one line and then nothing: what the dashboard
# costs while nothing happens (it is pushed changes, it polls nothing).
#
# It builds muster, starts a daemon under a temporary MUSTER_HOME and HOME,
# starts PANES sessions that each print a coloured line every 10 ms, opens
# the dashboard in a tmux server of its own (at SIZE, where the preview sits
# beside the list) with the first streaming session selected, checks that the
# preview shows it, then reads the dashboard's utime+stime from /proc before
# and after SECS seconds. The daemon's CPU over the same window is printed
# for context. Needs go, tmux and perl. Nothing outside the temp dirs is touched.
set -euo pipefail

panes=20 secs=30 size=160x48 idle=0
while (($#)); do
	case $1 in
	-idle) idle=1; shift ;;
	-panes) panes=$2; shift 2 ;;
	-secs) secs=$2; shift 2 ;;
	-size) size=$2; shift 2 ;;
	*) echo "usage: bench/dashboard.sh [-panes N] [-secs S] [-size WxH] [-idle]" >&2; exit 2 ;;
	esac
done
command -v tmux >/dev/null || { echo "bench/dashboard.sh needs tmux (apt-get install -y tmux)" >&2; exit 1; }
command -v perl >/dev/null || { echo "bench/dashboard.sh needs perl" >&2; exit 1; }
root=$(cd "$(dirname "$0")/.." && pwd)
# Socket paths must stay short.
work=$(mktemp -d /tmp/mdb.XXXXXX)
sock=mdb-$$
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	"$work/muster" daemon stop --force >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

echo "building muster…" >&2
(cd "$root" && go build -o "$work/muster" ./cmd/muster)
m=$work/muster
export MUSTER_HOME=$work/m HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_RUNTIME_DIR= TMUX=
mkdir -p "$HOME"

echo "starting $panes streaming panes…" >&2
# perl, so that no line costs a fork: on a loaded machine a shell loop
# forking sleep and date printed a fraction of its lines.
cat >"$work/stream.pl" <<'PL'
$| = 1;
my $i = 0;
while (1) {
	$i++;
	printf "%s line %d \e[32mok\e[m %.6f\n", $ARGV[0], $i, time;
	sleep if $ARGV[1];
	select(undef, undef, undef, 0.01);
}
PL
for ((i = 0; i < panes; i++)); do
	name=$(printf 'stream-%02d' "$i")
	"$m" new --name "$name" --detach --dir "$work" --cmd "perl $work/stream.pl $name $idle" >/dev/null
done

cols=${size%x*} rows=${size#*x}
tmux -L "$sock" -f /dev/null new-session -d -s d -x "$cols" -y "$rows" "$m"
screen() { tmux -L "$sock" capture-pane -p -t d; }
for ((i = 0; i < 300; i++)); do
	if screen | grep -q "preview · stream-00" && screen | grep -q "stream-00 line"; then
		break
	fi
	sleep 0.1
done
screen | grep -q "preview · stream-00" || { echo "bench/dashboard.sh: the dashboard shows no preview of stream-00:" >&2; screen >&2; exit 1; }

dash=$(tmux -L "$sock" display -p -t d '#{pane_pid}')
daemon=$("$m" daemon status --json | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' | head -1)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
d0=$(ticks "$dash") m0=$(ticks "$daemon") t0=$(date +%s.%N)
before=$(screen | grep -o 'stream-00 line [0-9]*' | tail -1)
sleep "$secs"
d1=$(ticks "$dash") m1=$(ticks "$daemon") t1=$(date +%s.%N)
after=$(screen | grep -o 'stream-00 line [0-9]*' | tail -1)
if ((idle)); then
	[[ "$before" == "$after" ]] || { echo "bench/dashboard.sh: an idle pane printed ($before, then $after)" >&2; exit 1; }
else
	[[ "$before" != "$after" ]] || { echo "bench/dashboard.sh: the preview did not move ($before)" >&2; exit 1; }
fi

awk -v d="$((d1 - d0))" -v m="$((m1 - m0))" -v hz="$hz" -v t0="$t0" -v t1="$t1" -v n="$panes" -v idle="$idle" -v size="$size" -v b="$before" -v a="$after" 'BEGIN {
	wall = t1 - t0
	if (idle) printf "%d idle panes, dashboard at %s with the preview on, %.1f s:\n", n, size, wall
	else printf "%d panes streaming a line every 10 ms each, dashboard at %s with the preview on, %.1f s:\n", n, size, wall
	printf "  preview moved from \"%s\" to \"%s\"\n", b, a
	printf "  dashboard CPU  %5.2f%% of a core (target <= 5%%)\n", 100 * d / hz / wall
	printf "  daemon CPU     %5.2f%% of a core (for context: it runs the emulators)\n", 100 * m / hz / wall
}'
