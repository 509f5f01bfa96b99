package core_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// evil is an agent's text that tries to drive the terminal it is printed
// on: OSC 52 sets the clipboard, OSC 0 the window title, CSI 2J clears
// the screen, U+009B is an 8-bit CSI, and there are bells.
const evil = "Approve\x1b]52;c;cm0gLXJmIH4vKgo=\x07 the\x1b]0;pwned\x1b\\ update\x1b[2J\u009b31m now\x07!"

// evilShown is what the terminal gets instead: the words, nothing else.
const evilShown = "Approve the update now!"

// terminalSafe fails unless out is valid UTF-8 free of C0 controls (but
// newline), DEL and C1 controls.
func terminalSafe(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("muster %s wrote invalid UTF-8: %q", what, out)
	}
	for _, r := range out {
		if r < 0x20 && r != '\n' || r >= 0x7f && r < 0xa0 {
			t.Errorf("muster %s wrote %U to the terminal:\n%q", what, r, out)
			return
		}
	}
}

// TestAgentTextCannotDriveTheTerminal sends an approval request whose
// message carries escape sequences straight to events.sock with a pane's
// capability, as any process in the pane could, and checks the exact bytes
// the commands that show it write.
func TestAgentTextCannotDriveTheTerminal(t *testing.T) {
	e := newEnv(t)
	// The pane sets its own title too, with an 8-bit CSI in it.
	script := e.script(`printf '%s\n' "$MUSTER_EVENT_CAPABILITY" "$MUSTER_SURFACE_ID" "$MUSTER_EVENT_SOCKET" > "$0.cap"
printf '\033]0;title\302\2332J\007'; read line`)
	e.must("new", "--name", "evil", "--detach", "--cmd", script)
	var fields []string
	if !eventually(func() bool {
		b, err := os.ReadFile(script + ".cap")
		fields = strings.Fields(string(b))
		return err == nil && len(fields) == 3
	}) {
		t.Fatal("the pane never wrote its environment")
	}
	capTok, surface, sock := fields[0], fields[1], fields[2]
	msg, _ := json.Marshal(evil)
	// Three hours ago, so that the AGE column reads 3h whatever the clock.
	at := time.Now().UTC().Add(-3*time.Hour - time.Minute).Format(time.RFC3339)
	env := fmt.Sprintf(`{"schemaVersion":1,"capability":%q,"event":{"schemaVersion":1,"id":{"rawValue":"44444444-4444-4444-8444-444444444444"},"runID":{"rawValue":"55555555-5555-4555-8555-555555555555"},"sessionID":null,"surfaceID":{"rawValue":%q},"provider":"claude","kind":"approval-requested","occurredAt":%q,"message":%s,"hookName":"PermissionRequest"}}`,
		capTok, surface, at, msg)
	if got := rawEvent(t, sock, env); !strings.Contains(got, `"inserted":true`) {
		t.Fatalf("event refused: %s", got)
	}
	// A hook name with an escape sequence is refused at ingest.
	bad := strings.Replace(strings.Replace(env, `"PermissionRequest"`, `"Permission\u001b]52;c;eA==\u0007"`, 1), "44444444-4444-4444-8444-444444444444", "66666666-6666-4666-8666-666666666666", 1)
	if got := rawEvent(t, sock, bad); !strings.Contains(got, `"error":"invalid_event"`) {
		t.Errorf("hook name with an escape sequence: %s, want invalid_event", got)
	}

	out := e.must("attention")
	want := "ID  SESSION  REASON              AGE  MESSAGE\n" +
		"1   evil     approval-requested  3h   " + evilShown + "\n"
	if out != want {
		t.Errorf("muster attention wrote\n%q\nwant\n%q", out, want)
	}
	out = e.must("attention", "--all")
	terminalSafe(t, "attention --all", out)
	if !strings.Contains(out, "3h   "+evilShown+"  open\n") {
		t.Errorf("muster attention --all wrote\n%q", out)
	}

	// --json keeps the text, escaped.
	out = e.must("attention", "--json")
	terminalSafe(t, "attention --json", out)
	for _, esc := range []string{`\u001b]52;c;cm0gLXJmIH4vKgo=\u0007`, `\u001b[2J`, `\u009b31m`} {
		if !strings.Contains(out, esc) {
			t.Errorf("attention --json lacks %s:\n%s", esc, out)
		}
	}
	if items := e.attention(false); len(items) != 1 || items[0].Message != evil {
		t.Errorf("attention --json message = %+v, want the text as sent", items)
	}

	out = e.must("explain", "evil")
	terminalSafe(t, "explain", out)
	if !strings.Contains(out, "\nattention:\n  #1 approval-requested: "+evilShown+"\n") {
		t.Errorf("muster explain attention lines:\n%q", out)
	}
	quoted := false
	for line := range strings.Lines(out) {
		// The quoted line is a continuation row of explain's table, indented
		// to its first column's width.
		quoted = quoted || strings.HasPrefix(line, "   ") && strings.TrimLeft(line, " ") == `"`+evilShown+`"`+"\n"
	}
	if !quoted {
		t.Errorf("muster explain lacks the quoted message line:\n%q", out)
	}

	out = e.must("ls")
	terminalSafe(t, "ls", out)
	if !strings.Contains(out, "waitingApproval  !1") {
		t.Errorf("muster ls:\n%s", out)
	}
	if !eventually(func() bool { return e.session("evil").Title == "title\u009b2J" }) {
		t.Errorf("pane title = %q", e.session("evil").Title)
	}
	if out := e.must("ls", "--json"); !strings.Contains(out, `"title": "title\u009b2J"`) {
		t.Errorf("ls --json does not escape the title's C1 control:\n%s", out)
	}
}

