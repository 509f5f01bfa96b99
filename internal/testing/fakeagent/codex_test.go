package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var codexEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop", "SessionEnd"}

func TestCodex(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	codexHome := filepath.Join(w.home, "codex-home")
	w.env = append(w.env, "CODEX_HOME="+codexHome)
	writeFile(t, filepath.Join(codexHome, "hooks.json"), hooksJSON(codexEvents, nil, `,"timeout":30`))

	p := w.start(w.repo, "codex", []string{"--no-daemon"})
	p.expect("OpenAI Codex (v0.169.0)")
	p.expect("\x1b]7501;state=idle:app=codex\x1b\\")
	// Nothing happens before the first prompt: no hook, no rollout.
	if ps := w.payloads(); len(ps) != 0 {
		t.Errorf("hooks before the first prompt: %v", events(ps))
	}
	if m, _ := filepath.Glob(filepath.Join(codexHome, "sessions", "*", "*", "*", "*")); len(m) != 0 {
		t.Errorf("rollout before the first prompt: %v", m)
	}
	p.send("reply hi\r")
	w.waitEvent("Stop")
	p.expect("\x1b]7501;state=done:app=codex\x1b\\")
	ps := w.payloads()
	id := str(ps[0], "session_id")
	rollout := str(ps[0], "transcript_path")
	if !strings.HasPrefix(rollout, filepath.Join(codexHome, "sessions")+"/") || !strings.HasSuffix(rollout, "-"+id+".jsonl") {
		t.Errorf("rollout path %q for session %q", rollout, id)
	}
	if len(id) != 36 || id[14] != '7' {
		t.Errorf("session id %q is not a UUIDv7", id)
	}
	inv := w.invocations()
	if len(inv) != 1 || !slices.Equal(inv[0].Argv, []string{"codex", "--no-daemon"}) {
		t.Fatalf("invocations = %+v", inv)
	}
	// The rollout stays open in the Codex process (routing rule 1).
	if files := openFiles(t, inv[0].PID); !contains(files, rollout) {
		t.Errorf("codex (pid %d) does not hold %s open: %v", inv[0].PID, rollout, files)
	}
	comm, err := os.ReadFile(filepathJoinProc(inv[0].PID, "comm"))
	if err != nil || strings.TrimSpace(string(comm)) != "codex" {
		t.Errorf("comm = %q, %v", comm, err)
	}

	p.send("tool touch made.txt\r")
	w.waitEvent("PermissionRequest")
	p.expect("\x1b]7501;state=blocked:app=codex:kind=permission\x1b\\")
	p.expect("Allow? [y/n]")
	p.send("y")
	w.waitEvent("Stop")
	p.send("tool rm -rf /\r")
	w.waitEvent("PermissionRequest")
	p.expect("Allow? [y/n]")
	p.send("n")
	p.expect("You canceled the request")
	p.send("fail\r")
	p.expect("stream disconnected")
	p.send("exit\r")
	if code := p.wait(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	p.expect("codex resume " + id)

	ps = w.payloads()
	want := []string{
		"SessionStart", "UserPromptSubmit", "Stop",
		"UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop",
		"UserPromptSubmit", "PreToolUse", "PermissionRequest",
		"UserPromptSubmit",
		"SessionEnd",
	}
	if diff := cmp.Diff(want, events(ps)); diff != "" {
		t.Fatalf("hook events (-want +got):\n%s", diff)
	}
	checkShapes(t, "codex", ps)
	for i, pl := range ps {
		if str(pl, "session_id") != id || str(pl, "transcript_path") != rollout || str(pl, "cwd") != w.repo {
			t.Errorf("payload %d: %v", i, pl)
		}
	}
	if str(ps[0], "source") != "startup" || str(ps[12], "reason") != "other" {
		t.Errorf("SessionStart source %q, SessionEnd reason %q", str(ps[0], "source"), str(ps[12], "reason"))
	}
	if str(ps[1], "turn_id") == "" || str(ps[1], "turn_id") != str(ps[2], "turn_id") || str(ps[1], "turn_id") == str(ps[3], "turn_id") {
		t.Errorf("turn_id not per turn")
	}
	meta := rolloutMeta(t, rollout)
	if meta["id"] != id || meta["cwd"] != w.repo || meta["originator"] != "codex-tui" || meta["source"] != "cli" {
		t.Errorf("session_meta = %v", meta)
	}

	// Resume: the rollout is open from the start, SessionStart waits for
	// the first prompt, the same file grows.
	size := fileSize(t, rollout)
	before := len(ps)
	p = w.start(w.repo, "codex", []string{"resume", id, "--no-daemon"})
	p.expect("› reply hi")
	p.expect("\x1b]7501;state=idle")
	inv = w.invocations()
	if files := openFiles(t, inv[1].PID); !contains(files, rollout) {
		t.Errorf("resumed codex does not hold %s open: %v", rollout, files)
	}
	if n := len(w.payloads()); n != before {
		t.Errorf("hooks before the first prompt of a resumed session")
	}
	p.send("reply again\r")
	w.waitEvent("Stop")
	p.send("\x03\x03")
	if code := p.wait(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	ps = w.payloads()[before:]
	if diff := cmp.Diff([]string{"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}, events(ps)); diff != "" {
		t.Fatalf("hook events after resume (-want +got):\n%s", diff)
	}
	checkShapes(t, "codex", ps)
	if str(ps[0], "source") != "resume" || str(ps[0], "session_id") != id || str(ps[0], "transcript_path") != rollout {
		t.Errorf("resume SessionStart = %v", ps[0])
	}
	if got := fileSize(t, rollout); got <= size {
		t.Errorf("the rollout did not grow: %d → %d", size, got)
	}
	if m, _ := filepath.Glob(filepath.Join(codexHome, "sessions", "*", "*", "*", "*")); len(m) != 1 {
		t.Errorf("rollouts = %v, want one", m)
	}
}

func filepathJoinProc(pid int, name string) string {
	return filepath.Join("/proc", strconv.Itoa(pid), name)
}

func rolloutMeta(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	var rec struct {
		Type    string         `json:"type"`
		Payload map[string]any `json:"payload"`
	}
	if err := json.Unmarshal([]byte(first), &rec); err != nil || rec.Type != "session_meta" {
		t.Fatalf("first rollout record %q: %v", first, err)
	}
	return rec.Payload
}

func TestCodexRefusals(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CODEX_HOME="+filepath.Join(w.home, ".codex"))
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"resume unknown", []string{"resume", "01a22c19-5448-7d02-89e7-73b160cc00ef", "--no-daemon"}, 1, "ERROR: No saved session found with ID 01a22c19-5448-7d02-89e7-73b160cc00ef."},
		{"unknown flag", []string{"--session-id", "x"}, 2, "error: unexpected argument '--session-id' found"},
		{"exec", []string{"exec", "hi"}, 2, "not supported"},
		{"version", []string{"--version"}, 0, "codex-cli 0.169.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := w.start(w.repo, "codex", tt.args)
			p.expect(tt.msg)
			if code := p.wait(); code != tt.code {
				t.Errorf("exit code %d, want %d", code, tt.code)
			}
		})
	}
}

