package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/iostreams"
	"github.com/musterhq/muster/internal/testing/providertest"
)

// TestRealTranscripts runs history, show, replay and stats over what the
// real agent CLIs wrote (testdata/shared/research/real-cli/<cli>/transcripts, laid
// out as each CLI's home), read in place through the providers' own
// environment variables.
func TestRealTranscripts(t *testing.T) {
	shared := filepath.Join(providertest.Shared, "research", "real-cli")
	if _, err := os.Stat(shared); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := map[string]string{
		"HOME":              home,
		"MUSTER_HOME":       filepath.Join(home, "m"),
		"CLAUDE_CONFIG_DIR": filepath.Join(shared, "claude", "transcripts", ".claude"),
		"CODEX_HOME":        filepath.Join(shared, "codex", "transcripts", ".codex"),
		"GEMINI_CLI_HOME":   filepath.Join(shared, "gemini", "transcripts"),
		"XDG_DATA_HOME":     filepath.Join(shared, "opencode", "transcripts", ".local", "share"),
		"XDG_CONFIG_HOME":   filepath.Join(home, ".config"),
		"MUSE_AGENTS_DIR":   filepath.Join(home, "agents"),
	}
	run := func(args ...string) (string, string) {
		t.Helper()
		ios, _, out, errOut := iostreams.Test()
		f := &Factory{IO: ios, Getenv: func(k string) string { return env[k] }}
		if code := Run(t.Context(), f, args); code != 0 {
			t.Fatalf("muster %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
		return out.String(), errOut.String()
	}
	out, _ := run("history", "--json", "--limit", "0")
	var list []historyEntry
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	byProvider := map[string]int{}
	for _, s := range list {
		byProvider[s.Provider]++
	}
	for _, p := range []string{"claude", "codex", "gemini"} {
		if byProvider[p] == 0 {
			t.Errorf("no %s session found in the real transcripts (found %v)", p, byProvider)
		}
	}
	for _, s := range list {
		t.Run(s.Ref, func(t *testing.T) {
			text, _ := run("show", s.Ref)
			if !strings.Contains(text, s.Provider+":"+s.ID) {
				t.Errorf("show does not name the session:\n%.300s", text)
			}
			page, _ := run("replay", s.Ref, "-o", "-")
			if !strings.Contains(page, `http-equiv="Content-Security-Policy"`) || !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
				t.Errorf("replay is not a whole page")
			}
			if strings.Contains(page, "src=\"http") || strings.Contains(page, "href=\"http") {
				t.Errorf("replay references the network")
			}
		})
	}
	out, _ = run("stats", "--json", "--by", "provider")
	var r struct {
		Total struct {
			Sessions int `json:"sessions"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Total.Sessions != len(list) {
		t.Errorf("stats counted %d sessions, history listed %d (%v)", r.Total.Sessions, len(list), err)
	}
}
