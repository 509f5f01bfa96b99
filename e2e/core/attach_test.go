package core_test

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
)

// ptyClient runs `muster attach` in a real PTY and keeps what it draws in
// an emulator, as a user's terminal would.
type ptyClient struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File
	// mu guards raw and emu: x/vt's SafeEmulator does not lock String,
	// CursorPosition or CellAt, which the tests read while output arrives.
	mu   sync.Mutex
	emu  *vt.SafeEmulator
	raw  strings.Builder
	done chan struct{}
}

func (e *env) attach(name string, cols, rows int, read bool) *ptyClient {
	e.t.Helper()
	return e.ptyRun(cols, rows, read, "attach", name)
}

// bothAttachModes runs test once with the daemon holding the client's
// terminal (the default) and once with the client relaying the pane over
// the socket (MUSTER_ATTACH_DIRECT=0), which other terminals get.
func bothAttachModes(t *testing.T, test func(t *testing.T, e *env)) {
	t.Run("direct", func(t *testing.T) { test(t, newEnv(t)) })
	t.Run("relay", func(t *testing.T) {
		e := newEnv(t)
		e.vars = append(e.vars, "MUSTER_ATTACH_DIRECT=0")
		test(t, e)
	})
}

// ptyRun runs muster with args in a real PTY of the given size.
func (e *env) ptyRun(cols, rows int, read bool, args ...string) *ptyClient {
	e.t.Helper()
	cmd := exec.Command(musterBin, args...)
	cmd.Env = e.vars
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		e.t.Fatal(err)
	}
	c := &ptyClient{t: e.t, cmd: cmd, ptmx: ptmx, emu: vt.NewSafeEmulator(cols, rows), done: make(chan struct{})}
	go func() { // the emulator's replies would go to the app; drop them
		buf := make([]byte, 1024)
		for {
			if _, err := c.emu.Read(buf); err != nil {
				return
			}
		}
	}()
	if read {
		go func() {
			defer close(c.done)
			buf := make([]byte, 32<<10)
			for {
				n, err := ptmx.Read(buf)
				if n > 0 {
					c.mu.Lock()
					c.raw.Write(buf[:n])
					c.emu.Write(buf[:n])
					c.mu.Unlock()
				}
				if err != nil {
					return
				}
			}
		}()
	}
	e.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		ptmx.Close()
	})
	return c
}

func (c *ptyClient) screen() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.emu.String()
}

// locked runs fn with the client's emulator held still.
func (c *ptyClient) locked(fn func(emu *vt.SafeEmulator)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fn(c.emu)
}

func (c *ptyClient) waitScreen(want string) string {
	c.t.Helper()
	if !eventually(func() bool { return strings.Contains(c.screen(), want) }) {
		c.t.Fatalf("client screen never showed %q:\n%s", want, c.screen())
	}
	return c.screen()
}

func (c *ptyClient) typeText(s string) {
	c.t.Helper()
	if _, err := c.ptmx.Write([]byte(s)); err != nil {
		c.t.Fatal(err)
	}
}

// detach presses the default detach key and waits for attach to exit.
func (c *ptyClient) detach() string {
	c.t.Helper()
	c.typeText("\x1c")
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			c.t.Fatalf("attach exited with %v", err)
		}
	case <-time.After(20 * time.Second):
		c.t.Fatal("attach did not exit after the detach key")
	}
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw.String()
}

func TestAttachDetachReattachRepaints(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "sh", "--detach", "--cmd", "bash --norc --noprofile")
	c := e.attach("sh", 100, 30, true)
	c.waitScreen("#")
	c.typeText("printf '\\033[33mmarker-%s\\033[0m\\n' one\r")
	c.waitScreen("marker-one")
	raw := c.detach()
	// Detaching restored the client terminal: alt screen left, cursor
	// shown, mouse and bracketed paste off.
	tail := raw[max(0, len(raw)-300):]
	for _, seq := range []string{"\x1b[?1049l", "\x1b[?25h", "\x1b[?1000l", "\x1b[?2004l"} {
		if !strings.Contains(tail, seq) {
			t.Errorf("detach did not send %q", seq)
		}
	}
	// The shell kept running while detached.
	e.must("send", "sh", "echo while-detached", "--enter")
	e.waitScreen("sh", "while-detached")

	c2 := e.attach("sh", 100, 30, true)
	screen := c2.waitScreen("while-detached")
	if !strings.Contains(screen, "marker-one") {
		t.Errorf("re-attach did not repaint the earlier screen:\n%s", screen)
	}
	// Cursor is where the pane's cursor is: at the prompt after the output.
	want, _ := e.run("capture", "sh").stdout, 0
	wantLines := strings.Split(strings.TrimRight(want, "\n"), "\n")
	var pos uv.Position
	var cell *uv.Cell
	row := rowOf(screen, "marker-one")
	c2.locked(func(emu *vt.SafeEmulator) {
		pos = emu.CursorPosition()
		cell = emu.CellAt(strings.Index(strings.Split(screen, "\n")[row], "marker-one"), row)
	})
	if pos.Y != len(wantLines)-1 {
		t.Errorf("cursor on row %d, want %d (screen:\n%s)", pos.Y, len(wantLines)-1, screen)
	}
	// Colour survived the snapshot.
	if cell == nil || cell.Style.Fg == nil {
		t.Errorf("snapshot lost the colour of marker-one")
	}
	c2.detach()
}

