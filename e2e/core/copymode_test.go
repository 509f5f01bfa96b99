package core_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyMode enters copy mode with Ctrl-^ on a pane whose history holds
// lines that scrolled away, searches back to one of them (highlighted),
// selects it and copies it: the OSC 52 payload is that text. The pager
// gets the whole history, and leaving copy mode repaints the pane.
func TestCopyMode(t *testing.T) { bothAttachModes(t, testCopyMode) }

func testCopyMode(t *testing.T, e *env) {
	dump := filepath.Join(t.TempDir(), "paged.txt")
	pager := e.script(`cp "$1" ` + dump)
	e.vars = append(e.vars, "PAGER="+pager)
	e.must("new", "--name", "cm", "--detach", "--cmd", "bash --norc --noprofile")
	e.waitScreen("cm", "bash-") // typed before its prompt, the line is shown twice (echo, then readline)
	// The quotes keep the command line's echo from matching all-printed:
	// copy mode must open on the output, not on the echo.
	e.must("send", "cm", "for i in $(seq 1 300); do echo hist-$i; done; echo all-print''ed", "--enter")
	e.waitScreen("cm", "all-printed")
	c := e.attach("cm", 80, 24, true)
	c.waitScreen("all-printed")

	c.typeText("\x1e")
	c.waitScreen("copy mode: vi/emacs keys")
	c.typeText("?hist-177\r")
	c.waitScreen("line 178 of")
	c.typeText("vlllllll")
	c.waitScreen("selecting")
	c.typeText("y")
	want := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte("hist-177")) + "\x07"
	if !eventually(func() bool { c.mu.Lock(); defer c.mu.Unlock(); return strings.Contains(c.raw.String(), want) }) {
		c.mu.Lock()
		raw := c.raw.String()
		c.mu.Unlock()
		t.Fatalf("no OSC 52 with %q in the output; tail %q", "hist-177", raw[max(0, len(raw)-400):])
	}
	c.mu.Lock()
	highlighted := strings.Contains(c.raw.String(), "\x1b[0;30;43mhist-17")
	c.mu.Unlock()
	if !highlighted {
		t.Errorf("the search match was not highlighted")
	}
	// Leaving copy mode repaints the pane.
	screen := c.waitScreen("all-printed")
	if strings.Contains(screen, "[copy mode]") {
		t.Errorf("copy mode left its status line:\n%s", screen)
	}

	// Emacs keys and the pager: the whole history goes to $PAGER.
	c.typeText("\x1e")
	c.waitScreen("copy mode: vi/emacs keys")
	c.typeText("\x1b<")
	c.waitScreen("line 1 of")
	drawn := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return strings.Count(c.raw.String(), "[copy mode] line 1 of")
	}
	before := drawn()
	c.typeText("o")
	if !eventually(func() bool { b, _ := os.ReadFile(dump); return strings.Contains(string(b), "hist-1\nhist-2\n") }) {
		b, _ := os.ReadFile(dump)
		t.Fatalf("the pager did not get the history: %.200q", b)
	}
	// Keys typed while the pager runs are the pager's, on a terminal in
	// its normal mode (Ctrl-\ would be SIGQUIT): copy mode is drawn again
	// once the pager has exited, and only then is it typed to.
	if !eventually(func() bool { return drawn() > before }) {
		t.Fatal("copy mode was not drawn again after the pager exited")
	}
	c.typeText("q")
	c.waitScreen("all-printed")
	c.typeText("echo still-typing\r")
	c.waitScreen("still-typing")
	c.typeText("\x1c")
	if err := c.cmd.Wait(); err != nil {
		<-c.done
		c.mu.Lock()
		raw := c.raw.String()
		c.mu.Unlock()
		t.Fatalf("attach exited with %v: %q", err, raw[max(0, len(raw)-3000):])
	}
}

// TestCopyModeMouseWheel: while the pane's program has not asked for mouse
// reports the client takes the mouse; the wheel opens copy mode and
// scrolls, and scrolling back down past the bottom leaves it. Once the
// program asks for reports, the client gives the mouse back and the wheel
// reaches the program.
func TestCopyModeMouseWheel(t *testing.T) { bothAttachModes(t, testCopyModeMouseWheel) }

func testCopyModeMouseWheel(t *testing.T, e *env) {
	e.must("new", "--name", "wh", "--detach", "--cmd", "bash --norc --noprofile")
	e.waitScreen("wh", "bash-") // typed before its prompt, the line is shown twice (echo, then readline)
	e.must("send", "wh", "for i in $(seq 1 300); do echo hist-$i; done; echo all-print''ed", "--enter")
	e.waitScreen("wh", "all-printed")
	c := e.attach("wh", 80, 24, true)
	c.waitScreen("all-printed")
	raw := func() string { c.mu.Lock(); defer c.mu.Unlock(); return c.raw.String() }
	if !strings.Contains(raw(), "\x1b[?1000h\x1b[?1006h") {
		t.Fatal("the client did not ask the terminal for mouse reports")
	}

	const up, down = "\x1b[<64;10;5M", "\x1b[<65;10;5M"
	c.typeText(up + up)
	c.waitScreen("[copy mode] line 297 of 303")
	c.typeText(down)
	c.waitScreen("[copy mode] line 300 of 303")
	c.typeText(down + down)
	if !eventually(func() bool {
		s := c.screen()
		return strings.Contains(s, "all-printed") && !strings.Contains(s, "[copy mode]")
	}) {
		t.Fatalf("scrolling past the bottom did not leave copy mode:\n%s", c.screen())
	}

	// A program that asks for reports gets them, wheel included.
	before := len(raw())
	// ready is printed by the process that becomes cat, in the foreground
	// already: Ctrl-C then cannot fall between two commands.
	c.typeText("bash -c 'printf \"\\e[?1000h\\e[?1006h\"; echo rea\"\"dy; exec cat -v'\r")
	c.waitScreen("ready")
	if !eventually(func() bool { return strings.Contains(raw()[before:], "\x1b[?1000l\x1b[?1006l\x1b[?1000h\x1b[?1006h") }) {
		t.Fatalf("the client did not hand the mouse to the program: %q", raw()[before:])
	}
	c.typeText(up)
	c.waitScreen("^[[<64;10;5M")
	before = len(raw())
	c.typeText("\x03")
	if !eventually(func() bool { return strings.Contains(raw()[before:], "# ") }) {
		t.Fatalf("no prompt after Ctrl-C: %q", raw()[before:])
	}
	before = len(raw())
	c.typeText("printf '\\e[?1000l'; echo mouse-released\r")
	c.waitScreen("mouse-released")
	if !eventually(func() bool { return strings.Contains(raw()[before:], "\x1b[?1000h\x1b[?1006h") }) {
		t.Fatalf("the client did not take the mouse back: %q\nscreen:\n%s", raw()[before:], c.screen())
	}
	c.detach()
}
