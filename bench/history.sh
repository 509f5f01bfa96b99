#!/usr/bin/env bash
# bench/history.sh: `muster stats` against ccusage on the same generated
# Claude Code transcripts, in the same run: the same numbers, field by
# field, and how much faster.
#
#   bash bench/history.sh [SESSIONS] [TURNS]      (defaults 1000 sessions × 40 turns)
#
# It builds muster, generates SESSIONS transcripts under a temporary
# CLAUDE_CONFIG_DIR (each turn: a prompt, an assistant message split over two
# lines sharing message.id with a tool call, its result, and a reply; usage
# on every assistant line, as Claude Code writes it), installs the npm
# package ccusage into a temporary prefix, then times
#   muster stats --json --provider claude --by day  (cold: empty index; warm)
#   ccusage daily --json --offline
#   muster stats --json --provider claude --by block, ccusage blocks --json --offline
#   muster history --search WORDS           (full-text queries on the warm index)
# and compares, in the time zone $TZ (default Asia/Kolkata, half an hour off
# UTC's hours), every day of the daily report and every 5-hour block:
# input, output, cache write and cache read tokens, cost, and per block
# the responses. A price probe then writes one response per model of
# muster's price table (`muster stats --prices`) and per token kind, and
# compares muster's price of each with ccusage's: Claude models must agree
# on all four; other vendors' on input, output and cache read (ccusage
# prices a Claude-format cache write of a model without one at 1.25 times
# input; their own formats record none), and where ccusage's model lookup
# lands elsewhere the line says so. A model neither knows must come out
# unpriced. Any mismatch exits 1 after the report. It prints the ratios, the
# peak RSS of each, the p50 of the searches (whole process: start, index
# check, query) and the size of the index against the transcripts'. Each
# time is the best of REPEAT runs (default 3); muster and ccusage take
# turns, run for run, in the warm comparisons.
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
export TZ=${TZ:-Asia/Kolkata}

# best WALL CPU RSS(KB) of $repeat runs: best_of OUTFILE SETUP CMD...; SETUP
# runs untimed before each run (to empty the index for cold runs). The wall
# time is the shell's, to the microsecond (time's %e counts hundredths, a
# tenth of a warm muster run); CPU and peak RSS are time's.
repeat=${REPEAT:-3}
best_of() {
	local out=$1 setup=$2
	shift 2
	local best="" i start end wall
	for ((i = 0; i < repeat; i++)); do
		eval "$setup"
		start=$EPOCHREALTIME
		/usr/bin/time -f "%U %S %M" -o "$work/time" "$@" >"$out"
		end=$EPOCHREALTIME
		wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }')
		read -r user sys rss <"$work/time"
		cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
		best=$(better "$best" "$wall $cpu $rss")
	done
	echo "$best"
}
# better A B: the one of two best_of results with the lower wall time.
better() {
	if [[ -z "$1" ]] || awk -v a="${2%% *}" -v b="${1%% *}" 'BEGIN { exit !(a < b) }'; then
		echo "$2"
	else
		echo "$1"
	fi
}
command -v /usr/bin/time >/dev/null || { echo "bench/history.sh: /usr/bin/time is required (Debian package time)" >&2; exit 1; }

n=0
cold=$(best_of "$work/muster-cold.json" 'n=$((n+1)); export MUSTER_HOME="$work/muster-home-$n"' "$work/muster" stats --json --provider claude --by day)
# The warm runs' index: their first run fills it (best_of runs in a
# subshell, so the cold runs' MUSTER_HOME does not reach here).
export MUSTER_HOME="$work/muster-home-warm"
"$work/muster" stats --json --provider claude >/dev/null
# The warm comparisons take turns, one run of each tool a round, so that
# a change in the machine's load (it is shared) falls on both alike.
warm="" mblocks="" cc="" ccblocks=""
for ((round = 0; round < repeat; round++)); do
	warm=$(better "$warm" "$(repeat=1 best_of "$work/muster-warm.json" '' "$work/muster" stats --json --provider claude --by day)")
	cc=$(better "$cc" "$(repeat=1 best_of "$work/ccusage.json" '' "$ccusage" daily --json --offline -z "$TZ")")
	mblocks=$(better "$mblocks" "$(repeat=1 best_of "$work/muster-blocks.json" '' "$work/muster" stats --json --provider claude --by block)")
	ccblocks=$(better "$ccblocks" "$(repeat=1 best_of "$work/ccusage-blocks.json" '' "$ccusage" blocks --json --offline -z "$TZ")")
