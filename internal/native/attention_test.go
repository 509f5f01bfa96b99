package native

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/termsignal"
)

// TestOnAttention feeds a pane's raw output through the scanner, split
// into writes the way a program prints, and checks which requests for
// attention reach the daemon.
func TestOnAttention(t *testing.T) {
	type write struct {
		after time.Duration // since the previous write
		data  string
	}
	tests := []struct {
		name   string
		writes []write
		want   []string // "+offset text | evidence"
	}{
		{
			name:   "OSC 9 notification",
			writes: []write{{0, "\x1b]9;Build finished\x07"}},
			want:   []string{"+0s Build finished | OSC 9;Build finished"},
		},
		{
			name:   "OSC 9 split over two writes",
			writes: []write{{0, "out\x1b]9;Tests "}, {100 * time.Millisecond, "passed\x1b\\more"}},
			want:   []string{"+100ms Tests passed | OSC 9;Tests passed"},
		},
		{
			name: "ConEmu commands are not notifications",
			writes: []write{{0, "\x1b]9;4;1;40\x07"}, {time.Second, "\x1b]9;4;0;\x07"},
				{time.Second, "\x1b]9;9;\"/tmp\"\x07"}, {time.Second, "\x1b]9;12\x07"}},
		},
		{
			name:   "OSC 777 notify",
			writes: []write{{0, "\x1b]777;notify;Claude Code;Claude needs your permission\x07"}},
			want:   []string{"+0s Claude Code: Claude needs your permission | OSC 777;notify;Claude Code;Claude needs your permission"},
		},
		{
			name: "kitty chunks are reassembled",
			writes: []write{{0, "\x1b]99;i=8276:d=0:p=title;Claude Code\x1b\\"},
				{10 * time.Millisecond, "\x1b]99;i=8276:p=body;Claude needs your permission\x1b\\"},
				{10 * time.Millisecond, "\x1b]99;i=8276:d=1:a=focus;\x1b\\"}},
			// The body chunk has no d=, which means d=1: the notification
			// is complete there; the last chunk only adds an action.
			want: []string{"+10ms Claude Code: Claude needs your permission | OSC 99;i=8276:p=body;Claude needs your permission"},
		},
		{
			name: "a burst of bells is one request",
			writes: []write{{0, "\a\a\a"}, {100 * time.Millisecond, "\a"}, {100 * time.Millisecond, "\a\a"},
				{500 * time.Millisecond, "\a"}},
			want: []string{"+0s bell | BEL"},
		},
		{
			// Claude Code rings the bell, then sends the notification
			// that says why: the item must show the notification.
			name: "a notification right after a bell passes once",
			writes: []write{{0, "\a"}, {200 * time.Millisecond, "\x1b]9;Claude needs your permission\x07"},
				{200 * time.Millisecond, "\x1b]9;again\x07"}, {100 * time.Millisecond, "\a"}},
			want: []string{"+0s bell | BEL", "+200ms Claude needs your permission | OSC 9;Claude needs your permission"},
		},
		{
			name: "rate limited per pane",
			writes: []write{{0, "\x1b]9;one\x07"}, {500 * time.Millisecond, "\x1b]9;two\x07"},
				{time.Second, "\a"}, {DefaultAttentionInterval, "\x1b]9;three\x07"}},
			want: []string{"+0s one | OSC 9;one", "+3.5s three | OSC 9;three"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{t: t0}
			var got []string
			e := New(Config{Now: clk.Now, Listener: listenerFuncs{attention: func(surface string, r AttentionRequest) {
				if surface != "sf" {
					t.Errorf("surface %q", surface)
				}
				got = append(got, "+"+r.At.Sub(t0).String()+" "+r.Text+" | "+r.Evidence)
			}}})
			e.SurfaceStarted(Surface{ID: "sf", SessionID: "S", Provider: "shell", PID: 1})
			sc := termsignal.New()
			var out []byte
			for _, w := range tt.writes {
				clk.Advance(w.after)
				var sigs []termsignal.Signal
				out, sigs = sc.Feed([]byte(w.data), out[:0])
				e.Signals("sf", sigs)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if len(tt.want) > 0 && e.Activity("sf").State != Attention {
				t.Errorf("activity = %+v, want attention", e.Activity("sf"))
			}
		})
	}
}
