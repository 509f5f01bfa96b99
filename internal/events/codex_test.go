package events

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/musterhq/muster/internal/proto"
)

// TestCodexEventsAreRoutedBySession runs a fake `codex` (a script holding
// the session's rollout open) in a pane and sends Codex events whose
// capability and surfaceID name another pane, or nothing.
func TestCodexEventsAreRoutedBySession(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc")
	}
	root := t.TempDir()
	home := filepath.Join(root, "codex-home")
	work := filepath.Join(root, "repo")
	bin := filepath.Join(root, "bin")
	for _, d := range []string{work, bin, filepath.Join(home, "sessions", "2026", "11", "30")} {
		os.MkdirAll(d, 0o755)
	}
	const sid = "01a22c18-f9a7-7cb0-aed7-af74b3099326"
	rollout := filepath.Join(home, "sessions", "2026", "11", "30", "rollout-2026-11-30T10-56-09-"+sid+".jsonl")
	os.WriteFile(rollout, []byte(fmt.Sprintf(`{"type":"session_meta","payload":{"id":%q,"cwd":%q,"originator":"codex-tui","source":"cli"}}`+"\n", sid, work)), 0o644)
	os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\nexec 3<\"$1\"\necho ready\nwhile :; do sleep 3600; done\n"), 0o755)
	cmd := exec.Command(filepath.Join(bin, "codex"), rollout)
	cmd.Dir = work
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	if l, _ := bufio.NewReader(out).ReadString('\n'); l != "ready\n" {
		t.Fatalf("fake codex: %q", l)
	}

	h := startHarness(t, "", func(c *Config) { c.Routers = codexRouters(home) })
	capOther := h.surface("sf-claude", "s-claude", "claude-pane", "claude")
	h.surface("sf-codex", "s-codex", "codex-pane", "codex")
	h.e.SurfaceStarted("sf-codex", cmd.Process.Pid)

	s := sid
	// The Codex hook inherited the Claude pane's variables: ignored.
	h.mustPost(evt{id: "c1", run: "turn-1", provider: "codex", surface: "sf-claude", cap: capOther, session: &s, kind: proto.KindStarted, hook: "UserPromptSubmit"})
	// No variables at all.
	h.mustPost(evt{id: "c2", run: "turn-1", provider: "codex", surface: "x", cap: "x", session: &s, kind: proto.KindApprovalRequested, hook: "PermissionRequest"})
	if st := h.e.SessionState("s-codex"); st.RunState != "waitingApproval" || st.NativeSessionID != sid || st.SurfaceID != "sf-codex" {
		t.Fatalf("codex session = %+v", st)
	}
	if st := h.e.SessionState("s-claude"); st.RunState != "" {
		t.Fatalf("claude pane got the codex events: %+v", st)
	}
	// Another session id has no pane.
	other := "01a22c19-5448-7d02-89e7-73b160cc00ef"
	if got := h.post(evt{id: "c3", run: "t", provider: "codex", session: &other, kind: proto.KindStarted, hook: "SessionStart"}); got != errResp(proto.ErrUnauthorized) {
		t.Fatalf("unroutable codex event: %q", got)
	}
	// Once the pane closes, its binding ends and the events are refused.
	h.e.CloseSurface("sf-codex", nil)
	if got := h.post(evt{id: "c4", run: "turn-1", provider: "codex", session: &s, kind: proto.KindRunning}); got != errResp(proto.ErrUnauthorized) {
		t.Fatalf("codex event after close: %q", got)
	}
}
