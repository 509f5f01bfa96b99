package core_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/fakeagent/fakeagenttest"
)

// agentEnv puts the fake claude/codex/gemini first on PATH and logs their
// invocations.
func agentEnv(t *testing.T) (*env, string) {
	e := newEnv(t)
	dir := fakeagenttest.Build(t)
	log := filepath.Join(t.TempDir(), "invocations.jsonl")
	e.vars = append(e.vars, "PATH="+fakeagenttest.Path(dir), fakeagenttest.EnvLog+"="+log,
		fakeagenttest.EnvHookLog+"="+filepath.Join(t.TempDir(), "hooks.jsonl"))
	return e, log
}

func (e *env) hookLog() string {
	for _, kv := range e.vars {
		if v, ok := strings.CutPrefix(kv, fakeagenttest.EnvHookLog+"="); ok {
			return v
		}
	}
	return ""
}

func invocations(t *testing.T, log, persona string) [][]string {
	t.Helper()
	invs, err := fakeagenttest.ReadLog(log)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, inv := range invs {
		if inv.Persona == persona {
			out = append(out, inv.Argv)
		}
	}
	return out
}

func argAfter(argv []string, flag string) string {
	if i := slices.Index(argv, flag); i >= 0 && i+1 < len(argv) {
		return argv[i+1]
	}
	return ""
}

func (e *env) waitConfirmed(name string) string {
	e.t.Helper()
	var id string
	if !eventually(func() bool {
		s := e.session(name)
		id = s.NativeSessionID
		return s.NativeConfirmed
	}) {
		e.t.Fatalf("%s: native id never confirmed (have %q)", name, id)
	}
	return id
}

func TestClaudeConfirmedSessionResumesAfterRestart(t *testing.T) {
	e, log := agentEnv(t)
	work := t.TempDir()
	e.must("new", "claude", "--name", "cl", "--dir", work, "--detach")
	id := e.waitConfirmed("cl")
	first := invocations(t, log, "claude")
	if len(first) != 1 || argAfter(first[0], "--session-id") != id {
		t.Fatalf("first launch %v should carry --session-id %s", first, id)
	}
	if argAfter(first[0], "--settings") == "" {
		t.Errorf("claude launched without per-launch hook settings: %v", first[0])
	}
	e.must("send", "cl", "reply hello there", "--enter")
	e.must("wait", "cl", "--until", "done", "--timeout", "30s")

	e.must("daemon", "stop", "--force")
	if s := e.session("cl"); s.State != "restorable" {
		t.Fatalf("after daemon stop: %+v", s)
	}
	e.must("resume", "--all")
	all := invocations(t, log, "claude")
	last := all[len(all)-1]
	if argAfter(last, "--resume") != id || slices.Contains(last, "--session-id") {
		t.Fatalf("resume argv = %v, want --resume %s", last, id)
	}
	if s := e.session("cl"); s.State != "running" || s.CWD != work {
		t.Errorf("after resume: %+v", s)
	}
	// The conversation continues: the transcript file grows. The resumed
	// pane is already "done" (its last turn), so `wait --until done` could
	// return before this turn started; --wait-done waits for this turn.
	e.must("send", "cl", "reply second turn", "--enter", "--confirm", "--wait-done", "--timeout", "30s")
	matches, _ := filepath.Glob(filepath.Join(e.userHome(), ".claude", "projects", "*", id+".jsonl"))
	if len(matches) != 1 {
		t.Fatalf("transcript for %s: %v", id, matches)
	}
	b, _ := os.ReadFile(matches[0])
	if !strings.Contains(string(b), "hello there") || !strings.Contains(string(b), "second turn") {
		t.Errorf("resumed conversation did not continue the same transcript")
	}
}

func TestUnconfirmedClaudeRelaunchesWithSameID(t *testing.T) {
	e, log := agentEnv(t)
	e.vars = append(e.vars, fakeagenttest.EnvNoHooks+"=1")
	e.must("new", "claude", "--name", "un", "--detach")
	if !eventually(func() bool { return len(invocations(t, log, "claude")) == 1 }) {
		t.Fatal("claude never started")
	}
	s := e.session("un")
	if s.NativeConfirmed || s.NativeSessionID == "" {
		t.Fatalf("a launch without hooks should stay provisional: %+v", s)
	}
	e.must("daemon", "stop", "--force")
	// Issue 23: the user is told the conversation is not coming back.
	if out := e.must("resume", "un"); !strings.Contains(out, "un: resumed as a new conversation: no id was captured") {
		t.Errorf("resume of a session with no captured id printed %q", out)
	}
	all := invocations(t, log, "claude")
	last := all[len(all)-1]
	if argAfter(last, "--session-id") != s.NativeSessionID || slices.Contains(last, "--resume") {
		t.Fatalf("unconfirmed relaunch argv = %v, want the same --session-id %s", last, s.NativeSessionID)
	}
}

func TestGeminiAndCodexResumeWithTheirOwnCommands(t *testing.T) {
	e, log := agentEnv(t)
	e.vars = append(e.vars, "TERM=xterm-256color")
	e.must("hooks", "setup", "gemini", "codex")
	e.must("new", "gemini", "--name", "gm", "--detach")
	if !eventually(func() bool { return e.session("gm").NativeConfirmed }) {
		hooks, _ := os.ReadFile(e.hookLog())
		cfg, _ := os.ReadFile(filepath.Join(e.userHome(), ".gemini", "settings.json"))
		t.Fatalf("gemini never confirmed; hooks:\n%s\nsettings:\n%s\nscreen:\n%s", hooks, cfg, e.must("capture", "gm"))
	}
	gid := e.waitConfirmed("gm")
	if argAfter(invocations(t, log, "gemini")[0], "--session-id") != gid {
		t.Fatalf("gemini first launch should carry --session-id %s", gid)
	}

	e.must("new", "codex", "--name", "cx", "--detach")
	// Codex fires SessionStart only with the first prompt.
	e.must("send", "cx", "reply hi", "--enter")
	cid := e.waitConfirmed("cx")
	if !slices.Contains(invocations(t, log, "codex")[0], "--no-daemon") {
		t.Errorf("codex launched without --no-daemon")
	}

	e.must("daemon", "stop", "--force")
	e.must("resume", "--all")
	g := invocations(t, log, "gemini")
	if last := g[len(g)-1]; argAfter(last, "--resume") != gid {
		t.Errorf("gemini resume argv = %v, want --resume %s", last, gid)
	}
	c := invocations(t, log, "codex")
	if last := c[len(c)-1]; argAfter(last, "resume") != cid || last[1] != "--no-daemon" {
		t.Errorf("codex resume argv = %v, want resume %s --no-daemon", last, cid)
	}
}

func TestResumeOfMissingTranscriptIsReported(t *testing.T) {
	e, _ := agentEnv(t)
	e.must("new", "claude", "--name", "lost", "--detach")
	id := e.waitConfirmed("lost")
	e.must("daemon", "stop", "--force")
	matches, _ := filepath.Glob(filepath.Join(e.userHome(), ".claude", "projects", "*", id+".jsonl"))
	for _, m := range matches {
		os.Remove(m)
	}
	r := e.run("resume", "lost")
	if r.code != 1 || !strings.Contains(r.stdout, "transcript") {
		t.Fatalf("resume of a deleted conversation: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if s := e.session("lost"); s.State != "restorable" || !strings.Contains(s.Reason, "transcript") {
		t.Errorf("ls should carry the reason: %+v", s)
	}
}
