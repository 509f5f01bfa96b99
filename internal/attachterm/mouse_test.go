package attachterm

import (
	"slices"
	"testing"
)

func TestMouseInputSplit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []string
		keys   string
		wheels []Wheel
	}{
		{"keys only", []string{"ls\r"}, "ls\r", nil},
		{"wheel up and down", []string{"a\x1b[<64;10;5Mb\x1b[<65;1;1Mc"}, "abc", []Wheel{WheelUp, WheelDown}},
		{"with Shift, Meta or Ctrl held", []string{"\x1b[<68;1;1M\x1b[<89;1;1M"}, "", []Wheel{WheelUp, WheelDown}},
		{"other buttons and releases dropped", []string{"\x1b[<0;3;4M\x1b[<0;3;4m\x1b[<32;5;5M\x1b[<64;1;1m"}, "", nil},
		{"split across reads", []string{"x\x1b", "[<6", "4;10;5", "My"}, "xy", []Wheel{WheelUp}},
		{"a trailing ESC [ is held", []string{"\x1b[", "A"}, "\x1b[A", nil},
		{"a lone ESC at the end waits", []string{"\x1b", "\x1b[<65;2;2M"}, "\x1b", []Wheel{WheelDown}},
		{"not a report", []string{"\x1b[<12u"}, "\x1b[<12u", nil},
		{"an endless number passes through", []string{"\x1b[<" + string(make([]byte, 0)) + "1111111111111111111111111111111111111111", "Z"}, "\x1b[<1111111111111111111111111111111111111111Z", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in MouseInput
			var keys []byte
			var wheels []Wheel
			for _, c := range tc.chunks {
				k, w := in.Split([]byte(c))
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
	m := NewMouse(true)
	if got := m.Start(); got != ownMouseOn || !m.owned.Load() {
		t.Fatalf("start = %q owned=%v", got, m.owned.Load())
	}
	f := Filter{Mouse: m}
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
		if got := string(f.Filter([]byte(s.in))); got != s.out || m.owned.Load() != s.owned {
			t.Errorf("step %d %q: out %q owned=%v, want %q owned=%v", i, s.in, got, m.owned.Load(), s.out, s.owned)
		}
	}
	off := NewMouse(false)
	if off.Start() != "" || string((&Filter{Mouse: off}).Filter([]byte("\x1b[?1000l"))) != "\x1b[?1000l" {
		t.Error("mouse = false changed the output")
	}
}

func TestMouseInputFlushesALoneEsc(t *testing.T) {
	for _, held := range []string{"\x1b", "\x1b[", "\x1b[<64;1"} {
		var in MouseInput
		keys, _ := in.Split([]byte("a" + held))
		if string(keys) != "a" || !in.Pending() {
			t.Fatalf("%q: keys %q pending %v, want the start held", held, keys, in.Pending())
		}
		if got := in.Flush(); string(got) != held || in.Pending() {
			t.Fatalf("%q: flushed %q, pending %v", held, got, in.Pending())
		}
		// What follows a flush starts afresh.
		if keys, _ := in.Split([]byte("x")); string(keys) != "x" {
			t.Fatalf("after a flush: %q", keys)
		}
	}
}
