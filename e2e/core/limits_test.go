package core_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// TestUsageLimitState: Claude (the fake) stops at its plan's usage limit
// (StopFailure error rate_limit, "resets 3pm (UTC)"): the run shows the
// state limited with the reset time in ls and --json, explain names the
// hook that said so, and the attention item carries the agent's words.
func TestUsageLimitState(t *testing.T) {
	e, _ := agentEnv(t)
	e.must("new", "claude", "--name", "cl", "--detach")
	e.waitConfirmed("cl")
	sent := time.Now().UTC()
	e.must("send", "cl", "limit", "--enter")
	var s proto.SessionInfo
	if !eventually(func() bool {
		s = e.session("cl")
		return s.RunState != nil && *s.RunState == string(proto.StateLimited)
	}) {
		t.Fatalf("run state never limited: %+v", s)
	}
	want := time.Date(sent.Year(), sent.Month(), sent.Day(), 15, 0, 0, 0, time.UTC)
	if !want.After(sent) {
		want = want.AddDate(0, 0, 1)
	}
	// The event may come a little after sent: past 15:00 by then, the
	// next day's.
	if s.LimitResetsAt == nil {
		t.Fatalf("no reset time: %+v", s)
	}
	got, err := time.Parse(time.RFC3339, *s.LimitResetsAt)
	if err != nil || !got.Equal(want) && !got.Equal(want.AddDate(0, 0, 1)) {
		t.Errorf("limit_resets_at %q (%v); want %s", *s.LimitResetsAt, err, want.Format(time.RFC3339))
	}
	if out := e.must("ls"); !strings.Contains(out, "limited") || !strings.Contains(out, "cl: at its usage limit until ") {
		t.Errorf("ls:\n%s", out)
	}
	out := e.must("explain", "cl")
	if !strings.Contains(out, "stopped at its usage limit (limited); resets ") || !strings.Contains(out, "StopFailure") {
		t.Errorf("explain:\n%s", out)
	}
	var items []proto.AttentionItem
	json.Unmarshal([]byte(e.must("attention", "--json")), &items)
	if len(items) != 1 || !strings.Contains(items[0].Message, "resets 3pm") {
		t.Errorf("attention: %+v; want one item saying when it resets", items)
	}
	// A new turn ends the limit.
	e.must("send", "cl", "reply back", "--enter", "--confirm", "--wait-done")
	if s = e.session("cl"); s.RunState == nil || *s.RunState == string(proto.StateLimited) || s.LimitResetsAt != nil {
		t.Errorf("after a new turn: %+v", s)
	}
}
