package realcli_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/google/uuid"

	"github.com/musterhq/muster/e2e/realcli"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/fakemodel"
)

// TestMusterCodexNoSetup and TestMusterGeminiNoSetup are issue 23's
// newcomer: `muster new codex|gemini` without `muster hooks setup`.
//
//  1. `muster new` says in one line that the hooks are missing and how to
//     install them.
//  2. A prompt that asks for a shell command: the CLI's approval dialog is
//     `waitingApproval` with one open approval item, within 2 s of the
//     dialog being on the screen (Codex's OSC 7501 blocked, Gemini's
//     "✋ Action Required" title). The user approves it with the key typed
//     into an attached client (`muster attach` in a PTY), and the turn
//     runs and succeeds.
//  3. `muster daemon stop; muster resume`: the session resumes its
//     conversation by the id the estimator proved (Codex: the rollout its
//     TUI holds open; Gemini: the assigned id, its chat file now on disk),
//     and the model gets the earlier turns.
//  4. `muster hooks setup` while the agent runs: the next turn still ends
//     (before, native tracking stopped when the hooks were installed and
//     the run stayed `running`).
func TestMusterCodexNoSetup(t *testing.T) {
	t.Parallel()
	noSetup(t, realcli.Codex, "y")
}

func TestMusterGeminiNoSetup(t *testing.T) {
	t.Parallel()
	noSetup(t, realcli.Gemini, "\r")
}

func noSetup(t *testing.T, cli realcli.CLI, approve string) {
	s := realcli.New(t, cli, realcli.Options{})
	sc := &mscenario{t: t, cli: cli, prof: profiles[cli], s: s, m: newMuster(t, s), name: "ns-" + string(cli)}
	logOnFailure(t, s)
	defer func() { t.Logf("%s: %s", cli, strings.Join(sc.times, "; ")) }()

	// 1. The note.
	r := sc.m.run(90*time.Second, "new", string(cli), "--name", sc.name, "--dir", s.Dir, "--detach")
	if r.code != 0 {
		t.Fatalf("muster new %s: exit %d: %s", cli, r.code, r.stderr)
	}
	if want := "install them with `muster hooks setup " + string(cli) + "`"; strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("muster new %s without hooks: stderr %q, want one line with %q", cli, r.stderr, want)
	}
	sc.m.waitScreen(sc.name, sc.prof.idle, launchTimeout)

	// 2. The approval, answered through an attached client.
	marker := filepath.Join(s.Dir, "approved.txt")
	gate := make(chan struct{})
	sc.enqueue(
		fakemodel.Shell("touch approved.txt && echo tool-ran-"+string(cli)),
		fakemodel.Text("reply after the hook-less tool").After(gate),
	)
	run := sc.submit("make a file", "")
	sc.m.waitScreen(sc.name, sc.prof.approval, turnTimeout)
	var info proto.SessionInfo
	late := sc.m.waitFor(sc.name, "waitingApproval", turnTimeout, func() bool {
		info = sc.info()
		return runState(info) == "waitingApproval"
	})
	sc.times = append(sc.times, "dialog on screen to waitingApproval ≤ "+late.Round(10*time.Millisecond).String())
	if late > 2*time.Second {
		t.Errorf("%s: waitingApproval %s after the dialog was on the screen, want within 2 s", cli, late)
	}
	if runID(info) != run || info.Attention != 1 {
		t.Errorf("at the dialog: run %q with %d attention items; want run %s with 1", runID(info), info.Attention, run)
	}
	items := sc.m.attention(sc.name, false)
	if len(items) != 1 || items[0].Reason != "approval-requested" || items[0].RunID != run {
		t.Fatalf("attention at the dialog: %+v; want one approval-requested item of run %s", items, run)
	}
	x := (&stateRun{sc: sc}).explain()
	if x.Because == nil || x.Because.Source != "terminal" || x.Because.HookName != "muster.terminal.request" {
		t.Errorf("the approval's evidence: %+v, want the terminal's request", x.Because)
	} else {
		at, err1 := time.Parse(time.RFC3339Nano, x.Because.OccurredAt)
		got, err2 := time.Parse(time.RFC3339Nano, x.Because.ReceivedAt)
		if err1 == nil && err2 == nil {
			sc.times = append(sc.times, "approval signal to its commit in the daemon "+got.Sub(at).Round(time.Millisecond).String())
		}
		t.Logf("%s: approval from %q", cli, x.Because.Message)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the shell command ran before it was approved")
	}
	c := attachPTY(t, sc.m, sc.name)
	for attempt := 1; ; attempt++ {
		c.typeKeys(approve)
		if poll(10*time.Second, func() bool { _, err := os.Stat(marker); return err == nil }) {
			break
		}
		if attempt == 3 {
			t.Fatalf("%s: the approval typed into the attached client did nothing; screen:\n%s", cli, sc.m.capture(sc.name))
		}
	}
	w := sc.m.wait(sc.name, "running", turnTimeout)
	if w.RunID != run {
		t.Errorf("after the approval: %+v, want run %s running", w, run)
	}
	if open := sc.m.attention(sc.name, false); len(open) != 0 {
		t.Errorf("the approval item is still open after the approval: %+v", open)
	}
	close(gate)
	w = sc.m.wait(sc.name, "done", turnTimeout)
	if w.RunID != run || (w.State != "succeeded" && w.Terminal != "succeeded") {
		t.Errorf("after the tool turn: %+v, want run %s succeeded", w, run)
	}
	sc.m.waitScreen(sc.name, "reply after the hook-less tool", turnTimeout)
	c.detach()

	// 3. Resume finds the conversation.
	sc.m.waitFor(sc.name, "the conversation id proved", turnTimeout, func() bool {
		info = sc.info()
		return info.NativeConfirmed && uuid.Validate(info.NativeSessionID) == nil
	})
	id := info.NativeSessionID
	sc.id = id
	if cli == realcli.Codex && !strings.Contains(filepath.Base(sc.transcriptOf("make a file")), id) {
		t.Errorf("codex: proved id %s is not the rollout's", id)
	}
	sc.m.must("daemon", "stop", "--force")
	if info = sc.info(); info.State != "restorable" || info.NativeSessionID != id {
		t.Fatalf("after daemon stop: state %q, native id %q; want restorable with %s", info.State, info.NativeSessionID, id)
	}
	out := sc.m.must("resume", sc.name)
	if !strings.Contains(out, sc.name+": resumed") || strings.Contains(out, "new conversation") {
		t.Errorf("muster resume printed %q, want the conversation resumed", out)
	}
	want, _ := s.ResumeArgs(id)
	if info = sc.info(); !strings.HasSuffix(info.Command, " "+strings.Join(want, " ")) {
		t.Errorf("after resume: command %q, want it to end with %q", info.Command, want)
	}
	sc.m.waitFor(sc.name, "the resumed conversation and the idle prompt", launchTimeout, func() bool {
		screen := sc.m.capture(sc.name)
		return strings.Contains(screen, "reply after the hook-less tool") && strings.Contains(screen, sc.prof.idle)
	})
	sc.enqueue(fakemodel.Text("reply after the resume"))
	run = sc.submit("after resume", run)
	if w = sc.m.wait(sc.name, "done", turnTimeout); w.RunID != run || (w.State != "succeeded" && w.Terminal != "succeeded") {
		t.Errorf("the turn after the resume: %+v, want run %s succeeded", w, run)
	}
	turns := s.Server.Turns()
	if body := string(turns[len(turns)-1].Body); !strings.Contains(body, "make a file") {
		t.Errorf("the first request after the resume does not carry the earlier conversation")
	}

	// 4. Hooks installed mid-session: the agent running never loaded them.
	sc.m.must("hooks", "setup", string(cli))
	if cli == realcli.Codex {
		if err := realcli.TrustCodexHooks(filepath.Join(s.Home, ".codex")); err != nil {
			t.Fatal(err)
		}
	}
	gate = make(chan struct{})
	sc.enqueue(fakemodel.Text("reply after hooks setup").After(gate))
	run = sc.submit("after hooks setup", run)
	sc.m.wait(sc.name, "running", turnTimeout)
	w = endTurn(sc, "turn after hooks setup", func() { close(gate) })
	if w.RunID != run || (w.State != "succeeded" && w.Terminal != "succeeded") {
		t.Errorf("the turn after hooks setup: %+v, want run %s succeeded", w, run)
	}
	t.Logf("%s: the turn after hooks setup ended by %+v", cli, (&stateRun{sc: sc}).explain().Because)
}

