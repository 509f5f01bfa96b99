package core_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// writeConfig writes the home's config.toml; the daemon reads it when it
// starts, the attach client when it attaches.
func (e *env) writeConfig(text string) {
	e.t.Helper()
	dir := filepath.Join(e.home, "config")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(text), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// askApproval has session name's agent (a hook shell) start a turn and
// ask to run a command, through its real hook path.
func (e *env) askApproval(name, promptID, command string) {
	e.t.Helper()
	e.claudeHook(name, "UserPromptSubmit", promptID, `,"prompt":"run it"`)
	e.claudeHook(name, "PermissionRequest", promptID, fmt.Sprintf(`,"tool_name":"Bash","tool_input":{"command":%q}`, command))
}

// A person attached to one session hears of another session's new
// attention item: a line over the bottom row that goes away after
// message_seconds, the bell, and (terminal = "osc9") a desktop
// notification through the outer terminal. The client attached to the asking
// session itself gets neither: the agent's own screen shows the question.
func TestAttachedClientHearsOtherSessionsAttention(t *testing.T) {
	bothAttachModes(t, func(t *testing.T, e *env) {
		e.installHookLoop()
		e.writeConfig("[notify]\ncommand = \"none\"\nmessage_seconds = 1\nterminal = \"osc9\"\n")
		e.must("new", "--name", "cl", "--detach", "--cmd", e.hookShell("cl"))
		e.must("new", "--name", "sh", "--detach", "--cmd", "bash --norc --noprofile")
		c := e.attach("sh", 100, 30, true)
		c.typeText("echo attached-$((6*7))\r")
		c.waitScreen("attached-42")
		own := e.attach("cl", 100, 30, true)

		e.askApproval("cl", "p-1", "make deploy")
		screen := c.waitScreen("cl needs approval: Bash: make deploy")
		lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
		if len(lines) != 30 || !strings.Contains(lines[29], "needs approval") {
			t.Errorf("the notice is not on the bottom row:\n%s", screen)
		}
		c.mu.Lock()
		raw := c.raw.String()
		c.mu.Unlock()
		if !strings.Contains(raw, "make deploy (muster attach cl) \x1b[0m\x1b8\a") {
			t.Errorf("no bell rang with the notice; the client got %q", raw[max(0, len(raw)-400):])
		}
		if !strings.Contains(raw, "\x1b]9;Muster: cl needs approval: Bash: make deploy\a") {
			t.Errorf("no OSC 9 desktop notification reached the outer terminal")
		}
		// The line goes after a second; the pane's screen is back.
		if !eventually(func() bool { return !strings.Contains(c.screen(), "needs approval") }) {
			t.Fatalf("the notice stayed over the pane:\n%s", c.screen())
		}
		if !strings.Contains(c.screen(), "attached-42") {
			t.Errorf("the repaint after the notice lost the pane's screen:\n%s", c.screen())
		}
		own.mu.Lock()
		ownRaw := own.raw.String()
		own.mu.Unlock()
		if strings.Contains(ownRaw, "needs approval") {
			t.Errorf("the client attached to cl itself got the notice")
		}
		c.detach()
		own.detach()
	})
}

// Turned off in config.toml, nothing reaches the attached client.
func TestAttachedClientNoticeOff(t *testing.T) {
	e := newEnv(t)
	e.installHookLoop()
	e.writeConfig("[notify]\ncommand = \"none\"\nmessage = false\nbell = false\n")
	e.must("new", "--name", "cl", "--detach", "--cmd", e.hookShell("cl"))
	e.must("new", "--name", "sh", "--detach", "--cmd", "bash --norc --noprofile")
	c := e.attach("sh", 100, 30, true)
	c.typeText("echo attached-$((6*7))\r")
	c.waitScreen("attached-42")
	e.askApproval("cl", "p-1", "make deploy")
	if items := e.attention(false); len(items) != 1 {
		t.Fatalf("attention = %+v, want the approval item", items)
	}
	// What the daemon sends goes before what the pane prints next.
	c.typeText("echo after-$((6*7))\r")
	c.waitScreen("after-42")
	c.mu.Lock()
	raw := c.raw.String()
	c.mu.Unlock()
	if strings.Contains(raw, "needs approval") || strings.Contains(raw, "\a") {
		t.Errorf("notices are off, yet the client got %q", raw)
	}
	c.detach()
}

// `muster attention --follow --json` prints the open items, then each new
// and each resolved one, one JSON object a line.
func TestAttentionFollow(t *testing.T) {
	e := newEnv(t)
	e.installHookLoop()
	e.writeConfig("[notify]\ncommand = \"none\"\n")
	e.must("new", "--name", "a1", "--detach", "--cmd", e.hookShell("a1"))
	e.must("new", "--name", "a2", "--detach", "--cmd", e.hookShell("a2"))
	e.askApproval("a1", "p-1", "make one")

	cmd := exec.Command(musterBin, "attention", "--follow", "--json")
	cmd.Env = e.vars
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	type line struct {
		Event string              `json:"event"`
		Item  proto.AttentionItem `json:"item"`
	}
	next := func() line {
		t.Helper()
		select {
		case s, ok := <-lines:
			if !ok {
				t.Fatal("attention --follow ended")
			}
			var l line
			if err := json.Unmarshal([]byte(s), &l); err != nil {
				t.Fatalf("line %q: %v", s, err)
			}
			return l
		case <-time.After(20 * time.Second):
			t.Fatal("attention --follow printed nothing")
		}
		return line{}
	}
	if l := next(); l.Event != "open" || l.Item.SessionName != "a1" || !strings.Contains(l.Item.Message, "make one") {
		t.Fatalf("first line = %+v, want a1's open item", l)
	}
	e.askApproval("a2", "p-2", "make two")
	l := next()
	if l.Event != "new" || l.Item.SessionName != "a2" || !l.Item.Open || !strings.Contains(l.Item.Message, "make two") {
		t.Fatalf("line = %+v, want a2's new item", l)
	}
	e.must("ack", fmt.Sprint(l.Item.ID))
	if r := next(); r.Event != "resolved" || r.Item.ID != l.Item.ID || r.Item.Open {
		t.Fatalf("line = %+v, want item %d resolved", r, l.Item.ID)
	}
}

// `muster wait --any --until attention` with no name waits on every
// session, one made after it started too, and names the one that asks.
func TestWaitAnySession(t *testing.T) {
	e := newEnv(t)
	e.installHookLoop()
	e.writeConfig("[notify]\ncommand = \"none\"\n")
	e.must("new", "--name", "w1", "--detach", "--cmd", e.hookShell("w1"))
	if r := e.run("wait", "--any", "--until", "attention", "--timeout", "300ms"); r.code != 1 {
		t.Fatalf("wait --any with nothing asking: exit %d, want 1 (timeout); %s%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run("wait", "--until", "attention"); r.code != 2 {
		t.Fatalf("wait with no name and no --any: exit %d, want 2 (usage)", r.code)
	}
	done := make(chan result, 1)
	go func() { done <- e.run("wait", "--any", "--until", "attention", "--timeout", "50s") }()
	// A session made while the wait runs is waited on too.
	e.must("new", "--name", "w2", "--detach", "--cmd", e.hookShell("w2"))
	select {
	case r := <-done:
		t.Fatalf("wait returned before anything asked: %+v", r)
	case <-time.After(300 * time.Millisecond):
	}
	e.askApproval("w2", "p-1", "make it")
	r := <-done
	if r.code != 0 || strings.TrimSpace(r.stdout) != "w2: waitingApproval" {
		t.Fatalf("wait --any: exit %d, stdout %q, stderr %q; want w2: waitingApproval", r.code, r.stdout, r.stderr)
	}
}

// `[notify] command` runs once per new item with the item's fields in its
// environment.
func TestNotifyCommandEnvironment(t *testing.T) {
	e := newEnv(t)
	e.installHookLoop()
	log := filepath.Join(t.TempDir(), "notify.log")
	e.writeConfig(fmt.Sprintf("[notify]\ncommand = 'printf \"%%s|%%s|%%s|%%s\\n\" \"$MUSTER_SESSION\" \"$MUSTER_REASON\" \"$MUSTER_TITLE\" \"$MUSTER_MESSAGE\" >> %s'\n", log))
	e.must("new", "--name", "nc", "--detach", "--cmd", e.hookShell("nc"))
	e.askApproval("nc", "p-1", "make notify")
	want := "nc|approval-requested|Muster: nc needs approval|Bash: make notify\n"
	var got string
	if !eventually(func() bool {
		b, _ := os.ReadFile(log)
		got = string(b)
		return got == want
	}) {
		t.Fatalf("notify log = %q, want %q", got, want)
	}
}

// While copy mode has the screen, another session's new attention item
// rings and reaches the outer terminal but draws no line over copy mode;
// leaving copy mode shows the pane again. The daemon runs copy mode on a
// terminal it holds; the relaying client runs it itself.
func TestNoticeDuringCopyModeOnlyRings(t *testing.T) {
	bothAttachModes(t, func(t *testing.T, e *env) {
		e.installHookLoop()
		e.writeConfig("[notify]\ncommand = \"none\"\nterminal = \"osc9\"\n")
		e.must("new", "--name", "cl", "--detach", "--cmd", e.hookShell("cl"))
		e.must("new", "--name", "sh", "--detach", "--cmd", "bash --norc --noprofile")
		c := e.attach("sh", 100, 30, true)
		c.typeText("echo attached-$((6*7))\r")
		c.waitScreen("attached-42")
		c.typeText("\x1e")
		c.waitScreen("copy mode: vi/emacs keys")

		e.askApproval("cl", "p-1", "make deploy")
		osc9 := "\x1b]9;Muster: cl needs approval: Bash: make deploy\a"
		if !eventually(func() bool { c.mu.Lock(); defer c.mu.Unlock(); return strings.Contains(c.raw.String(), osc9) }) {
			t.Fatal("no OSC 9 notification reached the outer terminal during copy mode")
		}
		c.mu.Lock()
		raw := c.raw.String()
		c.mu.Unlock()
		if !strings.Contains(raw, "\a"+osc9) {
			t.Errorf("no bell rang with the notice during copy mode")
		}
		if strings.Contains(raw, "muster: cl needs approval") {
			t.Errorf("a notice line was drawn over copy mode")
		}
		if screen := c.screen(); !strings.Contains(screen, "copy mode") {
			t.Errorf("copy mode's screen is gone after the notice:\n%s", screen)
		}
		c.typeText("q")
		c.waitScreen("attached-42")
		c.detach()
	})
}
