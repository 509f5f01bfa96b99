package native

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/hookevent"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/runstate"
	"github.com/musterhq/muster/internal/transcript"
)

func TestFuse(t *testing.T) {
	cur := func(st proto.RunState) CurrentRun { return CurrentRun{RunID: "R", State: st, Provider: "claude"} }
	key := func(k proto.EventKind) Evidence { return Evidence{Source: runstate.SourceKeystroke, Kind: k} }
	marker := func(run string, k proto.EventKind) Evidence {
		return Evidence{Source: runstate.SourceTranscript, Kind: k, RunID: run, Provider: "claude"}
	}
	tests := []struct {
		name string
		ev   Evidence
		cur  CurrentRun
		run  string
		kind proto.EventKind
	}{
		{"answer at an approval", key(proto.KindRunning), cur(proto.StateWaitingApproval), "R", proto.KindRunning},
		{"answer at a question", key(proto.KindRunning), cur(proto.StateWaitingInput), "R", proto.KindRunning},
		{"answer while running says nothing", key(proto.KindRunning), cur(proto.StateRunning), "", ""},
		{"interrupt while running", key(proto.KindInterrupted), cur(proto.StateRunning), "R", proto.KindInterrupted},
		{"interrupt at an approval", key(proto.KindInterrupted), cur(proto.StateWaitingApproval), "R", proto.KindInterrupted},
		{"interrupt after the turn ended", key(proto.KindInterrupted), cur(proto.StateSucceeded), "", ""},
		{"interrupt with no run", key(proto.KindInterrupted), CurrentRun{}, "", ""},
		{"terminal idle ends a running run", Evidence{Source: runstate.SourceTerminal, Kind: proto.KindInterrupted}, cur(proto.StateRunning), "R", proto.KindInterrupted},
		{"marker of the current run", marker("R", proto.KindInterrupted), cur(proto.StateWaitingApproval), "R", proto.KindInterrupted},
		{"marker of an ended current run", marker("R", proto.KindInterrupted), cur(proto.StateInterrupted), "", ""},
		{"marker of a run the hooks have not reported yet", marker("R2", proto.KindInterrupted), cur(proto.StateSucceeded), "R2", proto.KindInterrupted},
		{"marker with no run known", marker("R2", proto.KindInterrupted), CurrentRun{}, "R2", proto.KindInterrupted},
		{"a named run is never started by evidence", marker("R2", proto.KindRunning), CurrentRun{}, "", ""},
		{"not a kind", key("bogus"), cur(proto.StateRunning), "", ""},
		{"a record of the current run's provider", Evidence{Source: runstate.SourceTranscript, Kind: proto.KindInterrupted, Provider: "claude", At: t0},
			CurrentRun{RunID: "R", State: proto.StateRunning, Provider: "claude", StartedAt: t0}, "R", proto.KindInterrupted},
		{"a record older than the current run is an earlier run's", Evidence{Source: runstate.SourceTranscript, Kind: proto.KindInterrupted, Provider: "claude", At: t0},
			CurrentRun{RunID: "R", State: proto.StateRunning, Provider: "claude", StartedAt: t0.Add(time.Millisecond)}, "", ""},
		{"a record of another provider", Evidence{Source: runstate.SourceTranscript, Kind: proto.KindInterrupted, Provider: "gemini", At: t0},
			CurrentRun{RunID: "R", State: proto.StateRunning, Provider: "claude", StartedAt: t0}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, kind, ok := Fuse(tt.ev, tt.cur)
			if ok != (tt.run != "") || run != tt.run || kind != tt.kind {
				t.Errorf("Fuse = %q %q %v, want %q %q", run, kind, ok, tt.run, tt.kind)
			}
		})
	}
}

// hook applies a provider hook event to the recorder's board, as the
// engine would.
func (r *recorder) hook(surface, run string, kind proto.EventKind, hook, msg string, at time.Time) runstate.Result {
	return r.hookOf("claude", surface, run, kind, hook, msg, at)
}

// hookOf is hook for another provider.
func (r *recorder) hookOf(prov, surface, run string, kind proto.EventKind, hook, msg string, at time.Time) runstate.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.board.Apply(runstate.Event{
		ID: fmt.Sprintf("hook-%s-%s-%d", run, kind, at.UnixNano()), RunID: run, SessionID: testSession, SurfaceID: surface,
		Provider: prov, Kind: kind, HookName: hook, Message: msg, OccurredAt: at, ReceivedAt: at, Source: runstate.SourceHook,
	})
}

