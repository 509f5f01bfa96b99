package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/musterhq/muster/internal/iostreams"
	"github.com/musterhq/muster/internal/proto"
)

// evil is agent text that tries to drive the terminal it is printed on:
// OSC 52 (set the clipboard), OSC 0 (window title), CSI 2J (clear the
// screen), an 8-bit CSI (U+009B), a bell, and a bidi override.
const evil = "Approve\x1b]52;c;cm0gLXJmIH4vKgo=\x07 the\x1b]0;pwned\x1b\\ update\x1b[2J\u009b31m now\x07\u202e!"

// evilShown is what a terminal must get instead.
const evilShown = "Approve the update now!"

// checkTerminalSafe fails when out holds a byte or rune that a terminal
// would act on: C0 controls but newline and tab, DEL, C1 controls, and
// bidi overrides.
func checkTerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: invalid UTF-8 in %q", what, out)
	}
	for _, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			t.Errorf("%s: %U reaches the terminal in\n%q", what, r, out)
			return
		}
	}
}

func TestAttentionAndExplainStripAgentText(t *testing.T) {
	d := startEventDaemon(t)
	d.session("api", "s1")
	d.post("s1", "e1", "r1", proto.KindApprovalRequested, evil)

	code, out, _ := d.run("attention")
	// The age column depends on the clock; everything else is exact.
	want := "ID  SESSION  REASON              AGE  MESSAGE\n" +
		"1   api      approval-requested  %s  " + evilShown + "\n"
	age := strings.Fields(strings.Split(out, "\n")[1])[3]
	if code != 0 || out != fmt.Sprintf(want, fmt.Sprintf("%-3s", age)) {
		t.Errorf("attention: exit %d\n got %q\nwant %q", code, out, fmt.Sprintf(want, fmt.Sprintf("%-3s", age)))
	}

	// --json keeps the message as sent, escaped.
	_, out, _ = d.run("attention", "--json")
	checkTerminalSafe(t, "attention --json", out)
	var items []proto.AttentionItem
	if err := json.Unmarshal([]byte(out), &items); err != nil || len(items) != 1 || items[0].Message != evil {
		t.Fatalf("attention --json = %s (%v)", out, err)
	}
	for _, esc := range []string{`\u001b]52;c;`, `\u0007`, `\u009b31m`, `\u202e`} {
		if !strings.Contains(out, esc) {
			t.Errorf("attention --json lacks %s:\n%s", esc, out)
		}
	}

	_, out, _ = d.run("explain", "api")
	checkTerminalSafe(t, "explain", out)
	for _, line := range []string{
		"\n" + strings.Repeat(" ", 11) + "\"" + evilShown + "\"\n",
		"\nattention:\n  #1 approval-requested: " + evilShown + "\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("explain lacks %q:\n%s", line, out)
		}
	}
	_, out, _ = d.run("explain", "api", "--json")
	checkTerminalSafe(t, "explain --json", out)
	var x proto.Explanation
	if err := json.Unmarshal([]byte(out), &x); err != nil || x.Because.Message != evil || x.Attention[0].Message != evil {
		t.Fatalf("explain --json = %s (%v)", out, err)
	}
}

func TestLsStripsAgentText(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	run := "waitingApproval"
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	list := []proto.SessionInfo{{
		ID: "0123456789\x1b]0;x\x07", Name: "api\u009b2J", Provider: "claude", State: "restorable", CWD: "/src/\x1b]7;file:///etc\x07app\tx",
		CreatedAt: created.Format(time.RFC3339), RunState: &run, Title: evil,
		Reason: "transcript " + evil + " is gone",
	}}
	printSessions(&Factory{IO: ios}, list, created.Add(3*time.Hour))
	want := "NAME  ID        PROVIDER  STATUS      !  ACTIVITY  PID  MEM  CPU  CWD         AGE\n" +
		"api   01234567  claude    restorable  -  -         -    -    -    /src/app x  3h\n" +
		"api: transcript " + evilShown + " is gone\n"
	if out.String() != want {
		t.Errorf("ls:\n got %q\nwant %q", out.String(), want)
	}
}