// TestCodexHookTrust checks the opt-in trust gate: only hooks with a
// hooks.state entry in config.toml run.
func TestCodexHookTrust(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	codexHome := filepath.Join(w.home, ".codex")
	hooksPath := filepath.Join(codexHome, "hooks.json")
	writeFile(t, hooksPath, hooksJSON([]string{"SessionStart", "UserPromptSubmit", "Stop"}, nil, ""))
	writeFile(t, filepath.Join(codexHome, "config.toml"), "[hooks.state]\n\n[hooks.state.\""+hooksPath+":user_prompt_submit:0:0\"]\ntrusted_hash = \"sha256:00\"\n")
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--no-daemon"}, []string{"UserPromptSubmit"}},
		{[]string{"--no-daemon", "--dangerously-bypass-hook-trust"}, []string{"SessionStart", "UserPromptSubmit", "Stop"}},
	} {
		_ = os.Remove(w.hookLog)
		p := w.start(w.repo, "codex", tt.args, "FAKEAGENT_CODEX_HOOK_TRUST=1")
		p.expect("OpenAI Codex")
		p.send("reply hi\r")
		p.expect("• hi")
		p.send("exit\r")
		p.wait()
		if got := events(w.payloads()); !slices.Equal(got, tt.want) {
			t.Errorf("%v: events %v, want %v", tt.args, got, tt.want)
		}
	}
}