// CurrentRun makes the recorder the estimator's RunBoard.
func (r *recorder) CurrentRun(surface string) CurrentRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.board.Surface(surface, time.Now())
	if !v.HasRun {
		return CurrentRun{}
	}
	return CurrentRun{RunID: v.Run.RunID, State: v.Run.State, Provider: v.Run.Provider, StartedAt: v.Run.StartedAt, Because: v.Run.Because, Last: v.Run.Last}
}

// drain fuses the queued evidence, as Run's fusion goroutine does.
func (h *harness) drain() {
	for {
		select {
		case f := <-h.e.fuse:
			h.e.apply(h.t.Context(), f)
		default:
			return
		}
	}
}

func TestKeystrokes(t *testing.T) {
	tests := []struct {
		name  string
		hooks []proto.EventKind // after started
		keys  []string
		want  proto.RunState
		line  string // the fused event, "" for none
	}{
		{"Esc mid-turn", nil, []string{"\x1b"}, proto.StateInterrupted, `keystroke.interrupted interrupted Escape "\x1b" typed while running`},
		{"kitty Esc mid-turn", nil, []string{"\x1b[27u"}, proto.StateInterrupted, `keystroke.interrupted interrupted Escape "\x1b[27u" typed while running`},
		{"Esc denies", []proto.EventKind{proto.KindApprovalRequested}, []string{"\x1b"}, proto.StateInterrupted, `keystroke.interrupted interrupted Escape "\x1b" typed while waitingApproval`},
		{"Enter approves", []proto.EventKind{proto.KindApprovalRequested}, []string{"\r"}, proto.StateRunning, `keystroke.answered running Enter "\r" typed at the approval dialog`},
		{"a digit picks an option", []proto.EventKind{proto.KindApprovalRequested}, []string{"1"}, proto.StateRunning, `keystroke.answered running key "1" typed at the approval dialog`},
		{"Enter answers a question", []proto.EventKind{proto.KindInputRequested}, []string{"\r"}, proto.StateRunning, `keystroke.answered running Enter "\r" typed at the question`},
		{"Ctrl-C at a dialog does nothing", []proto.EventKind{proto.KindApprovalRequested}, []string{"\x03"}, proto.StateWaitingApproval, ""},
		{"Esc declines a question", []proto.EventKind{proto.KindInputRequested}, []string{"\x1b"}, proto.StateInterrupted, `keystroke.interrupted interrupted Escape "\x1b" typed while waitingInput`},
		{"arrows move the selection only", []proto.EventKind{proto.KindApprovalRequested}, []string{"\x1b[B", "\x1b[A"}, proto.StateWaitingApproval, ""},
		{"typing while running", nil, []string{"a", "\r"}, proto.StateRunning, ""},
		{"a paste", []proto.EventKind{proto.KindApprovalRequested}, []string{strings.Repeat("x", 40) + "\r"}, proto.StateWaitingApproval, ""},
		{"a bracketed paste", []proto.EventKind{proto.KindApprovalRequested}, []string{"\x1b[200~x\r\x1b[201~"}, proto.StateWaitingApproval, ""},
		{"send --keys Down Down Enter", []proto.EventKind{proto.KindApprovalRequested}, []string{"\x1b[B\x1b[B\r"}, proto.StateRunning, `keystroke.answered running Enter "\r" typed at the approval dialog`},
		{"send --keys Escape Escape", nil, []string{"\x1b\x1b"}, proto.StateInterrupted, `keystroke.interrupted interrupted Escape "\x1b" typed while running`},
		{"Esc after the turn ended", []proto.EventKind{proto.KindSucceeded}, []string{"\x1b"}, proto.StateSucceeded, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := claudePane(t, tt.hooks...)
			for _, k := range tt.keys {
				h.e.Input("s1", []byte(k))
			}
			h.drain()
			var want []string
			if tt.line != "" {
				want = []string{"muster." + tt.line}
			}
			h.wantNamed(map[string]string{"T1": "T1"}, prefixed(want, "T1")...)
			v := h.rec.view(h.clk.Now())
			if v.Run.State != tt.want {
				t.Errorf("run state %s, want %s", v.Run.State, tt.want)
			}
			if v.Run.State == proto.StateInterrupted || v.Run.State == proto.StateRunning {
				for _, it := range h.rec.items(h.clk.Now()) {
					if it.Open() {
						t.Errorf("item %+v still open after the user's key", it)
					}
				}
			}
			for _, ev := range h.rec.all() {
				if !ev.OccurredAt.Equal(h.clk.Now()) {
					t.Errorf("event at %v, want the time of the key %v", ev.OccurredAt, h.clk.Now())
				}
			}
		})
	}
}

