package events

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/hookroute"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider/codex"
	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/transcript"
)

// fakeResolver maps session names to ids like the daemon does.
type fakeResolver struct {
	mu     sync.Mutex
	byName map[string]string
	panes  map[string]fakePane // by session id
}

type fakePane struct {
	state string
	code  *int
}

func (r *fakeResolver) setPane(id, state string, code *int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.panes == nil {
		r.panes = map[string]fakePane{}
	}
	r.panes[id] = fakePane{state, code}
}

func (r *fakeResolver) PaneOf(id string) (string, *int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.panes[id]
	return p.state, p.code
}

func (r *fakeResolver) add(name, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byName == nil {
		r.byName = map[string]string{}
	}
	r.byName[name] = id
}

func (r *fakeResolver) SessionByName(name string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.byName[name]
	return id, ok
}

func (r *fakeResolver) SessionName(id string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for n, i := range r.byName {
		if i == id {
			return n, true
		}
	}
	return "", false
}

// clock is a settable clock for tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type harness struct {
	t     testing.TB
	e     *Engine
	st    *store.Store
	sock  string
	res   *fakeResolver
	clock *clock
	caps  map[string]string // surface → capability
	stop  func()
}

type harnessOpt func(*Config)

// shortDir makes a short 0700 directory for sockets.
func shortDir(t testing.TB) string {
	d, err := os.MkdirTemp("", "mev")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func testLogger(t testing.TB) *slog.Logger {
	if tt, ok := t.(*testing.T); ok {
		return slog.New(slog.NewTextHandler(tt.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return slog.New(slog.DiscardHandler)
}

// startHarness runs an engine on a fresh store and socket.
func startHarness(t testing.TB, dbPath string, opts ...harnessOpt) *harness {
	t.Helper()
	if dbPath == "" {
		dbPath = filepath.Join(t.TempDir(), "m.db")
	}
	st, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, st: st, res: &fakeResolver{}, clock: &clock{t: time.Now().UTC()}, caps: map[string]string{}}
	cfg := Config{
		Store: st, Logger: testLogger(t), Resolver: h.res, Now: h.clock.Now,
		NotifyCommand: []string{}, Routers: codexRouters(filepath.Join(t.TempDir(), "codex")),
		// Far above the default, so that a loaded machine cannot time out
		// a test's own requests; the tests of timeouts set their own.
		ReadTimeout: 5 * time.Second,
	}
	for _, o := range opts {
		o(&cfg)
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.e = e
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.sock = filepath.Join(shortDir(t), "ev.sock")
	ln, err := Listen(h.sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, ln) }()
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
			if err := e.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			st.Close()
		})
	}
	t.Cleanup(h.stop)
	return h
}

// surface registers a surface of a session named name.
func (h *harness) surface(id, session, name, provider string) string {
	h.t.Helper()
	h.res.add(name, session)
	tok, err := h.e.RegisterSurface(Surface{ID: id, SessionID: session, Provider: provider, CWD: "/"})
	if err != nil {
		h.t.Fatal(err)
	}
	h.caps[id] = tok
	return tok
}

// send writes raw bytes on a fresh connection and returns the response.
func (h *harness) send(b []byte) string {
	h.t.Helper()
	c, err := net.Dial("unix", h.sock)
	if err != nil {
		h.t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	go c.Write(b)
	resp, err := io.ReadAll(c)
	if err != nil && !strings.Contains(err.Error(), "reset") {
		h.t.Fatalf("read response: %v", err)
	}
	return string(resp)
}

// evt describes an event to send.
type evt struct {
	id, run, surface, cap, provider, hook, msg string
	kind                                       proto.EventKind
	at                                         time.Time
	session                                    *string
}

func (h *harness) line(e evt) []byte {
	if e.provider == "" {
		e.provider = "claude"
	}
	if e.at.IsZero() {
		e.at = h.clock.Now()
	}
	if e.cap == "" {
		e.cap = h.caps[e.surface]
	}
	env := proto.Envelope{SchemaVersion: 1, Capability: e.cap, Event: proto.Event{
		SchemaVersion: 1, ID: proto.RawID{RawValue: e.id}, RunID: proto.RawID{RawValue: e.run},
		SessionID: e.session, SurfaceID: proto.RawID{RawValue: e.surface}, Provider: e.provider,
		Kind: e.kind, OccurredAt: e.at, Message: e.msg, HookName: e.hook,
	}}
	b, err := json.Marshal(env)
	if err != nil {
		h.t.Fatal(err)
	}
	return append(b, '\n')
}

// post sends an event and returns the response.
func (h *harness) post(e evt) string { return h.send(h.line(e)) }

const (
	okInserted  = `{"ok":true,"inserted":true}` + "\n"
	okDuplicate = `{"ok":true,"inserted":false}` + "\n"
)

func errResp(code string) string { return `{"ok":false,"error":"` + code + `"}` + "\n" }

// mustPost sends an event that must be inserted.
func (h *harness) mustPost(e evt) {
	h.t.Helper()
	if got := h.post(e); got != okInserted {
		h.t.Fatalf("post %s %s: %q", e.id, e.kind, got)
	}
}

// dump renders the event tables, to prove a request changed nothing.
func (h *harness) dump() string {
	h.t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT seq, id, session_id, surface_id, run_id, coalesce(native_session_id,''), provider, kind, hook_name, message, occurred_at, received_at, source, effect FROM agent_events ORDER BY seq`,
		`SELECT session_id, run_id, state, updated_at, data FROM agent_runs ORDER BY session_id, run_id`,
		`SELECT id, session_id, run_id, reason, message, opened_at, coalesce(resolved_at, 0), resolution FROM attention_items ORDER BY id`,
		`SELECT key, value FROM agent_state ORDER BY key`,
	} {
		rows, err := h.st.R.Query(q)
		if err != nil {
			h.t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				h.t.Fatal(err)
			}
			fmt.Fprintln(&b, vals...)
		}
		rows.Close()
		b.WriteString("--\n")
	}
	return b.String()
}

func dialUnix(sock string) (*net.UnixConn, error) {
	return net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
}

// codexRouters routes Codex events by the rollouts under home
// ($CODEX_HOME), as the daemon does.
func codexRouters(home string) []*hookroute.Router {
	env := transcript.Env{Getenv: func(k string) string {
		if k == "CODEX_HOME" {
			return home
		}
		return ""
	}}
	return []*hookroute.Router{hookroute.NewRouter(codex.Provider{}, env, nil)}
}
