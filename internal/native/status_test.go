package native

import (
	"fmt"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termsignal"
)

// osc scans one OSC sequence (without ESC ] and BEL) into its signals.
func osc(t *testing.T, raw string) []termsignal.Signal {
	t.Helper()
	_, sigs := termsignal.New().Feed([]byte("\x1b]"+raw+"\x07"), nil)
	if len(sigs) != 1 {
		t.Fatalf("%q scanned to %d signals", raw, len(sigs))
	}
	return sigs
}

// claudePane starts a harness with a Claude Code pane whose hooks were
// injected and a turn T1 started by its hook, then the given hooks, each a
// millisecond after the last; the clock is a second later.
func claudePane(t *testing.T, hooks ...proto.EventKind) *harness {
	return agentPane(t, "claude", hooks...)
}

// agentPane is claudePane for another provider, whose hooks are
// installed.
func agentPane(t *testing.T, prov string, hooks ...proto.EventKind) *harness {
	h := newHarness(t)
	h.e.cfg.Runs = h.rec
	h.setHooks(prov, true)
	h.procs.set(300, prov, prov)
	p := &pane{pgid: 300}
	h.e.SurfaceStarted(Surface{ID: "s1", SessionID: testSession, Provider: prov, PID: 300, CWD: testCWD,
		ForegroundPGID: p.ForegroundPGID, NativeID: p.NativeID, HooksInjected: true})
	h.poll()
	at := h.clk.Now()
	h.rec.hookOf(prov, "s1", "T1", proto.KindStarted, "UserPromptSubmit", "do it", at)
	for i, k := range hooks {
		h.rec.hookOf(prov, "s1", "T1", k, "hook", "Bash: make", at.Add(time.Duration(i+1)*time.Millisecond))
	}
	h.clk.Advance(time.Second)
	return h
}

func (h *harness) state() proto.RunState {
	return h.rec.view(h.clk.Now()).Run.State
}

func (h *harness) openItems() int {
	n := 0
	for _, it := range h.rec.items(h.clk.Now()) {
		if it.Open() {
			n++
		}
	}
	return n
}

// TestTerminalStatus: Claude Code's OSC 7501 idle ends the run its hooks
// left open (an Esc mid-turn, a denial, a declined question), its working
// answers a dialog, and a status older than the run's state says nothing
// about it.
func TestTerminalStatus(t *testing.T) {
	tests := []struct {
		name  string
		hooks []proto.EventKind
		raw   string
		want  proto.RunState
		line  string
	}{
		{"idle mid-turn", nil, "7501;state=idle:app=claude-code", proto.StateInterrupted,
			"muster.terminal.status interrupted T1 OSC 7501;state=idle:app=claude-code"},
		{"idle at an approval (denied)", []proto.EventKind{proto.KindApprovalRequested}, "7501;state=idle:app=claude-code", proto.StateInterrupted,
			"muster.terminal.status interrupted T1 OSC 7501;state=idle:app=claude-code"},
		{"idle at a question (declined)", []proto.EventKind{proto.KindInputRequested}, "7501;state=idle:app=claude-code", proto.StateInterrupted,
			"muster.terminal.status interrupted T1 OSC 7501;state=idle:app=claude-code"},
		{"working at an approval (approved)", []proto.EventKind{proto.KindApprovalRequested}, "7501;state=working:app=claude-code", proto.StateRunning,
			"muster.terminal.status running T1 OSC 7501;state=working:app=claude-code"},
		{"progress at a question (answered)", []proto.EventKind{proto.KindInputRequested}, "9;4;3;", proto.StateRunning,
			"muster.terminal.status running T1 OSC 9;4;3;"},
		{"done is the Stop hook's", nil, "7501;state=done:app=claude-code", proto.StateRunning, ""},
		{"progress removed says nothing", nil, "9;4;0;", proto.StateRunning, ""},
		{"another app's status", nil, "7501;state=idle:app=codex", proto.StateRunning, ""},
		{"idle after the turn ended", []proto.EventKind{proto.KindSucceeded}, "7501;state=idle:app=claude-code", proto.StateSucceeded, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := claudePane(t, tt.hooks...)
			h.e.Signals("s1", osc(t, tt.raw))
			h.drain()
			var want []string
			if tt.line != "" {
				want = []string{tt.line}
			}
			h.wantNamed(map[string]string{"T1": "T1"}, want...)
			if got := h.state(); got != tt.want {
				t.Errorf("run state %s, want %s", got, tt.want)
			}
			if tt.line != "" && h.openItems() != 0 {
				t.Errorf("%d items open after the status", h.openItems())
			}
		})
	}
}