// prefixed puts the run label after the kind of each "hook kind message"
// line, as recorder.lines renders them.
func prefixed(lines []string, run string) []string {
	var out []string
	for _, l := range lines {
		f := strings.SplitN(l, " ", 3)
		out = append(out, f[0]+" "+f[1]+" "+run+" "+f[2])
	}
	return out
}

// TestTranscriptWithHooksInjected: a first-class Claude Code launch carries
// its hooks, and its recorded transcript (claude-22222222.jsonl: three
// turns, then a denied permission) is still followed, for the denial the
// hooks never report.
func TestTranscriptWithHooksInjected(t *testing.T) {
	h := newHarness(t)
	h.e.cfg.Runs = h.rec
	h.procs.set(300, "claude", "claude")
	p := &pane{pgid: 300}
	p.setNativeID("22222222-2222-4333-8444-555555555555")
	h.e.SurfaceStarted(Surface{ID: "s1", SessionID: testSession, Provider: "claude", PID: 300, CWD: testCWD,
		ForegroundPGID: p.ForegroundPGID, NativeID: p.NativeID, HooksInjected: true})
	h.poll()
	g := newGrowing(t, h.clk, "claude-22222222.jsonl", h.claudePath("22222222-2222-4333-8444-555555555555"), h.clk.Now(), nil)
	denied := hookevent.TurnRunID("claude", "af0b1a80-9d90-4c4d-b0f7-1d698e9937ee")
	for g.write(3, nil) {
		h.poll()
		if n := h.rec.count(); n == 0 {
			// The hooks report the turn and its dialog, as they did.
			if r := h.rec.CurrentRun("s1"); r.RunID != denied {
				h.rec.hook("s1", denied, proto.KindStarted, "UserPromptSubmit", "make a file", h.clk.Now())
				h.rec.hook("s1", denied, proto.KindApprovalRequested, "PermissionRequest", "Bash: touch x", h.clk.Now())
			}
		}
	}
	h.poll()
	h.wantNamed(map[string]string{denied: "T4"}, "muster.transcript.turnEnded interrupted T4 [Request interrupted by user for tool use]")
	v := h.rec.view(h.clk.Now())
	if v.Run.RunID != denied || v.Run.State != proto.StateInterrupted || v.Run.Because.Source != runstate.SourceTranscript {
		t.Errorf("after the denial: run %s %s because %+v", v.Run.RunID, v.Run.State, v.Run.Because)
	}
	for _, it := range h.rec.items(h.clk.Now()) {
		if it.Open() || it.Resolution != "run moved on to interrupted" {
			t.Errorf("approval item after the denial: %+v", it)
		}
	}
	h.e.SurfaceExited(t.Context(), "s1", 0)
	if n := h.rec.count(); n != 1 {
		t.Errorf("%d events; the hooks report everything else", n)
	}
}

