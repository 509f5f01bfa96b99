package stats

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/transcript"
)

func use(tool, id string, input any) transcript.Item {
	raw, _ := json.Marshal(input)
	return transcript.Item{Kind: transcript.ToolUse, Tool: tool, CallID: id, Input: raw}
}

func result(id string, isErr bool) transcript.Item {
	return transcript.Item{Kind: transcript.ToolResult, CallID: id, IsError: isErr}
}

func TestAnalyze(t *testing.T) {
	tr := &transcript.Transcript{Session: transcript.Session{CWD: "/src/app"}, Items: []transcript.Item{
		{Kind: transcript.UserPrompt, Text: "go"},
		use("Edit", "1", map[string]string{"file_path": "/src/app/a.go", "old_string": "a\nb\nc", "new_string": "a\nB\nc\nd"}),
		result("1", false),
		use("Edit", "2", map[string]string{"file_path": "/src/app/a.go", "old_string": "zzz", "new_string": "yyy"}),
		result("2", true), // old string not found: no edit
		use("MultiEdit", "3", map[string]any{"file_path": "/src/app/b.go", "edits": []map[string]string{
			{"old_string": "x", "new_string": "x1\nx2"}, {"old_string": "y\nz", "new_string": ""}}}),
		use("Write", "4", map[string]string{"file_path": "/src/app/new.txt", "content": "1\n2\n3\n"}),
		use("ApplyPatch", "5", map[string]string{"patch": "*** Begin Patch\n*** Update File: c.py\n@@\n-old\n+new\n+more\n*** Add File: d/e.md\n+# hi\n*** End Patch"}),
		use("Bash", "6", map[string]string{"command": "ls"}),
		result("6", true),
		{Kind: transcript.ToolUse, RawTool: "memory_search", CallID: "7"},
	}}
	got := Analyze(tr)
	want := Detail{
		Tools:      map[string]int{"Edit": 2, "MultiEdit": 1, "Write": 1, "ApplyPatch": 1, "Bash": 1, "memory_search": 1},
		ToolErrors: 2,
		Files: map[string]FileChange{
			"/src/app/a.go":    {Edits: 1, Added: 2, Removed: 1},
			"/src/app/b.go":    {Edits: 1, Added: 2, Removed: 3},
			"/src/app/new.txt": {Edits: 1, Added: 3},
			"/src/app/c.py":    {Edits: 1, Added: 2, Removed: 1},
			"/src/app/d/e.md":  {Edits: 1, Added: 1},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Analyze (-want +got):\n%s", diff)
	}
}

func TestNormalizeAndCost(t *testing.T) {
	tests := []struct {
		model string
		key   string
		u     transcript.Usage
		cost  float64
		ok    bool
	}{
		{"claude-sonnet-4-20250514", "claude-sonnet-4", transcript.Usage{Input: 1_000_000, Output: 1_000_000, CacheRead: 1_000_000, CacheWrite: 1_000_000}, 3 + 15 + 0.30 + 3.75, true},
		{"claude-opus-4-5-20251101", "claude-opus-4-5", transcript.Usage{Input: 2000, Output: 1000}, (2000*5 + 1000*25) / 1e6, true},
		{"anthropic/claude-haiku-4-5[1m]", "claude-haiku-4-5", transcript.Usage{Output: 500_000}, 2.5, true},
		{"gpt-5", "gpt-5", transcript.Usage{Input: 1_000_000, CacheRead: 1_000_000, Output: 100_000, Reasoning: 50_000}, 1.25 + 0.125 + 1.0, true},
		{"Gemini-2.5-Pro", "gemini-2.5-pro", transcript.Usage{Input: 1_000_000}, 1.25, true},
		{"codex-mini-latest", "codex-mini", transcript.Usage{Output: 1_000_000}, 6, true},
		{"claude-opus-5-5", "claude-opus-5-5", transcript.Usage{Input: 10}, 0, false},
		{"", "", transcript.Usage{Input: 10}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			if got := NormalizeModel(tt.model); got != tt.key {
				t.Errorf("NormalizeModel = %q, want %q", got, tt.key)
			}
			c, ok := Cost(tt.model, tt.u)
			if ok != tt.ok || math.Abs(c-tt.cost) > 1e-9 {
				t.Errorf("Cost = %v %v, want %v %v", c, ok, tt.cost, tt.ok)
			}
		})
	}
}

