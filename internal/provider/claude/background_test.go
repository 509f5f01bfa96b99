package claude

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestParseAgents(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "background", "agents.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseAgents(b)
	if err != nil || len(got) != 1 {
		t.Fatalf("parseAgents = %+v, %v; want the one background session", got, err)
	}
	a := got[0]
	if a.ID != "0b6ecd0a" || a.SessionID != "0b6ecd0a-e99d-41c7-817c-23c324ac7ffa" || a.PID != 6634 || a.Status != "idle" || a.State != "working" ||
		a.Name != "ok" || a.CWD != "/tmp/rc892457878/work" || !a.StartedAt.Equal(time.UnixMilli(1796445690237)) ||
		!slices.Equal(a.Attach, []string{"claude", "attach", "0b6ecd0a"}) {
		t.Errorf("agent = %+v", a)
	}
	// Interactive sessions run in terminals of their own: not listed.
	if got, err := parseAgents([]byte(`[{"id":"x1","kind":"interactive","pid":1}]`)); err != nil || len(got) != 0 {
		t.Errorf("interactive: %+v, %v", got, err)
	}
	for _, bad := range []string{`{`, `{"id":"x"}`, `[{"kind":"background","id":"-rf"}]`, `[{"kind":"background","id":"a;rm -rf ~"}]`, `[{"kind":"background","id":"a b"}]`, `[{"kind":"background"}]`} {
		if _, err := parseAgents([]byte(bad)); err == nil {
			t.Errorf("parseAgents(%s) succeeded", bad)
		}
	}
}

// Without a job directory the CLI is not run at all.
func TestBackgroundAgentsWithoutJobs(t *testing.T) {
	home := t.TempDir()
	bin := t.TempDir()
	// A claude that would fail loudly if run.
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + bin}
	if got, err := (Provider{}).BackgroundAgents(context.Background(), env); err != nil || got != nil {
		t.Fatalf("no jobs: %+v, %v", got, err)
	}
	if (Provider{}).MayHaveBackgroundAgents(env) {
		t.Fatal("no jobs, yet it may have background agents")
	}
	if err := os.MkdirAll(filepath.Join(home, ".claude", "jobs", "0b6ecd0a"), 0o700); err != nil {
		t.Fatal(err)
	}
	if !(Provider{}).MayHaveBackgroundAgents(env) {
		t.Fatal("a job and claude on PATH, yet no background agents may be there")
	}
	if (Provider{}).MayHaveBackgroundAgents([]string{"HOME=" + home, "PATH=" + t.TempDir()}) {
		t.Fatal("a job but no claude on PATH, yet it may have background agents")
	}
	if _, err := (Provider{}).BackgroundAgents(context.Background(), env); err == nil {
		t.Fatal("a job and a failing claude: no error")
	}
}