func rowOf(screen, s string) int {
	for i, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return i
		}
	}
	return -1
}

func TestAttachResizeReachesProgram(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "sz", "--detach", "--cmd", "bash --norc --noprofile")
	c := e.attach("sz", 90, 25, true)
	c.typeText("stty size\r")
	c.waitScreen("25 90")
	if err := pty.Setsize(c.ptmx, &pty.Winsize{Cols: 120, Rows: 40}); err != nil {
		t.Fatal(err)
	}
	c.locked(func(emu *vt.SafeEmulator) { emu.Resize(120, 40) })
	// Wait for the resize to reach the pane before asking.
	if !eventually(func() bool {
		e.must("send", "sz", "clear; stty size", "--enter")
		time.Sleep(100 * time.Millisecond)
		return strings.Contains(e.must("capture", "sz"), "40 120")
	}) {
		t.Fatalf("resize never reached the program:\n%s", e.must("capture", "sz"))
	}
	c.detach()
}

// TestTwoClientsAndLeaderSize runs with both clients' terminals held by
// the daemon, and with the second one relaying its pane itself
// (MUSTER_ATTACH_DIRECT=0), as a client in another kind of terminal does.
func TestTwoClientsAndLeaderSize(t *testing.T) {
	for _, mixed := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "direct-and-relay"}[mixed], func(t *testing.T) {
			testTwoClientsAndLeaderSize(t, mixed)
		})
	}
}

func testTwoClientsAndLeaderSize(t *testing.T, mixed bool) {
	e := newEnv(t)
	e.must("new", "--name", "two", "--detach", "--cmd", "bash --norc --noprofile")
	a := e.attach("two", 100, 30, true)
	a.waitScreen("#")
	if mixed {
		e.vars = append(e.vars, "MUSTER_ATTACH_DIRECT=0")
	}
	b := e.attach("two", 70, 20, true)
	b.waitScreen("#")
	// Both see what either types; the last one to type sets the size.
	b.typeText("stty size\r")
	a.waitScreen("20 70")
	b.waitScreen("20 70")
	a.typeText("stty size\r")
	a.waitScreen("30 100")
	b.waitScreen("30 100")
	a.detach()
	b.typeText("echo b-still-here\r")
	b.waitScreen("b-still-here")
	b.detach()
}

func TestStalledClientDoesNotBlockPane(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "flood", "--detach", "--cmd", "bash --norc --noprofile")
	// This client never reads its terminal: its PTY fills, `muster attach`
	// blocks writing, and the daemon must not block with it.
	e.attach("flood", 80, 24, false)
	time.Sleep(200 * time.Millisecond)
	e.must("send", "flood", "seq 1 300000 | tail -c 200000 >/dev/null; for i in $(seq 1 20000); do echo line-$i; done; echo FLOOD-DONE", "--enter")
	e.waitScreen("flood", "FLOOD-DONE")
	// A second, healthy client still attaches and sees the live screen.
	c := e.attach("flood", 80, 24, true)
	c.waitScreen("FLOOD-DONE")
	c.typeText("echo healthy\r")
	c.waitScreen("healthy")
}

func TestAttachExitedPaneShowsFinalScreen(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "gone", "--detach", "--cmd", e.script("echo final-words; exit 3"))
	if !eventually(func() bool { return e.session("gone").State == "exited" }) {
		t.Fatal("never exited")
	}
	c := e.attach("gone", 80, 24, true)
	c.cmd.Wait()
	<-c.done
	c.mu.Lock()
	raw := c.raw.String()
	c.mu.Unlock()
	// The final screen is painted, and the exit notice follows below it.
	if !strings.Contains(raw, "final-words") || !strings.Contains(c.screen(), "[gone exited with code 3]") {
		t.Fatalf("client did not show the final screen and exit:\n%s\nraw: %q", c.screen(), raw)
	}
}

// TestDetachUnderFloodIsClean detaches from a pane that floods output and
// hides the cursor, 50 times: after the detach message nothing of the pane
// reaches the terminal, the modes are restored after the pane's last byte,
// and the user's own screen (the main screen) comes back without pane text.
func TestDetachUnderFloodIsClean(t *testing.T) { bothAttachModes(t, testDetachUnderFloodIsClean) }

