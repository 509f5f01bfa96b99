package events

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/runstate"
)

func TestLifecycleThroughTheSocket(t *testing.T) {
	h := startHarness(t, "")
	h.surface("sf", "s1", "api", "claude")
	t0 := h.clock.Now()
	native := "11111111-2222-4333-8444-555555555555"
	// Each event arrives once it has happened (a late one, after others).
	post := func(id, run string, kind proto.EventKind, at time.Duration, hook string) {
		t.Helper()
		if now := h.clock.Now(); now.Before(t0.Add(at)) {
			h.clock.Set(t0.Add(at))
		}
		h.mustPost(evt{id: id, run: run, surface: "sf", kind: kind, at: t0.Add(at), hook: hook, session: &native, msg: "Claude needs your permission"})
	}
	post("e1", "r1", proto.KindStarted, 0, "UserPromptSubmit")
	post("e2", "r1", proto.KindApprovalRequested, time.Second, "PermissionRequest")
	// Claude's Notification(permission_prompt) ~6 s later: same approval.
	post("e3", "r1", proto.KindApprovalRequested, 7*time.Second, "Notification")
	// A late event from before the approval does not move the run back.
	post("e4", "r1", proto.KindRunning, 500*time.Millisecond, "PreToolUse")

	st := h.e.SessionState("s1")
	if st.RunState != "waitingApproval" || st.RunID != "r1" || st.Attention != 1 || st.NativeSessionID != native || st.SurfaceID != "sf" {
		t.Fatalf("SessionState = %+v", st)
	}
	var info proto.SessionInfo
	st.Fill(&info)
	if *info.RunState != "waitingApproval" || *info.RunID != "r1" || info.Attention != 1 || info.NativeSessionID != native || info.LastEventAt == nil {
		t.Fatalf("Fill = %+v", info)
	}
	items, err := h.e.Attention(proto.AttentionArgs{})
	if err != nil || len(items) != 1 || items[0].SessionName != "api" || items[0].Reason != "approval-requested" || !items[0].Open {
		t.Fatalf("Attention = %+v, %v", items, err)
	}

	x, err := h.e.Explain(t.Context(), "api")
	if err != nil {
		t.Fatal(err)
	}
	if *x.State != "waitingApproval" || x.Because.EventID != "e2" || x.Because.HookName != "PermissionRequest" ||
		x.Last.EventID != "e3" || x.Because.Source != "hook" || len(x.Events) != 4 || x.Events[3].Effect != "late" {
		b, _ := json.MarshalIndent(x, "", " ")
		t.Fatalf("Explain = %s", b)
	}

	// The user approves: the run resumes and the item resolves.
	post("e5", "r1", proto.KindRunning, 9*time.Second, "PostToolUse")
	if items, _ := h.e.Attention(proto.AttentionArgs{}); len(items) != 0 {
		t.Fatalf("item still open after the run moved on: %+v", items)
	}
	all, _ := h.e.Attention(proto.AttentionArgs{All: true})
	if len(all) != 1 || all[0].Open || all[0].Resolution != "run moved on to running" {
		t.Fatalf("Attention(all) = %+v", all)
	}
	post("e6", "r1", proto.KindSucceeded, 10*time.Second, "Stop")
	if st := h.e.SessionState("s1"); st.RunState != "succeeded" || st.Attention != 0 {
		t.Fatalf("after Stop: %+v", st)
	}
	h.clock.Add(10*time.Second + 2*time.Minute)
	if st := h.e.SessionState("s1"); st.RunState != "idle" {
		t.Fatalf("after the quiet time: %+v", st)
	}
	// A retried event answers inserted:false.
	if got := h.post(evt{id: "e6", run: "r1", surface: "sf", kind: proto.KindSucceeded, at: t0}); got != okDuplicate {
		t.Fatalf("retry: %q", got)
	}
}