func analyzed(s transcript.Session, d Detail) history.Analyzed {
	return analyzedLog(s, d, nil)
}

// analyzedLog is s analysed as Analyzer does, with log as its usage log.
func analyzedLog(s transcript.Session, d Detail, log []transcript.UsageEntry) history.Analyzed {
	brief, full := encodeAnalysis(d, usageLog(s, log), s.CostUSD)
	return history.Analyzed{Session: s, Brief: brief, Full: full}
}

func TestCompute(t *testing.T) {
	day1 := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC) // March 2 in UTC+1
	day2 := time.Date(2026, 3, 3, 10, 0, 0, 0, time.UTC)
	sessions := []history.Analyzed{
		analyzed(transcript.Session{Provider: "claude", ID: "a", Model: "claude-sonnet-4-20250514", PromptCount: 3,
			StartedAt: day1, EndedAt: day1.Add(10 * time.Minute),
			Usage: &transcript.Usage{Input: 1000, Output: 2000, CacheRead: 3000, CacheWrite: 400},
			UsageByModel: map[string]transcript.Usage{
				"claude-sonnet-4-20250514":  {Input: 900, Output: 1900, CacheRead: 3000, CacheWrite: 400},
				"claude-3-5-haiku-20241022": {Input: 100, Output: 100},
			}},
			Detail{Tools: map[string]int{"Bash": 2, "Edit": 1}, ToolErrors: 1, Files: map[string]FileChange{"/x/a.go": {1, 5, 2}}}),
		analyzed(transcript.Session{Provider: "codex", ID: "b", Model: "gpt-5", PromptCount: 1,
			StartedAt: day2, EndedAt: day2.Add(time.Minute),
			Usage: &transcript.Usage{Input: 1_000_000, Output: 10, Reasoning: 5}},
			Detail{Tools: map[string]int{"Bash": 1, "ApplyPatch": 1}, Files: map[string]FileChange{"/x/a.go": {1, 1, 1}, "/x/b.go": {1, 3, 0}}}),
		analyzed(transcript.Session{Provider: "opencode", ID: "c", Model: "mystery-1", PromptCount: 2, CostUSD: 0.5,
			StartedAt: day2, Usage: &transcript.Usage{Input: 7}}, Detail{}),
		{Session: transcript.Session{Provider: "muse", ID: "d", PromptCount: 4, ToolCallCount: 6}}, // not analyzed
	}
	utc1 := time.FixedZone("UTC+1", 3600)
	r, err := Compute(t.Context(), sessions, ByNone, utc1)
	if err != nil {
		t.Fatal(err)
	}
	tot := r.Total
	wantCost := (900*3+1900*15+3000*0.30+400*3.75)/1e6 + (100*0.8+100*4)/1e6 + (1_000_000*1.25+10*10)/1e6 + 0.5
	if tot.Sessions != 4 || tot.Prompts != 10 || tot.ToolCalls != 5+6 || tot.ToolErrors != 1 ||
		tot.FilesEdited != 2 || tot.LinesAdded != 9 || tot.LinesRemoved != 3 || tot.DurationMS != 11*60*1000 ||
		tot.Tokens.Total != 6400+1_000_010+7 || tot.Tokens.Reasoning != 5 || math.Abs(tot.CostUSD-wantCost) > 1e-9 ||
		len(tot.UnpricedModels) != 0 || r.Unanalyzed != 1 {
		t.Errorf("total = %+v (unanalyzed %d), cost want %v", tot, r.Unanalyzed, wantCost)
	}
	if tot.Tools["Bash"] != 3 || tot.Tools["ApplyPatch"] != 1 {
		t.Errorf("tools = %v", tot.Tools)
	}
	if len(r.Files) != 2 || r.Files[0].Path != "/x/a.go" || r.Files[0].Added != 6 || r.Files[0].Edits != 2 {
		t.Errorf("files = %+v", r.Files)
	}

	byDay, _ := Compute(t.Context(), sessions, ByDay, utc1)
	var keys []string
	for _, g := range byDay.Groups {
		keys = append(keys, g.Key)
	}
	if diff := cmp.Diff([]string{"2026-03-02", "2026-03-03", "unknown"}, keys); diff != "" {
		t.Errorf("day keys (-want +got):\n%s", diff)
	}

	byModel, _ := Compute(t.Context(), sessions, ByModel, utc1)
	m := map[string]Group{}
	for _, g := range byModel.Groups {
		m[g.Key] = g
	}
	if g := m["claude-3-5-haiku-20241022"]; g.Sessions != 0 || g.Tokens.Total != 200 {
		t.Errorf("haiku group = %+v", g)
	}
	if g := m["claude-sonnet-4-20250514"]; g.Sessions != 1 || g.Tokens.Total != 6200 || g.Prompts != 3 {
		t.Errorf("sonnet group = %+v", g)
	}
	if g := m["mystery-1"]; g.CostUSD != 0.5 || len(g.UnpricedModels) != 0 {
		t.Errorf("recorded-cost group = %+v", g)
	}

	unpriced, _ := Compute(t.Context(), []history.Analyzed{analyzed(transcript.Session{Model: "claude-opus-5-5", Usage: &transcript.Usage{Input: 5, Output: 5}}, Detail{})}, ByNone, utc1)
	if unpriced.Total.UnpricedTokens != 10 || unpriced.Total.UnpricedModels[0] != "claude-opus-5-5" || unpriced.Total.CostUSD != 0 {
		t.Errorf("unpriced = %+v", unpriced.Total)
	}
	if _, err := Compute(t.Context(), nil, "fortnight", nil); err == nil {
		t.Error("Compute accepted a bad grouping")
	}
}