func testDetachUnderFloodIsClean(t *testing.T, e *env) {
	e.must("new", "--name", "flood", "--detach", "--cmd",
		e.script(`while :; do printf '\033[?25l\033[?1000h\033[?2004h'; yes flood-line | head -n 500; done`))
	for i := range 50 {
		c := e.attach("flood", 80, 24, true)
		if !eventually(func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return strings.Count(c.raw.String(), "flood-line") > 10
		}) {
			t.Fatalf("detach %d: no flood reached the client", i)
		}
		raw := c.detach()
		if !strings.HasPrefix(raw, "\x1b[22;0t\x1b[?1049h") {
			t.Fatalf("detach %d: attach did not push the title and enter the alternate screen first: %q", i, raw[:min(len(raw), 40)])
		}
		msg := "[detached from flood]\r\n"
		end := strings.LastIndex(raw, msg)
		if end < 0 {
			t.Fatalf("detach %d: no detach message in %q", i, raw[max(0, len(raw)-300):])
		}
		if rest := raw[end+len(msg):]; rest != "" {
			t.Fatalf("detach %d: %d bytes after the detach message: %q", i, len(rest), rest[:min(len(rest), 200)])
		}
		last := strings.LastIndex(raw, "flood-line")
		restored := raw[last:end]
		for _, seq := range []string{"\x18", "\x1b[?25h", "\x1b[?1000l", "\x1b[?2004l", "\x1b[?1l", "\x1b[<99u", "\x1b[?1049l", "\x1b[23;0t"} {
			if !strings.Contains(restored, seq) {
				t.Fatalf("detach %d: %q not sent after the pane's last output: %q", i, seq, restored[:min(len(restored), 300)])
			}
		}
		if screen := c.screen(); strings.Contains(screen, "flood-line") {
			t.Fatalf("detach %d: pane output left on the user's screen:\n%s", i, screen)
		}
	}
}

// TestAttachKeepsProgramScreensOffTheUserScreen runs a program that enters
// and leaves its alternate screen while attached: the client shows the
// shell's screen again afterwards, and detaching leaves nothing of the
// pane on the user's own screen.
func TestAttachKeepsProgramScreensOffTheUserScreen(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "alt", "--detach", "--cmd", "bash --norc --noprofile")
	c := e.attach("alt", 80, 24, true)
	c.waitScreen("#")
	c.typeText("echo main-before\r")
	c.waitScreen("main-before")
	c.typeText("printf '\\033[?1049h\\033[H%s-%s' full app; sleep 1; printf '\\033[?1049l'; echo main-after\r")
	c.waitScreen("full-app")
	screen := c.waitScreen("main-after")
	if !strings.Contains(screen, "main-before") || strings.Contains(screen, "full-app") {
		t.Fatalf("leaving the program's alternate screen did not bring back the shell's screen:\n%s", screen)
	}
	c.detach()
	if screen := c.screen(); strings.Contains(screen, "main-") || strings.Contains(screen, "full-app") {
		t.Fatalf("pane output left on the user's screen:\n%s", screen)
	}
}

// TestFirstAttachShowsDetachHintOnce: the first attach says how to detach;
// later attaches by the same user do not.
func TestFirstAttachShowsDetachHintOnce(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "hint", "--detach", "--cmd", "bash --norc --noprofile")
	for i, want := range []bool{true, false} {
		c := e.attach("hint", 80, 24, true)
		c.waitScreen("#")
		c.typeText("echo ready-" + string(rune('a'+i)) + "\r")
		c.waitScreen("ready-" + string(rune('a'+i)))
		raw := c.detach()
		if got := strings.Contains(raw, "detach with ctrl-\\"); got != want {
			t.Errorf("attach %d: hint shown %v, want %v", i+1, got, want)
		}
	}
}

// TestRefusedAttachLeavesTheTerminal: an attach the daemon refuses (no
// such session) says why and never switches the user's screen, not even
// for a moment, whichever side would have held the terminal.
func TestRefusedAttachLeavesTheTerminal(t *testing.T) {
	bothAttachModes(t, testRefusedAttachLeavesTheTerminal)
}

func testRefusedAttachLeavesTheTerminal(t *testing.T, e *env) {
	e.must("new", "--name", "here", "--detach", "--cmd", "bash --norc --noprofile")
	c := e.attach("nowhere", 80, 24, true)
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case err := <-exited:
		if err == nil {
			t.Fatal("attach to a missing session succeeded")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("attach to a missing session did not exit")
	}
	<-c.done
	c.mu.Lock()
	raw := c.raw.String()
	c.mu.Unlock()
	if !strings.Contains(raw, "nowhere") {
		t.Errorf("the refusal does not name the session:\n%q", raw)
	}
	if strings.Contains(raw, "\x1b[?1049h") || strings.Contains(raw, "\x1b[22;0t") {
		t.Errorf("a refused attach switched the user's screen:\n%q", raw)
	}
}