// transcriptOf is sc.transcript for a conversation whose first prompt is
// prompt.
func (sc *mscenario) transcriptOf(prompt string) string {
	sc.t.Helper()
	pattern := filepath.Join(sc.s.Home, ".codex", "sessions", "*", "*", "*", "rollout-*.jsonl")
	var found string
	sc.m.waitFor(sc.name, "the rollout of "+prompt, turnTimeout, func() bool {
		m, _ := filepath.Glob(pattern)
		for _, f := range m {
			if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(prompt)) {
				found = f
				return true
			}
		}
		return false
	})
	return found
}

// ptyClient is `muster attach NAME` in a PTY of its own: keys typed into
// it reach the pane as a person's would.
type ptyClient struct {
	t    *testing.T
	tty  *os.File
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	out  bytes.Buffer
}

func attachPTY(t *testing.T, m *musterRun, name string) *ptyClient {
	t.Helper()
	cmd := exec.Command(musterBin, "attach", name)
	cmd.Env = m.env
	cmd.Dir = m.s.Dir
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatalf("muster attach %s in a PTY: %v", name, err)
	}
	c := &ptyClient{t: t, tty: tty, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		buf := make([]byte, 32<<10)
		for {
			n, err := tty.Read(buf)
			c.mu.Lock()
			c.out.Write(buf[:n])
			if c.out.Len() > 1<<20 {
				c.out.Next(c.out.Len() - 64<<10)
			}
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		tty.Close()
	})
	// Attached once the daemon wrote the pane's screen to the client.
	if !poll(20*time.Second, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.out.Len() > 0 }) {
		t.Fatalf("muster attach %s wrote nothing in 20 s", name)
	}
	time.Sleep(300 * time.Millisecond)
	return c
}

// typeKeys writes keys to the client's terminal, as a keyboard does.
func (c *ptyClient) typeKeys(keys string) {
	c.t.Helper()
	if _, err := io.WriteString(c.tty, keys); err != nil {
		c.t.Fatalf("type %q into the attached client: %v", keys, err)
	}
}

// detach presses the detach key (Ctrl-\) and waits for the client to end.
func (c *ptyClient) detach() {
	c.t.Helper()
	c.typeKeys("\x1c")
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			c.t.Errorf("muster attach after the detach key: %v", err)
		}
	case <-time.After(20 * time.Second):
		c.t.Errorf("muster attach still runs 20 s after the detach key")
	}
}
