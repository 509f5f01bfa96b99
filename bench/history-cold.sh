#!/usr/bin/env bash
# bench/history-cold.sh: the history index at scale. It generates SESSIONS
# Claude Code transcripts of about MB megabytes in all, cut from real ones:
# the Claude Code 2.x transcripts in ../shared/research/real-cli (every
# record kind as Claude Code writes it: prompts, replies, tool calls and
# results, attachments, api-request shapes and blobs, file-history
# snapshots, mode lines) and the fixtures of ../shared/fixtures/claude
# (conversations with usage, tool calls and results, todo lists, rewinds
# and compactions, from claude-code-log, ccusage and agentsview). Each
# session is a run of those files' records, one file after another, with
# its own ids, times and words (a tenth of the words of every long text redrawn from a 20,000-word
# vocabulary, so that the index sees as many distinct words as real work
# would); a session in a hundred is 2 MB, the rest 20 to 160 KB. Then
#   muster stats --json --provider claude   on an empty index (cold: every
#                                           file parsed, summarised, analysed
#                                           and indexed for full text), wall,
#                                           CPU and peak RSS
#   muster stats, muster history            warm, whole process
#   searchbench (bench/searchbench)         full-text queries in one process,
#                                           p50 of each and over all
# and the index's size on disk against the transcripts'.
#
#   bash bench/history-cold.sh [SESSIONS] [MB]      (defaults 10000 sessions, 1000 MB)
#
# Needs go and node. Nothing outside the temp dir is touched.
set -euo pipefail

sessions=${1:-10000}
mb=${2:-1000}
root=$(cd "$(dirname "$0")/.." && pwd)
templates="$root/../shared/research/real-cli/claude/transcripts/.claude/projects:$root/../shared/fixtures/claude"
work=$(mktemp -d "${TMPDIR:-/tmp}/muster-bench-history-cold.XXXXXX")
trap 'rm -rf "$work"' EXIT

for tool in go node; do
	command -v "$tool" >/dev/null || { echo "bench/history-cold.sh: $tool is required" >&2; exit 1; }
done
command -v /usr/bin/time >/dev/null || { echo "bench/history-cold.sh: /usr/bin/time is required (Debian package time)" >&2; exit 1; }
for d in ${templates//:/ }; do
	[[ -d "$d" ]] || { echo "bench/history-cold.sh: no real transcripts at $d" >&2; exit 1; }
done

echo "building muster and searchbench…" >&2
(cd "$root" && go build -o "$work/muster" ./cmd/muster && go build -o "$work/searchbench" ./bench/searchbench)

export CLAUDE_CONFIG_DIR="$work/claude" HOME="$work/home" MUSTER_HOME="$work/muster-home"
mkdir -p "$HOME"
echo "generating $sessions sessions, about $mb MB…" >&2
SESSIONS=$sessions MB=$mb TEMPLATES="$templates" OUT="$CLAUDE_CONFIG_DIR/projects" node - <<'JS'
const fs = require('fs'), path = require('path');
const n = +process.env.SESSIONS, total = +process.env.MB * 1e6, out = process.env.OUT, dir = process.env.TEMPLATES;
// The templates: every record of every real transcript, file by file.
const templates = [];
const files = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) =>
  e.isDirectory() ? files(path.join(d, e.name)) : e.name.endsWith('.jsonl') && !e.name.includes('corrupt') ? [path.join(d, e.name)] : []);