done
hist=$(best_of /dev/null '' "$work/muster" history --json --provider claude --limit 0)
# Full-text queries: a common phrase, a word said once per session, an id
# fragment, a tool input path, a rare word.
searches=""
for q in "tests pass" "session 4" "step 17" "build step3" "nosuchword"; do
	searches="$searches $(best_of /dev/null '' "$work/muster" history --search "$q" --json --provider claude --limit 50 | cut -d' ' -f1)"
done
db=$(find "$MUSTER_HOME" -name 'history.db*' -printf '%s\n' | awk '{ s += $1 } END { print s }')
tx=$(find "$CLAUDE_CONFIG_DIR/projects" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')

# The price probe: one response per model and token kind, each kind on its
# own day, and one of a model no table has.
probe="$work/probe"
"$work/muster" stats --prices --json >"$work/prices.json"
PRICES="$work/prices.json" OUT="$probe/claude/projects/-probe" node - <<'JS'
const fs = require('fs'), path = require('path');
const models = Object.keys(JSON.parse(fs.readFileSync(process.env.PRICES)).models).concat(['claude-nosuch-9-20990101']);
const kinds = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'];
const id = '99999999-0000-4000-8000-000000000000', cwd = '/probe';
const lines = [{ type: 'user', cwd, sessionId: id, uuid: 'p', timestamp: '2026-01-01T06:00:00.000Z', message: { role: 'user', content: 'price probe' } }];
models.forEach((model, i) => kinds.forEach((k, j) => {
  const usage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  usage[k] = 100000;
  lines.push({ parentUuid: null, isSidechain: false, userType: 'external', cwd, sessionId: id, version: '2.0.0', uuid: `u${i}_${j}`,
    timestamp: new Date(Date.UTC(2026, 0, 1 + j, 6, i)).toISOString(), type: 'assistant', requestId: `req_${i}_${j}`,
    message: { id: `msg_${i}_${j}`, type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'ok' }], usage } });
}));
fs.mkdirSync(process.env.OUT, { recursive: true });
fs.writeFileSync(path.join(process.env.OUT, id + '.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
JS
CLAUDE_CONFIG_DIR="$probe/claude" MUSTER_HOME="$probe/muster-home" TZ=UTC "$work/muster" stats --json --by day >"$work/probe-muster.json"
CLAUDE_CONFIG_DIR="$probe/claude" "$ccusage" daily --json --offline -z UTC >"$work/probe-ccusage.json"

node - "$work" "$cold" "$warm" "$mblocks" "$hist" "$cc" "$ccblocks" "$ccversion" "$repeat" "$searches" "$db" "$tx" <<'JS'
const fs = require('fs');
const [work, coldS, warmS, mblocksS, histS, ccS, ccblocksS, ver, repeat, searchS, dbS, txS] = process.argv.slice(2);
const [cold, warm, mblocks, hist, cc, ccblocks] = [coldS, warmS, mblocksS, histS, ccS, ccblocksS].map((s) => s.split(' ').map(Number));
const read = (f) => JSON.parse(fs.readFileSync(`${work}/${f}`));
let bad = 0;
const fail = (msg) => { bad++; console.log('  MISMATCH ' + msg); };
const near = (a, b) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b));
const fields = [['input', 'inputTokens'], ['output', 'outputTokens'], ['cache_write', 'cacheCreationTokens'], ['cache_read', 'cacheReadTokens'], ['total', 'totalTokens']];