// TestFusionNeverLeavesWaiting is the property of issue 10: whatever order
// the hook events, transcript records, keys and terminal statuses of a turn
// arrive in, once the turn has ended the run is not waiting and has no
// open item. Keys and terminal statuses are fused against the board as it
// is when they arrive, exactly as the daemon does.
func TestFusionNeverLeavesWaiting(t *testing.T) {
	type step struct {
		hook   proto.EventKind // a provider hook event of run R
		ev     *Evidence       // or evidence
		offset time.Duration   // its time after the turn's start
	}
	key := func(k proto.EventKind, off time.Duration) step {
		return step{ev: &Evidence{Source: runstate.SourceKeystroke, Kind: k}, offset: off}
	}
	marker := func(off time.Duration) step {
		return step{ev: &Evidence{Source: runstate.SourceTranscript, Kind: proto.KindInterrupted, RunID: "R", Provider: "claude"}, offset: off}
	}
	idle := func(off time.Duration) step {
		return step{ev: &Evidence{Source: runstate.SourceTerminal, Kind: proto.KindInterrupted}, offset: off}
	}
	h := func(k proto.EventKind, off time.Duration) step { return step{hook: k, offset: off} }
	const s = time.Second
	scenarios := map[string][]step{
		"denied with Esc":        {h(proto.KindStarted, 0), h(proto.KindApprovalRequested, s), key(proto.KindInterrupted, 3*s), marker(3*s + 10*time.Millisecond)},
		"denied with the arrows": {h(proto.KindStarted, 0), h(proto.KindApprovalRequested, s), key(proto.KindRunning, 3*s), marker(3*s + 10*time.Millisecond)},
		"approved, tool ran":     {h(proto.KindStarted, 0), h(proto.KindApprovalRequested, s), key(proto.KindRunning, 3*s), h(proto.KindRunning, 40*s), h(proto.KindSucceeded, 41*s)},
		"question answered":      {h(proto.KindStarted, 0), h(proto.KindInputRequested, s), key(proto.KindRunning, 3*s), h(proto.KindRunning, 4*s), h(proto.KindSucceeded, 5*s)},
		"question declined":      {h(proto.KindStarted, 0), h(proto.KindInputRequested, s), key(proto.KindInterrupted, 3*s), marker(3*s + 10*time.Millisecond)},
		"Esc mid-turn":           {h(proto.KindStarted, 0), key(proto.KindInterrupted, 2*s), idle(2*s + 50*time.Millisecond)},
		"Esc during a slow tool": {h(proto.KindStarted, 0), h(proto.KindApprovalRequested, s), key(proto.KindRunning, 2*s), key(proto.KindInterrupted, 10*s), h(proto.KindInterrupted, 10*s+20*time.Millisecond), idle(10*s + 30*time.Millisecond)},
	}
	rng := rand.New(rand.NewPCG(10, 4))
	base := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for name, steps := range scenarios {
		t.Run(name, func(t *testing.T) {
			for trial := range 300 {
				order := rng.Perm(len(steps))
				b := runstate.NewBoard(runstate.DefaultRules())
				seq := 0
				apply := func(run string, kind proto.EventKind, src runstate.Source, at time.Time) {
					seq++
					b.Apply(runstate.Event{ID: fmt.Sprint(seq), RunID: run, SessionID: "S", SurfaceID: "s1", Provider: "claude",
						Kind: kind, OccurredAt: at, ReceivedAt: base.Add(time.Hour), Source: src})
				}
				for _, i := range order {
					st := steps[i]
					at := base.Add(st.offset)
					if st.ev == nil {
						apply("R", st.hook, runstate.SourceHook, at)
						continue
					}
					v := b.Surface("s1", base)
					cur := CurrentRun{}
					if v.HasRun {
						cur = CurrentRun{RunID: v.Run.RunID, State: v.Run.State, Provider: v.Run.Provider}
					}
					ev := *st.ev
					ev.At = at
					if run, kind, ok := Fuse(ev, cur); ok {
						apply(run, kind, ev.Source, at)
					}
				}
				r, _ := b.Run(runstate.RunKey{SessionID: "S", RunID: "R"})
				if r.State == proto.StateWaitingApproval || r.State == proto.StateWaitingInput || r.State == "" {
					t.Fatalf("trial %d, arrival order %v: the ended turn is %q", trial, order, r.State)
				}
				if name != "Esc mid-turn" && !runstate.Terminal(r.State) {
					t.Fatalf("trial %d, arrival order %v: the ended turn is %q", trial, order, r.State)
				}
				for _, it := range b.Items(base, false) {
					t.Fatalf("trial %d, arrival order %v: item %+v left open", trial, order, it)
				}
			}
		})
	}
}

