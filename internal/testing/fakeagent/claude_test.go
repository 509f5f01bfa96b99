package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	claudeprov "github.com/musterhq/muster/internal/provider/claude"
	"github.com/musterhq/muster/internal/testing/fakeagent/fakeagenttest"
	"github.com/musterhq/muster/internal/transcript"
)

var claudeEvents = []string{
	"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolBatch", "PermissionRequest",
	"Notification", "MessageDisplay", "Stop", "StopFailure", "SessionEnd",
}

func TestClaude(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cfgDir := filepath.Join(w.home, "claude-config")
	w.env = append(w.env, "CLAUDE_CONFIG_DIR="+cfgDir)
	// User settings with every event; per-launch settings with the same
	// command for UserPromptSubmit (Claude Code runs it once) and a probe.
	writeFile(t, filepath.Join(cfgDir, "settings.json"), hooksJSON(claudeEvents, ptr(""), `,"timeout":10`))
	probe := filepath.Join(w.repo, "..", "probe.txt")
	inline := `{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":` + strconv.Quote(hookCmd) + `}]}],` +
		`"SessionStart":[{"matcher":"startup|resume","hooks":[{"type":"command","command":` +
		strconv.Quote(`echo "$PPID $CLAUDE_PID $CLAUDE_CODE_SESSION_ID $CLAUDE_PROJECT_DIR $MUSTER_SURFACE_ID" > `+probe) + `}]}]}}`
	id := "11111111-2222-4333-8444-555555555555"

	p := w.start(w.repo, "claude", []string{"--session-id", id, "--settings", inline})
	p.expect("\x1b]0;✳ Claude Code\x07")
	p.expect("Claude Code v2.1.328")
	p.expect("> ")
	ps := w.waitEvents(1)
	transcriptPath := filepath.Join(cfgDir, "projects", claudeProjectDir(w.repo), id+".jsonl")
	if got := str(ps[0], "transcript_path"); got != transcriptPath {
		t.Errorf("transcript_path = %q, want %q", got, transcriptPath)
	}
	if fileExists(transcriptPath) {
		t.Errorf("the transcript exists before the first prompt")
	}

	p.send("reply hello there\r")
	w.waitEvent("Stop")
	p.send("tool touch made.txt\r")
	w.waitEvent("Notification")
	p.expect("Allow? [y/n]")
	p.send("y")
	w.waitEvent("Stop")
	p.send("tool rm -rf /\r")
	w.waitEvent("Notification")
	p.send("n")
	p.expect("Interrupted")
	p.send("fail\r")
	w.waitEvent("StopFailure")
	p.send("sleep 60000\r")
	w.waitEvent("UserPromptSubmit")
	p.send("\x1b")
	p.expect("Interrupted")
	p.send("exit\r")
	if code := p.wait(); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	p.expect("claude --resume " + id)

	ps = w.payloads()
	want := []string{
		"SessionStart",
		"UserPromptSubmit", "MessageDisplay", "Stop",
		"UserPromptSubmit", "PreToolUse", "MessageDisplay", "PermissionRequest", "Notification",
		"PostToolUse", "PostToolBatch", "MessageDisplay", "Stop",
		"UserPromptSubmit", "PreToolUse", "MessageDisplay", "PermissionRequest", "Notification",
		"UserPromptSubmit", "StopFailure",
		"UserPromptSubmit",
		"SessionEnd",
	}
	if diff := cmp.Diff(want, events(ps)); diff != "" {
		t.Fatalf("hook events (-want +got):\n%s", diff)
	}
	checkShapes(t, "claude", ps)
	for i, pl := range ps {
		if str(pl, "session_id") != id || str(pl, "cwd") != w.repo || str(pl, "transcript_path") != transcriptPath {
			t.Errorf("payload %d: session_id %q cwd %q transcript_path %q", i, str(pl, "session_id"), str(pl, "cwd"), str(pl, "transcript_path"))
		}
	}
	checks := []struct {
		i      int
		k, val string
	}{
		{0, "source", "startup"},
		{1, "prompt", "reply hello there"},
		{3, "last_assistant_message", "hello there"},
		{7, "tool_name", "Bash"},
		{8, "notification_type", "permission_prompt"},
		{19, "error", "server_error"},
		{21, "reason", "prompt_input_exit"},
	}
	for _, c := range checks {
		if got := str(ps[c.i], c.k); got != c.val {
			t.Errorf("payload %d (%s) %s = %q, want %q", c.i, events(ps)[c.i], c.k, got, c.val)
		}
	}
	if ti, _ := ps[5]["tool_input"].(map[string]any); ti["command"] != "touch made.txt" {
		t.Errorf("PreToolUse tool_input = %v", ps[5]["tool_input"])
	}
	// One prompt_id per turn, shared by the turn's events.
	if str(ps[1], "prompt_id") == "" || str(ps[1], "prompt_id") != str(ps[3], "prompt_id") ||
		str(ps[1], "prompt_id") == str(ps[4], "prompt_id") {
		t.Errorf("prompt_id not per turn: %q %q %q", str(ps[1], "prompt_id"), str(ps[3], "prompt_id"), str(ps[4], "prompt_id"))
	}

	inv := w.invocations()
	if len(inv) != 1 {
		t.Fatalf("%d invocations logged, want 1", len(inv))
	}
	if inv[0].Persona != "claude" || !slices.Equal(inv[0].Argv, []string{"claude", "--session-id", id, "--settings", inline}) ||
		inv[0].Cwd != w.repo || inv[0].PID == 0 {
		t.Errorf("invocation = %+v", inv[0])
	}
	if diff := cmp.Diff(map[string]string{"MUSTER_AGENT_SESSION_ID": "muster-session-1", "MUSTER_SURFACE_ID": "surface-7"}, inv[0].Env); diff != "" {
		t.Errorf("logged env (-want +got):\n%s", diff)
	}
	// The hooks are children of the agent (sh -c), with Claude's env.
	data, err := os.ReadFile(probe)
	if err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(inv[0].PID)
	if got, want := strings.Fields(string(data)), []string{pid, pid, id, w.repo, "surface-7"}; !slices.Equal(got, want) {
		t.Errorf("hook probe = %q, want %q", got, want)
	}

	// The transcript parses as a Claude Code session.
	size := fileSize(t, transcriptPath)
	ts := parseClaude(t, w.home, cfgDir, transcriptPath)
	if ts.ID != id || ts.CWD != w.repo || ts.PromptCount != 5 {
		t.Errorf("parsed session: id %q cwd %q prompts %d", ts.ID, ts.CWD, ts.PromptCount)
	}

	// Resume: the same file grows; /clear starts a new id.
	before := len(ps)
	p = w.start(w.repo, "claude", []string{"--resume", id})
	p.expect("> ")
	p.send("reply again\r")
	w.waitEvent("Stop")
	p.send("clear\r")
	w.waitEvent("SessionStart")
	p.send("\x03")
	p.expect("Press Ctrl-C again")
	p.send("\x03")
	if code := p.wait(); code != 0 {
		t.Errorf("exit code %d after Ctrl-C twice", code)
	}
	ps = w.payloads()[before:]
	want = []string{"SessionStart", "UserPromptSubmit", "MessageDisplay", "Stop", "SessionEnd", "SessionStart", "SessionEnd"}
	if diff := cmp.Diff(want, events(ps)); diff != "" {
		t.Fatalf("hook events after resume (-want +got):\n%s", diff)
	}
	checkShapes(t, "claude", ps)
	if str(ps[0], "source") != "resume" || str(ps[0], "session_id") != id {
		t.Errorf("resume SessionStart = %v", ps[0])
	}
	if str(ps[4], "reason") != "clear" || str(ps[5], "source") != "clear" {
		t.Errorf("clear: SessionEnd %v, SessionStart %v", ps[4], ps[5])
	}
	newID := str(ps[5], "session_id")
	if newID == id || str(ps[6], "session_id") != newID || str(ps[6], "reason") != "prompt_input_exit" {
		t.Errorf("after clear: SessionStart id %q, SessionEnd %v", newID, ps[6])
	}
	if got := fileSize(t, transcriptPath); got <= size {
		t.Errorf("the transcript did not grow on resume: %d → %d bytes", size, got)
	}
	if ts := parseClaude(t, w.home, cfgDir, transcriptPath); ts.PromptCount != 6 {
		t.Errorf("after resume the transcript has %d prompts, want 6", ts.PromptCount)
	}
}

