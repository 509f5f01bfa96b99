package native

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/runstate"
	"github.com/musterhq/muster/internal/transcript"
)

// clock is a fake clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// recorder is a fake Config.Emit. It checks each event the way
// events.Engine.Emit does and feeds it to a run-state board, so tests can
// check what the daemon would show.
type recorder struct {
	t      testing.TB
	mu     sync.Mutex
	events []proto.Event
	board  *runstate.Board
}

func newRecorder(t testing.TB) *recorder {
	return &recorder{t: t, board: runstate.NewBoard(runstate.DefaultRules())}
}

const testSession = "S1"

func (r *recorder) Emit(_ context.Context, ev proto.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !proto.ReservedHookName(ev.HookName):
		r.t.Errorf("event with hook name %q", ev.HookName)
	case !ev.Kind.Valid() || ev.ID.RawValue == "" || ev.RunID.RawValue == "" || ev.Provider == "":
		r.t.Errorf("invalid event %+v", ev)
	case ev.SessionID != nil:
		r.t.Errorf("event with a session id %q", *ev.SessionID)
	case ev.SchemaVersion != proto.EventSchemaVersion:
		r.t.Errorf("event schema version %d", ev.SchemaVersion)
	case len(ev.Message) > 300:
		r.t.Errorf("message of %d bytes", len(ev.Message))
	}
	for _, old := range r.events {
		if old.ID == ev.ID {
			r.t.Errorf("event id %s emitted twice: %+v and %+v", ev.ID.RawValue, old, ev)
		}
	}
	r.events = append(r.events, ev)
	r.board.Apply(runstate.Event{
		ID: ev.ID.RawValue, RunID: ev.RunID.RawValue, SessionID: testSession, SurfaceID: ev.SurfaceID.RawValue,
		Provider: ev.Provider, Kind: ev.Kind, HookName: ev.HookName, Message: ev.Message,
		OccurredAt: ev.OccurredAt, ReceivedAt: ev.OccurredAt, Source: runstate.SourceOfHook(ev.HookName),
	})
	return nil
}

// lines renders the events as "hook kind run message", naming runs by the
// order they first appear (R1, R2, …) unless names maps them.
func (r *recorder) lines(names map[string]string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	label := map[string]string{}
	for k, v := range names {
		label[k] = v
	}
	n := 0
	var out []string
	for _, ev := range r.events {
		l, ok := label[ev.RunID.RawValue]
		if !ok {
			n++
			l = fmt.Sprintf("R%d", n)
			label[ev.RunID.RawValue] = l
		}
		out = append(out, fmt.Sprintf("%s %s %s %s", strings.TrimPrefix(ev.HookName, "muster.native."), ev.Kind, l, ev.Message))
	}
	return out
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

func (r *recorder) all() []proto.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]proto.Event(nil), r.events...)
}

func (r *recorder) view(now time.Time) runstate.View {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.board.Session(testSession, now)
}

func (r *recorder) items(now time.Time) []runstate.Item {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.board.Items(now, true)
}

// procs is a fake process table.
type procs struct {
	mu    sync.Mutex
	info  map[int]procInfo
	alive map[int]bool
	cwd   string
}

func (p *procs) set(pid int, comm string, argv ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.info[pid] = procInfo{Comm: comm, Argv: argv}
	p.alive[pid] = true
}

func (p *procs) kill(pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.info, pid)
	delete(p.alive, pid)
}

// pane is a fake pane: its foreground process group.
type pane struct {
	mu   sync.Mutex
	pgid int
	err  error
	id   string
}

func (p *pane) fg(pgid int) {
	p.mu.Lock()
	p.pgid, p.err = pgid, nil
	p.mu.Unlock()
}

func (p *pane) fail() {
	p.mu.Lock()
	p.err = errors.New("input/output error")
	p.mu.Unlock()
}

func (p *pane) ForegroundPGID() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pgid, p.err
}

func (p *pane) setNativeID(id string) {
	p.mu.Lock()
	p.id = id
	p.mu.Unlock()
}

func (p *pane) NativeID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.id
}

// harness is an estimator with a fake clock, process table and homes.
type harness struct {
	t     *testing.T
	clk   *clock
	rec   *recorder
	procs *procs
	e     *Estimator
	home  string
	hooks map[string]bool
	hmu   sync.Mutex
}

