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
func TestCopyMode(t *testing.T) {
	e := newEnv(t)
	dump := filepath.Join(t.TempDir(), "paged.txt")
	pager := e.script(`cp "$1" ` + dump)
	e.vars = append(e.vars, "PAGER="+pager)
	e.must("new", "--name", "cm", "--detach", "--cmd", "bash --norc --noprofile")
	e.must("send", "cm", "for i in $(seq 1 300); do echo hist-$i; done; echo all-printed", "--enter")
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
	c.typeText("o")
	if !eventually(func() bool { b, _ := os.ReadFile(dump); return strings.Contains(string(b), "hist-1\nhist-2\n") }) {
		b, _ := os.ReadFile(dump)
		t.Fatalf("the pager did not get the history: %.200q", b)
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
