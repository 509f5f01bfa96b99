package attachterm

import (
	"slices"
	"testing"

	"github.com/musterhq/muster/internal/config"
)

func testKeys(t *testing.T, mouseOwned bool) *Keys {
	t.Helper()
	detach, err := config.ParseKey(config.DefaultDetachKey)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := config.ParseKey(config.DefaultCopyKey)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMouse(true)
	if mouseOwned {
		m.Start() // the attached side takes the mouse at attach
	}
	return &Keys{Detach: detach, Copy: cp, Mouse: m}
}

// TestKeysScan: the attached side's keys are found in one read, the
// earlier of copy and detach winning, and the wheel only while the
// attached side owns the mouse.
func TestKeysScan(t *testing.T) {
	for _, tc := range []struct {
		name       string
		owned      bool
		in         string
		pane, rest string
		act        Action
		wheels     []Wheel
	}{
		{"plain keys", true, "ls\r", "ls\r", "", Type, nil},
		{"the copy key", true, "ab\x1ecd", "ab", "cd", Copy, nil},
		{"the detach key", true, "ab\x1ccd", "ab", "cd", Detach, nil},
		{"detach before copy", true, "a\x1cb\x1ec", "a", "b\x1ec", Detach, nil},
		{"copy before detach", true, "a\x1eb\x1cc", "a", "b\x1cc", Copy, nil},
		{"the wheel up opens copy mode with the keys", true, "x\x1b[<65;1;1M\x1b[<64;1;1My\x1b[<65;1;1M", "", "xy", Scroll, []Wheel{WheelUp, WheelDown}},
		{"the wheel down alone is dropped", true, "x\x1b[<65;1;1My", "xy", "", Type, nil},
		{"the program's mouse passes through", false, "x\x1b[<64;1;1My", "x\x1b[<64;1;1My", "", Type, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := testKeys(t, tc.owned)
			pane, act, rest, wheels := k.Scan([]byte(tc.in))
			if string(pane) != tc.pane || act != tc.act || string(rest) != tc.rest || !slices.Equal(wheels, tc.wheels) {
				t.Errorf("Scan(%q) = %q %v %q %v, want %q %v %q %v", tc.in, pane, act, rest, wheels, tc.pane, tc.act, tc.rest, tc.wheels)
			}
		})
	}
}

// TestKeysFindInCopyMode: copy mode reads every key but detach, the copy
// key included.
func TestKeysFindInCopyMode(t *testing.T) {
	k := testKeys(t, false)
	before, act, rest := k.Find([]byte("j\x1ek\x1cq"), true)
	if string(before) != "j\x1ek" || act != Detach || string(rest) != "q" {
		t.Errorf("Find in copy mode = %q %v %q, want %q Detach %q", before, act, rest, "j\x1ek", "q")
	}
	before, act, _ = k.Find([]byte("j\x1ek"), true)
	if string(before) != "j\x1ek" || act != Type {
		t.Errorf("Find in copy mode without detach = %q %v, want all of it, Type", before, act)
	}
}
