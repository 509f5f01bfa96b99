package cli

import (
	"slices"
	"testing"
)

func TestMouseInputSplit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []string
		keys   string
		wheels []wheel
	}{
		{"keys only", []string{"ls\r"}, "ls\r", nil},
		{"wheel up and down", []string{"a\x1b[<64;10;5Mb\x1b[<65;1;1Mc"}, "abc", []wheel{wheelUp, wheelDown}},
		{"with Shift, Meta or Ctrl held", []string{"\x1b[<68;1;1M\x1b[<89;1;1M"}, "", []wheel{wheelUp, wheelDown}},
		{"other buttons and releases dropped", []string{"\x1b[<0;3;4M\x1b[<0;3;4m\x1b[<32;5;5M\x1b[<64;1;1m"}, "", nil},
		{"split across reads", []string{"x\x1b", "[<6", "4;10;5", "My"}, "xy", []wheel{wheelUp}},
		{"a trailing ESC [ is held", []string{"\x1b[", "A"}, "\x1b[A", nil},
		{"a lone ESC at the end waits", []string{"\x1b", "\x1b[<65;2;2M"}, "\x1b", []wheel{wheelDown}},
		{"not a report", []string{"\x1b[<12u"}, "\x1b[<12u", nil},
		{"an endless number passes through", []string{"\x1b[<" + string(make([]byte, 0)) + "1111111111111111111111111111111111111111", "Z"}, "\x1b[<1111111111111111111111111111111111111111Z", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in mouseInput
			var keys []byte
			var wheels []wheel
			for _, c := range tc.chunks {
				k, w := in.split([]byte(c))
				keys = append(keys, k...)
				wheels = append(wheels, w...)
			}
			keys = append(keys, in.held...)
			if string(keys) != tc.keys || !slices.Equal(wheels, tc.wheels) {
				t.Errorf("keys %q wheels %v, want %q %v", keys, wheels, tc.keys, tc.wheels)
			}
		})
	}
}

// TestMouseHandOver: the client owns the mouse until the program asks for
// reports, then the terminal gets exactly the program's modes, and the
// client takes it back once the program stops asking.
func TestMouseHandOver(t *testing.T) {
	m := newMouseModes(true)
	if got := m.start(); got != ownMouseOn || !m.owned.Load() {
		t.Fatalf("start = %q owned=%v", got, m.owned.Load())
	}
	f := altFilter{mouse: m}
	steps := []struct {
		in, out string
		owned   bool
	}{
		{"hello", "hello", true},
		{"\x1b[?1006h", "\x1b[?1006h" + ownMouseOn, true}, // an encoding alone asks for nothing; the client's stays
		{"\x1b[?1006l", "\x1b[?1006l" + ownMouseOn, true},
		{"\x1b[?1002;1006h", "\x1b[?1002;1006h" + ownMouseOff + "\x1b[?1002h\x1b[?1006h", false},
		{"\x1b[?1000h", "\x1b[?1000h", false},
		{"\x1b[?1002l", "\x1b[?1002l", false}, // 1000 is still on
		{"\x1b[?100", "", false},
		{"0l", "\x1b[?1000l" + ownMouseOn, true},
		{"\x1b[?9h", "\x1b[?9h" + ownMouseOff + "\x1b[?9h\x1b[?1006h", false},
	}
	for i, s := range steps {
		if got := string(f.filter([]byte(s.in))); got != s.out || m.owned.Load() != s.owned {
			t.Errorf("step %d %q: out %q owned=%v, want %q owned=%v", i, s.in, got, m.owned.Load(), s.out, s.owned)
		}
	}
	off := newMouseModes(false)
	if off.start() != "" || string((&altFilter{mouse: off}).filter([]byte("\x1b[?1000l"))) != "\x1b[?1000l" {
		t.Error("mouse = false changed the output")
	}
}

func TestCopyModeWheel(t *testing.T) {
	var text string
	for i := range 50 {
		text += "line " + string(rune('a'+i%26)) + "\n"
	}
	m := newCopyMode(discard{}, text, 80, 10)
	m.fromWheel = true
	m.wheel(wheelUp)
	m.wheel(wheelUp)
	if m.cy != 43 {
		t.Fatalf("after two notches up the cursor is on line %d, want 43", m.cy)
	}
	m.wheel(wheelDown)
	m.wheel(wheelDown)
	if m.done || m.cy != 49 {
		t.Fatalf("back at the bottom: done=%v line %d", m.done, m.cy)
	}
	m.wheel(wheelDown)
	if !m.done {
		t.Error("scrolling past the bottom did not leave copy mode")
	}
	// Opened by the copy key, the wheel does not leave it.
	k := newCopyMode(discard{}, text, 80, 10)
	k.wheel(wheelDown)
	if k.done {
		t.Error("the wheel left copy mode the key opened")
	}
	// A mouse report of the program's is no key in copy mode.
	if over, _ := k.feed([]byte("\x1b[<0;3;4Mq")); !over {
		t.Error("q after a mouse report did not leave copy mode")
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