// Totals, then day by day.
const mc = read('muster-cold.json'), mw = read('muster-warm.json'), c = read('ccusage.json');
console.log(`token totals (TZ ${process.env.TZ})  muster            ccusage ${ver}`);
for (const [k, ck] of fields) {
  const eq = mw.total.tokens[k] === c.totals[ck] && mc.total.tokens[k] === mw.total.tokens[k];
  console.log(`  ${k.padEnd(12)} ${String(mw.total.tokens[k]).padStart(16)} ${String(c.totals[ck]).padStart(18)}  ${eq ? 'equal' : 'DIFFERENT'}`);
  if (!eq) fail(`total ${k}`);
}
console.log(`  ${'cost USD'.padEnd(12)} ${mw.total.cost_usd.toFixed(6).padStart(16)} ${c.totals.totalCost.toFixed(6).padStart(18)}  ${near(mw.total.cost_usd, c.totals.totalCost) ? 'equal' : 'DIFFERENT'}`);
if (!near(mw.total.cost_usd, c.totals.totalCost)) fail('total cost');
const days = new Map(mw.groups.map((g) => [g.key, g]));
let dayOK = 0;
for (const d of c.daily) {
  const g = days.get(d.period);
  days.delete(d.period);
  if (!g) { fail(`day ${d.period}: not in muster's report`); continue; }
  let ok = true;
  for (const [k, ck] of fields) if (g.tokens[k] !== d[ck]) { ok = false; fail(`day ${d.period} ${k}: muster ${g.tokens[k]}, ccusage ${d[ck]}`); }
  if (!near(g.cost_usd, d.totalCost)) { ok = false; fail(`day ${d.period} cost: muster ${g.cost_usd}, ccusage ${d.totalCost}`); }
  dayOK += ok;
}
for (const k of days.keys()) fail(`day ${k}: not in ccusage's report`);
console.log(`daily report: ${dayOK} of ${c.daily.length} days equal in input, output, cache write, cache read, total tokens and cost`);

// 5-hour blocks.
const mb = read('muster-blocks.json').blocks || [], cb = read('ccusage-blocks.json').blocks.filter((b) => !b.isGap);
const bfields = [['input', 'inputTokens'], ['output', 'outputTokens'], ['cache_write', 'cacheCreationInputTokens'], ['cache_read', 'cacheReadInputTokens']];
let blockOK = 0;
if (mb.length !== cb.length) fail(`blocks: muster ${mb.length}, ccusage ${cb.length}`);
for (let i = 0; i < Math.min(mb.length, cb.length); i++) {
  const m = mb[i], b = cb[i];
  let ok = true;
  const at = b.startTime;
  if (Date.parse(m.start) !== Date.parse(b.startTime)) { ok = false; fail(`block ${i} start: muster ${m.start}, ccusage ${b.startTime}`); }
  if (m.responses !== b.entries) { ok = false; fail(`block ${at} responses: muster ${m.responses}, ccusage ${b.entries}`); }
  for (const [k, ck] of bfields) if (m.tokens[k] !== b.tokenCounts[ck]) { ok = false; fail(`block ${at} ${k}: muster ${m.tokens[k]}, ccusage ${b.tokenCounts[ck]}`); }
  if (!near(m.cost_usd, b.costUSD)) { ok = false; fail(`block ${at} cost: muster ${m.cost_usd}, ccusage ${b.costUSD}`); }
  blockOK += ok;
}
console.log(`5-hour blocks: ${blockOK} of ${cb.length} blocks equal in start, responses, input, output, cache write, cache read tokens and cost`);