func TestErrorsStripAgentText(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	code := reportError(&Factory{IO: ios}, &proto.Error{Code: proto.CodeInvalid, Message: "no session named \"" + evil + "\"", Hint: "see\x1b[2J"})
	if want := "muster: no session named \"" + evilShown + "\"\n  see\n"; code != ExitError || errOut.String() != want {
		t.Errorf("proto error: %d %q, want %q", code, errOut.String(), want)
	}
	errOut.Reset()
	reportError(&Factory{IO: ios}, errors.New("load\x1b]52;c;eA==\x07 failed\nsecond line"))
	if want := "muster: load failed\nsecond line\n"; errOut.String() != want {
		t.Errorf("plain error: %q, want %q", errOut.String(), want)
	}
}

func TestWriteJSONEscapesTerminalControls(t *testing.T) {
	v := map[string]string{"m": "a\x1b[2J\u009b\u0085\x7f\u202e\u2066b<é>✓"}
	var b strings.Builder
	if err := writeJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	want := `{` + "\n" + `  "m": "a\u001b[2J\u009b\u0085\u007f\u202e\u2066b\u003cé\u003e✓"` + "\n}\n"
	if b.String() != want {
		t.Errorf("writeJSON = %s, want %s", b.String(), want)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil || back["m"] != v["m"] {
		t.Errorf("round trip: %q (%v)", back["m"], err)
	}
}

// TestTranscriptTextIsStripped covers history, show and stats: titles,
// first prompts, tool calls and output, model names and folders come from
// transcript files that any program can write.
func TestTranscriptTextIsStripped(t *testing.T) {
	e := newCLIEnv(t)
	id := "eeeeeeee-0000-4000-8000-000000000009"
	cwd := "/src/\x1b]0;t\x07evil"
	t0 := time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC)
	var b strings.Builder
	line := func(v map[string]any) {
		v["sessionId"], v["cwd"], v["timestamp"] = id, cwd, t0.Format(time.RFC3339)
		data, _ := json.Marshal(v)
		b.Write(data)
		b.WriteByte('\n')
	}
	line(map[string]any{"type": "user", "uuid": "u1", "message": map[string]any{"role": "user", "content": evil + "\nsecond line"}})
	line(map[string]any{"type": "assistant", "uuid": "u2", "requestId": "q1", "message": map[string]any{
		"id": "m1", "role": "assistant", "model": "claude\x1b]52;c;eA==\x07-evil",
		"content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash\x1b[2J", "input": map[string]any{"command": "echo \x1b]52;c;eA==\x07hi"}}},
		"usage":   map[string]any{"input_tokens": 1, "output_tokens": 1}}})
	line(map[string]any{"type": "user", "uuid": "u3", "message": map[string]any{"role": "user", "content": []any{map[string]any{
		"type": "tool_result", "tool_use_id": "toolu_1", "content": "out\x1b[31mred\x1b[0m\r\n\u009b2Jdone"}}}})
	p := filepath.Join(e.dir, "-src-evil", id+".jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := e.run("history", "--search", "Approve")
	checkTerminalSafe(t, "history", out+errOut)
	rows := strings.Split(out, "\n")
	if code != 0 || len(rows) < 2 || !strings.HasSuffix(rows[1], "  claude:eeeeeeee  /src/evil  1        1      "+evilShown) {
		t.Errorf("history: exit %d\n%q", code, out)
	}
	_, out, _ = e.run("history", "--json", "--search", "Approve")
	checkTerminalSafe(t, "history --json", out)
	if !strings.Contains(out, `Approve\u001b]52;c;`) {
		t.Errorf("history --json does not keep the text:\n%s", out)
	}

	code, out, errOut = e.run("show", id)
	checkTerminalSafe(t, "show", out+errOut)
	for _, want := range []string{
		evilShown + "\n",
		"claude:" + id + " · claude-evil · ",
		"folder /src/evil\n",
		"> " + evilShown + "\n> second line\n",
		"[Bash] $ echo hi\n",
		"  │ outred\n  │ done\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show (exit %d) lacks %q:\n%s", code, want, out)
		}
	}

	_, out, errOut = e.run("stats", "--by", "model", "--search", "Approve")
	checkTerminalSafe(t, "stats", out+errOut)
	if !strings.Contains(out, "claude-evil") || !strings.Contains(out, "tools: Bash 1") {
		t.Errorf("stats:\n%s", out)
	}
}