// TestCodexDaemon runs two Codex panes without --no-daemon: the first
// starts the shared daemon with its own environment, and the daemon, not
// the panes, holds the rollouts and runs every hook.
func TestCodexDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	codexHome := filepath.Join(w.home, ".codex")
	probe := filepath.Join(w.home, "probe.txt")
	doc := hooksJSON(codexEvents, nil, "")
	doc = strings.Replace(doc, `"UserPromptSubmit":[`, `"UserPromptSubmit":[{"hooks":[{"type":"command","command":`+
		strconv.Quote(`echo "$MUSTER_SURFACE_ID $PPID" >> `+probe)+`}]},`, 1)
	writeFile(t, filepath.Join(codexHome, "hooks.json"), doc)
	w.env = append(w.env, "FAKEAGENT_CODEX_DAEMON_IDLE=1s")
	pidFile := filepath.Join(codexHome, "app-server-daemon", "daemon.pid")
	t.Cleanup(func() {
		var d struct{ PID int }
		if data, err := os.ReadFile(pidFile); err == nil && json.Unmarshal(data, &d) == nil && d.PID > 0 {
			if proc, err := os.FindProcess(d.PID); err == nil {
				_ = proc.Kill()
			}
		}
	})
	repo2 := filepath.Join(filepath.Dir(w.repo), "other")
	if err := os.MkdirAll(repo2, 0o755); err != nil {
		t.Fatal(err)
	}
	a := w.start(w.repo, "codex", nil, "MUSTER_SURFACE_ID=surface-A")
	a.expect("OpenAI Codex")
	b := w.start(repo2, "codex", nil, "MUSTER_SURFACE_ID=surface-B")
	b.expect("OpenAI Codex")
	a.send("reply one\r")
	w.waitEvent("Stop")
	b.send("reply two\r")
	w.waitEvents(6)
	w.waitEvent("Stop")

	var d struct{ PID int }
	data, err := os.ReadFile(pidFile)
	if err != nil || json.Unmarshal(data, &d) != nil || d.PID == 0 {
		t.Fatalf("daemon pid file %q: %v", data, err)
	}
	ps := w.payloads()
	rolloutB := str(ps[4], "transcript_path")
	if str(ps[4], "cwd") != repo2 || rolloutB == str(ps[0], "transcript_path") {
		t.Fatalf("second pane's events: %v", ps[3:])
	}
	inv := w.invocations()
	if len(inv) != 2 {
		t.Fatalf("invocations = %+v (the daemon must not be logged)", inv)
	}
	if contains(openFiles(t, inv[1].PID), rolloutB) {
		t.Errorf("pane B's codex holds its rollout open; the daemon should")
	}
	if !contains(openFiles(t, d.PID), rolloutB) {
		t.Errorf("the daemon does not hold %s open", rolloutB)
	}
	if m := rolloutMeta(t, rolloutB); m["source"] != "vscode" || m["cwd"] != repo2 {
		t.Errorf("session_meta = %v", m)
	}
	lines, err := os.ReadFile(probe)
	if err != nil {
		t.Fatal(err)
	}
	want := "surface-A " + strconv.Itoa(d.PID) + "\n"
	if string(lines) != want+want {
		t.Errorf("hook env and parent = %q, want %q twice (the first pane's env, the daemon)", lines, want)
	}
	// SessionEnd comes from the daemon after the TUI has gone.
	b.send("exit\r")
	b.expect("Disconnected from this task")
	b.wait()
	ps = w.waitEvent("SessionEnd")
	if last := ps[len(ps)-1]; str(last, "transcript_path") != rolloutB || str(last, "reason") != "other" {
		t.Errorf("SessionEnd = %v", last)
	}
	a.send("exit\r")
	a.wait()
	w.waitEvents(len(ps) + 1)
	checkShapes(t, "codex", w.payloads())
}