for (const f of dir.split(':').flatMap(files)) {
  const recs = [];
  for (const l of fs.readFileSync(f, 'utf8').split('\n')) {
    try { if (l.trim()) recs.push(JSON.parse(l)); } catch { /* an edge-case fixture's broken line */ }
  }
  const sid = recs.find((r) => r.sessionId)?.sessionId;
  const times = recs.map((r) => Date.parse(r.timestamp)).filter((t) => !isNaN(t));
  if (!sid || !times.length || !recs.some((r) => r.type === 'user')) continue;
  templates.push({ recs, sid, t0: Math.min(...times), span: Math.min(Math.max(...times) - Math.min(...times), 3600e3) + 60e3 });
}
console.error(`${templates.length} template transcripts`);
let seed = 7;
const rnd = (k) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % k; };
// A Zipf-like vocabulary: word k drawn with weight 1/(k+1).
const vocab = Array.from({ length: 20000 }, (_, k) => 'term' + k.toString(36));
const zipf = () => vocab[Math.floor(Math.exp(Math.random() * Math.log(vocab.length + 1))) - 1] || vocab[0];
const uuidKeys = new Set(['uuid', 'parentUuid', 'leafUuid', 'messageId', 'promptId', 'sourceToolAssistantUUID', 'logicalParentUuid']);
const hex = (i, w) => i.toString(16).padStart(w, '0');
const small = Math.max(1, Math.round(n / 100));
const bigBytes = 2e6, restMean = Math.max(20e3, (total - small * bigBytes) / Math.max(1, n - small));
let bytes = 0;
for (let s = 0; s < n; s++) {
  const id = `${hex(s, 8)}-1111-4222-8333-${hex(s, 12)}`;
  const cwd = `/home/dev/project-${s % 100}`;
  const marker = `marker${s.toString(36)}x`;
  const target = s % 100 === 0 ? bigBytes : restMean * (0.25 + 1.5 * Math.random());
  let clock = Date.UTC(2026, 0, 1) + s * 37 * 60e3;
  const lines = [];
  let size = 0;
  for (let c = 0; size < target; c++) {
    const tpl = templates[rnd(templates.length)], start = clock - c * tpl.span;
    clock += tpl.span;
    const sfx = `_${s.toString(36)}_${c}`;
    const walk = (v, key) => {
      if (typeof v === 'string') {
        if (v === tpl.sid) return id;
        if (uuidKeys.has(key)) return v + sfx;
        if (key === 'timestamp') { const t = Date.parse(v); return isNaN(t) ? v : new Date(start + c * tpl.span + (t - tpl.t0)).toISOString(); }
        if (key === 'cwd' || key === 'CLAUDE_PROJECT_DIR') return cwd;
        if (v.startsWith('toolu_') || v.startsWith('msg_') || v.startsWith('req_') || key === 'requestId') return v + sfx;
        if (v.length > 40) return v.replace(/[A-Za-z]{4,}/g, (w) => (Math.random() < 0.1 ? zipf() : w));
        return v;
      }
      if (Array.isArray(v)) return v.map((x) => walk(x, key));
      if (v && typeof v === 'object') {
        const o = {};
        for (const [k, x] of Object.entries(v)) o[k] = walk(x, k);
        return o;
      }
      return v;
    };
    for (const r of tpl.recs) {
      // A session may end inside a template, as one cut short does.
      if (size >= target) break;
      const rec = walk(r, '');
      if (rec.type === 'user' && typeof rec.message?.content === 'string') rec.message.content += ` (${marker} round ${c})`;
      const l = JSON.stringify(rec);
      lines.push(l);
      size += l.length + 1;
    }
  }
  const d = path.join(out, `-home-dev-project-${s % 100}`);
  fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(d, id + '.jsonl'), lines.join('\n') + '\n');
  bytes += size;
}
console.error(`generated ${(bytes / 1e6).toFixed(0)} MB in ${n} sessions`);
JS
tx=$(find "$CLAUDE_CONFIG_DIR/projects" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')

timed() { # timed NAME CMD...: one run, "NAME wall cpu rss"
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >"$work/out"
	read -r wall user sys rss <"$work/time"
	awk -v n="$name" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" \
		'BEGIN { printf "  %-44s %8.2f s wall %8.2f s cpu %6.0f MB peak RSS\n", n, w, u + s, r / 1024 }'
}

echo "indexing (cold)…" >&2
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
timed "muster stats (cold: empty index)" "$work/muster" stats --json --provider claude
cp "$work/out" "$work/stats.json"
timed "muster stats (warm)" "$work/muster" stats --json --provider claude
timed "muster history --limit 1 (warm)" "$work/muster" history --json --provider claude --limit 1
timed "muster history --search 'tool result' (warm)" "$work/muster" history --json --provider claude --limit 50 --search "tool result"
db=$(find "$MUSTER_HOME" -name 'history.db*' -printf '%s\n' | awk '{ s += $1 } END { print s }')
# A word one session holds (its prompts' marker), common and rare
# vocabulary words, two words, a word no session holds.
marker=$(node -p "'marker' + ($sessions > 4242 ? 4242 : 1).toString(36) + 'x'")
echo "full-text queries in one process (bench/searchbench):"
"$work/searchbench" -db "$MUSTER_HOME/state/history.db" -n 21 \
	"the" "file" "tool result" "$marker" term1 term7 term500 term3f2 "term9 term12" nosuchword
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
node -e '
const [db, tx, n, f] = process.argv.slice(1);
const r = JSON.parse(require("fs").readFileSync(f));
console.log(`index ${(db / 1e6).toFixed(0)} MB for ${(tx / 1e6).toFixed(0)} MB of transcripts in ${n} sessions (${(db / tx).toFixed(3)}x); the report counted ${r.total.sessions} sessions, ${r.total.tokens.total} tokens`);
' "$db" "$tx" "$sessions" "$work/stats.json"
