package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/capability"
	"github.com/musterhq/muster/internal/proto"
)

// TestConformance sends hostile and malformed requests to a real engine on
// a real socket. Each gets its exact error code, no response leaks a
// capability, and the stored state is byte-for-byte what it was.
func TestConformance(t *testing.T) {
	h := startHarness(t, "", func(c *Config) { c.ReadTimeout = time.Second })
	capA := h.surface("sfA", "sessA", "alpha", "claude")
	capB := h.surface("sfB", "sessB", "beta", "gemini")
	capC := h.surface("sfC", "sessC", "gamma", "claude")
	h.e.CloseSurface("sfC", nil) // its capability is now revoked
	if err := h.e.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Some state to protect.
	now := h.clock.Now()
	h.mustPost(evt{id: "e1", run: "r1", surface: "sfA", kind: proto.KindStarted, at: now.Add(-time.Minute), hook: "UserPromptSubmit"})
	h.mustPost(evt{id: "e2", run: "r1", surface: "sfA", kind: proto.KindApprovalRequested, at: now.Add(-30 * time.Second), hook: "PermissionRequest", msg: "ok?"})
	h.mustPost(evt{id: "e3", run: "q1", surface: "sfB", kind: proto.KindFailed, at: now.Add(-10 * time.Second), hook: "AfterAgent"})

	good := func() evt {
		return evt{id: "new-id", run: "r1", surface: "sfA", kind: proto.KindRunning, hook: "PostToolUse", at: now}
	}
	line := func(e evt) string { return string(h.line(e)) }
	goodLine := line(good())
	replace := func(old, new string) string {
		if !strings.Contains(goodLine, old) {
			t.Fatalf("%q not in %s", old, goodLine)
		}
		return strings.Replace(goodLine, old, new, 1)
	}
	with := func(f func(*evt)) string { e := good(); f(&e); return line(e) }
	hash := sha256.Sum256([]byte(capA))
	big := `{"schemaVersion":1,"pad":"` + strings.Repeat("x", proto.MaxEventRequest) + `"}` + "\n"

	type tc struct {
		name string
		req  string
		want string
		// how: "" sends req at once; "eof" sends it and half-closes;
		// "silent" sends nothing; "dribble" sends one byte at a time.
		how string
	}
	cases := []tc{
		{"bad JSON", "hello\n", proto.ErrInvalidJSON, ""},
		{"truncated JSON", goodLine[:len(goodLine)/2] + "\n", proto.ErrInvalidJSON, ""},
		{"truncated at EOF", goodLine[:len(goodLine)/2], proto.ErrInvalidJSON, "eof"},
		{"not UTF-8", replace(`PostToolUse`, "Post\xc3\x28ToolUse"), proto.ErrInvalidJSON, ""},
		{"empty line", "\n", proto.ErrInvalidJSON, ""},
		{"blank line", "   \t \n", proto.ErrInvalidJSON, ""},
		{"top-level array", "[" + strings.TrimSuffix(goodLine, "\n") + "]\n", proto.ErrInvalidJSON, ""},
		{"top-level string", `"hello"` + "\n", proto.ErrInvalidJSON, ""},
		{"top-level number", "1\n", proto.ErrInvalidJSON, ""},
		{"top-level null", "null\n", proto.ErrInvalidJSON, ""},
		{"two envelopes on one line", strings.TrimSuffix(goodLine, "\n") + goodLine, proto.ErrInvalidJSON, ""},
		{"trailing garbage", strings.TrimSuffix(goodLine, "\n") + "}\n", proto.ErrInvalidJSON, ""},
		{"deep nesting", `{"a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}\n", proto.ErrInvalidJSON, ""},
		{"NUL byte", replace(`PostToolUse`, "Post\x00ToolUse"), proto.ErrInvalidJSON, ""},
		{"envelope version 2", replace(`{"schemaVersion":1,`, `{"schemaVersion":2,`), proto.ErrUnsupportedVersion, ""},
		{"envelope version 0", replace(`{"schemaVersion":1,`, `{"schemaVersion":0,`), proto.ErrUnsupportedVersion, ""},
		{"envelope version as string", replace(`{"schemaVersion":1,`, `{"schemaVersion":"1",`), proto.ErrUnsupportedVersion, ""},
		{"event version 2", replace(`"event":{"schemaVersion":1,`, `"event":{"schemaVersion":2,`), proto.ErrUnsupportedVersion, ""},
		{"envelope version missing", replace(`{"schemaVersion":1,`, `{`), proto.ErrInvalidEvent, ""},
		{"event missing", `{"schemaVersion":1,"capability":"` + capA + `"}` + "\n", proto.ErrInvalidEvent, ""},
		{"event is a string", `{"schemaVersion":1,"capability":"` + capA + `","event":"started"}` + "\n", proto.ErrInvalidEvent, ""},
		{"id missing", replace(`"id":{"rawValue":"new-id"},`, ``), proto.ErrInvalidEvent, ""},
		{"id is a string", replace(`"id":{"rawValue":"new-id"}`, `"id":"new-id"`), proto.ErrInvalidEvent, ""},
		{"id empty", with(func(e *evt) { e.id = "" }), proto.ErrInvalidEvent, ""},
		{"run id missing", replace(`"runID":{"rawValue":"r1"},`, ``), proto.ErrInvalidEvent, ""},
		{"run id is a number", replace(`"runID":{"rawValue":"r1"}`, `"runID":{"rawValue":1}`), proto.ErrInvalidEvent, ""},
		{"provider missing", replace(`"provider":"claude",`, ``), proto.ErrInvalidEvent, ""},
		{"provider is a number", replace(`"provider":"claude"`, `"provider":7`), proto.ErrInvalidEvent, ""},
		{"session id is an object", replace(`"sessionID":null`, `"sessionID":{"rawValue":"x"}`), proto.ErrInvalidEvent, ""},
		{"kind missing", replace(`"kind":"running",`, ``), proto.ErrInvalidEvent, ""},
		{"kind is a number", replace(`"kind":"running"`, `"kind":1`), proto.ErrInvalidEvent, ""},
		{"kind unknown", with(func(e *evt) { e.kind = "exploded" }), proto.ErrUnknownKind, ""},
		{"kind idle is derived, not a wire kind", with(func(e *evt) { e.kind = "idle" }), proto.ErrUnknownKind, ""},
		{"date missing", replace(`"occurredAt":"`+now.Format(time.RFC3339Nano)+`",`, ``), proto.ErrInvalidEvent, ""},
		{"date garbage", replace(now.Format(time.RFC3339Nano), "last tuesday"), proto.ErrInvalidEvent, ""},
		{"date as a number", replace(`"`+now.Format(time.RFC3339Nano)+`"`, "1784185200"), proto.ErrInvalidEvent, ""},
		{"date in the future", with(func(e *evt) { e.at = now.Add(10 * time.Minute) }), proto.ErrInvalidEvent, ""},
		{"hook name reserved", with(func(e *evt) { e.hook = "muster.startupSweep" }), proto.ErrReservedHookName, ""},
		{"hook name reserved, native", with(func(e *evt) { e.hook = "muster.native.turnStarted" }), proto.ErrReservedHookName, ""},
		{"hook name reserved, other case", with(func(e *evt) { e.hook = "Muster.surfaceClosed" }), proto.ErrReservedHookName, ""},
		{"wrong capability", with(func(e *evt) { tok, _ := capability.NewToken(); e.cap = tok }), proto.ErrUnauthorized, ""},
		{"other surface's capability", with(func(e *evt) { e.cap = capB }), proto.ErrUnauthorized, ""},
		{"own capability for another surface", with(func(e *evt) { e.surface = "sfB"; e.cap = capA }), proto.ErrUnauthorized, ""},
		{"revoked capability", with(func(e *evt) { e.surface = "sfC"; e.cap = capC }), proto.ErrUnauthorized, ""},
		{"capability missing", replace(`"capability":"`+capA+`",`, ``), proto.ErrUnauthorized, ""},
		{"surface id missing", replace(`"surfaceID":{"rawValue":"sfA"},`, ``), proto.ErrUnauthorized, ""},
		{"surface id empty", with(func(e *evt) { e.surface = ""; e.cap = capA }), proto.ErrUnauthorized, ""},
		{"surface id malformed", with(func(e *evt) { e.surface = " sfA" }), proto.ErrInvalidEvent, ""},
		{"capability's hash instead", with(func(e *evt) { e.cap = hex.EncodeToString(hash[:]) }), proto.ErrUnauthorized, ""},
		{"capability with a suffix", with(func(e *evt) { e.cap = capA + "A" }), proto.ErrUnauthorized, ""},
		{"codex event for an unknown session", with(func(e *evt) { s := "01a22c18-f9a7-7cb0-aed7-af74b3099326"; e.provider, e.session = "codex", &s }), proto.ErrUnauthorized, ""},
		{"codex event without a session id", with(func(e *evt) { e.provider = "codex" }), proto.ErrUnauthorized, ""},
		{"codex event with a path as session id", with(func(e *evt) { s := "../../etc"; e.provider, e.session = "codex", &s }), proto.ErrUnauthorized, ""},
		{"oversize without newline", strings.Repeat("x", proto.MaxEventRequest+100), proto.ErrTooLarge, ""},
		{"oversize JSON", big, proto.ErrTooLarge, ""},
		{"slow writer sends nothing", "", proto.ErrTimeout, "silent"},
		{"dribbling writer", goodLine, proto.ErrTimeout, "dribble"},
	}
	secrets := []string{capA, capB, capC}
	if err := h.e.Flush(t.Context()); err != nil { // write the runs snapshot
		t.Fatal(err)
	}
	before := h.dump()
	for _, id := range []string{"e1", "e2", "e3", "waitingApproval", "failed"} {
		if !strings.Contains(before, id) {
			t.Fatalf("the state to protect lacks %q:\n%s", id, before)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got string
			switch c.how {
			case "":
				got = h.send([]byte(c.req))
			case "eof":
				got = sendHalfClosed(t, h.sock, c.req)
			case "silent":
				got = sendSlow(t, h.sock, "", 0)
			case "dribble":
				got = sendSlow(t, h.sock, c.req, 40*time.Millisecond)
			}
			if got != errResp(c.want) {
				t.Errorf("response %q, want %q", got, errResp(c.want))
			}
			for _, s := range secrets {
				if strings.Contains(got, s) {
					t.Errorf("response leaks a capability")
				}
			}
			if after := h.dump(); after != before {
				t.Errorf("request changed stored state:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
	if len(cases) < 40 {
		t.Fatalf("only %d conformance cases", len(cases))
	}

	t.Run("duplicate id changes nothing", func(t *testing.T) {
		// e2 again, but claiming a different kind and run.
		got := h.post(evt{id: "e2", run: "other", surface: "sfA", kind: proto.KindSucceeded, at: now})
		if got != okDuplicate {
			t.Fatalf("duplicate: %q", got)
		}
		if after := h.dump(); after != before {
			t.Errorf("duplicate changed stored state")
		}
		if st := h.e.SessionState("sessA"); st.RunState != string(proto.StateWaitingApproval) {
			t.Errorf("state after duplicate = %s", st.RunState)
		}
	})

	t.Run("many concurrent connections", func(t *testing.T) {
		// Its own engine, with a budget that a slow machine cannot exhaust
		// for the clients that do send at once.
		// One process sends them all: the per-peer cap is the hostile
		// suite's (TestHostileClients).
		// The read timeout is what the slow clients wait for, and must
		// outlast the scheduling of 500 goroutines under -race on a loaded
		// machine (3 s timed out some at load 25).
		h := startHarness(t, "", func(c *Config) { c.ReadTimeout, c.MaxConnsPerPeer = 10*time.Second, 1024 })
		h.surface("sfA", "sessA", "alpha", "claude")
		capB := h.surface("sfB", "sessB", "beta", "gemini")
		line := func(e evt) string { return string(h.line(e)) }
		replace := func(old, new string) string { return strings.Replace(line(good()), old, new, 1) }
		with := func(f func(*evt)) string { e := good(); f(&e); return line(e) }
		before := h.dump()
		var wg sync.WaitGroup
		errs := make(chan string, 600)
		// Slow clients hold connections while hundreds of others are served.
		for range 20 {
			wg.Go(func() {
				if got := sendSlow(t, h.sock, "", 0); got != errResp(proto.ErrTimeout) {
					errs <- "slow: " + got
				}
			})
		}
		for i := range 500 {
			wg.Go(func() {
				req := []string{"nope\n", replace(`"kind":"running"`, `"kind":"zzz"`), with(func(e *evt) { e.cap = capB })}[i%3]
				want := []string{proto.ErrInvalidJSON, proto.ErrUnknownKind, proto.ErrUnauthorized}[i%3]
				if got := h.send([]byte(req)); got != errResp(want) {
					errs <- got
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Errorf("concurrent request answered %q", e)
		}
		if after := h.dump(); after != before {
			t.Errorf("concurrent requests changed stored state")
		}
	})
}

// sendHalfClosed writes req and closes the write side.
func sendHalfClosed(t *testing.T, sock, req string) string {
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(req))
	c.(*net.UnixConn).CloseWrite()
	return readAll(t, c)
}

// sendSlow writes req one byte every gap (nothing when req is empty) and
// returns whatever the server answers.
func sendSlow(t *testing.T, sock, req string, gap time.Duration) string {
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Error(err)
		return ""
	}
	return dribble(t, c, req, gap)
}

// dribble writes req on c one byte every gap and returns whatever the
// server answers.
func dribble(t *testing.T, c net.Conn, req string, gap time.Duration) string {
	defer c.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for i := 0; i < len(req); i++ {
			select {
			case <-done:
				return
			case <-time.After(gap):
			}
			if _, err := c.Write([]byte{req[i]}); err != nil {
				return
			}
		}
	}()
	return readAll(t, c)
}

func readAll(t *testing.T, c net.Conn) string {
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var b bytes.Buffer
	buf := make([]byte, 512)
	for {
		n, err := c.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

func TestPeerOfAnotherUserIsRefused(t *testing.T) {
	h := startHarness(t, "", func(c *Config) { c.PeerAllowed = func(uid int) bool { return false } })
	h.surface("sf", "s", "n", "claude")
	before := h.dump()
	if got := h.post(evt{id: "e", run: "r", surface: "sf", kind: proto.KindStarted}); got != errResp(proto.ErrUnauthorized) {
		t.Fatalf("got %q", got)
	}
	if h.dump() != before {
		t.Fatal("refused peer changed state")
	}
}

func TestExactlyMaxSizeIsAccepted(t *testing.T) {
	h := startHarness(t, "")
	h.surface("sf", "s", "n", "claude")
	e := evt{id: "e", run: "r", surface: "sf", kind: proto.KindStarted}
	e.msg = "m"
	e.msg = strings.Repeat("m", proto.MaxEventRequest-len(h.line(e))+1)
	l := h.line(e)
	if len(l) != proto.MaxEventRequest {
		t.Fatalf("line is %d bytes", len(l))
	}
	if got := h.send(l); got != okInserted {
		t.Fatalf("64 KiB request: %q", got)
	}
	e.id, e.msg = "e2", e.msg+"m"
	if got := h.send(h.line(e)); got != errResp(proto.ErrTooLarge) {
		t.Fatalf("64 KiB + 1 request: %q", got)
	}
}