// TestStatusOlderThanTheState: a status seen before the hook that put the
// run in its state (Claude's working, then its PermissionRequest hook
// applied before the status is fused) does not answer the dialog.
func TestStatusOlderThanTheState(t *testing.T) {
	h := claudePane(t)
	h.e.Signals("s1", osc(t, "7501;state=working:app=claude-code"))
	h.rec.hook("s1", "T1", proto.KindApprovalRequested, "PermissionRequest", "Bash: make", h.clk.Now().Add(time.Millisecond))
	h.drain()
	h.wantNamed(map[string]string{"T1": "T1"})
	if got := h.state(); got != proto.StateWaitingApproval {
		t.Errorf("run state %s, want waitingApproval", got)
	}
}

// TestUnconfirmedAnswer: Enter at an approval dialog is running pending
// confirmation. Claude Code then says working; when nothing follows for
// answerConfirm (the key was lost, or did nothing), the run goes back to
// waiting for the approval, with its item open again, whether or not the
// program ever reported its status (a run must not stay running on a lost
// key), for every provider whose keys are read (TestUnconfirmedAnswerEveryProvider).
func TestUnconfirmedAnswer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		speaks  bool
		confirm func(h *harness)
		want    proto.RunState
	}{
		{"confirmed by its working status", true, func(h *harness) { h.e.Signals("s1", osc(t, "7501;state=working:app=claude-code")) }, proto.StateRunning},
		{"confirmed by its progress", true, func(h *harness) { h.e.Signals("s1", osc(t, "9;4;3;")) }, proto.StateRunning},
		{"confirmed by a hook", true, func(h *harness) {
			h.rec.hook("s1", "T1", proto.KindRunning, "PostToolUse", "Bash", h.clk.Now())
		}, proto.StateRunning},
		{"ended by the transcript", true, func(h *harness) {
			h.rec.hook("s1", "T1", proto.KindInterrupted, "muster.transcript.turnEnded", "[Request interrupted by user for tool use]", h.clk.Now())
		}, proto.StateInterrupted},
		{"nothing follows", true, func(*harness) {}, proto.StateWaitingApproval},
		{"nothing follows, a silent program", false, func(*harness) {}, proto.StateWaitingApproval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := claudePane(t)
			if tc.speaks {
				// At start-up, before the turn: proves the program speaks,
				// and is older than the run's state.
				h.e.Signals("s1", osc(t, "9;4;0;"))
			}
			h.rec.hook("s1", "T1", proto.KindApprovalRequested, "PermissionRequest", "Bash: make", h.clk.Now())
			h.clk.Advance(time.Second)
			h.e.Input("s1", []byte("\r"))
			h.drain()
			if got := h.state(); got != proto.StateRunning {
				t.Fatalf("after Enter: %s, want running", got)
			}
			h.clk.Advance(300 * time.Millisecond)
			tc.confirm(h)
			h.drain()
			h.clk.Advance(answerConfirm / 2)
			h.e.recheck(t.Context())
			if got := h.state(); got != proto.StateRunning && got != tc.want {
				t.Fatalf("before answerConfirm: %s", got)
			}
			h.clk.Advance(answerConfirm)
			h.e.recheck(t.Context())
			if got := h.state(); got != tc.want {
				t.Errorf("after answerConfirm: %s, want %s", got, tc.want)
			}
			if tc.want == proto.StateWaitingApproval {
				v := h.rec.view(h.clk.Now())
				if v.Run.Because.HookName != HookKeyUnconfirmed {
					t.Errorf("because %+v, want %s", v.Run.Because, HookKeyUnconfirmed)
				}
				if h.openItems() != 1 {
					t.Errorf("%d open items, want the approval's again", h.openItems())
				}
			}
			if len(h.e.answers) != 0 {
				t.Errorf("answers still pending: %v", h.e.answers)
			}
		})
	}
}

