package native

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/hookevent"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termsignal"
)

// hooklessCodex starts a harness with a `muster new codex` pane whose
// hooks were never heard from, at its prompt.
func hooklessCodex(t *testing.T) (*harness, *pane) {
	h := newHarness(t)
	h.e.cfg.Runs = h.rec
	h.procs.set(300, "codex", "codex", "--no-daemon")
	p := h.surface("s1", "codex", 300)
	h.poll()
	return h, p
}

// TestHooklessCodexApprovalOnTurn (issue 23): a hook-less Codex's OSC 7501
// blocked is the approval of the turn its rollout started, at once (the
// signal wakes the poll), with an attention item; its working after the
// answer puts the run back to running.
func TestHooklessCodexApprovalOnTurn(t *testing.T) {
	h, _ := hooklessCodex(t)
	cwd := func(l []byte) []byte {
		if !bytes.Contains(l, []byte(`"session_meta"`)) && !bytes.Contains(l, []byte(`"turn_context"`)) {
			return l
		}
		out, _ := setJSON(l, "payload.cwd", testCWD)
		return out
	}
	g := newGrowing(t, h.clk, "codex-01a22c0e.jsonl", h.codexRollout("rollout-2026-11-30T10-45-04-01a22c0e-d041-74f3-b87b-104fada8e2f6.jsonl"), h.clk.Now(), cwd)
	g.write(0, isLine(`"turn_context"`))
	h.poll()
	turn := hookevent.TurnRunID("codex", "01a22c0f-14a3-7a90-9612-9bf52be24129")
	names := map[string]string{turn: "T1"}
	h.clk.Advance(100 * time.Millisecond)
	h.e.Signals("s1", []termsignal.Signal{status("state=blocked:app=codex:kind=permission")})
	h.e.pollOnce(t.Context()) // woken by the signal
	h.wantNamed(names,
		"turnStarted started T1 prompt submitted",
		"muster.terminal.request approval-requested T1 OSC 7501;state=blocked:app=codex:kind=permission",
	)
	if st := h.state(); st != proto.StateWaitingApproval {
		t.Fatalf("after blocked: %s, want waitingApproval", st)
	}
	if n := h.openItems(); n != 1 {
		t.Errorf("%d open items, want the approval's", n)
	}
	// Polls while the dialog waits record it once.
	for range 3 {
		h.poll()
	}
	if n := h.rec.count(); n != 2 {
		t.Errorf("%d events after polls at the dialog, want 2", n)
	}
	h.clk.Advance(time.Second)
	h.e.Signals("s1", []termsignal.Signal{status("state=working:app=codex")})
	h.drain()
	if st := h.state(); st != proto.StateRunning {
		t.Errorf("after working: %s, want running", st)
	}
	if n := h.openItems(); n != 0 {
		t.Errorf("%d open items after the answer, want 0", n)
	}
}

// TestHooklessCodexApprovalBeforeItsTurn: a blocked that comes before any
// transcript says which turn it is (none found) opens a run for it at
// once; the turn read later gets the approval too, so the run that waits
// is the one the hooks would name.
func TestHooklessCodexApprovalBeforeItsTurn(t *testing.T) {
	h, _ := hooklessCodex(t)
	h.e.Signals("s1", []termsignal.Signal{status("state=working:app=codex")})
	h.clk.Advance(100 * time.Millisecond)
	h.e.Signals("s1", []termsignal.Signal{status("state=blocked:app=codex:kind=permission")})
	h.e.pollOnce(t.Context())
	if st := h.state(); st != proto.StateWaitingApproval {
		t.Fatalf("after blocked with no turn known: %s, want waitingApproval", st)
	}
	cwd := func(l []byte) []byte {
		out, _ := setJSON(l, "payload.cwd", testCWD)
		if !bytes.Contains(l, []byte(`"session_meta"`)) && !bytes.Contains(l, []byte(`"turn_context"`)) {
			return l
		}
		return out
	}
	g := newGrowing(t, h.clk, "codex-01a22c0e.jsonl", h.codexRollout("rollout-2026-11-30T10-45-04-01a22c0e-d041-74f3-b87b-104fada8e2f6.jsonl"), h.clk.Now().Add(-time.Second), cwd)
	g.write(0, isLine(`"turn_context"`))
	h.clk.Advance(locateEvery)
	h.poll()
	turn := hookevent.TurnRunID("codex", "01a22c0f-14a3-7a90-9612-9bf52be24129")
	v := h.rec.view(h.clk.Now())
	if v.Run.RunID != turn || v.Run.State != proto.StateWaitingApproval {
		t.Errorf("current run %s %s, want the turn %s waitingApproval:\n%v", v.Run.RunID, v.Run.State, turn, h.rec.lines(nil))
	}
	if n := h.openItems(); n != 1 {
		t.Errorf("%d open items, want the turn's approval only", n)
	}
}

// TestHooklessGeminiApproval: Gemini CLI's "✋ Action Required" title is
// the approval of the run its chat file opened; "✦ Working…" after the
// user's key confirms the answer.
func TestHooklessGeminiApproval(t *testing.T) {
	h, g := geminiPane(t, true, "gemini")
	g.write(0, isLine(`make a denied file`))
	h.poll()
	h.e.Signals("s1", []termsignal.Signal{geminiWorking})
	h.clk.Advance(time.Second)
	h.e.Signals("s1", []termsignal.Signal{geminiAction})
	h.e.pollOnce(t.Context())
	if st := h.state(); st != proto.StateWaitingApproval {
		t.Fatalf("after Action Required: %s, want waitingApproval:\n%v", st, h.rec.lines(nil))
	}
	if n := h.openItems(); n != 1 {
		t.Errorf("%d open items, want 1", n)
	}
}

