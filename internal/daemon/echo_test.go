package daemon

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestEchoNeedle(t *testing.T) {
	tests := []struct{ text, want string }{
		{"say hello", "sayhello"},
		{"please  make a file in the repo", "ileintherepo"},
		{"first\nsecond line\n\n", "secondline"},
		{"   ", ""},
		{"", ""},
		{"héllo wörld ünïcode", "wörldünïcode"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := echoNeedle(tt.text); got != tt.want {
				t.Errorf("echoNeedle(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// screens is a capture function that shows one screen per call and then
// keeps showing the last.
func screens(ss ...string) func() (string, error) {
	i := 0
	return func() (string, error) {
		s := ss[min(i, len(ss)-1)]
		i++
		if s == "ERR" {
			return "", errors.New("capture failed")
		}
		return s, nil
	}
}

func TestEchoWatch(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		screens []string // the first is the screen before typing
		want    bool
	}{
		{"shown after a while", "say hello", []string{"> ", "> ", "> s", "│ > say hello │"}, true},
		{"wrapped by the box", "make a file", []string{"", "│ > make a │\n│   file    │"}, true},
		{"already in the scrollback", "say hello", []string{"> say hello\n✦ hi\n> ", "> say hello\n✦ hi\n> say hello"}, true},
		{"only the old copy", "say hello", []string{"> say hello\n> ", "> say hello\n> "}, false},
		{"a failing capture", "say hello", []string{"", "ERR", "> say hello"}, true},
		{"never shown", "secret", []string{"Password: ", "Password: "}, false},
		{"nothing to look for", "  ", []string{"", "  "}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newEchoWatch(screens(tt.screens...), tt.text)
			if got := w.wait(t.Context(), 200*time.Millisecond); got != tt.want {
				t.Errorf("wait = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestEchoWatchStopsWithItsRequest: a wait whose request ended gives up at
// once instead of polling on for its timeout.
func TestEchoWatchStopsWithItsRequest(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	polls := 0
	w := newEchoWatch(func() (string, error) {
		polls++
		if polls == 3 {
			cancel()
		}
		return "Password: ", nil
	}, "secret")
	if w.wait(ctx, time.Hour) {
		t.Error("an echo that never came was reported")
	}
	if polls != 3 {
		t.Errorf("%d polls; want the wait to end at the first after its request ended", polls)
	}
}
