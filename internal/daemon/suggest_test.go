package daemon

import "testing"

func TestClosestName(t *testing.T) {
	names := []string{"claude-1", "claude-2", "codex-1", "web", "api"}
	for typed, want := range map[string]string{
		"claude-3": "claude-1", // one edit, the first of two in sort order
		"cluade-1": "claude-1", // a swap is two edits; a third of 8 is 2
		"codx-1":   "codex-1",
		"Web":      "web",
		"wen":      "web",
		"codex":    "codex-1", // a prefix
		"api-old":  "api",     // it begins with a name
		"gemini-1": "",
		"x":        "",
	} {
		if got := closestName(typed, names); got != want {
			t.Errorf("closestName(%q) = %q, want %q", typed, got, want)
		}
	}
}