func parseClaude(t *testing.T, home, cfgDir, path string) transcript.Session {
	t.Helper()
	env := transcript.Env{Home: home, Getenv: func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return cfgDir
		}
		return ""
	}}
	out, err := claudeprov.New().Parse(context.Background(), env, path, transcript.ParseOptions{})
	if err != nil || len(out) == 0 {
		t.Fatalf("parse %s: %v (%d sessions)", path, err, len(out))
	}
	return out[0].Session
}

func TestClaudeRefusals(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	existing := "22222222-2222-4333-8444-555555555555"
	writeFile(t, filepath.Join(w.home, ".claude", "projects", claudeProjectDir(w.repo), existing+".jsonl"), "{}\n")
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"resume unknown", []string{"--resume", "33333333-2222-4333-8444-555555555555"}, 1, "No conversation found with session ID: 33333333-2222-4333-8444-555555555555"},
		{"session id in use", []string{"--session-id", existing}, 1, "Error: Session ID " + existing + " is already in use."},
		{"bad session id", []string{"--session-id", "nope"}, 1, "Error: Invalid session ID. Must be a valid UUID."},
		{"session id with resume", []string{"--session-id", "44444444-2222-4333-8444-555555555555", "--resume", existing}, 1, "--fork-session"},
		{"unknown flag", []string{"--no-daemon"}, 1, "error: unknown option '--no-daemon'"},
		{"continue without sessions elsewhere", []string{"--continue"}, 0, ""},
		{"version", []string{"--version"}, 0, "2.1.328 (Claude Code)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := w.start(w.repo, "claude", tt.args)
			if tt.msg == "" {
				p.expect("> ")
				p.send("exit\r")
			} else {
				p.expect(tt.msg)
			}
			if code := p.wait(); code != tt.code {
				t.Errorf("exit code %d, want %d", code, tt.code)
			}
		})
	}
	if ps := w.payloads(); len(ps) != 0 {
		t.Errorf("refused launches ran hooks: %v", events(ps))
	}
}

