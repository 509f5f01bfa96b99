package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	geminiprov "github.com/musterhq/muster/internal/provider/gemini"
	"github.com/musterhq/muster/internal/transcript"
)

var geminiEvents = []string{
	"SessionStart", "BeforeAgent", "PreCompress", "BeforeModel", "BeforeToolSelection", "AfterModel",
	"BeforeTool", "Notification", "AfterTool", "AfterAgent", "SessionEnd",
}

func TestGemini(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	base := filepath.Join(w.home, "gemini-home")
	w.env = append(w.env, "GEMINI_CLI_HOME="+base)
	// settings.json is JSONC; hooks have names and millisecond timeouts.
	settings := "// user settings\n" + strings.Replace(hooksJSON(geminiEvents, ptr("*"), `,"name":"log","timeout":10000`),
		`{"hooks":{`, "{/* hooks */ \"hooksConfig\": {\"enabled\": true},\n\"hooks\":{", 1)
	probe := filepath.Join(w.home, "probe.txt")
	settings = strings.Replace(settings, `"SessionStart":[{`, `"SessionStart":[{"matcher":"startup","hooks":[{"name":"probe","type":"command","command":`+
		strconv.Quote(`echo "$PPID $(cut -d' ' -f4 /proc/$PPID/stat) $GEMINI_SESSION_ID $GEMINI_PROJECT_DIR $GEMINI_CLI_NO_RELAUNCH" > `+probe)+`}]},{`, 1)
	writeFile(t, filepath.Join(base, ".gemini", "settings.json"), settings)
	id := "33333333-2222-4333-8444-555555555555"

	p := w.start(w.repo, "gemini", []string{"--session-id", id})
	p.expect("\x1b]0;◇  Ready (my_repo.v2)")
	w.waitEvent("SessionStart")
	p.send("reply hi\r")
	w.waitEvent("AfterAgent")
	p.send("tool touch made.txt && echo done\r")
	w.waitEvent("Notification")
	p.expect("\x1b]0;✋  Action Required (my_repo.v2)")
	p.send("y")
	w.waitEvent("AfterAgent")
	p.send("tool rm -rf /\r")
	w.waitEvent("Notification")
	p.expect("Allow execution? [y/n]")
	p.send("n")
	p.expect("Request cancelled")
	p.send("fail\r")
	w.waitEvent("AfterAgent")
	p.send("/quit\r")
	if code := p.wait(); code != 0 {
		t.Errorf("exit code %d", code)
	}

	ps := w.payloads()
	model := []string{"BeforeModel", "BeforeToolSelection", "AfterModel"}
	want := slices.Concat(
		[]string{"SessionStart"},
		[]string{"BeforeAgent", "PreCompress"}, model, []string{"AfterAgent"},
		[]string{"BeforeAgent", "PreCompress"}, model, []string{"BeforeTool", "Notification", "AfterTool", "PreCompress"}, model, []string{"AfterAgent"},
		[]string{"BeforeAgent", "PreCompress"}, model, []string{"BeforeTool", "Notification"},
		[]string{"BeforeAgent", "PreCompress"}, slices.Repeat([]string{"BeforeModel", "BeforeToolSelection"}, 10), []string{"AfterAgent"},
		[]string{"SessionEnd", "SessionEnd"},
	)
	if diff := cmp.Diff(want, events(ps)); diff != "" {
		t.Fatalf("hook events (-want +got):\n%s", diff)
	}
	checkShapes(t, "gemini", ps)
	chat := str(ps[0], "transcript_path")
	wantDir := filepath.Join(base, ".gemini", "tmp", "my_repo.v2", "chats")
	if filepath.Dir(chat) != wantDir || !strings.HasPrefix(filepath.Base(chat), "session-") || !strings.HasSuffix(chat, "-33333333.jsonl") {
		t.Errorf("chat file %q, want session-<time>-33333333.jsonl in %s", chat, wantDir)
	}
	for i, pl := range ps {
		if str(pl, "session_id") != id || str(pl, "transcript_path") != chat || str(pl, "cwd") != w.repo {
			t.Errorf("payload %d: %v", i, pl)
		}
	}
	if n := ps[13]; str(n, "notification_type") != "ToolPermission" {
		t.Errorf("Notification = %v", n)
	} else if d, _ := n["details"].(map[string]any); d["rootCommand"] != "touch, echo" {
		t.Errorf("Notification details = %v", d)
	}
	last := ps[len(ps)-3]
	if str(last, "prompt_response") != "[no response text]" {
		t.Errorf("failed turn AfterAgent = %v", last)
	}
	if str(ps[len(ps)-1], "reason") != "exit" {
		t.Errorf("SessionEnd = %v", ps[len(ps)-1])
	}
	// Gemini relaunches itself: the hooks' parent is a child of the
	// process the terminal started.
	inv := w.invocations()
	if len(inv) != 1 {
		t.Fatalf("invocations = %+v", inv)
	}
	data, err := os.ReadFile(probe)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data))
	if len(f) != 5 || f[0] == strconv.Itoa(inv[0].PID) || f[1] != strconv.Itoa(inv[0].PID) ||
		f[2] != id || f[3] != w.repo || f[4] != "true" {
		t.Errorf("hook probe %q (gemini pid %d)", f, inv[0].PID)
	}
	sess := parseGemini(t, w.home, base, chat)
	if sess.ID != id || sess.PromptCount != 4 {
		t.Errorf("parsed chat: id %q prompts %d", sess.ID, sess.PromptCount)
	}

	// Resume: SessionStart names the file created at startup, later hooks
	// the resumed one, which grows.
	size := fileSize(t, chat)
	before := len(ps)
	p = w.start(w.repo, "gemini", []string{"--resume", id})
	p.expect("✦ hi")
	w.waitEvent("SessionStart")
	p.send("reply again\r")
	w.waitEvent("AfterAgent")
	p.send("\x03\x03")
	p.wait()
	ps = w.payloads()[before:]
	want = slices.Concat([]string{"SessionStart", "BeforeAgent", "PreCompress"}, model, []string{"AfterAgent", "SessionEnd", "SessionEnd"})
	if diff := cmp.Diff(want, events(ps)); diff != "" {
		t.Fatalf("hook events after resume (-want +got):\n%s", diff)
	}
	checkShapes(t, "gemini", ps)
	if str(ps[0], "source") != "resume" || str(ps[0], "session_id") != id {
		t.Errorf("resume SessionStart = %v", ps[0])
	}
	for _, pl := range ps[1:] {
		if str(pl, "transcript_path") != chat {
			t.Errorf("%s after resume names %q, want %q", str(pl, "hook_event_name"), str(pl, "transcript_path"), chat)
		}
	}
	if got := fileSize(t, chat); got <= size {
		t.Errorf("the chat did not grow on resume: %d → %d", size, got)
	}
	if sess := parseGemini(t, w.home, base, chat); sess.PromptCount != 5 {
		t.Errorf("after resume the chat has %d prompts, want 5", sess.PromptCount)
	}
}

