package tui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/testing/fakeagent/fakeagenttest"
	"github.com/musterhq/muster/internal/testing/poll"
	"github.com/musterhq/muster/internal/testing/testbin"
)

// dashEnv is a real daemon under a temporary MUSTER_HOME and a tmux
// server of its own to run the dashboard in.
type dashEnv struct {
	t        *testing.T
	bin      string
	env      []string
	userHome string
	tmuxBin  string
	sock     string
}

// newDashEnv sets up the homes and the tmux server (120×40, a shell in
// it); extra are more environment variables.
func newDashEnv(t *testing.T, extra ...string) *dashEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("drives tmux: runs without -short")
	}
	tmuxBin, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is required for this test: apt-get install -y tmux")
	}
	musterBin := testbin.Muster(t)
	// Socket paths must stay short, so not t.TempDir().
	home, err := os.MkdirTemp("/tmp", "mt")
	if err != nil {
		t.Fatal(err)
	}
	userHome := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX") && !strings.HasPrefix(kv, "MUSTER_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"MUSTER_HOME="+home,
		"HOME="+userHome,
		"XDG_CONFIG_HOME="+filepath.Join(userHome, ".config"),
		"XDG_STATE_HOME="+filepath.Join(userHome, ".state"),
		"XDG_DATA_HOME="+filepath.Join(userHome, ".local", "share"),
		"XDG_RUNTIME_DIR=",
		"CLAUDE_CONFIG_DIR="+filepath.Join(userHome, ".claude"),
		"CODEX_HOME="+filepath.Join(userHome, ".codex"),
		"GEMINI_CLI_HOME="+userHome,
		"MUSE_AGENTS_DIR="+filepath.Join(userHome, ".muse"),
		"SHELL=/bin/bash",
		"PS1=$ ",
	)
	env = append(env, extra...)
	e := &dashEnv{t: t, bin: musterBin, env: env, userHome: userHome, tmuxBin: tmuxBin, sock: "muster-tui-" + filepath.Base(home)}
	t.Cleanup(func() {
		cmd := exec.Command(musterBin, "daemon", "stop", "--force")
		cmd.Env = env
		cmd.Run()
		os.RemoveAll(home)
	})
	e.tmux("new-session", "-d", "-s", "m", "-x", "120", "-y", "40", "bash --norc --noprofile")
	t.Cleanup(func() { exec.Command(tmuxBin, "-L", e.sock, "kill-server").Run() })
	return e
}

