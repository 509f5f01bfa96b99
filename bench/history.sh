#!/usr/bin/env bash
# bench/history.sh: usage totals of `muster stats --json` against ccusage on
# the same generated Claude Code transcripts, in the same run.
#
#   bash bench/history.sh [SESSIONS] [TURNS]      (defaults 1000 sessions × 40 turns)
#
# It builds muster, generates SESSIONS transcripts under a temporary
# CLAUDE_CONFIG_DIR (each turn: a prompt, an assistant message split over two
# lines sharing message.id with a tool call, its result, and a reply; usage
# on every assistant line, as Claude Code writes it), installs the npm
# package ccusage into a temporary prefix, then times
#   muster stats --json --provider claude   (cold: empty index; warm: second run)
#   ccusage daily --json --offline
#   muster history --search WORDS           (full-text queries on the warm index)
# checks that both report the same token totals, and prints the ratios, the
# peak RSS of each, the p50 of the searches (whole process: start, index
# check, query) and the size of the index against the transcripts'.
# Needs go, node and npm. Nothing outside the temp dir is touched.
set -euo pipefail

sessions=${1:-1000}
turns=${2:-40}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/muster-bench-history.XXXXXX")
trap 'rm -rf "$work"' EXIT

for tool in go node npm; do
	command -v "$tool" >/dev/null || { echo "bench/history.sh: $tool is required" >&2; exit 1; }
done

echo "building muster…" >&2
(cd "$root" && go build -o "$work/muster" ./cmd/muster)

# ccusage 20 ships its engine as a native binary in a per-platform optional
# package, which the registry may publish later than the wrapper: install
# the newest wrapper whose native package exists (CCUSAGE_VERSION overrides).
if [[ -z "${CCUSAGE_VERSION:-}" ]]; then
	platform=$(node -p 'process.platform + "-" + process.arch')
	CCUSAGE_VERSION=$(npm view "@ccusage/ccusage-$platform" version 2>/dev/null || npm view ccusage version)
fi
echo "installing ccusage@$CCUSAGE_VERSION into $work/npm…" >&2
npm install --silent --no-audit --no-fund --prefix "$work/npm" "ccusage@$CCUSAGE_VERSION" >/dev/null
ccusage="$work/npm/node_modules/.bin/ccusage"
ccversion=$(node -p "require('$work/npm/node_modules/ccusage/package.json').version")

echo "generating $sessions sessions × $turns turns…" >&2
export CLAUDE_CONFIG_DIR="$work/claude"
SESSIONS=$sessions TURNS=$turns OUT="$CLAUDE_CONFIG_DIR/projects" node - <<'JS'
const fs = require('fs'), path = require('path');
const n = +process.env.SESSIONS, turns = +process.env.TURNS, out = process.env.OUT;
const models = ['claude-sonnet-4-20250514', 'claude-opus-4-1-20250805', 'claude-3-5-haiku-20241022'];
let seed = 42;
const rnd = (k) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % k; };
const hex = (i, w) => i.toString(16).padStart(w, '0');
let bytes = 0;
for (let s = 0; s < n; s++) {
  const proj = `-home-dev-project-${s % 50}`;
  const cwd = `/home/dev/project-${s % 50}`;
  const id = `${hex(s, 8)}-0000-4000-8000-${hex(s, 12)}`;
  const t0 = Date.UTC(2026, 0, 1) + s * 3600e3;
  const lines = [];
  let u = 0, ts = t0;
  const base = () => ({ parentUuid: null, isSidechain: false, userType: 'external', cwd, sessionId: id, version: '2.0.0',
    uuid: `${id}-${u++}`, timestamp: new Date(ts += 1000).toISOString() });
  for (let t = 0; t < turns; t++) {
    const model = models[rnd(models.length)];
    lines.push({ ...base(), type: 'user', message: { role: 'user', content: `Please change step ${t} of the build so that the tests pass (session ${s}).` } });
    const usage = { input_tokens: 10 + rnd(500), output_tokens: 50 + rnd(2000), cache_creation_input_tokens: rnd(4000), cache_read_input_tokens: rnd(90000) };
    const mid = `msg_${hex(s, 6)}_${t}`, rid = `req_${hex(s, 6)}_${t}`;
    // One API message split over two lines (thinking + tool_use) with the same usage: counted once.
    lines.push({ ...base(), type: 'assistant', requestId: rid, message: { id: mid, type: 'message', role: 'assistant', model,
      content: [{ type: 'thinking', thinking: 'Look at the build file first.', signature: 'sig' }], usage } });
    const tid = `toolu_${hex(s, 6)}_${t}`;
    lines.push({ ...base(), type: 'assistant', requestId: rid, message: { id: mid, type: 'message', role: 'assistant', model,
      content: [{ type: 'tool_use', id: tid, name: 'Edit', input: { file_path: `${cwd}/build/step${t}.go`, old_string: 'a := 1\nb := 2', new_string: 'a := 1\nb := 3\nc := 4' } }], usage } });
    lines.push({ ...base(), type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: tid, content: 'The file has been updated.' }] } });
    const usage2 = { input_tokens: 5 + rnd(50), output_tokens: 20 + rnd(300), cache_creation_input_tokens: 0, cache_read_input_tokens: rnd(90000) };
    lines.push({ ...base(), type: 'assistant', requestId: rid + 'b', message: { id: mid + 'b', type: 'message', role: 'assistant', model,
      content: [{ type: 'text', text: `Step ${t} is done; the tests pass now.` }], usage: usage2 } });
  }
  const dir = path.join(out, proj);
  fs.mkdirSync(dir, { recursive: true });
  const body = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
  bytes += body.length;
  fs.writeFileSync(path.join(dir, `${id}.jsonl`), body);
}
console.error(`generated ${(bytes / 1e6).toFixed(1)} MB`);
JS