func TestAttentionRules(t *testing.T) {
	h := startHarness(t, "")
	h.surface("sf", "s1", "api", "claude")
	t0 := h.clock.Now().Add(-time.Hour)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	// A run of exactly five minutes opens a "succeeded" item.
	h.mustPost(evt{id: "a1", run: "long", surface: "sf", kind: proto.KindStarted, at: at(0)})
	h.mustPost(evt{id: "a2", run: "long", surface: "sf", kind: proto.KindSucceeded, at: at(5 * time.Minute)})
	// A newer run that ends a moment short of five minutes opens nothing,
	// but supersedes the first run's item.
	h.mustPost(evt{id: "b1", run: "short", surface: "sf", kind: proto.KindStarted, at: at(10 * time.Minute)})
	h.mustPost(evt{id: "b2", run: "short", surface: "sf", kind: proto.KindSucceeded, at: at(15*time.Minute - time.Millisecond)})
	all, _ := h.e.Attention(proto.AttentionArgs{All: true})
	if len(all) != 1 || all[0].Reason != "succeeded" || all[0].RunID != "long" || all[0].Open || all[0].Resolution != runstate.ResolvedSuperseded {
		t.Fatalf("items = %+v", all)
	}
	// Input, then a failure; interrupted opens nothing.
	h.mustPost(evt{id: "c1", run: "c", surface: "sf", kind: proto.KindInputRequested, at: at(20 * time.Minute)})
	h.mustPost(evt{id: "c2", run: "c", surface: "sf", kind: proto.KindFailed, at: at(21 * time.Minute)})
	h.mustPost(evt{id: "d1", run: "d", surface: "sf", kind: proto.KindApprovalRequested, at: at(22 * time.Minute)})
	h.mustPost(evt{id: "d2", run: "d", surface: "sf", kind: proto.KindInterrupted, at: at(23 * time.Minute)})
	open, _ := h.e.Attention(proto.AttentionArgs{})
	if len(open) != 0 {
		t.Fatalf("open = %+v", open)
	}
	all, _ = h.e.Attention(proto.AttentionArgs{All: true})
	var reasons []string
	for _, it := range all {
		reasons = append(reasons, it.Reason+"/"+it.Resolution)
	}
	want := "succeeded/superseded by a newer run input-requested/run moved on to failed failed/superseded by a newer run approval-requested/run moved on to interrupted"
	if strings.Join(reasons, " ") != want {
		t.Fatalf("items:\n got %s\nwant %s", strings.Join(reasons, " "), want)
	}

	// Ack, and the 24-hour visibility of resolved items.
	h.mustPost(evt{id: "e1", run: "e", surface: "sf", kind: proto.KindFailed, at: at(30 * time.Minute)})
	open, _ = h.e.Attention(proto.AttentionArgs{})
	if len(open) != 1 {
		t.Fatalf("open = %+v", open)
	}
	if _, err := h.e.Ack(t.Context(), proto.AckArgs{IDs: []int64{open[0].ID, 999}}); err == nil {
		t.Fatal("ack with an unknown id succeeded")
	}
	if o, _ := h.e.Attention(proto.AttentionArgs{}); len(o) != 1 {
		t.Fatal("failed ack changed items")
	}
	res, err := h.e.Ack(t.Context(), proto.AckArgs{IDs: []int64{open[0].ID}})
	if err != nil || len(res.Acknowledged) != 1 || len(res.Already) != 0 {
		t.Fatalf("Ack = %+v, %v", res, err)
	}
	res, err = h.e.Ack(t.Context(), proto.AckArgs{IDs: []int64{open[0].ID}})
	if err != nil || len(res.Already) != 1 {
		t.Fatalf("second Ack = %+v, %v", res, err)
	}
	ackedAt := h.clock.Now()
	h.clock.Set(ackedAt.Add(24*time.Hour - time.Second))
	// Every item here resolved at the same (fake) moment as the ack.
	if all, _ := h.e.Attention(proto.AttentionArgs{All: true}); len(all) != 5 {
		t.Fatalf("a day minus a second later: %+v", all)
	}
	h.clock.Set(ackedAt.Add(24 * time.Hour))
	if all, _ := h.e.Attention(proto.AttentionArgs{All: true}); len(all) != 0 {
		t.Fatalf("a day later: %+v", all)
	}
}

