package gemini

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/provider"
)

func TestFindLimitScreen(t *testing.T) {
	b, err := os.ReadFile("testdata/limit/screen.txt")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 5, 4, 7, 25, 0, time.UTC)
	q := provider.LimitQuery{At: at, Open: true, Screen: func() string { return string(b) }}
	l, ok := Provider{}.FindLimit(q)
	if !ok {
		t.Fatal("the limit dialog was not read as a limit")
	}
	if !l.ResetsAt.IsZero() || l.Message != "Usage limit reached for all Pro models." {
		t.Errorf("limit %+v; want no reset (a daily quota names none) and the dialog's words", l)
	}
	if keys, text := (Provider{}).Continue(string(b)); keys != "" || text != "" {
		t.Errorf("continue at the dialog: %q then %q, want Enter alone (Keep trying)", keys, text)
	}
	// The same dialog with a retry delay names the reset.
	withReset := strings.Replace(string(b), "│ /stats model", "│ Access resets at 4:11\u202fAM UTC.                                              │\n│ /stats model", 1)
	q.Screen = func() string { return withReset }
	if l, ok = (Provider{}).FindLimit(q); !ok || !l.ResetsAt.Equal(time.Date(2026, 12, 5, 4, 11, 0, 0, time.UTC)) {
		t.Errorf("with Access resets at: %+v %v", l, ok)
	}
	q.Screen = func() string { return " > hit the limit\n✦ a reply\n" }
	if _, ok := (Provider{}).FindLimit(q); ok {
		t.Error("a screen without the dialog read as limited")
	}
	if _, text := (Provider{}).Continue("> \n"); text != "continue" {
		t.Errorf("continue without the dialog types %q", text)
	}
}

func TestAccessResetsAt(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip(err)
	}
	at := time.Date(2026, 12, 5, 16, 0, 0, 0, berlin)
	for _, c := range []struct {
		msg  string
		want time.Time
	}{
		{"Access resets at 4:11 AM UTC.", time.Date(2026, 12, 6, 4, 11, 0, 0, time.UTC)},
		{"Access resets at 5:30 PM CET.", time.Date(2026, 12, 5, 17, 30, 0, 0, berlin)},
		{"Usage limit reached for all Pro models.", time.Time{}},
	} {
		if got := accessResetsAt(c.msg, at); !got.Equal(c.want) {
			t.Errorf("accessResetsAt(%q) = %v, want %v", c.msg, got, c.want)
		}
	}
	if _, ok := (Provider{}).ReadLimit("turn ended without a response (API error?)", at); ok {
		t.Error("a plain failure read as a limit")
	}
}
