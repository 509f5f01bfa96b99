package core_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/term"
)

// keylogHelper is the program in the pane of the key tests: it puts its
// terminal in raw mode, asks for what args[1] names ("kitty": the kitty
// keyboard protocol; "mouse": SGR mouse reports; "plain"), says it is
// ready, and appends each read of its input to args[0] as one line of hex,
// so that a test sees how the keys typed into `muster attach` arrived: one
// read for one key, nothing glued, nothing held.
func keylogHelper(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "keylog LOG MODE")
		return 2
	}
	old, err := term.MakeRaw(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer term.Restore(0, old)
	log, err := os.OpenFile(args[0], os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer log.Close()
	switch args[1] {
	case "kitty":
		os.Stdout.WriteString("\x1b[>1u")
	case "mouse":
		os.Stdout.WriteString("\x1b[?1000h\x1b[?1006h")
	}
	os.Stdout.WriteString("keylog-ready\r\n")
	buf := make([]byte, 4096)
	for n := 1; ; n++ {
		m, err := os.Stdin.Read(buf)
		if m > 0 {
			fmt.Fprintf(log, "%x\n", buf[:m])
			fmt.Fprintf(os.Stdout, "read %d\r\n", n)
		}
		if err != nil {
			return 0
		}
	}
}

// keylog is a pane running keylogHelper, attached in a real PTY.
type keylog struct {
	t    *testing.T
	path string
	c    *ptyClient
	seen int // lines of the log already checked
}

func startKeylog(t *testing.T, e *env, mode string, mouse bool) *keylog {
	t.Helper()
	if !mouse {
		dir := filepath.Join(e.home, "config")
		os.MkdirAll(dir, 0o700)
		if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte("mouse = false\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "keys.log")
	e.must("new", "--name", "kl", "--detach", "--cmd",
		fmt.Sprintf("env %s=keylog %s %s %s", helperEnv, self, path, mode))
	e.waitScreen("kl", "keylog-ready")
	c := e.attach("kl", 80, 24, true)
	c.waitScreen("keylog-ready")
	return &keylog{t: t, path: path, c: c}
}

// press types keys as one write of the user's terminal and waits until
// the pane has read exactly want (hex): a key held back until the next
// one, or never sent, fails here, before the next key is typed.
func (k *keylog) press(keys string, want ...string) {
	k.t.Helper()
	k.c.typeText(keys)
	var got []string
	ok := eventually(func() bool {
		data, _ := os.ReadFile(k.path)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(data) == 0 {
			lines = nil
		}
		got = lines[min(k.seen, len(lines)):]
		return strings.Join(got, "") == strings.Join(want, "") || len(strings.Join(got, "")) > len(strings.Join(want, ""))
	})
	if !ok || strings.Join(got, "") != strings.Join(want, "") {
		k.t.Fatalf("typed %q: the pane read %q, want %q", keys, got, want)
	}
	k.seen += len(got)
}

// TestKeysReachThePaneAsTyped types keys into `muster attach` as a person
// does, in both attach modes, with the mouse handover on and off and the
// kitty keyboard protocol on and off: a lone Esc reaches the program at
// once, on its own, and every multi-byte key arrives whole.
func TestKeysReachThePaneAsTyped(t *testing.T) {
	for _, mode := range []string{"plain", "kitty", "mouse"} {
		for _, mouse := range []bool{true, false} {
			name := fmt.Sprintf("%s/mouse=%v", mode, mouse)
			t.Run(name, func(t *testing.T) {
				bothAttachModes(t, func(t *testing.T, e *env) { testKeysAsTyped(t, e, mode, mouse) })
			})
		}
	}
}

func testKeysAsTyped(t *testing.T, e *env, mode string, mouse bool) {
	k := startKeylog(t, e, mode, mouse)
	esc := "1b"
	if mode == "kitty" {
		// A kitty terminal reports Esc as a CSI sequence; it must pass
		// whole, as any other.
		k.press("\x1b[27u", "1b5b323775")
	}
	// A lone Esc: the pane reads it before anything else is typed.
	k.press("\x1b", esc)
	// Esc, then x a moment later: two keys, not Alt+x.
	time.Sleep(50 * time.Millisecond)
	k.press("x", "78")
	// Alt+x is one write of ESC x: one key.
	k.press("\x1bx", "1b78")
	k.press("\x1b[A", "1b5b41")                                     // Up
	k.press("\x1b[15~", "1b5b31357e")                               // F5
	k.press("\x1bOP", "1b4f50")                                     // F1
	k.press("\x1b[200~hi\x1b[201~", "1b5b3230307e68691b5b3230317e") // a bracketed paste
	k.press("\x1b[", "1b5b")                                        // Alt+[ alone
	k.press("\x1b\x1b", "1b1b")                                     // Esc twice in one write
	if mode == "mouse" {
		// The program asked for reports: a wheel turn is its own, whole.
		k.press("\x1b[<65;10;5M", "1b5b3c36353b31303b354d")
	}
	// Esc after a key in the same write, then on its own again.
	k.press("a\x1b", "611b")
	k.press("\x1b", esc)
}