// TestUnconfirmedAnswerEveryProvider: the revert holds for the providers
// that report no status an answer could be read from (Codex's OSC 7501
// and Gemini CLI's titles only say it works): their working signal after
// the key confirms it; nothing at all within answerConfirm puts the run
// back to the request, with its item open again.
func TestUnconfirmedAnswerEveryProvider(t *testing.T) {
	for _, tc := range []struct {
		prov, key string
		confirm   []termsignal.Signal
		want      proto.RunState
	}{
		{"codex", "y", nil, proto.StateWaitingApproval},
		{"codex", "y", []termsignal.Signal{status("state=working:app=codex")}, proto.StateRunning},
		{"gemini", "\r", nil, proto.StateWaitingApproval},
		{"gemini", "\r", []termsignal.Signal{title("✦  Working… (repo)")}, proto.StateRunning},
		{"gemini", "\r", []termsignal.Signal{title("✋  Action Required (repo)")}, proto.StateWaitingApproval},
	} {
		t.Run(fmt.Sprintf("%s %d", tc.prov, len(tc.confirm)), func(t *testing.T) {
			h := agentPane(t, tc.prov, proto.KindApprovalRequested)
			h.e.Input("s1", []byte(tc.key))
			h.drain()
			if got := h.state(); got != proto.StateRunning {
				t.Fatalf("after the key: %s, want running", got)
			}
			h.clk.Advance(300 * time.Millisecond)
			h.e.Signals("s1", tc.confirm)
			h.drain()
			h.clk.Advance(answerConfirm)
			h.e.recheck(t.Context())
			if got := h.state(); got != tc.want {
				t.Errorf("after answerConfirm: %s, want %s", got, tc.want)
			}
			if tc.want == proto.StateWaitingApproval && h.openItems() != 1 {
				t.Errorf("%d open items, want the approval's again", h.openItems())
			}
		})
	}
}

// TestKeyBeforeTheDialogsHook: Enter typed while the board still says
// running answers the dialog when the dialog's hook, arriving later, was
// fired before the key; it answers nothing when the hook was fired after
// it (the key went to the turn, not the dialog).
func TestKeyBeforeTheDialogsHook(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hookAt time.Duration // the hook's occurredAt relative to the key
		want   proto.RunState
	}{
		{"dialog first", -100 * time.Millisecond, proto.StateRunning},
		{"key first", 100 * time.Millisecond, proto.StateWaitingApproval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := claudePane(t)
			key := h.clk.Now()
			h.e.Input("s1", []byte("\r"))
			h.drain()
			h.wantNamed(map[string]string{"T1": "T1"})
			if len(h.e.held) != 1 {
				t.Fatalf("held keys %v, want the Enter", h.e.held)
			}
			h.clk.Advance(200 * time.Millisecond)
			h.rec.hook("s1", "T1", proto.KindApprovalRequested, "PermissionRequest", "Bash: make", key.Add(tc.hookAt))
			h.e.recheck(t.Context())
			if got := h.state(); got != tc.want {
				t.Errorf("run state %s, want %s", got, tc.want)
			}
			if len(h.e.held) != 0 {
				t.Errorf("held keys %v after the hook", h.e.held)
			}
		})
	}
	t.Run("no dialog", func(t *testing.T) {
		h := claudePane(t)
		h.e.Input("s1", []byte("\r"))
		h.drain()
		h.clk.Advance(lateHook)
		h.e.recheck(t.Context())
		if len(h.e.held) != 0 || h.state() != proto.StateRunning {
			t.Errorf("held %v, state %s; want nothing held, running", h.e.held, h.state())
		}
	})
}

// TestKeyBeforeTheStartHook: Esc typed while the board has no open run
// (the last turn ended) interrupts the next turn when that turn's start
// hook, arriving later, was fired before the key (a prompt, then Esc at
// once); it does nothing to a turn started after it. Found by
// TestPropertyTurnEnds.
func TestKeyBeforeTheStartHook(t *testing.T) {
	for _, tc := range []struct {
		name    string
		startAt time.Duration // T2's start hook's occurredAt relative to the key
		want    proto.RunState
	}{
		{"turn first", -100 * time.Millisecond, proto.StateInterrupted},
		{"key first", 100 * time.Millisecond, proto.StateRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := agentPane(t, "gemini", proto.KindSucceeded)
			key := h.clk.Now()
			h.e.Input("s1", []byte("\x1b"))
			h.drain()
			if len(h.e.held) != 1 {
				t.Fatalf("held keys %v, want the Esc", h.e.held)
			}
			h.clk.Advance(200 * time.Millisecond)
			h.rec.hookOf("gemini", "s1", "T2", proto.KindStarted, "BeforeAgent", "next", key.Add(tc.startAt))
			h.e.recheck(t.Context())
			if got := h.state(); got != tc.want {
				t.Errorf("run state %s, want %s", got, tc.want)
			}
			if len(h.e.held) != 0 {
				t.Errorf("held keys %v after the hook", h.e.held)
			}
		})
	}
	t.Run("Esc at the prompt", func(t *testing.T) {
		h := agentPane(t, "gemini", proto.KindSucceeded)
		h.e.Input("s1", []byte("\x1b"))
		h.drain()
		h.clk.Advance(lateHook)
		h.e.recheck(t.Context())
		if len(h.e.held) != 0 || h.state() != proto.StateSucceeded {
			t.Errorf("held %v, state %s; want nothing held, succeeded", h.e.held, h.state())
		}
	})
}