func parseGemini(t *testing.T, home, base, path string) transcript.Session {
	t.Helper()
	env := transcript.Env{Home: home, Getenv: func(k string) string {
		if k == "GEMINI_CLI_HOME" {
			return base
		}
		return ""
	}}
	out, err := geminiprov.New().Parse(context.Background(), env, path, transcript.ParseOptions{})
	if err != nil || len(out) == 0 {
		t.Fatalf("parse %s: %v (%d sessions)", path, err, len(out))
	}
	return out[0].Session
}

func TestGeminiRefusals(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"resume without sessions", []string{"--resume", "latest"}, 1, "Error resuming session: No previous sessions found for this project."},
		{"unknown flag", []string{"--no-daemon"}, 1, "Unknown argument: no-daemon"},
		{"query", []string{"hello"}, 1, "not supported"},
		{"version", []string{"--version"}, 0, "0.61.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := w.start(w.repo, "gemini", tt.args)
			p.expect(tt.msg)
			if code := p.wait(); code != tt.code {
				t.Errorf("exit code %d, want %d", code, tt.code)
			}
		})
	}
	// With a session on disk, an unknown id is an invalid identifier.
	p := w.start(w.repo, "gemini", nil)
	p.expect("Ready")
	p.send("reply hi\r")
	p.expect("✦ hi")
	p.send("exit\r")
	p.wait()
	p = w.start(w.repo, "gemini", []string{"--resume", "nope"})
	p.expect(`Error resuming session: Invalid session identifier "nope".`)
	if code := p.wait(); code != 1 {
		t.Errorf("exit code %d", code)
	}
}