// Prices, model by model and kind by kind (one kind a day, 100k tokens).
const table = read('prices.json'), pm = read('probe-muster.json'), pc = read('probe-ccusage.json');
console.log(`price table as of ${table.as_of}, against ccusage's embedded prices (USD per million tokens: input, output, cache read, cache write):`);
const kinds = ['input', 'output', 'cache_read', 'cache_write'];
const theirs = {};
pc.daily.sort((a, b) => a.period.localeCompare(b.period)).forEach((d, j) => {
  for (const b of d.modelBreakdowns) (theirs[b.modelName] ??= [0, 0, 0, 0])[j] = +(b.cost * 10).toFixed(6);
});
let priceOK = 0, priceN = 0;
for (const [model, p] of Object.entries(table.models)) {
  const mine = [p.input, p.output, p.cache_read, p.cache_write], cp = theirs[model] || [0, 0, 0, 0];
  const claude = model.startsWith('claude-');
  const diff = kinds.filter((k, j) => (claude || k !== 'cache_write') && !near(mine[j], cp[j]));
  const line = `  ${model.padEnd(22)} muster ${JSON.stringify(mine).padEnd(26)} ccusage ${JSON.stringify(cp)}`;
  if (claude) {
    priceN++;
    if (diff.length) fail(`price of ${model} (${diff.join(', ')}): muster ${JSON.stringify(mine)}, ccusage ${JSON.stringify(cp)}`);
    else priceOK++;
  } else if (diff.length) {
    console.log(line + `  differs in ${diff.join(', ')} (ccusage's lookup of a non-Claude name in Claude data; muster keeps the vendor's list price)`);
  }
}
const nosuch = 'claude-nosuch-9-20990101';
const unpriced = pm.total.unpriced_models || [];
if (!unpriced.includes(nosuch)) fail(`${nosuch} is not reported unpriced by muster (unpriced: ${unpriced})`);
console.log(`  ${priceOK} of ${priceN} Claude models priced as ccusage prices them in all four kinds; ${nosuch} ${unpriced.includes(nosuch) ? 'reported unpriced' : 'NOT reported unpriced'} (${pm.total.unpriced_tokens} tokens), ccusage cost ${(theirs[nosuch] || [0]).join('/')}`);

const row = (name, [wall, cpu, rss]) => console.log(`  ${name.padEnd(38)} ${wall.toFixed(3).padStart(8)} s wall ${cpu.toFixed(2).padStart(7)} s cpu ${(rss / 1024).toFixed(0).padStart(6)} MB peak RSS`);
console.log(`times (best of ${repeat}, load ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}):`);
row('muster stats --by day (cold, empty index)', cold);
row('muster stats --by day (warm)', warm);
row('ccusage daily --offline', cc);
row('muster stats --by block (warm)', mblocks);
row('ccusage blocks --offline', ccblocks);
row('muster history (warm)', hist);
const r = (a, b) => (a / b).toFixed(1) + 'x';
const searches = searchS.trim().split(/\s+/).map(Number).sort((a, b) => a - b);
console.log(`  muster history --search (p50 of ${searches.length} queries, whole process) ${(searches[searches.length >> 1] * 1000).toFixed(0)} ms wall   (target <= 50 ms for the query)`);
console.log(`index ${(+dbS / 1e6).toFixed(1)} MB for ${(+txS / 1e6).toFixed(1)} MB of transcripts (${(+dbS / +txS).toFixed(2)}x)`);
console.log(`ccusage daily / muster stats --by day: wall cold ${r(cc[0], cold[0])}, warm ${r(cc[0], warm[0])}   cpu cold ${r(cc[1], cold[1])}, warm ${r(cc[1], warm[1])}   (target >= 10x warm)`);
console.log(`ccusage blocks / muster stats --by block (warm): wall ${r(ccblocks[0], mblocks[0])}   cpu ${r(ccblocks[1], mblocks[1])}`);
if (bad) { console.error(`bench/history.sh: ${bad} mismatch(es) between muster and ccusage`); process.exit(1); }
JS