func (e *dashEnv) muster(args ...string) string {
	e.t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Env, cmd.Dir = e.env, e.userHome
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("muster %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (e *dashEnv) tmux(args ...string) string {
	e.t.Helper()
	cmd := exec.Command(e.tmuxBin, append([]string{"-L", e.sock, "-f", "/dev/null"}, args...)...)
	cmd.Env = e.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (e *dashEnv) screen() string { return e.tmux("capture-pane", "-p", "-t", "m") }

func (e *dashEnv) keys(k ...string) { e.tmux(append([]string{"send-keys", "-t", "m"}, k...)...) }

// waitFor waits for the screen to satisfy ok, and returns it.
func (e *dashEnv) waitFor(what string, ok func(string) bool) string {
	e.t.Helper()
	return poll.Value(e.t, 15*time.Second, e.screen, ok, func(s string) string { return "the screen to show " + what + ":\n" + s })
}

// waitText waits for the screen to show every want.
func (e *dashEnv) waitText(want ...string) string {
	e.t.Helper()
	return e.waitFor(fmt.Sprintf("%q", want), func(s string) bool {
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	})
}

// selected finds the session row under the cursor.
func selected(name string) func(string) bool {
	return func(s string) bool {
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(line, "▸ "+name+" ") {
				return true
			}
		}
		return false
	}
}

// TestDashboardInTmux runs the real `muster` dashboard inside tmux against a
// real daemon: it lists the sessions, attaches and comes back on detach,
// offers the sessions to restore after a daemon restart, reconnects by
// itself when the daemon restarts while it is open, and quits back to the
// shell.
func TestDashboardInTmux(t *testing.T) {
	e := newDashEnv(t)
	musterBin, userHome, muster := e.bin, e.userHome, e.muster
	// A past Claude Code conversation for the history tab.
	proj := filepath.Join(userHome, ".claude", "projects", "-work-zoo")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	const sid = "5f0c1d2e-0000-4000-8000-00000000abcd"
	conv := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"` + sid + `","cwd":"/work/zoo","timestamp":"2026-11-30T10:00:00.000Z","message":{"role":"user","content":"Plan the zebra-migration of the zoo database"}}
{"type":"assistant","uuid":"u2","parentUuid":"u1","sessionId":"` + sid + `","cwd":"/work/zoo","timestamp":"2026-11-30T10:00:05.000Z","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4","content":[{"type":"text","text":"First copy the stripes table."}],"usage":{"input_tokens":10,"output_tokens":5}}}
`
	if err := os.WriteFile(filepath.Join(proj, sid+".jsonl"), []byte(conv), 0o644); err != nil {
		t.Fatal(err)
	}
	muster("new", "--name", "alpha", "--detach", "--cmd", "bash --norc")
	muster("new", "--name", "beta", "--detach", "--cmd", "bash --norc")
	// Something to recognise alpha's screen by once attached.
	muster("send", "alpha", "echo alpha-$((40+2))", "--enter")
	var alpha string
	poll.Wait(t, 15*time.Second, func() bool { alpha = muster("capture", "alpha"); return strings.Contains(alpha, "alpha-42") },
		func() string { return "alpha to run the echo:\n" + alpha })

	screen, keys, waitFor, waitText := e.screen, e.keys, e.waitFor, e.waitText
	keys(musterBin, "Enter")
	s := waitText("2 sessions", "alpha", "beta", "q quit")
	if !strings.Contains(s, "◌ live") {
		t.Errorf("the sessions are not shown as live:\n%s", s)
	}
	waitFor("alpha selected", selected("alpha"))

	// h opens the history tab: a search finds the conversation, enter
	// reads it, esc and h come back.
	keys("h")
	waitText("History", "Plan the zebra-migration")
	keys("/")
	keys("zebra", "Enter")
	waitText(`1 session matching "zebra"`)
	keys("Enter")
	waitText("Transcript", "› Plan the zebra-migration of the zoo database", "First copy the stripes table.")
	keys("Escape")
	waitText(`1 session matching "zebra"`)
	keys("Escape")
	waitText("History", "newest first")
	keys("h")
	waitText("2 sessions", "q quit")

	// The preview shows alpha's pane and follows it as it prints, pushed by
	// the daemon.
	waitText("preview · alpha", "alpha-42")
	muster("send", "alpha", "echo preview-$((6*7))", "--enter")
	waitText("preview · alpha", "preview-42")

	// Enter attaches to alpha; the detach key comes back to the dashboard.
	keys("Enter")
	// Type only once attached: keys sent while the dashboard is still
	// closing are the dashboard's.
	waitFor("alpha's screen", func(s string) bool { return strings.Contains(s, "alpha-42") && !strings.Contains(s, "q quit") })
	keys("echo attached-$((6*7))", "Enter")
	waitText("attached-42")
	keys(`C-\`)
	waitText("2 sessions", "q quit")
	waitFor("alpha still selected", selected("alpha"))
	keys("j")
	waitFor("beta selected", selected("beta"))

	// c opens the new-session dialog; the shell, named gamma, is created
	// and attached, and detaching comes back to the dashboard on it.
	keys("c")
	waitText("New session", "your shell")
	for i := 0; i < 12 && !strings.Contains(screen(), "▸ shell"); i++ {
		keys("j")
		time.Sleep(50 * time.Millisecond) // one key at a time, so the check sees each step
	}
	waitText("▸ shell")
	keys("Tab") // to the directory, which stays as it is
	waitText("▸ Directory")
	keys("Down")
	waitText("▸ Name")
	keys("gamma", "Enter")
	waitFor("gamma's shell", func(s string) bool {
		return !strings.Contains(s, "q quit") && !strings.Contains(s, "New session") && strings.TrimSpace(s) != ""
	})
	keys("echo gamma-$((6*7))", "Enter")
	waitText("gamma-42")
	keys(`C-\`)
	waitText("3 sessions", "q quit")
	waitFor("gamma selected", selected("gamma"))
	if out := muster("ls"); !strings.Contains(out, "gamma") {
		t.Errorf("gamma is not listed:\n%s", out)
	}

	// q quits to the shell, leaving the sessions running.
	keys("q")
	waitFor("the shell again", func(s string) bool { return !strings.Contains(s, "q quit") })
	if out := muster("ls"); strings.Count(out, " live ") != 3 {
		t.Errorf("sessions after quitting the dashboard:\n%s", out)
	}

	// After a daemon restart the dashboard offers both sessions back, with
	// the reason, and R resumes them.
	muster("daemon", "stop", "--force")
	keys("clear; "+musterBin, "Enter")
	// The restore prompt offers the three with their reasons; gamma is
	// unchecked, enter restores the other two, R the rest later.
	waitText("Restore 3 sessions?", "[✓] alpha", "[✓] beta", "[✓] gamma", "the daemon stopped")
	keys("j", "j", "Space")
	waitText("[ ] gamma", "enter restores the 2 checked")
	keys("Enter")
	waitText("resumed alpha, beta")
	waitText("2 live", "Restore (1)", "⟲ gamma")
	keys("R")
	waitText("resumed gamma")
	waitText("3 live")

	// The daemon stops while the dashboard is open: it says so, and once a
	// daemon is back it shows what that one reports without being
	// restarted (the sessions it offered already are not offered again).
	muster("daemon", "stop", "--force")
	waitText("daemon away", "reconnecting…")
	muster("daemon")
	waitText("reconnected to the daemon", "3 to restore", "Restore (3)")
	keys("R")
	waitText("3 live")
	keys("q")
	waitFor("the shell again", func(s string) bool { return !strings.Contains(s, "q quit") })
}

// sessionRows lists the session names of the dashboard's list, top to
// bottom.
func sessionRows(screen string) []string {
	var names []string
	in := false
	for _, line := range strings.Split(screen, "\n") {
		switch {
		case strings.Contains(line, "NAME") && strings.Contains(line, "PROVIDER"):
			in = true
		case in && strings.TrimSpace(strings.Split(line, "│")[0]) == "":
			return names
		case in:
			f := strings.Fields(strings.TrimPrefix(line, "▸"))
			if len(f) > 0 {
				names = append(names, f[0])
			}
		}
	}
	return names
}

// TestDashboardHooksInTmux: a fake Claude Code in a pane reports its
// turns through its hooks, and the open dashboard shows each state the
// daemon pushes: the approval request sorts its session first with the
// command in the drawer, `a` on the item acknowledges it, and the approved
// turn's end shows as done.
func TestDashboardHooksInTmux(t *testing.T) {
	dir := fakeagenttest.Build(t)
	// Claude's later Notification hooks would open items of their own.
	e := newDashEnv(t, "PATH="+fakeagenttest.Path(dir), fakeagenttest.EnvIdleDelay+"=off", fakeagenttest.EnvNotifyDelay+"=10m")
	e.muster("new", "--name", "shell", "--detach", "--cmd", "bash --norc")
	e.muster("new", "claude", "--name", "agent", "--detach")
	// The agent's SessionStart hook has reached the daemon once its id is
	// confirmed: from then on its hooks are its state.
	poll.Wait(t, 15*time.Second, func() bool { return strings.Contains(e.muster("ls", "--json"), `"native_confirmed": true`) },
		func() string { return "the agent's native id to be confirmed:\n" + e.muster("ls", "--json") })

	e.keys(e.bin, "Enter")
	s := e.waitText("2 sessions", "shell", "agent", "q quit")
	if rows := sessionRows(s); len(rows) != 2 || rows[0] != "shell" {
		t.Errorf("before any turn the rows are %v, want shell (created first) first:\n%s", rows, s)
	}

	// A Bash call that needs approval: the hooks report it, and the
	// daemon's push moves the agent to the top with the command shown.
	e.muster("send", "agent", "tool rm -rf build", "--enter")
	s = e.waitText("▲ waitingApproval", "Attention (1)", "rm -rf build")
	if rows := sessionRows(s); len(rows) != 2 || rows[0] != "agent" {
		t.Errorf("the session waiting for approval does not sort first: %v\n%s", rows, s)
	}

	// tab selects the item in the drawer; a acknowledges it.
	e.keys("Tab")
	e.keys("a")
	// The answer to the ack and the push of the resolved item come apart.
	e.waitText("acknowledged 1 item")
	e.waitFor("the drawer with no open item", func(s string) bool {
		return strings.Contains(s, "Attention (0) · 1 resolved today")
	})

	// Approving in the pane ends the turn; its Stop hook is pushed as done.
	e.muster("send", "agent", "y")
	s = e.waitText("✓ succeeded")
	if rows := sessionRows(s); len(rows) != 2 {
		t.Errorf("rows after the turn: %v\n%s", rows, s)
	}
	// The model and the context its transcript reports are pushed too: 10
	// tokens of claude-opus-5-5's million. The shell shows neither.
	s = e.waitText("MODEL", "CONTEXT", "claude-opus-5-5", "99% left")
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, "▸ "), "shell ") && strings.Contains(line, "claude-opus") {
			t.Errorf("the shell shows a model: %q", line)
		}
	}
	if ls := e.muster("ls", "--json"); !strings.Contains(ls, `"model": "claude-opus-5-5"`) || !strings.Contains(ls, `"context_tokens": 10,`) ||
		!strings.Contains(ls, `"context_window": 1000000`) {
		t.Errorf("ls --json lacks the agent's model and context:\n%s", ls)
	}
	e.keys("q")
	e.waitFor("the shell again", func(s string) bool { return !strings.Contains(s, "q quit") })
}
