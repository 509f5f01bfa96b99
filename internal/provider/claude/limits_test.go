package claude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/transcript"
)

func TestReadLimit(t *testing.T) {
	at := time.Date(2026, 3, 5, 12, 30, 0, 0, time.UTC)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone data here")
	}
	for _, tt := range []struct {
		msg  string
		ok   bool
		want time.Time
	}{
		{"rate_limit: 5-hour limit reached ∙ resets 3pm", true, time.Date(2026, 3, 5, 15, 0, 0, 0, time.UTC)},
		{"rate_limit: You've hit your limit · resets 11:30am (UTC)", true, time.Date(2026, 3, 6, 11, 30, 0, 0, time.UTC)},
		{"rate_limit: You've hit your limit · resets 3pm (Europe/Berlin)", true, time.Date(2026, 3, 5, 15, 0, 0, 0, berlin)},
		{"rate_limit: resets Oct 7, 1am (UTC)", true, time.Date(2026, 10, 7, 1, 0, 0, 0, time.UTC)},
		{"rate_limit: API Error: 429", true, time.Time{}},
		{"rate_limit: resets 3pm (Nowhere/Land)", true, time.Time{}},
		{"server_error: API Error: 500 resets 3pm", false, time.Time{}},
		{"", false, time.Time{}},
	} {
		got, ok := Provider{}.ReadLimit(tt.msg, at)
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("ReadLimit(%q) = %v, %v; want %v, %v", tt.msg, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFindLimitRetryLine(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "limit", "retry-screen.txt"))
	if err != nil {
		t.Fatal(err)
	}
	recorded := string(b)
	// When the screen was recorded, in the zone Claude Code ran in (UTC).
	at := time.Date(2026, 12, 5, 4, 25, 41, 0, time.UTC)
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone data here")
	}
	query := func(screen, tz string, open bool) provider.LimitQuery {
		return provider.LimitQuery{
			Env:    transcript.Env{Getenv: func(k string) string { return map[string]string{"TZ": tz}[k] }},
			At:     at,
			Open:   open,
			Screen: func() string { return screen },
		}
	}
	for _, tt := range []struct {
		name   string
		screen string
		tz     string
		open   bool
		ok     bool
		want   time.Time
	}{
		{"recorded", recorded, "", true, true, time.Date(2026, 12, 5, 5, 25, 0, 0, time.UTC)},
		{"in Claude Code's zone", recorded, "America/New_York", true, true, time.Date(2026, 12, 5, 5, 25, 0, 0, newYork)},
		{"more than a day away", strings.Replace(recorded, "(5:25am)", "(Dec 11, 5am)", 1), "", true, true, time.Date(2026, 12, 11, 5, 0, 0, 0, time.UTC)},
		{"next year", strings.Replace(recorded, "(5:25am)", "(Jan 2, 2027, 5:30pm)", 1), "", true, true, time.Date(2027, 1, 2, 17, 30, 0, 0, time.UTC)},
		{"wrapped on a narrow pane", strings.Replace(recorded, " · attempt", "\n  · attempt", 1), "", true, true, time.Date(2026, 12, 5, 5, 25, 0, 0, time.UTC)},
		{"the run already failed", recorded, "", false, false, time.Time{}},
		{"retrying without a reset", strings.Replace(recorded, " (5:25am)", "", 1), "", true, false, time.Time{}},
		{"no retry line", strings.Replace(recorded, "5-hour limit reached", "Thinking", 1), "", true, false, time.Time{}},
	} {
		l, ok := Provider{}.FindLimit(query(tt.screen, tt.tz, tt.open))
		if ok != tt.ok || !l.ResetsAt.Equal(tt.want) {
			t.Errorf("%s: FindLimit = %+v, %v; want resets %v, %v", tt.name, l, ok, tt.want, tt.ok)
			continue
		}
		if ok && (!l.Retrying || l.Evidence != "screen: retry line (5-hour limit reached)" || !strings.HasPrefix(l.Message, "5-hour limit reached · retrying in 1s")) {
			t.Errorf("%s: FindLimit = %+v; want a Retrying finding naming the retry line", tt.name, l)
		}
	}
}