const testCWD = "/work/repo"

func newHarness(t *testing.T) *harness {
	t.Helper()
	home := t.TempDir()
	h := &harness{
		t:     t,
		clk:   &clock{t: t0},
		rec:   newRecorder(t),
		procs: &procs{info: map[int]procInfo{}, alive: map[int]bool{}, cwd: testCWD},
		home:  home,
		hooks: map[string]bool{},
	}
	env := map[string]string{
		"CLAUDE_CONFIG_DIR": filepath.Join(home, ".claude"),
		"CODEX_HOME":        filepath.Join(home, ".codex"),
	}
	h.e = New(Config{
		Events: h.rec,
		Now:    h.clk.Now,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
		Env:    transcript.Env{Home: home, Getenv: func(k string) string { return env[k] }},
	})
	h.e.inspect = func(pid int) (procInfo, error) {
		h.procs.mu.Lock()
		defer h.procs.mu.Unlock()
		info, ok := h.procs.info[pid]
		if !ok {
			return procInfo{}, os.ErrNotExist
		}
		return info, nil
	}
	h.e.alive = func(pgid int) bool {
		h.procs.mu.Lock()
		defer h.procs.mu.Unlock()
		return h.procs.alive[pgid]
	}
	h.e.cwdOf = func(int) string { return h.procs.cwd }
	h.e.treeOf = func(root, _ int) []int { return []int{root} }
	return h
}

// setHooks says whether the provider's hooks report in the harness's
// panes: on, every pane, present and future, has heard from them
// (HookEventSeen), as a pane does at its agent's first hook.
func (h *harness) setHooks(provider string, on bool) {
	h.hmu.Lock()
	h.hooks[provider] = on
	h.hmu.Unlock()
	if on {
		h.e.mu.RLock()
		ids := make([]string, 0, len(h.e.surfaces))
		for id := range h.e.surfaces {
			ids = append(ids, id)
		}
		h.e.mu.RUnlock()
		for _, id := range ids {
			h.e.HookEventSeen(id, provider)
		}
	}
}

// surface registers a pane whose process is pid, in the foreground.
func (h *harness) surface(id, provider string, pid int) *pane {
	p := &pane{pgid: pid}
	h.e.SurfaceStarted(Surface{ID: id, SessionID: testSession, Provider: provider, PID: pid, CWD: testCWD,
		ForegroundPGID: p.ForegroundPGID, NativeID: p.NativeID})
	h.hmu.Lock()
	var heard []string
	for prov, on := range h.hooks {
		if on {
			heard = append(heard, prov)
		}
	}
	h.hmu.Unlock()
	for _, prov := range heard {
		h.e.HookEventSeen(id, prov)
	}
	return p
}

// poll advances the clock by one poll and runs one estimation step.
func (h *harness) poll() {
	h.clk.Advance(DefaultPoll)
	h.e.pollOnce(h.t.Context())
}

func (h *harness) want(want ...string) {
	h.t.Helper()
	h.wantNamed(nil, want...)
}

