#!/usr/bin/env bash
# muster serve's terminal views against muster attach, in one run (issue 26):
# keystroke-to-echo through the page in headless Chromium vs muster attach,
# and CPU and memory with N busy panes each viewed in the page or attached.
# Usage: bench/web.sh [-keys 200] [-rounds 4] [-views 20] [-window 20s] [-phases echo,steps,views]
#        [-chromium /usr/bin/chromium] [-chromium-flags disable-features=X,...]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/muster" ./cmd/muster
go build -o "$bin/webbench" ./bench/webbench
"$bin/webbench" -muster "$bin/muster" "$@"
