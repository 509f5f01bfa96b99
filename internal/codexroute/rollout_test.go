package codexroute

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadMetaRealRollouts(t *testing.T) {
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
			m, err := ReadMeta(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if m.ID != tt.id || m.CWD != tt.cwd || m.Source != tt.source || m.Interactive() != tt.interactive {
				t.Errorf("meta = %+v (interactive %v)", m, m.Interactive())
			}
		})
	}
}

func TestInteractive(t *testing.T) {
	tests := []struct {
		m    Meta
		want bool
	}{
		{Meta{Originator: "codex-tui", Source: "cli"}, true},
		{Meta{Originator: "codex-tui", Source: "vscode", ThreadSource: "user"}, true},
		{Meta{Originator: "codex-tui", Source: "exec"}, false},
		{Meta{Originator: "codex-tui", Source: "subagent"}, false},
		{Meta{Originator: "codex-tui", Source: "cli", ThreadSource: "subagent"}, false},
		{Meta{Originator: "codex_cli_rs", Source: "cli"}, true},
		{Meta{Originator: "codex_cli_rs", Source: "vscode"}, false},
		{Meta{Originator: "codex_exec", Source: "exec"}, false},
		{Meta{Originator: "Codex Desktop", Source: "vscode"}, false},
		{Meta{Originator: "codex_vscode", Source: "vscode"}, false},
		{Meta{Originator: "codex-tui", Source: "mcp"}, false},
		{Meta{}, false},
	}
	for _, tt := range tests {
		if got := tt.m.Interactive(); got != tt.want {
			t.Errorf("%+v.Interactive() = %v, want %v", tt.m, got, tt.want)
		}
	}
}

func TestParseMetaRejects(t *testing.T) {
	for name, in := range map[string]string{
		"empty":           "",
		"not json":        "hello\n",
		"no session_meta": `{"type":"event_msg","payload":{}}` + "\n",
		"no cwd":          `{"type":"session_meta","payload":{"id":"x"}}` + "\n",
		"huge first line": strings.Repeat("x", maxMetaLine+10) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			if m, err := parseMeta(strings.NewReader(in)); err == nil {
				t.Errorf("parseMeta = %+v, want an error", m)
			}
		})
	}
	// A session_meta after an oversized line is still found.
	in := strings.Repeat("x", maxMetaLine+10) + "\n" + `{"type":"session_meta","payload":{"id":"x","cwd":"/w"}}` + "\n"
	if m, err := parseMeta(strings.NewReader(in)); err != nil || m.CWD != "/w" {
		t.Errorf("after a long line: %+v, %v", m, err)
	}
}

func TestFinder(t *testing.T) {
	home := t.TempDir()
	day := filepath.Join(home, "sessions", "2026", "11", "30")
	os.MkdirAll(day, 0o755)
	p := filepath.Join(day, "rollout-2026-11-30T10-56-09-"+sidA+".jsonl")
	os.WriteFile(p, []byte("{}\n"), 0o644)
	flat := filepath.Join(home, "sessions", "rollout-"+sidB+".jsonl")
	os.WriteFile(flat, []byte("{}\n"), 0o644)
	f := &Finder{Home: home}
	if got, err := f.Find(sidA); err != nil || got != p {
		t.Fatalf("Find = %q, %v", got, err)
	}
	if got, err := f.Find(sidB); err != nil || got != flat {
		t.Fatalf("Find flat = %q, %v", got, err)
	}
	if _, err := f.Find(sidC); !errors.Is(err, ErrNoRollout) {
		t.Fatalf("Find missing = %v", err)
	}
	if _, err := f.Find("../x"); err == nil {
		t.Fatal("Find accepted a path")
	}
	// A cached path that vanished is searched again.
	os.Remove(p)
	if _, err := f.Find(sidA); !errors.Is(err, ErrNoRollout) {
		t.Fatalf("Find after removal = %v", err)
	}
	if _, err := (&Finder{Home: filepath.Join(home, "none")}).Find(sidA); !errors.Is(err, ErrNoRollout) {
		t.Fatalf("Find without a sessions dir = %v", err)
	}
}

func FuzzParseMeta(f *testing.F) {
	ents, _ := os.ReadDir("testdata")
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			b, _ := os.ReadFile(filepath.Join("testdata", e.Name()))
			f.Add(b)
		}
	}
	f.Add([]byte(`{"type":"session_meta","payload":{"cwd":"/","source":{"subagent":1}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMeta(bytes.NewReader(b))
		if err == nil && m.CWD == "" {
			t.Fatal("meta without cwd accepted")
		}
		_ = m.Interactive()
	})
}
