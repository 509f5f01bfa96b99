package pane

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/testing/poll"
)

// TestFreezeAdoptKeepsProgramScreenAndOutput hands a flooding pane from
// one Pane to another in the same process, as a daemon's restart hands it
// to its next image: the program is the same process, the screen and
// history are the same, every line the program printed arrives once, in
// order, and the adopted pane reaps the program and sees its exit code.
func TestFreezeAdoptKeepsProgramScreenAndOutput(t *testing.T) {
	script := `i=0; while [ $i -lt 3000 ]; do printf '\033[1;32mline\033[0m %d\n' $i; i=$((i+1)); [ $((i % 50)) = 0 ] && sleep 0.02; done; read x; exit 7`
	p, err := Start(Config{Argv: []string{"sh", "-c", script}, Cols: 60, Rows: 10, Scrollback: 5000})
	if err != nil {
		t.Fatal(err)
	}
	// Mid-flood: some lines are read, more are still to come.
	waitCapture(t, p, "line 1")
	frozen, err := p.Freeze(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	q, err := Adopt(Config{Scrollback: 5000}, frozen)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close(time.Second)
	if q.PID() != p.PID() {
		t.Errorf("adopted pid %d, want %d", q.PID(), p.PID())
	}
	waitCapture(t, q, "line 2999")
	text, err := q.Capture(t.Context(), 5000, false)
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	for _, l := range strings.Split(text, "\n") {
		n, ok := strings.CutPrefix(l, "line ")
		if !ok {
			continue
		}
		v, err := strconv.Atoi(n)
		if err != nil || v != next {
			t.Fatalf("after line %d came %q: output lost or repeated across the handoff", next-1, l)
		}
		next++
	}
	if next != 3000 {
		t.Fatalf("history and screen hold lines 0..%d, want 0..2999", next-1)
	}
	ansi, _ := q.Capture(t.Context(), 5000, true)
	if !strings.Contains(ansi, "\x1b[32;1mline") {
		t.Errorf("styles lost across the handoff:\n%.300q", ansi)
	}
	if err := q.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	poll.Wait(t, 10*time.Second, func() bool { ex, _ := q.Exited(); return ex }, func() string { return "the adopted pane to see its program exit" })
	if _, code := q.Exited(); code != 7 {
		t.Errorf("exit code %d, want 7", code)
	}
}

// TestFreezeAdoptKeepsScreenAndHistory: a quiet pane's screen (with its
// styles and cursor) and history read the same after the handoff.
func TestFreezeAdoptKeepsScreenAndHistory(t *testing.T) {
	script := `i=0; while [ $i -lt 50 ]; do printf '\033[7mrow\033[0m %d \344\270\255\n' $i; i=$((i+1)); done; printf 'prompt> '; read x`
	p, err := Start(Config{Argv: []string{"sh", "-c", script}, Cols: 40, Rows: 8, Scrollback: 100})
	if err != nil {
		t.Fatal(err)
	}
	waitCapture(t, p, "prompt>")
	plain, _ := p.Capture(t.Context(), 100, false)
	styled, _ := p.Capture(t.Context(), 100, true)
	frozen, err := p.Freeze(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	q, err := Adopt(Config{Scrollback: 100}, frozen)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close(time.Second)
	if got, _ := q.Capture(t.Context(), 100, false); got != plain {
		t.Errorf("text after the handoff:\n%s\nbefore:\n%s", got, plain)
	}
	if got, _ := q.Capture(t.Context(), 100, true); got != styled {
		t.Errorf("styled text after the handoff:\n%q\nbefore:\n%q", got, styled)
	}
	if err := q.Write([]byte("typed\r")); err != nil {
		t.Fatal(err)
	}
	poll.Wait(t, 10*time.Second, func() bool { ex, _ := q.Exited(); return ex }, func() string { return "the program to read the key typed into the adopted pane and exit" })
}
