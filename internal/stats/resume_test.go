package stats

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// indexClaude writes files (name → content) as Claude Code transcripts in a
// temporary CLAUDE_CONFIG_DIR, indexes them with the real Claude source
// and Analyzer, and returns every session with its analysis.
func indexClaude(t *testing.T, files map[string]string) []history.Analyzed {
	t.Helper()
	dir := t.TempDir()
	env := transcript.Env{Home: filepath.Join(dir, "home"), Getenv: func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return filepath.Join(dir, "claude")
		}
		return ""
	}}
	for name, body := range files {
		p := filepath.Join(dir, "claude", "projects", "-src-app", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := history.Open(t.Context(), filepath.Join(dir, "muster.db"), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	st, err := idx.Refresh(t.Context(), []transcript.Source{all.Source("claude")}, env, history.RefreshOptions{Analyzer: Analyzer()})
	if err != nil || len(st.Errors) > 0 {
		t.Fatalf("refresh: %v %v", err, st.Errors)
	}
	ss, err := idx.ListAnalyzed(t.Context(), history.Query{IncludeSubagents: true, IncludeEmpty: true}, AnalyzerVersion)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

func readFixture(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(providertest.Shared, "fixtures", rel))
	if err != nil {
		t.Fatalf("fixture %s: %v", rel, err)
	}
	return string(b)
}

// TestResumedConversationCountsOnce: a Claude Code file that continues a
// conversation by repeating its records (`--resume` before 2.1, and
// `--fork-session`, write a new session file starting with a copy of the
// old one) adds only its new responses, whichever file is listed first; the
// totals equal ccusage's on the same two files.
func TestResumedConversationCountsOnce(t *testing.T) {
	orig := readFixture(t, "claude/claude-code-log/representative_messages.jsonl")
	alone := indexClaude(t, map[string]string{"11111111-0000-4000-8000-000000000001.jsonl": orig})
	before, err := Compute(t.Context(), alone, ByNone, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if before.Total.Tokens.Total == 0 || before.Duplicates != 0 {
		t.Fatalf("fixture alone: %+v", before.Total.Tokens)
	}
	// The resume file: the old records under the new session id, then a
	// new turn.
	copied := strings.TrimSuffix(orig, "\n") + "\n"
	copied = strings.ReplaceAll(copied, `"sessionId": "test_session"`, `"sessionId": "22222222-0000-4000-8000-000000000002"`)
	extra := `{"type":"assistant","timestamp":"2025-06-15T09:00:00Z","sessionId":"22222222-0000-4000-8000-000000000002","uuid":"n1","requestId":"req_new","message":{"id":"msg_new","type":"message","role":"assistant","model":"claude-3-sonnet-20240229","content":[{"type":"text","text":"Resumed."}],"usage":{"input_tokens":7,"output_tokens":11,"cache_read_input_tokens":13,"cache_creation_input_tokens":17}}}` + "\n"
	both := indexClaude(t, map[string]string{
		"11111111-0000-4000-8000-000000000001.jsonl": orig,
		"22222222-0000-4000-8000-000000000002.jsonl": copied + extra,
	})
	if len(both) != 2 {
		t.Fatalf("%d sessions, want 2", len(both))
	}
	after, err := ComputeWith(t.Context(), both, Options{By: ByDay, Loc: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	want := before.Total.Tokens
	want.Input += 7
	want.Output += 11
	want.CacheRead += 13
	want.CacheWrite += 17
	want.Total += 48
	if after.Total.Tokens != want {
		t.Errorf("tokens %+v, want %+v (the copy counted again?)", after.Total.Tokens, want)
	}
	keyed := strings.Count(orig, `"requestId"`)
	if after.Duplicates == 0 || after.Duplicates > keyed {
		t.Errorf("%d duplicates dropped, want 1..%d", after.Duplicates, keyed)
	}
	// The repeats keep their own dates: the new turn alone is on June 15.
	var june15 TokenCounts
	for _, g := range after.Groups {
		if g.Key == "2025-06-15" {
			june15 = g.Tokens
		}
	}
	if june15.Total != 48 {
		t.Errorf("2025-06-15 tokens %+v, want the new turn's 48", june15)
	}
	bySession, _ := Compute(t.Context(), both, BySession, time.UTC)
	var sum int64
	for _, g := range bySession.Groups {
		sum += g.Tokens.Total
	}
	if len(bySession.Groups) != 2 || sum != want.Total {
		t.Errorf("per-session tokens sum to %d over %d groups, want %d over 2", sum, len(bySession.Groups), want.Total)
	}
}

// TestDedupeProperty: however responses are copied between files (resumes
// of resumes, forks, a sub-agent's messages echoed in its parent), each
// distinct message id + request id counts once, and responses without ids
// always count.
func TestDedupeProperty(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		type resp struct {
			line   string
			tokens int64
		}
		var pool []resp
		files := map[string]string{}
		var want int64
		base := time.Date(2026, 2, 1, 8, 0, 0, 0, time.UTC)
		nfiles := 1 + rng.IntN(5)
		for f := range nfiles {
			sid := fmt.Sprintf("%08d-0000-4000-8000-%012d", seed, f)
			var b bytes.Buffer
			// Copy a random subset of earlier responses, as a resume does.
			for _, r := range pool {
				if rng.IntN(2) == 0 {
					b.WriteString(r.line)
				}
			}
			for i := range 1 + rng.IntN(6) {
				n := int64(1 + rng.IntN(1000))
				id := fmt.Sprintf(`"msg_%d_%d"`, f, i)
				req := fmt.Sprintf(`"requestId":"req_%d_%d",`, f, i)
				if rng.IntN(5) == 0 {
					req = "" // no request id: never a duplicate
				}
				line := fmt.Sprintf(`{"type":"assistant","timestamp":%q,"sessionId":%q,%s"message":{"id":%s,"role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"r"}],"usage":{"input_tokens":%d,"output_tokens":1}}}`+"\n",
					base.Add(time.Duration(f*100+i)*time.Minute).Format(time.RFC3339), sid, req, id, n)
				b.WriteString(line)
				if req != "" {
					pool = append(pool, resp{line, n + 1})
					want += n + 1
				} else {
					want += n + 1
					// Repeats of an id-less line count each time.
					if rng.IntN(2) == 0 {
						b.WriteString(line)
						want += n + 1
					}
				}
			}
			files[sid+".jsonl"] = b.String()
		}
		r, err := Compute(t.Context(), indexClaude(t, files), ByNone, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		if r.Total.Tokens.Total != want {
			t.Fatalf("seed %d: %d tokens, want %d; files:\n%s", seed, r.Total.Tokens.Total, want, dump(files))
		}
	}
}

func dump(files map[string]string) string {
	var b strings.Builder
	for name, body := range files {
		fmt.Fprintf(&b, "== %s\n", name)
		sc := bufio.NewScanner(strings.NewReader(body))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			b.WriteString(sc.Text()[:min(len(sc.Text()), 160)] + "\n")
		}
	}
	return b.String()
}

// TestRepeatsAcrossManySessions: with thousands of responses, most of them
// repeated by other files in a random order of starts, each response
// counts once, in the earliest-starting session that holds it, whatever
// the filter that screens keys for repeats lets through.
func TestRepeatsAcrossManySessions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	const pool = 3000
	usage := func(k int) transcript.Usage { return transcript.Usage{Input: int64(k + 1), Output: 1} }
	var sessions []history.Analyzed
	for s := range 200 {
		start := t0.Add(time.Duration(rng.IntN(100000)) * time.Second)
		var log []transcript.UsageEntry
		seen := map[int]bool{}
		for range 60 {
			k := rng.IntN(pool)
			if seen[k] {
				continue
			}
			seen[k] = true
			log = append(log, transcript.UsageEntry{Key: fmt.Sprintf("msg_%d:req_%d", k, k), Time: start, Model: "claude-sonnet-4-20250514", Usage: usage(k)})
		}
		sessions = append(sessions, analyzedLog(transcript.Session{Provider: "claude", ID: fmt.Sprintf("s%d", s), PromptCount: 1,
			StartedAt: start, Path: fmt.Sprintf("/p/%03d.jsonl", s)}, Detail{}, log))
	}
	// By hand: in order of start, a key seen before is a repeat.
	order := slices.Clone(sessions)
	slices.SortStableFunc(order, func(a, b history.Analyzed) int { return a.Session.StartedAt.Compare(b.Session.StartedAt) })
	counted := map[string]bool{}
	var want transcript.Usage
	dups := 0
	for _, a := range order {
		var d detailView
		if !decodeFull(&d, a.Full) {
			t.Fatal("full analysis unreadable")
		}
		for _, e := range d.entries {
			k := fmt.Sprint(e.key)
			if counted[k] {
				dups++
				continue
			}
			counted[k] = true
			want.Add(e.u)
		}
	}
	r, err := Compute(t.Context(), sessions, ByNone, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if r.Duplicates != dups || dups == 0 || r.Total.Tokens.Input != want.Input || r.Total.Tokens.Output != want.Output {
		t.Errorf("duplicates %d, tokens %+v; want %d duplicates, input %d, output %d", r.Duplicates, r.Total.Tokens, dups, want.Input, want.Output)
	}
}
