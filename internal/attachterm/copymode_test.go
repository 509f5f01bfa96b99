package attachterm

import "testing"

func TestCopyModeWheel(t *testing.T) {
	var text string
	for i := range 50 {
		text += "line " + string(rune('a'+i%26)) + "\n"
	}
	m := NewCopyMode(discard{}, text, 80, 10)
	m.FromWheel = true
	m.Wheel(WheelUp)
	m.Wheel(WheelUp)
	if m.cy != 43 {
		t.Fatalf("after two notches up the cursor is on line %d, want 43", m.cy)
	}
	m.Wheel(WheelDown)
	m.Wheel(WheelDown)
	if m.done || m.cy != 49 {
		t.Fatalf("back at the bottom: done=%v line %d", m.done, m.cy)
	}
	m.Wheel(WheelDown)
	if !m.done {
		t.Error("scrolling past the bottom did not leave copy mode")
	}
	// Opened by the copy key, the wheel does not leave it.
	k := NewCopyMode(discard{}, text, 80, 10)
	k.Wheel(WheelDown)
	if k.done {
		t.Error("the wheel left copy mode the key opened")
	}
	// A mouse report of the program's is no key in copy mode.
	if over, _ := k.Feed([]byte("\x1b[<0;3;4Mq")); !over {
		t.Error("q after a mouse report did not leave copy mode")
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