// TestHookHelperStripsMessages: messages that pass through `muster hook
// event` are stored without their escape sequences.
func TestHookHelperStripsMessages(t *testing.T) {
	e := newEnv(t)
	payload, _ := json.Marshal(map[string]any{
		"session_id": "d374eff7-6681-449d-ac7d-e8ad01a2744d", "transcript_path": "/tmp/x.jsonl", "cwd": "/tmp",
		"prompt_id": "p-1", "hook_event_name": "Notification", "notification_type": "idle_prompt", "message": evil,
	})
	file := filepath.Join(t.TempDir(), "payload.json")
	if err := os.WriteFile(file, payload, 0o644); err != nil {
		t.Fatal(err)
	}
	script := e.script(fmt.Sprintf("%q hook event claude < %q; echo hook-done; read line", musterBin, file))
	e.must("new", "--name", "hk", "--detach", "--cmd", script)
	e.waitScreen("hk", "hook-done")
	items := e.attention(false)
	if len(items) != 1 || items[0].Reason != "input-requested" || items[0].Message != evilShown {
		t.Fatalf("attention = %+v, want one input request with message %q", items, evilShown)
	}
	out := e.must("attention")
	terminalSafe(t, "attention", out)
	if rows := strings.Split(out, "\n"); len(rows) != 3 || !strings.HasPrefix(rows[1], "1   hk       input-requested  ") || !strings.HasSuffix(rows[1], "  "+evilShown) {
		t.Errorf("muster attention:\n%q", out)
	}
}

// TestTranscriptTextCannotDriveTheTerminal: titles, prompts, tool calls,
// models and folders in a transcript are shown without their escape
// sequences by history and show.
func TestTranscriptTextCannotDriveTheTerminal(t *testing.T) {
	e := newEnv(t)
	id := "eeeeeeee-0000-4000-8000-000000000009"
	at := "2026-03-05T10:00:00Z"
	var b strings.Builder
	for _, rec := range []map[string]any{
		{"type": "user", "uuid": "u1", "message": map[string]any{"role": "user", "content": evil + "\nsecond line"}},
		{"type": "assistant", "uuid": "u2", "requestId": "q1", "message": map[string]any{
			"id": "m1", "role": "assistant", "model": "claude\x1b]52;c;eA==\x07-evil",
			"content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{"command": "echo \x1b]0;t\x07hi"}}},
			"usage":   map[string]any{"input_tokens": 1, "output_tokens": 1}}},
		{"type": "user", "uuid": "u3", "message": map[string]any{"role": "user", "content": []any{map[string]any{
			"type": "tool_result", "tool_use_id": "toolu_1", "content": "out\x1b[31mred\x1b[0m\r\n\u009b2Jdone\x07"}}}},
	} {
		rec["sessionId"], rec["cwd"], rec["timestamp"] = id, "/src/\x1b]7;file:///etc\x07evil", at
		line, _ := json.Marshal(rec)
		b.Write(append(line, '\n'))
	}
	p := filepath.Join(e.userHome(), ".claude", "projects", "-src-evil", id+".jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	out := e.must("history", "--provider", "claude")
	terminalSafe(t, "history", out)
	rows := strings.Split(out, "\n")
	if len(rows) != 3 || !strings.HasSuffix(rows[1], "  claude:eeeeeeee  /src/evil  1        1      "+evilShown) {
		t.Errorf("muster history wrote\n%q", out)
	}
	if out := e.must("history", "--json"); !strings.Contains(out, `"title": "Approve\u001b]52;c;`) && !strings.Contains(out, `"first_prompt": "Approve\u001b]52;c;`) {
		t.Errorf("history --json does not keep the text:\n%s", out)
	}

	out = e.must("show", id)
	terminalSafe(t, "show", out)
	for _, want := range []string{
		evilShown + "\n",
		"claude:" + id + " · claude-evil · ",
		"folder /src/evil\n",
		"> " + evilShown + "\n> second line\n",
		"[Bash] $ echo hi\n",
		"  │ outred\n  │ done\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("muster show lacks %q:\n%s", want, out)
		}
	}
}
