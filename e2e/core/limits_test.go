package core_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/poll"
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

// TestContinueAfterLimit: a session started with --continue-after-limit
// gets Claude's continue once its limit reset (plus the skew), once; one
// whose user typed since it stopped, and one with autocontinue turned
// off, get nothing. The limit resets at the next minute but one, so this
// test waits one to two minutes.
func TestContinueAfterLimit(t *testing.T) {
	e, _ := agentEnv(t)
	e.writeConfig("[usage_limit]\nskew = \"1s\"\n")
	reset := time.Now().UTC().Add(10 * time.Second).Truncate(time.Minute).Add(time.Minute)
	e.vars = append(e.vars, "FAKEAGENT_LIMIT_RESETS="+strings.ToLower(reset.Format("3:04PM"))+" (UTC)")
	for _, name := range []string{"go", "typed", "off"} {
		e.must("new", "claude", "--name", name, "--detach", "--continue-after-limit")
	}
	for _, name := range []string{"go", "typed", "off"} {
		e.waitConfirmed(name)
		e.must("send", name, "limit", "--enter")
	}
	for _, name := range []string{"go", "typed", "off"} {
		if !eventually(func() bool {
			s := e.session(name)
			return s.RunState != nil && *s.RunState == string(proto.StateLimited) && s.ContinueAfterLimit
		}) {
			t.Fatalf("%s never limited with autocontinue: %+v", name, e.session(name))
		}
	}
	if out := e.must("ls"); !strings.Contains(out, "go: at its usage limit until "+reset.Format(time.RFC3339)+"; muster continues it then") {
		t.Errorf("ls:\n%s", out)
	}
	e.must("send", "typed", "half a thought")
	e.must("autocontinue", "off", "off")
	// The continue is a new turn: "go" leaves limited for running and
	// then succeeded (the fake answers "continue" with "ok").
	if !poll.Until(3*time.Minute, func() bool {
		s := e.session("go")
		return s.RunState != nil && *s.RunState == string(proto.StateSucceeded)
	}) {
		t.Fatalf("go was never continued: %+v\n%s", e.session("go"), e.must("capture", "go"))
	}
	if screen := e.must("capture", "go"); strings.Count(screen, "> continue") != 1 {
		t.Errorf("continue typed other than once:\n%s", screen)
	}
	for _, name := range []string{"typed", "off"} {
		if s := e.session(name); s.RunState == nil || *s.RunState == string(proto.StateSucceeded) {
			t.Errorf("%s was continued: %+v", name, s)
		}
	}
}
