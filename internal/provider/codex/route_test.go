package codex

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/termsignal"
	"github.com/musterhq/muster/internal/transcript"
)

const (
	sidA = "01a22c18-f9a7-7cb0-aed7-af74b3099326"
	sidB = "01a22c19-5448-7d02-89e7-73b160cc00ef"
	sidC = "01a22c0e-d041-74f3-b87b-104fada8e2f6"
)

func TestSessionInfoRealRollouts(t *testing.T) {
	tests := []struct {
		file        string
		id          string
		cwd         string
		source      string
		interactive bool
	}{
		{"real-0.169-tui-daemon.jsonl", "01a22c0e-d041-74f3-b87b-104fada8e2f6", "$SCRATCH/repo-codex", "vscode", true},
		{"real-0.169-tui-no-daemon.jsonl", "01a22c18-f9a7-7cb0-aed7-af74b3099326", "$SCRATCH/repo-codex", "cli", true},
		{"fixture-cli.jsonl", "11111111-1111-4111-8111-111111111111", "/workspace/synthetic-project", "cli", true},
		{"fixture-subagent.jsonl", "33333333-3333-4333-8333-333333333333", "/workspace/synthetic-project", "subagent", false},
		{"fixture-no-originator.jsonl", "55555555-5555-4555-8555-555555555555", "/workspace/synthetic-project", "", false},
		{"fixture-agent-deck-resumed.jsonl", "00000000-0000-4000-8000-00000000c0de", "<FIXTURE_PROJECT>", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "route", tt.file)
			m, err := Provider{}.SessionInfo(path)
			if err != nil {
				t.Fatal(err)
			}
			meta, err := ReadSessionMeta(path)
			if err != nil {
				t.Fatal(err)
			}
			if meta.ID != tt.id || m.CWD != tt.cwd || m.Source != tt.source || m.Interactive != tt.interactive {
				t.Errorf("info = %+v, id %s", m, meta.ID)
			}
		})
	}
}

func TestTUISession(t *testing.T) {
	tests := []struct {
		originator, source, threadSource string
		want                             bool
	}{
		{"codex-tui", "cli", "", true},
		{"codex-tui", "vscode", "user", true},
		{"codex-tui", "exec", "", false},
		{"codex-tui", "subagent", "", false},
		{"codex-tui", "cli", "subagent", false},
		{"codex_cli_rs", "cli", "", true},
		{"codex_cli_rs", "vscode", "", false},
		{"codex_exec", "exec", "", false},
		{"Codex Desktop", "vscode", "", false},
		{"codex_vscode", "vscode", "", false},
		{"codex-tui", "mcp", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		if got := tuiSession(tt.originator, tt.source, tt.threadSource); got != tt.want {
			t.Errorf("tuiSession(%q, %q, %q) = %v, want %v", tt.originator, tt.source, tt.threadSource, got, tt.want)
		}
	}
}

// maxMetaLine is longer than any session_meta record routing ever read.
const maxMetaLine = 4 << 20

func TestSessionInfoRejects(t *testing.T) {
	for name, in := range map[string]string{
		"empty":           "",
		"not json":        "hello\n",
		"no session_meta": `{"type":"event_msg","payload":{}}` + "\n",
		"no cwd":          `{"type":"session_meta","payload":{"id":"x"}}` + "\n",
		"huge first line": strings.Repeat("x", maxMetaLine+10) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rollout-x.jsonl")
			os.WriteFile(path, []byte(in), 0o644)
			if m, err := (Provider{}).SessionInfo(path); err == nil {
				t.Errorf("SessionInfo = %+v, want an error", m)
			}
		})
	}
	// A session_meta after an oversized line is still found.
	in := strings.Repeat("x", maxMetaLine+10) + "\n" + `{"type":"session_meta","payload":{"id":"x","cwd":"/w"}}` + "\n"
	if m, _, err := scanMeta(strings.NewReader(in), "x"); err != nil || m.CWD != "/w" {
		t.Errorf("after a long line: %+v, %v", m, err)
	}
}

