package gemini

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/transcript"
)

// shared is ../shared beside the checkout (CI), seen from this package.
const shared = "../../../../shared"

// conformanceFiles lists the third-party fixtures and the transcripts the
// real CLI wrote.
func conformanceFiles(t *testing.T) []string {
	t.Helper()
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("no %s beside the checkout: %v", shared, err)
	}
	var files []string
	for _, root := range []string{
		filepath.Join(shared, "fixtures", "gemini"),
		filepath.Join(shared, "research", "real-cli", "gemini", "transcripts"),
	} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".jsonl") {
				if strings.Contains(p, string(filepath.Separator)+"chats"+string(filepath.Separator)) || strings.Contains(p, "fixtures") {
					files = append(files, p)
				}
			}
			return nil
		})
	}
	if len(files) == 0 {
		t.Fatal("no conformance files found")
	}
	return files
}

func TestConformance(t *testing.T) {
	type want struct {
		id, title, model   string
		prompts, tools     int
		usage              *transcript.Usage
		thinking, toolUses int
		cwd                string
	}
	expect := map[string]want{
		"agentsview/standard_session.json": {id: "sess-uuid-1", title: "Fix the login bug", prompts: 2},
		"agentsview/system_messages.json":  {id: "sess-uuid-3"},
		"agentsview/thinking_only.json":    {id: "sess-uuid-thinking", title: "Explain how this works", model: "gemini-2.5-pro", prompts: 1, thinking: 2},
		"agentsview/tool_calls.json":       {id: "sess-uuid-2", title: "Read this file", model: "gemini-2.5-pro", prompts: 1, tools: 1, thinking: 1, toolUses: 1},
		"entire-cli/attribution_session.json": {
			id: "attr-session-1", title: "Run the tests and read src/a.go", model: "gemini-2.5-flash", prompts: 2, tools: 4, thinking: 1, toolUses: 4,
			usage: &transcript.Usage{Input: 2650, Output: 230, CacheRead: 2200, Reasoning: 80},
		},
		"chats/session-2026-11-30T10-51-33333333.jsonl": {
			id: "33333333-2222-4333-8444-555555555555", title: "say hi", model: "gemini-3.1-pro-preview", prompts: 2, tools: 1, toolUses: 1,
			usage: &transcript.Usage{Input: 30, Output: 6}, cwd: "$SCRATCH/repo-gemini",
		},
		"chats/session-2026-11-30T10-52-33333333.jsonl": {id: "33333333-2222-4333-8444-555555555555", cwd: "$SCRATCH/repo-gemini"},
	}
	seen := 0
	for _, f := range conformanceFiles(t) {
		key := filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(f)), filepath.Base(f)))
		t.Run(key, func(t *testing.T) {
			full := parseFile(t, f, transcript.ParseOptions{})
			sum := parseFile(t, f, transcript.ParseOptions{SummaryOnly: true})
			if diff := cmp.Diff(full.Session, sum.Session); diff != "" {
				t.Errorf("summary differs from full (-full +summary):\n%s", diff)
			}
			if full.ID == "" || full.Provider != Name {
				t.Errorf("id %q, provider %q", full.ID, full.Provider)
			}
			if full.PromptCount > 0 && (full.FirstPrompt == "" || full.Title == "") {
				t.Errorf("%d prompts but first prompt %q, title %q", full.PromptCount, full.FirstPrompt, full.Title)
			}
			w, ok := expect[key]
			if !ok {
				return
			}
			seen++
			var thinking, uses int
			for _, it := range full.Items {
				switch it.Kind {
				case transcript.Thinking:
					thinking++
				case transcript.ToolUse:
					uses++
				}
			}
			got := want{
				id: full.ID, title: full.Title, model: full.Model, prompts: full.PromptCount, tools: full.ToolCallCount,
				usage: full.Usage, thinking: thinking, toolUses: uses, cwd: full.CWD,
			}
			if diff := cmp.Diff(w, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if seen != len(expect) {
		t.Errorf("checked %d of the %d files inspected by hand", seen, len(expect))
	}
}

// A transcript cut off mid-line (the CLI was writing) parses with a warning.
func TestConformanceTruncated(t *testing.T) {
	for _, f := range conformanceFiles(t) {
		if !strings.HasSuffix(f, ".jsonl") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cut := data[:len(data)*2/3]
			if cut[len(cut)-1] == '\n' {
				cut = cut[:len(cut)-1]
			}
			got := parseText(t, filepath.Base(f), string(cut))
			if len(got.Warnings) == 0 || !strings.Contains(got.Warnings[len(got.Warnings)-1], "malformed JSON") {
				t.Errorf("warnings = %q, want one for the cut line", got.Warnings)
			}
		})
	}
}