func TestExitAtStart(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	writeFile(t, filepath.Join(w.home, ".claude", "settings.json"), hooksJSON(claudeEvents, nil, ""))
	id := "55555555-2222-4333-8444-555555555555"
	p := w.start(w.repo, "claude", []string{"--session-id", id}, fakeagenttest.EnvExitAtStart+"=1")
	if code := p.wait(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if inv := w.invocations(); len(inv) != 1 || !slices.Contains(inv[0].Argv, id) {
		t.Errorf("invocations = %+v", inv)
	}
	if ps := w.payloads(); len(ps) != 0 {
		t.Errorf("hooks ran: %v", events(ps))
	}
	if _, err := os.Stat(filepath.Join(w.home, ".claude", "projects")); err == nil {
		t.Errorf("a transcript directory was created")
	}
	// The same new-session command works afterwards: nothing was recorded.
	p = w.start(w.repo, "claude", []string{"--session-id", id})
	p.expect("> ")
	p.send("exit\r")
	if code := p.wait(); code != 0 {
		t.Errorf("relaunch exit code %d", code)
	}
	if ps := w.payloads(); !slices.Equal(events(ps), []string{"SessionStart", "SessionEnd"}) {
		t.Errorf("relaunch events = %v", events(ps))
	}
}

func TestNoHooks(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	writeFile(t, filepath.Join(w.home, ".claude", "settings.json"), hooksJSON(claudeEvents, nil, ""))
	p := w.start(w.repo, "claude", nil, fakeagenttest.EnvNoHooks+"=1")
	p.expect("> ")
	p.send("reply hi\r")
	p.expect("● hi")
	p.send("exit\r")
	p.wait()
	if ps := w.payloads(); len(ps) != 0 {
		t.Errorf("hooks ran with %s=1: %v", fakeagenttest.EnvNoHooks, events(ps))
	}
}

// TestClaudeIdleAndHangup: an idle_prompt Notification after a turn, and
// SessionEnd with reason "other" when the terminal goes away.
func TestClaudeIdleAndHangup(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	writeFile(t, filepath.Join(w.home, ".claude", "settings.json"), hooksJSON(claudeEvents, ptr("*"), ""))
	p := w.start(w.repo, "claude", nil, fakeagenttest.EnvIdleDelay+"=50ms", "TERM_PROGRAM=ghostty")
	p.expect("> ")
	p.send("reply hi\r")
	ps := w.waitEvent("Notification")
	if n := ps[len(ps)-1]; str(n, "notification_type") != "idle_prompt" || str(n, "message") != "Claude is waiting for your input" {
		t.Errorf("idle notification = %v", n)
	}
	p.expect("\x1b]9;4;3;\x07")                                                  // progress while working (ghostty)
	p.expect("\x1b]777;notify;Claude Code;Claude is waiting for your input\x07") // desktop notification
	// What the kernel sends when the pane's terminal goes away.
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(); code != 129 {
		t.Errorf("exit code after hangup %d, want 129", code)
	}
	ps = w.payloads()
	want := []string{"SessionStart", "UserPromptSubmit", "MessageDisplay", "Stop", "Notification", "SessionEnd"}
	if diff := cmp.Diff(want, events(ps)); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	if str(ps[5], "reason") != "other" {
		t.Errorf("SessionEnd after hangup = %v", ps[5])
	}
	checkShapes(t, "claude", ps)
}

// TestClaudeToolInterrupt: Esc during a running tool ends the turn with
// PostToolUseFailure is_interrupt and no Stop.
func TestClaudeToolInterrupt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	writeFile(t, filepath.Join(w.home, ".claude", "settings.json"),
		hooksJSON(append(claudeEvents, "PostToolUseFailure"), nil, ""))
	p := w.start(w.repo, "claude", nil)
	p.expect("> ")
	p.send("slow 60000 make test\r")
	w.waitEvent("MessageDisplay")
	p.send("\x1b")
	ps := w.waitEvent("PostToolUseFailure")
	f := ps[len(ps)-1]
	if f["is_interrupt"] != true || str(f, "tool_name") != "Bash" || str(f, "tool_use_id") != str(ps[2], "tool_use_id") {
		t.Errorf("PostToolUseFailure = %v", f)
	}
	p.send("exit\r")
	p.wait()
	ps = w.payloads()
	want := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "MessageDisplay", "PostToolUseFailure", "SessionEnd"}
	if diff := cmp.Diff(want, events(ps)); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	// No real PostToolUseFailure was captured; check the others.
	checkShapes(t, "claude", slices.Delete(ps, 4, 5))
}