func TestAnalysisRoundTrip(t *testing.T) {
	d := Detail{Tools: map[string]int{"Bash": 3, "Edit": 1}, ToolErrors: 2,
		Files: map[string]FileChange{"/a \"quoted\".go": {1, 2, 3}, "/b.go": {4, 5, 6}, "/src/app/main.go": {1, 1, 0},
			"/src/app/main_test.go": {2, 0, 9}, "/src/app/m": {1, 0, 1}}}
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	log := []transcript.UsageEntry{
		{Key: "msg_1:req_1", Time: t0, Model: "claude-sonnet-4", Usage: transcript.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Reasoning: 1}},
		{Key: "", Time: t0.Add(-time.Minute), Model: "gpt-5", Usage: transcript.Usage{Output: 1 << 40}},
		{Key: "msg_2:req_2", Model: "claude-sonnet-4", Usage: transcript.Usage{Input: 7}},
		{Key: "msg_1:req_1", Time: t0, Model: "claude-sonnet-4", Usage: transcript.Usage{Input: 1000}}, // a repeat: dropped
		{Key: "msg_3:req_3", Time: t0.Add(14 * time.Minute), Model: "claude-sonnet-4", Usage: transcript.Usage{Input: 10}},
	}
	brief, full := encodeAnalysis(d, log, 0)
	v, ok := decodeBrief(brief)
	if !ok || v.errors != 2 || len(v.tools) != 2 || v.nfiles != 5 || len(v.keys) != 3*8 {
		t.Fatalf("decodeBrief = %+v %v", v, ok)
	}
	back := Detail{Tools: map[string]int{}, ToolErrors: v.errors, Files: map[string]FileChange{}}
	for _, tc := range v.tools {
		back.Tools[tc.name] = tc.n
	}
	for it := v.fileIter(nil); it.next(); {
		back.Files[string(it.path)] = it.FileChange
	}
	if diff := cmp.Diff(d, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// The rollup: the 09:59 gpt-5 response, the unknown-time one, and the
	// 10:00 and 10:14 responses in one quarter.
	type row struct {
		ms, last int64
		model    string
		input    int64
	}
	var rows []row
	for _, e := range v.entries {
		rows = append(rows, row{e.ms, e.last, v.models[e.model], e.u.Input + e.u.Output})
	}
	want := []row{
		{0, 0, "claude-sonnet-4", 7},
		{t0.Add(-15 * time.Minute).UnixMilli(), t0.Add(-time.Minute).UnixMilli(), "gpt-5", 1 << 40},
		{t0.UnixMilli(), t0.Add(14 * time.Minute).UnixMilli(), "claude-sonnet-4", 1 + 2 + 10},
	}
	if diff := cmp.Diff(want, rows, cmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("rollup (-want +got):\n%s", diff)
	}
	if !decodeFull(&v, full) || len(v.entries) != 4 {
		t.Fatalf("decodeFull: %+v", v.entries)
	}
	kept := []transcript.UsageEntry{log[0], log[1], log[2], log[4]}
	for i, e := range v.entries {
		want := kept[i]
		if e.key != usageKey(want.Key) || e.ms != unixMS(want.Time) || v.models[e.model] != want.Model || e.u != want.Usage {
			t.Errorf("entry %d = %+v, want %+v", i, e, want)
		}
	}
	// Every cut of a valid analysis, and bytes of other formats, are refused.
	for n := range len(brief) {
		if _, ok := decodeBrief(brief[:n]); ok {
			t.Errorf("decodeBrief accepted the first %d of %d bytes", n, len(brief))
		}
	}
	for n := range len(full) {
		if decodeFull(&detailView{}, full[:n]) {
			t.Errorf("decodeFull accepted the first %d of %d bytes", n, len(full))
		}
	}
	for _, bad := range []string{"", "null", `{"tools":{}}`, "\xa5\x02", "\xa5\x03"} {
		if _, ok := decodeBrief([]byte(bad)); ok {
			t.Errorf("decodeBrief(%q) accepted", bad)
		}
		if decodeFull(&detailView{}, []byte(bad)) {
			t.Errorf("decodeFull(%q) accepted", bad)
		}
	}
}