export HOME="$work/home"
mkdir -p "$HOME"

# best WALL CPU RSS(KB) of $repeat runs: best_of OUTFILE SETUP CMD...; SETUP
# runs untimed before each run (to empty the index for cold runs).
repeat=${REPEAT:-3}
best_of() {
	local out=$1 setup=$2
	shift 2
	local best="" i
	for ((i = 0; i < repeat; i++)); do
		eval "$setup"
		/usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >"$out"
		read -r wall user sys rss <"$work/time"
		cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
		if [[ -z "$best" ]] || awk -v a="$wall" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
			best="$wall $cpu $rss"
		fi
	done
	echo "$best"
}
command -v /usr/bin/time >/dev/null || { echo "bench/history.sh: /usr/bin/time is required (Debian package time)" >&2; exit 1; }

n=0
cold=$(best_of "$work/muster-cold.json" 'n=$((n+1)); export MUSTER_HOME="$work/muster-home-$n"' "$work/muster" stats --json --provider claude)
# The warm runs' index: their first run fills it (best_of runs in a
# subshell, so the cold runs' MUSTER_HOME does not reach here).
export MUSTER_HOME="$work/muster-home-warm"
"$work/muster" stats --json --provider claude >/dev/null
warm=$(best_of "$work/muster-warm.json" '' "$work/muster" stats --json --provider claude)
hist=$(best_of /dev/null '' "$work/muster" history --json --provider claude --limit 0)
cc=$(best_of "$work/ccusage.json" '' "$ccusage" daily --json --offline)
# Full-text queries: a common phrase, a word said once per session, an id
# fragment, a tool input path, a rare word.
searches=""
for q in "tests pass" "session 4" "step 17" "build step3" "nosuchword"; do
	searches="$searches $(best_of /dev/null '' "$work/muster" history --search "$q" --json --provider claude --limit 50 | cut -d' ' -f1)"
done
db=$(find "$MUSTER_HOME" -name 'muster.db*' -printf '%s\n' | awk '{ s += $1 } END { print s }')
tx=$(find "$CLAUDE_CONFIG_DIR/projects" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')

node - "$work/muster-cold.json" "$work/muster-warm.json" "$work/ccusage.json" "$cold" "$warm" "$hist" "$cc" "$ccversion" "$repeat" "$searches" "$db" "$tx" <<'JS'
const fs = require('fs');
const [mc, mw, cf, coldS, warmS, histS, ccS, ver, repeat, searchS, dbS, txS] = process.argv.slice(2);
const [cold, warm, hist, cc] = [coldS, warmS, histS, ccS].map((s) => s.split(' ').map(Number));
const m = JSON.parse(fs.readFileSync(mc)).total.tokens;
const w = JSON.parse(fs.readFileSync(mw)).total.tokens;
const c = JSON.parse(fs.readFileSync(cf)).totals;
const mine = { input: m.input, output: m.output, cache_write: m.cache_write, cache_read: m.cache_read, total: m.total };
const theirs = { input: c.inputTokens, output: c.outputTokens, cache_write: c.cacheCreationTokens, cache_read: c.cacheReadTokens, total: c.totalTokens };
console.log('token totals       muster            ccusage ' + ver);
let same = true;
for (const k of Object.keys(mine)) {
  const eq = mine[k] === theirs[k] && w[k] === mine[k];
  same = same && eq;
  console.log(`  ${k.padEnd(12)} ${String(mine[k]).padStart(16)} ${String(theirs[k]).padStart(18)}  ${eq ? 'equal' : 'DIFFERENT'}`);
}
const row = (name, [wall, cpu, rss]) => console.log(`  ${name.padEnd(34)} ${wall.toFixed(3).padStart(8)} s wall ${cpu.toFixed(2).padStart(7)} s cpu ${(rss / 1024).toFixed(0).padStart(6)} MB peak RSS`);
console.log(`times (best of ${repeat}):`);
row('muster stats (cold, empty index)', cold);
row('muster stats (warm)', warm);
row('muster history (warm)', hist);
row('ccusage daily --offline', cc);
const r = (a, b) => (a / b).toFixed(1) + 'x';
const searches = searchS.trim().split(/\s+/).map(Number).sort((a, b) => a - b);
console.log(`  muster history --search (p50 of ${searches.length} queries, whole process) ${(searches[searches.length >> 1] * 1000).toFixed(0)} ms wall   (target <= 50 ms for the query)`);
console.log(`index ${(+dbS / 1e6).toFixed(1)} MB for ${(+txS / 1e6).toFixed(1)} MB of transcripts (${(+dbS / +txS).toFixed(2)}x)`);
console.log(`ccusage / muster, wall: cold ${r(cc[0], cold[0])}, warm ${r(cc[0], warm[0])}   cpu: cold ${r(cc[1], cold[1])}, warm ${r(cc[1], warm[1])}   (target >= 10x)`);
if (!same) { console.error('bench/history.sh: token totals differ'); process.exit(1); }
JS
