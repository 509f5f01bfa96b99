package claude

import (
	"testing"
	"time"
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