func FuzzDecodeBrief(f *testing.F) {
	brief, full := encodeAnalysis(Detail{Tools: map[string]int{"Bash": 1}, ToolErrors: 1, Files: map[string]FileChange{"/a": {1, 2, 3}}},
		[]transcript.UsageEntry{{Key: "k", Model: "m", Time: time.UnixMilli(1e12), Usage: transcript.Usage{Input: 5}}}, 0.5)
	f.Add(brief)
	f.Add(full)
	f.Add([]byte{detailMagic, detailFormat, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, okA := decodeBrief(raw)
		b, okB := decodeBrief(raw)
		if okA != okB || !cmp.Equal(a, b, cmp.AllowUnexported(detailView{}, toolCount{}, entry{})) {
			t.Fatal("decodeBrief is not deterministic")
		}
		if okA {
			// Accepted files can be read to the end.
			it := a.fileIter(nil)
			n := 0
			for it.next() {
				n++
			}
			if n != a.nfiles {
				t.Fatalf("read %d of %d files", n, a.nfiles)
			}
		}
		var d detailView
		decodeFull(&d, raw)
	})
}

// TestComputeSubagent: a sub-agent's tokens, tools and edits count in its
// parent's conversation; it is no session of its own and its prompts are
// the parent agent's.
func TestComputeSubagent(t *testing.T) {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	parent := transcript.Session{Provider: "claude", ID: "p", PromptCount: 2, Model: "claude-sonnet-4",
		StartedAt: start, EndedAt: start.Add(time.Hour), Usage: &transcript.Usage{Input: 100, Output: 10}}
	sub := transcript.Session{Provider: "claude", ID: "s", ParentID: "p", PromptCount: 1, Model: "claude-haiku-4-5",
		StartedAt: start.Add(time.Minute), EndedAt: start.Add(2 * time.Minute), Usage: &transcript.Usage{Input: 50, Output: 5}}
	r, err := Compute(t.Context(), []history.Analyzed{
		analyzed(parent, Detail{Tools: map[string]int{"Task": 1}}),
		analyzed(sub, Detail{Tools: map[string]int{"Edit": 1}, Files: map[string]FileChange{"/a.go": {Edits: 1, Added: 3}}}),
	}, ByNone, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	g := r.Total
	if g.Sessions != 1 || g.Prompts != 2 || g.ToolCalls != 2 || g.FilesEdited != 1 || g.LinesAdded != 3 ||
		g.Tokens.Input != 150 || g.Tokens.Output != 15 || g.DurationMS != time.Hour.Milliseconds() {
		t.Errorf("total %+v", g)
	}
	want := (100*3.0+10*15)/1e6 + (50*1.0+5*5)/1e6
	if math.Abs(g.CostUSD-want) > 1e-12 {
		t.Errorf("cost %v, want %v", g.CostUSD, want)
	}
}