func TestFindRollout(t *testing.T) {
	home := t.TempDir()
	env := transcript.Env{Getenv: func(k string) string {
		if k == "CODEX_HOME" {
			return home
		}
		return ""
	}}
	day := filepath.Join(home, "sessions", "2026", "11", "30")
	os.MkdirAll(day, 0o755)
	p := filepath.Join(day, "rollout-2026-11-30T10-56-09-"+sidA+".jsonl")
	os.WriteFile(p, []byte("{}\n"), 0o644)
	flat := filepath.Join(home, "sessions", "rollout-"+sidB+".jsonl")
	os.WriteFile(flat, []byte("{}\n"), 0o644)
	if got, err := FindRollout(env, sidA); err != nil || got != p {
		t.Fatalf("FindRollout = %q, %v", got, err)
	}
	if got, err := FindRollout(env, sidB); err != nil || got != flat {
		t.Fatalf("FindRollout flat = %q, %v", got, err)
	}
	if got, err := FindRollout(env, sidC); err != nil || got != "" {
		t.Fatalf("FindRollout missing = %q, %v", got, err)
	}
	if !(Provider{}).HasTranscript(env, sidA) || (Provider{}).HasTranscript(env, sidC) {
		t.Error("HasTranscript disagrees with FindRollout")
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.Local)
	if got := FindRecentRollout(env, sidA, now); got != p {
		t.Errorf("FindRecentRollout today = %q", got)
	}
	if got := FindRecentRollout(env, sidA, now.Add(24*time.Hour)); got != p {
		t.Errorf("FindRecentRollout yesterday = %q", got)
	}
	if got := FindRecentRollout(env, sidA, now.Add(72*time.Hour)); got != "" {
		t.Errorf("FindRecentRollout three days later = %q, want nothing (only a deep search finds it)", got)
	}
	if got := FindRecentRollout(env, sidB, now.Add(72*time.Hour)); got != flat {
		t.Errorf("FindRecentRollout flat = %q", got)
	}
	os.Remove(p)
	if got, err := FindRollout(env, sidA); err != nil || got != "" {
		t.Fatalf("FindRollout after removal = %q, %v", got, err)
	}
	none := transcript.Env{Getenv: func(string) string { return filepath.Join(home, "none") }}
	if got, err := FindRollout(none, sidA); err != nil || got != "" {
		t.Fatalf("FindRollout without a sessions dir = %q, %v", got, err)
	}
}

func TestResumes(t *testing.T) {
	tests := []struct {
		argv []string
		want bool
	}{
		{[]string{"codex", "resume", sidA}, true},
		{[]string{"codex", "--no-daemon", "resume", "--all", sidA}, true},
		{[]string{"sh", "-c", "codex resume " + sidA}, true},
		{[]string{"codex", sidA}, false},
		{[]string{"codex", "fork", sidA}, false},
		{[]string{"codex", "resume", sidB}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := (Provider{}).Resumes(tt.argv, sidA); got != tt.want {
			t.Errorf("Resumes(%q) = %v, want %v", tt.argv, got, tt.want)
		}
	}
}

func TestIsAgentProcess(t *testing.T) {
	for _, tt := range []struct {
		comm, exe string
		want      bool
	}{
		{"codex", "", true},
		{"node", "/usr/lib/node_modules/@openai/codex/bin/codex-x86_64-unknown-linux-musl", true},
		{"codex-tui", "", true},
		{"node", "/usr/bin/node", false},
		{"codexx", "", false},
	} {
		if got := (Provider{}).IsAgentProcess(tt.comm, tt.exe); got != tt.want {
			t.Errorf("IsAgentProcess(%q, %q) = %v", tt.comm, tt.exe, got)
		}
	}
}

func TestSharedProcess(t *testing.T) {
	daemon := "/h/.codex/packages/app-server-daemon/releases/0.169.0-x86_64-unknown-linux-musl/bin/codex"
	for _, tt := range []struct {
		argv []string
		want bool
	}{
		// As /proc/PID/cmdline read them in two shell panes (0.169.0).
		{[]string{daemon, "app-server", "--listen", "unix://", "--analytics-default-enabled", "--managed-daemon"}, true},
		{[]string{daemon, "app-server", "daemon", "pid-update-loop"}, true},
		{[]string{"/usr/lib/node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/bin/codex"}, false},
		{[]string{"node", "/usr/bin/codex"}, false},
		{[]string{"codex", "-c", "model_provider=fake", "--no-daemon", "resume", "x"}, false},
		{[]string{"codex", "-c", "app-server", "exec", "hi"}, false},
		{[]string{"/bin/sh", "/tmp/bin/codex", "mcp-server"}, true},
		{[]string{"codex", "fix the app-server"}, false},
		{[]string{"/bin/sh", "-c", "codex app-server"}, false},
		{nil, false},
	} {
		if got := (Provider{}).SharedProcess(tt.argv); got != tt.want {
			t.Errorf("SharedProcess(%q) = %v, want %v", tt.argv, got, tt.want)
		}
	}
}

func TestTurnFailed(t *testing.T) {
	for raw, want := range map[string]bool{
		"7501;state=error:app=codex":  true,
		"7501;state=error":            true,
		"7501;state=error:app=gemini": false,
		"7501;state=done:app=codex":   false,
	} {
		_, sigs := termsignal.New().Feed([]byte("\x1b]"+raw+"\x07"), nil)
		if len(sigs) != 1 {
			t.Fatalf("%s: %d signals", raw, len(sigs))
		}
		if got := (Provider{}).TurnFailed(sigs[0]); got != want {
			t.Errorf("TurnFailed(%s) = %v", raw, got)
		}
	}
}

func FuzzSessionMeta(f *testing.F) {
	ents, _ := os.ReadDir(filepath.Join("testdata", "route"))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			b, _ := os.ReadFile(filepath.Join("testdata", "route", e.Name()))
			f.Add(b)
		}
	}
	f.Add([]byte(`{"type":"session_meta","payload":{"cwd":"/","source":{"subagent":1}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, x, err := scanMeta(bytes.NewReader(b), "f")
		if err == nil {
			_ = tuiSession(m.Originator, m.Source, x.threadSource)
		}
	})
}
