package daemon

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/testing/testprovider"
)

// TestRegisteredProviderLaunches: a provider the daemon has never heard of
// (testagent, registered by this test only) is launched with a
// caller-assigned id and its hooks, and resumed while its transcript
// exists.
func TestRegisteredProviderLaunches(t *testing.T) {
	t.Cleanup(all.Register(testprovider.Provider{}))
	bin, home := t.TempDir(), t.TempDir()
	exe := filepath.Join(bin, "testagent")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := &Daemon{musterPath: "/opt/muster/bin/muster"}
	rec := store.Session{Provider: "testagent", Args: []string{"-v"}}
	argv, err := d.newSessionArgv(&rec, proto.NewArgs{Provider: "testagent", Env: map[string]string{"PATH": bin}, Args: rec.Args})
	if err != nil {
		t.Fatal(err)
	}
	if rec.NativeID == "" || !slices.Equal(argv, []string{exe, "--session", rec.NativeID, "-v"}) {
		t.Fatalf("new argv = %q (assigned id %q)", argv, rec.NativeID)
	}
	rec.Argv = argv
	if got := d.injectHooks(rec, argv); len(got) != len(argv)+2 || got[1] != "--hooks" || !strings.Contains(got[2], "hook event testagent") {
		t.Errorf("with hooks: %q", got)
	}
	if !agentIsRoot(rec) {
		t.Error("testagent's own process is not the pane's agent")
	}

	env := map[string]string{"PATH": bin, "HOME": home}
	rec.NativeConfirmed = true
	if _, err := d.resumeArgv(rec, env); err == nil || !strings.Contains(err.Error(), "transcript of "+rec.NativeID+" is gone") {
		t.Errorf("resume without a transcript: %v", err)
	}
	p := filepath.Join(home, ".testagent", "sessions", rec.NativeID+".jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("{}\n"), 0o644)
	got, err := d.resumeArgv(rec, env)
	if err != nil || !slices.Equal(got, []string{exe, "--resume", rec.NativeID, "-v"}) {
		t.Errorf("resume argv = %q, %v", got, err)
	}
	if _, err := d.newSessionArgv(&store.Session{Provider: "testagent"}, proto.NewArgs{Provider: "testagent", Env: map[string]string{"PATH": t.TempDir()}}); err == nil ||
		!strings.Contains(err.Error(), "testagent is not installed") {
		t.Errorf("without the executable: %v", err)
	}
}

// TestNewResumesAConversation: op new with a resume id runs the provider's
// resume command for it (the dashboard's history tab); an id that could
// pass for a flag, or a resume id for a command, is refused.
func TestNewResumesAConversation(t *testing.T) {
	t.Cleanup(all.Register(testprovider.Provider{}))
	bin := t.TempDir()
	exe := filepath.Join(bin, "testagent")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := &Daemon{}
	env := map[string]string{"PATH": bin}
	rec := store.Session{Provider: "testagent"}
	argv, err := d.newSessionArgv(&rec, proto.NewArgs{Provider: "testagent", Env: env, ResumeID: "abc-123", Args: []string{"-v"}})
	if err != nil || !slices.Equal(argv, []string{exe, "--resume", "abc-123", "-v"}) || rec.NativeID != "abc-123" {
		t.Fatalf("resume argv = %q (native id %q), %v", argv, rec.NativeID, err)
	}
	for _, tc := range []struct {
		name string
		rec  store.Session
		a    proto.NewArgs
	}{
		{"a flag", store.Session{Provider: "testagent"}, proto.NewArgs{Provider: "testagent", Env: env, ResumeID: "--dangerous"}},
		{"a control character", store.Session{Provider: "testagent"}, proto.NewArgs{Provider: "testagent", Env: env, ResumeID: "a\x1bb"}},
		{"a command", store.Session{Provider: "testagent"}, proto.NewArgs{Cmd: "true", Env: env, ResumeID: "abc"}},
	} {
		if _, err := d.newSessionArgv(&tc.rec, tc.a); err == nil {
			t.Errorf("%s: accepted", tc.name)
		} else if pe, ok := err.(*proto.Error); !ok || pe.Code != proto.CodeInvalid {
			t.Errorf("%s: %v, want code invalid", tc.name, err)
		}
	}
}