// TestRecordedClaudeStates replays the transcript Claude Code 2.1.328
// wrote in e2e/realcli's TestMusterClaudeStates (testdata/claude-states.jsonl:
// a permission denied, an approved tool interrupted with Esc, a question
// answered, a question declined, an Esc mid-turn), with the hook events the
// CLI fired for it, into a pane whose hooks were injected. The transcript
// ends exactly the turns no hook ended, and no other.
func TestRecordedClaudeStates(t *testing.T) {
	h := newHarness(t)
	h.e.cfg.Runs = h.rec
	h.procs.set(300, "claude", "claude")
	p := &pane{pgid: 300}
	const id = "6e7e0371-4d85-4fed-9024-3baf51348e7b"
	p.setNativeID(id)
	h.e.SurfaceStarted(Surface{ID: "s1", SessionID: testSession, Provider: "claude", PID: 300, CWD: testCWD,
		ForegroundPGID: p.ForegroundPGID, NativeID: p.NativeID, HooksInjected: true})
	h.poll()
	g := newGrowing(t, h.clk, "claude-states.jsonl", h.claudePath(id), h.clk.Now(), nil)
	names := map[string]string{}
	var turn string
	for g.next < len(g.lines) {
		l := g.lines[g.next]
		// The hooks the CLI fired for this record (research/real-cli and
		// the e2e run: UserPromptSubmit, PermissionRequest, Stop).
		switch {
		case transcript.ParseBytes(l).Get("type").String() == "user" && transcript.ParseBytes(l).Get("message.content").IsString():
			turn = hookevent.TurnRunID("claude", transcript.ParseBytes(l).Get("promptId").String())
			names[turn] = fmt.Sprintf("T%d", len(names)+1)
			h.rec.hook("s1", turn, proto.KindStarted, "UserPromptSubmit", "", g.recordTimeOf(l))
		case transcript.ParseBytes(l).Get("message.content.0.name").String() == "Bash":
			h.rec.hook("s1", turn, proto.KindApprovalRequested, "PermissionRequest", "Bash", g.recordTimeOf(l))
		case transcript.ParseBytes(l).Get("message.content.0.name").String() == "AskUserQuestion":
			h.rec.hook("s1", turn, proto.KindInputRequested, "PermissionRequest", "Which color do you want?", g.recordTimeOf(l))
		case transcript.ParseBytes(l).Get("subtype").String() == "turn_duration":
			h.rec.hook("s1", turn, proto.KindSucceeded, "Stop", "", g.recordTimeOf(l))
		}
		g.write(1, nil)
		h.poll()
	}
	h.wantNamed(names,
		"muster.transcript.turnEnded interrupted T1 [Request interrupted by user for tool use]",
		"muster.transcript.turnEnded interrupted T2 [Request interrupted by user for tool use]",
		"muster.transcript.turnEnded interrupted T4 [Request interrupted by user for tool use]",
	)
	if len(names) != 5 {
		t.Fatalf("%d prompts in the recording, want 5", len(names))
	}
	want := map[string]proto.RunState{"T1": proto.StateInterrupted, "T2": proto.StateInterrupted, "T3": proto.StateSucceeded,
		"T4": proto.StateInterrupted, "T5": proto.StateRunning} // T5 ends by the key alone (TestKeystrokes)
	for run, name := range names {
		r, _ := h.rec.board.Run(runstate.RunKey{SessionID: testSession, RunID: run})
		if r.State != want[name] {
			t.Errorf("%s is %s, want %s", name, r.State, want[name])
		}
	}
	for _, it := range h.rec.items(h.clk.Now()) {
		if it.Open() {
			t.Errorf("item left open: %+v", it)
		}
	}
}