// TestHooksHeardNotInstalled (issue 23 item 4): a provider's hooks being
// installed says nothing about the agent already running; only a hook
// event from the surface hands its runs over. Until then a hook-less
// Codex's approval is still read from its terminal.
func TestHooksHeardNotInstalled(t *testing.T) {
	h, _ := hooklessCodex(t)
	h.e.Signals("s1", []termsignal.Signal{status("state=blocked:app=codex:kind=permission")})
	h.e.pollOnce(t.Context())
	if st := h.state(); st != proto.StateWaitingApproval {
		t.Fatalf("hook-less blocked: %s, want waitingApproval", st)
	}
	h.e.HookEventSeen("s1", "codex")
	h.poll()
	n := h.rec.count()
	h.e.Signals("s1", []termsignal.Signal{status("state=working:app=codex")})
	h.e.Signals("s1", []termsignal.Signal{status("state=blocked:app=codex:kind=permission")})
	h.poll()
	if got := h.rec.count(); got != n {
		t.Errorf("a blocked after the hooks were heard recorded %d events; the hooks report approvals:\n%v", got-n, h.rec.lines(nil))
	}
}

// TestNativeIDReported: the session id a hook-less agent's transcript is
// followed by is given to OnNativeID once.
func TestNativeIDReported(t *testing.T) {
	h, g := geminiPane(t, true, "gemini")
	var got []string
	h.e.cfg.Listener = listenerFuncs{nativeID: func(surface, prov, id string) { got = append(got, surface+" "+prov+" "+id) }}
	g.write(0, isLine(`a turn to interrupt`))
	for range 3 {
		h.clk.Advance(locateEvery)
		h.poll()
	}
	if len(got) != 1 || got[0] != "s1 gemini aa3ac65c-1884-452c-956b-62539224443c" {
		t.Errorf("OnNativeID calls %q, want one for the chat file's session", got)
	}
}

// TestResumedTranscriptHistory: a resumed agent's transcript holds the
// conversation's earlier turns; one written seconds before the launch (a
// resume right after a turn: `muster daemon stop; muster resume`) is
// history too, not a run of the new agent. Only the prompt typed after
// the launch opens one.
func TestResumedTranscriptHistory(t *testing.T) {
	h, g := geminiPane(t, true, "gemini")
	launch := h.e.surfaces["s1"].agent.startedAt
	at := func(d time.Duration) string { return launch.Add(d).Format(time.RFC3339Nano) }
	writeLine(t, g.path, `{"sessionId":"aa3ac65c-1884-452c-956b-62539224443c","kind":"main"}`)
	writeLine(t, g.path, `{"id":"u1","timestamp":"`+at(-40*time.Second)+`","type":"user","content":[{"text":"say hello"}]}`)
	writeLine(t, g.path, `{"id":"u2","timestamp":"`+at(-3*time.Second)+`","type":"user","content":[{"text":"the turn before the stop"}]}`)
	h.clk.Advance(locateEvery)
	h.poll()
	h.want()
	writeLine(t, g.path, `{"id":"u3","timestamp":"`+h.clk.Now().Format(time.RFC3339Nano)+`","type":"user","content":[{"text":"after resume"}]}`)
	h.poll()
	h.want("turnStarted started R1 after resume")
}

// TestResumedLaunchHistory: an agent that is its pane's process reads
// every record written before that process started (Surface.Started) as
// history, even when the whole conversation is seconds old (a resume
// right after a turn).
func TestResumedLaunchHistory(t *testing.T) {
	h := newHarness(t)
	h.e.cfg.Runs = h.rec
	h.procs.set(300, "gemini", "gemini")
	p := &pane{pgid: 300}
	p.setNativeID("aa3ac65c-1884-452c-956b-62539224443c")
	h.e.SurfaceStarted(Surface{ID: "s1", SessionID: testSession, Provider: "gemini", PID: 300, CWD: testCWD,
		ForegroundPGID: p.ForegroundPGID, NativeID: p.NativeID, Started: h.clk.Now().Add(-100 * time.Millisecond)})
	h.poll()
	launch := h.e.surfaces["s1"].Started
	path := filepath.Join(h.home, ".gemini", "tmp", "repo", "chats", "session-2026-12-02T03-19-aa3ac65c.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	writeLine(t, path, `{"sessionId":"aa3ac65c-1884-452c-956b-62539224443c","kind":"main"}`)
	writeLine(t, path, `{"id":"u1","timestamp":"`+launch.Add(-50*time.Millisecond).Format(time.RFC3339Nano)+`","type":"user","content":[{"text":"say hello"}]}`)
	h.clk.Advance(locateEvery)
	h.poll()
	h.want()
	writeLine(t, path, `{"id":"u2","timestamp":"`+h.clk.Now().Format(time.RFC3339Nano)+`","type":"user","content":[{"text":"after resume"}]}`)
	h.poll()
	h.want("turnStarted started R1 after resume")
}