func TestCloseSurface(t *testing.T) {
	h := startHarness(t, "")
	h.surface("sf", "s1", "api", "claude")
	h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindStarted})
	code := 137
	h.e.CloseSurface("sf", &code)
	if got := h.post(evt{id: "e2", run: "r1", surface: "sf", kind: proto.KindRunning}); got != errResp(proto.ErrUnauthorized) {
		t.Fatalf("event after close: %q", got)
	}
	if err := h.e.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	x, err := h.e.Explain(t.Context(), "api")
	if err != nil {
		t.Fatal(err)
	}
	if *x.State != "disconnected" || x.Because.HookName != HookSurfaceClosed || x.Because.Source != "surface" ||
		!strings.Contains(x.Because.Message, "137") || len(x.Attention) != 1 || x.Attention[0].Reason != "disconnected" {
		b, _ := json.MarshalIndent(x, "", " ")
		t.Fatalf("after close: %s", b)
	}
	// Closing again, or an unknown surface, does nothing.
	before := h.dump()
	h.e.CloseSurface("sf", nil)
	h.e.CloseSurface("nope", nil)
	h.e.Flush(t.Context())
	if h.dump() != before {
		t.Fatal("second close changed state")
	}
}

func TestStartupSweep(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	h := startHarness(t, db)
	h.surface("sf1", "s1", "one", "claude")
	h.surface("sf2", "s2", "two", "gemini")
	h.surface("sf3", "s3", "three", "claude")
	h.mustPost(evt{id: "a", run: "r1", surface: "sf1", kind: proto.KindRunning})
	h.mustPost(evt{id: "b", run: "r2", surface: "sf2", kind: proto.KindInputRequested})
	h.mustPost(evt{id: "c", run: "r3", surface: "sf3", kind: proto.KindSucceeded})
	h.stop() // the daemon goes away without closing its panes

	h2 := startHarness(t, db)
	for _, n := range []string{"one", "two", "three"} {
		h2.res.add(n, map[string]string{"one": "s1", "two": "s2", "three": "s3"}[n])
	}
	for _, c := range []struct{ name, state, hook string }{
		{"one", "disconnected", HookStartupSweep},
		{"two", "disconnected", HookStartupSweep},
		{"three", "succeeded", "Hook"},
	} {
		x, err := h2.e.Explain(t.Context(), c.name)
		if err != nil {
			t.Fatal(err)
		}
		if *x.State != c.state || (c.hook == HookStartupSweep && (x.Because.HookName != c.hook || x.Because.Source != "sweep")) {
			t.Errorf("%s after restart: %s because %+v", c.name, *x.State, x.Because)
		}
	}
	items, _ := h2.e.Attention(proto.AttentionArgs{All: true})
	var got []string
	for _, it := range items {
		got = append(got, it.RunID+":"+it.Reason+":"+it.Resolution)
	}
	if strings.Join(got, " ") != "r2:input-requested:run moved on to disconnected r1:disconnected: r2:disconnected:" {
		t.Fatalf("items after sweep: %v", got)
	}
	// A second restart sweeps nothing more.
	before := h2.dump()
	h2.stop()
	h3 := startHarness(t, db)
	if h3.dump() != before {
		t.Fatal("a second start swept again")
	}
}

func TestNotifyCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "notes")
	script := filepath.Join(dir, "notify")
	os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s|' \"$@\" >> "+out+"\necho >> "+out+"\n"), 0o755)
	h := startHarness(t, "", func(c *Config) { c.NotifyCommand = []string{script, "--id={id}", "{title}", "{body}"} })
	h.surface("sf", "s1", "api", "claude")
	h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindApprovalRequested, msg: "Run go test?"})
	h.mustPost(evt{id: "e2", run: "r1", surface: "sf", kind: proto.KindApprovalRequested, msg: "again"}) // no new item
	h.mustPost(evt{id: "e3", run: "r1", surface: "sf", kind: proto.KindFailed, msg: "boom"})
	h.stop() // waits for the notifier
	b, _ := os.ReadFile(out)
	want := "--id=1|Muster: api needs approval|Run go test?|\n--id=2|Muster: api failed|boom|\n"
	if string(b) != want {
		t.Fatalf("notifications:\n%q\nwant\n%q", b, want)
	}
}

func TestNotifyFailureIsLoggedOnce(t *testing.T) {
	var logs syncBuffer
	h := startHarness(t, "", func(c *Config) {
		c.NotifyCommand = []string{filepath.Join(t.TempDir(), "no-such-notifier")}
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	h.surface("sf", "s1", "api", "claude")
	for i, k := range []proto.EventKind{proto.KindApprovalRequested, proto.KindInputRequested, proto.KindFailed} {
		h.mustPost(evt{id: string(rune('a' + i)), run: "r1", surface: "sf", kind: k})
	}
	h.stop()
	if n := strings.Count(logs.String(), "notification command failed"); n != 1 {
		t.Fatalf("logged %d times:\n%s", n, logs.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestNotifyArgs(t *testing.T) {
	it := runstate.Item{ID: 4, Reason: proto.KindInputRequested, Message: "Which file?"}
	tests := []struct {
		tmpl []string
		want []string
	}{
		{DefaultNotifyCommand("linux"), []string{"notify-send", "--app-name=Muster", "--", "Muster: api needs input", "Which file?"}},
		{[]string{"my-notify"}, []string{"my-notify", "Muster: api needs input", "Which file?"}},
		{[]string{"x", "{session}:{reason}:{id}"}, []string{"x", "api:input-requested:4"}},
		{[]string{"{title}"}, []string{"{title}", "Muster: api needs input", "Which file?"}}, // argv[0] is never templated
	}
	for _, tt := range tests {
		if got := NotifyArgs(tt.tmpl, it, "api"); strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") {
			t.Errorf("NotifyArgs(%q) = %q, want %q", tt.tmpl, got, tt.want)
		}
	}
	mac := NotifyArgs(DefaultNotifyCommand("darwin"), it, "api")
	if mac[0] != "osascript" || mac[len(mac)-2] != "Muster: api needs input" || mac[len(mac)-1] != "Which file?" {
		t.Errorf("darwin: %q", mac)
	}
}

// TestNotifyArgsStripsAgentText: the notifier gets the message without
// escape sequences or controls, cut on a character boundary.
func TestNotifyArgsStripsAgentText(t *testing.T) {
	evil := "Approve\x1b]52;c;cm0gLXJmIH4vKgo=\x07 the\x1b]0;pwned\x1b\\ update\x1b[2J\u009b31m now\x07\n-u critical"
	got := NotifyArgs(DefaultNotifyCommand("linux"), runstate.Item{ID: 1, Reason: proto.KindApprovalRequested, Message: evil}, "api\u009b2J")
	want := []string{"notify-send", "--app-name=Muster", "--", "Muster: api needs approval", "Approve the update now -u critical"}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("NotifyArgs = %q, want %q", got, want)
	}
	long := strings.Repeat("é", 300)
	got = NotifyArgs([]string{"n", "{body}"}, runstate.Item{Message: long}, "api")
	if want := strings.Repeat("é", 199) + "…"; got[1] != want {
		t.Errorf("long body = %q, want %q", got[1], want)
	}
}

func TestSessionRemoved(t *testing.T) {
	h := startHarness(t, "")
	h.surface("sf", "s1", "api", "claude")
	h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindFailed})
	h.e.SessionRemoved("s1")
	h.e.Flush(t.Context())
	if st := h.e.SessionState("s1"); st.RunState != "" || st.Attention != 0 {
		t.Fatalf("removed session state = %+v", st)
	}
	if items, _ := h.e.Attention(proto.AttentionArgs{All: true}); len(items) != 0 {
		t.Fatalf("items of a removed session: %+v", items)
	}
}

func TestEmitNativeEvent(t *testing.T) {
	h := startHarness(t, "")
	h.surface("sf", "s1", "api", "claude")
	ev := proto.Event{SchemaVersion: 1, ID: proto.RawID{RawValue: "n1"}, RunID: proto.RawID{RawValue: "coarse"},
		SurfaceID: proto.RawID{RawValue: "sf"}, Provider: "claude", Kind: proto.KindStarted,
		OccurredAt: h.clock.Now(), HookName: "muster.native.launchObserved"}
	if ins, err := h.e.Emit(t.Context(), ev); err != nil || !ins {
		t.Fatalf("Emit = %v, %v", ins, err)
	}
	if ins, err := h.e.Emit(t.Context(), ev); err != nil || ins {
		t.Fatalf("Emit again = %v, %v", ins, err)
	}
	ev.HookName = "PreToolUse"
	if _, err := h.e.Emit(t.Context(), ev); err == nil {
		t.Fatal("Emit accepted a provider hook name")
	}
	x, _ := h.e.Explain(t.Context(), "api")
	if x.Because.Source != "native" || *x.State != "running" {
		t.Fatalf("explain after Emit: %+v", x.Because)
	}
}

func TestRegisterSurfaceErrors(t *testing.T) {
	h := startHarness(t, "")
	h.surface("sf", "s1", "api", "claude")
	if _, err := h.e.RegisterSurface(Surface{ID: "sf", SessionID: "s1"}); err == nil {
		t.Error("duplicate surface registered")
	}
	if _, err := h.e.RegisterSurface(Surface{ID: "", SessionID: "s1"}); err == nil {
		t.Error("surface without id registered")
	}
	if _, err := h.e.RegisterSurface(Surface{ID: "x"}); err == nil {
		t.Error("surface without session registered")
	}
}

func TestServeNeedsStart(t *testing.T) {
	st := startHarness(t, "").st
	e, _ := New(Config{Store: st})
	ln, err := Listen(filepath.Join(shortDir(t), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := e.Serve(ctx, ln); err == nil {
		t.Fatal("Serve before Start succeeded")
	}
	if _, err := e.Attention(proto.AttentionArgs{}); err == nil {
		t.Fatal("Attention before Start succeeded")
	}
}

func TestListen(t *testing.T) {
	dir := shortDir(t)
	p := filepath.Join(dir, "e.sock")
	ln, err := Listen(p)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, %v", fi.Mode(), err)
	}
	if _, err := Listen(p); err == nil {
		t.Fatal("second listener on a live socket")
	}
	// A stale socket (its listener gone without unlinking) is replaced.
	ln.SetUnlinkOnClose(false)
	ln.Close()
	ln2, err := Listen(p)
	if err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	ln2.Close()
	open := t.TempDir()
	os.Chmod(open, 0o755)
	if _, err := Listen(filepath.Join(open, "e.sock")); err == nil {
		t.Fatal("listened in a directory open to others")
	}
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o600)
	if _, err := Listen(filepath.Join(dir, "file")); err == nil {
		t.Fatal("replaced a regular file")
	}
}

func TestIdempotencyAcrossRestarts(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	h := startHarness(t, db)
	h.surface("sf", "s1", "api", "claude")
	h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindStarted})
	h.stop()
	h2 := startHarness(t, db)
	h2.surface("sf", "s1", "api", "claude")
	if got := h2.post(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindFailed}); got != okDuplicate {
		t.Fatalf("retry after a restart: %q", got)
	}
	h2.mustPost(evt{id: "e2", run: "r1", surface: "sf", kind: proto.KindFailed})
}