func (h *harness) wantNamed(names map[string]string, want ...string) {
	h.t.Helper()
	got := h.rec.lines(names)
	if len(want) == 0 {
		want = nil
	}
	if !equalLines(want, got) {
		h.t.Fatalf("events:\n  got  %s\n  want %s", strings.Join(got, "\n       "), strings.Join(want, "\n       "))
	}
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// readLines reads a testdata file's lines.
func readLines(t testing.TB, file string) [][]byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// growing writes a testdata transcript to path a few lines at a time, with
// its timestamps moved so that its first record is at base, and the file's
// modification time set to the fake clock.
type growing struct {
	t     testing.TB
	path  string
	lines [][]byte
	next  int
	shift time.Duration
	clk   *clock
}

func newGrowing(t testing.TB, clk *clock, file, path string, base time.Time, edit func([]byte) []byte) *growing {
	t.Helper()
	g := &growing{t: t, path: path, lines: readLines(t, file), clk: clk}
	for i, l := range g.lines {
		if edit != nil {
			g.lines[i] = edit(l)
		}
		if ts := transcript.ParseBytes(l).Get("timestamp"); ts.Exists() && g.shift == 0 {
			first, err := proto.ParseTime(ts.String())
			if err != nil {
				t.Fatal(err)
			}
			g.shift = base.Sub(first)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	return g
}

// write appends lines until (and including) the first line for which stop
// returns true, or n lines when stop is nil; it returns whether lines were
// left.
func (g *growing) write(n int, stop func([]byte) bool) bool {
	g.t.Helper()
	f, err := os.OpenFile(g.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		g.t.Fatal(err)
	}
	for written := 0; g.next < len(g.lines) && (stop != nil || written < n); written++ {
		l := g.lines[g.next]
		g.next++
		if ts := transcript.ParseBytes(l).Get("timestamp"); ts.Exists() {
			at, err := proto.ParseTime(ts.String())
			if err != nil {
				g.t.Fatal(err)
			}
			if l, err = setJSON(l, "timestamp", at.Add(g.shift).Format(time.RFC3339Nano)); err != nil {
				g.t.Fatal(err)
			}
		}
		if _, err := f.Write(append(l, '\n')); err != nil {
			g.t.Fatal(err)
		}
		if stop != nil && stop(l) {
			break
		}
	}
	if err := f.Close(); err != nil {
		g.t.Fatal(err)
	}
	now := g.clk.Now()
	if err := os.Chtimes(g.path, now, now); err != nil {
		g.t.Fatal(err)
	}
	return g.next < len(g.lines)
}

// find returns the first line containing sub, as read from testdata.
func (g *growing) find(sub string) []byte {
	g.t.Helper()
	for _, l := range g.lines {
		if strings.Contains(string(l), sub) {
			return l
		}
	}
	g.t.Fatalf("no line with %q", sub)
	return nil
}

// recordTimeOf is the timestamp a line gets when written.
func (g *growing) recordTimeOf(l []byte) time.Time {
	at, err := proto.ParseTime(transcript.ParseBytes(l).Get("timestamp").String())
	if err != nil {
		g.t.Fatal(err)
	}
	return at.Add(g.shift)
}

// setJSON returns the object line with the string val at path (dotted
// keys), set in place or added, the other members kept as written.
func setJSON(line []byte, path, val string) ([]byte, error) {
	members, ok := transcript.Members(line, nil)
	if !ok {
		return nil, fmt.Errorf("not a JSON object: %.80s", line)
	}
	key, rest, nested := strings.Cut(path, ".")
	enc, err := json.Marshal(val)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	found := false
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + string(m.Key) + `":`)
		v := m.Value
		if string(m.Key) == key && !found {
			found = true
			v = enc
			if nested {
				if v, err = setJSON(m.Value, rest, val); err != nil {
					return nil, err
				}
			}
		}
		b.Write(v)
	}
	if !found {
		if len(members) > 0 {
			b.WriteByte(',')
		}
		v := enc
		if nested {
			v, _ = setJSON([]byte("{}"), rest, val)
		}
		b.WriteString(`"` + key + `":`)
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// emitFunc is an EventSink written as a function.
type emitFunc func(context.Context, proto.Event) error

func (f emitFunc) Emit(ctx context.Context, ev proto.Event) error { return f(ctx, ev) }

// runsFunc is a RunBoard written as a function.
type runsFunc func(surfaceID string) CurrentRun

func (f runsFunc) CurrentRun(surfaceID string) CurrentRun { return f(surfaceID) }

// listenerFuncs is a Listener of the functions a test sets; the others
// hear nothing.
type listenerFuncs struct {
	nativeID  func(surfaceID, provider, nativeID string)
	activity  func(surfaceID string, a Activity)
	attention func(surfaceID string, r AttentionRequest)
	usage     func(surfaceID string, u provider.Usage)
}

func (l listenerFuncs) NativeIDFound(surfaceID, provider, nativeID string) {
	if l.nativeID != nil {
		l.nativeID(surfaceID, provider, nativeID)
	}
}

func (l listenerFuncs) ActivityChanged(surfaceID string, a Activity) {
	if l.activity != nil {
		l.activity(surfaceID, a)
	}
}

func (l listenerFuncs) AttentionRequested(surfaceID string, r AttentionRequest) {
	if l.attention != nil {
		l.attention(surfaceID, r)
	}
}

func (l listenerFuncs) UsageReported(surfaceID string, u provider.Usage) {
	if l.usage != nil {
		l.usage(surfaceID, u)
	}
}