func TestSplitKeys(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"\x1b", []string{"\x1b"}},
		{"\x1b\x1b", []string{"\x1b", "\x1b"}},
		{"\x1b[B\x1b[B\r", []string{"\x1b[B", "\x1b[B", "\r"}},
		{"\x1b[27u", []string{"\x1b[27u"}},
		{"\x1bOA1", []string{"\x1bOA", "1"}},
		{"\x1bx", []string{"\x1bx"}},
		{"é\r", []string{"é", "\r"}},
		{"\x1b[12", []string{"\x1b[12"}},
		{"\x1b[200~a\x1b[201~", nil},
		{"", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, k := range splitKeys([]byte(tt.in)) {
			got = append(got, string(k))
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("splitKeys(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// geminiPane starts a harness with a Gemini CLI pane (its process runs
// argv) whose hooks are installed (or not, hookless), and the recorded
// chat file of testdata/gemini-states.jsonl about to be written where that
// CLI keeps it.
func geminiPane(t *testing.T, hookless bool, argv ...string) (*harness, *growing) {
	h := newHarness(t)
	h.e.cfg.Runs = h.rec
	h.procs.set(300, "gemini", argv...)
	p := &pane{pgid: 300}
	p.setNativeID("aa3ac65c-1884-452c-956b-62539224443c")
	h.e.SurfaceStarted(Surface{ID: "s1", SessionID: testSession, Provider: "gemini", PID: 300, CWD: testCWD,
		ForegroundPGID: p.ForegroundPGID, NativeID: p.NativeID})
	h.setHooks("gemini", !hookless)
	h.poll()
	path := filepath.Join(h.home, ".gemini", "tmp", "repo", "chats", "session-2026-12-02T03-19-aa3ac65c.jsonl")
	return h, newGrowing(t, h.clk, "gemini-states.jsonl", path, h.clk.Now(), nil)
}

// TestRecordedGeminiStates replays the chat file Gemini CLI 0.61.0 wrote
// in e2e/realcli's TestMusterGeminiStates (testdata/gemini-states.jsonl:
// an Esc mid-turn, a refused tool, an API error), with the hooks the CLI
// fired for it, into a pane whose Gemini hooks are installed, with the
// user's keys missed. The chat file's cancels end the first two runs
// interrupted and resolve the approval item; the API error is left to
// AfterAgent, which reports it failed.
func TestRecordedGeminiStates(t *testing.T) {
	h, g := geminiPane(t, false, "node", "/usr/bin/gemini")
	names := map[string]string{}
	var run string
	for g.next < len(g.lines) {
		l := g.lines[g.next]
		typ, content := transcript.ParseBytes(l).Get("type").String(), transcript.ParseBytes(l).Get("content.0.text").String()
		if transcript.ParseBytes(l).Get("timestamp").Exists() {
			// The CLI's clock and the pane's are one: a record is read
			// after it was written.
			if d := g.recordTimeOf(l).Sub(h.clk.Now()); d > 0 {
				h.clk.Advance(d)
			}
		}
		g.write(1, nil)
		// The hooks the CLI fired for this record (geminihook's run id is
		// its own: BeforeAgent's time and prompt).
		switch {
		case typ == "user" && content != "" && !strings.HasPrefix(content, "<session_context>"):
			run = fmt.Sprintf("gemini-run-%d", len(names)+1)
			names[run] = fmt.Sprintf("G%d", len(names)+1)
			h.rec.hookOf("gemini", "s1", run, proto.KindStarted, "BeforeAgent", content, g.recordTimeOf(l))
		case typ == "gemini" && transcript.ParseBytes(l).Get("toolCalls").Exists():
			h.rec.hookOf("gemini", "s1", run, proto.KindApprovalRequested, "Notification", "Shell", g.recordTimeOf(l))
		}
		h.poll()
		if typ == "error" {
			h.rec.hookOf("gemini", "s1", run, proto.KindFailed, "AfterAgent", "turn ended without a response (API error?)", g.recordTimeOf(l).Add(time.Millisecond))
		}
	}
	h.wantNamed(names,
		"muster.transcript.turnEnded interrupted G1 chat file: info Request cancelled.",
		"muster.transcript.turnEnded interrupted G2 chat file: info Request cancelled.",
	)
	want := map[string]proto.RunState{"G1": proto.StateInterrupted, "G2": proto.StateInterrupted, "G3": proto.StateFailed}
	if len(names) != len(want) {
		t.Fatalf("%d prompts in the recording, want %d", len(names), len(want))
	}
	for run, name := range names {
		r, _ := h.rec.board.Run(runstate.RunKey{SessionID: testSession, RunID: run})
		if r.State != want[name] {
			t.Errorf("%s is %s, want %s", name, r.State, want[name])
		}
	}
	for _, it := range h.rec.items(h.clk.Now()) {
		if it.Open() != (it.Reason == proto.KindFailed) {
			t.Errorf("item %+v: open %v; want only the API error's failure item open", it, it.Open())
		}
	}
}

// TestGeminiCancelReadLate: a chat file's cancel read after the next
// prompt's run started (a poll that came late) is about the earlier run
// and leaves the new one running.
func TestGeminiCancelReadLate(t *testing.T) {
	h, g := geminiPane(t, false, "gemini")
	cancel := g.find(`"Request cancelled."`)
	g.write(0, func(l []byte) bool { return string(l) == string(cancel) })
	h.rec.hookOf("gemini", "s1", "G1", proto.KindStarted, "BeforeAgent", "a turn to interrupt", g.recordTimeOf(g.find("a turn to interrupt")))
	h.rec.hookOf("gemini", "s1", "G2", proto.KindStarted, "BeforeAgent", "next", g.recordTimeOf(cancel).Add(time.Second))
	h.poll()
	h.want()
	if v := h.rec.view(h.clk.Now()); v.Run.RunID != "G2" || v.Run.State != proto.StateRunning {
		t.Errorf("current run %s %s, want G2 running", v.Run.RunID, v.Run.State)
	}
}
