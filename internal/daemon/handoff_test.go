package daemon

import (
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/musterhq/muster/internal/pane"
)

// stateFD puts data in a memfd, as a restart hands its state over.
func stateFD(t *testing.T, data []byte) int {
	t.Helper()
	fd, err := unix.MemfdCreate("test-handoff", unix.MFD_CLOEXEC)
	if err != nil {
		t.Skipf("no memfd here: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := writeAll(fd, data); err != nil {
		t.Fatal(err)
	}
	return fd
}

// TestReadHandoffStateRefusesABadState: a state the new image cannot use
// is refused before it touches anything (the caller then hands the panes
// back to the old image), whatever is wrong with it.
func TestReadHandoffStateRefusesABadState(t *testing.T) {
	sock, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sock)
	lock := stateFD(t, nil)
	good := handoffState{Format: handoffFormat, LockFD: lock, ControlFD: sock, EventsFD: sock}
	enc := func(st handoffState) []byte { b, _ := json.Marshal(st); return b }
	with := func(f func(*handoffState)) []byte { st := good; f(&st); return enc(st) }
	for _, tt := range []struct {
		name, want string
		data       []byte
	}{
		{"not json", "not readable", []byte("garbage")},
		{"truncated", "not readable", enc(good)[:10]},
		{"another format", "handoff format", with(func(s *handoffState) { s.Format = handoffFormat + 1 })},
		{"a descriptor this image lacks", "does not have", with(func(s *handoffState) { s.ControlFD = 999 })},
		{"a lock where a socket goes", "not sockets", with(func(s *handoffState) { s.EventsFD = lock })},
		{"a pane without capability", "without ids", with(func(s *handoffState) {
			s.Panes = []handoffPane{{SessionID: "s", SurfaceID: "u", Pane: pane.Frozen{FD: lock}}}
		})},
		{"a pane whose descriptor is no terminal", "not its terminal", with(func(s *handoffState) {
			s.Panes = []handoffPane{{SessionID: "s", SurfaceID: "u", Capability: "c", Pane: pane.Frozen{FD: lock}}}
		})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readHandoffState(stateFD(t, tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("readHandoffState = %v, want an error saying %q", err, tt.want)
			}
		})
	}
	if st, err := readHandoffState(stateFD(t, enc(good))); err != nil || st.LockFD != lock {
		t.Fatalf("a good state: %+v, %v", st, err)
	}
}
