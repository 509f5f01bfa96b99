package native

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/runstate"
	"github.com/musterhq/muster/internal/termsignal"
)

// Hook names of the fusion rule's events: muster.<source>.<what>, so that
// the engine records their source (runstate.SourceOfHook).
const (
	HookKeyAnswered       = proto.ReservedHookPrefix + "keystroke.answered"
	HookKeyInterrupted    = proto.ReservedHookPrefix + "keystroke.interrupted"
	HookTranscriptTurnEnd = proto.ReservedHookPrefix + "transcript.turnEnded"
	// HookKeyUnconfirmed puts a run a key answered back to its request:
	// nothing confirmed the answer within answerConfirm.
	HookKeyUnconfirmed = proto.ReservedHookPrefix + "keystroke.unconfirmed"
	// HookTerminalStatus is a status the agent sent through its terminal
	// (provider.StatusReader).
	HookTerminalStatus = proto.ReservedHookPrefix + "terminal.status"
)

// answerConfirm is how long a key's answer to a dialog waits for
// confirmation (the agent's working status or progress, a hook, a
// transcript record) before the run goes back to waiting, for a provider
// that reports its status (Claude Code says working 0.2–0.8 s after an
// approving key, measured). lateHook is how long a key that would answer
// a dialog, typed while the run was running, waits for the hook of a
// dialog that opened before it (hooks take 50–400 ms to arrive).
// recheck is the fusion goroutine's tick while either waits.
const (
	answerConfirm = 5 * time.Second
	lateHook      = time.Second
	recheck       = 100 * time.Millisecond
)

// maxKeyInput is the longest write to a pane read as keys: a longer one is
// a paste (or a script's text), which answers nothing by itself.
const maxKeyInput = 16

// After a key answers a dialog the transcripts are read every fastPoll for
// fastFor: a "No" picked with the arrows and Enter is known only from the
// transcript's marker, which must show within 2 s of the key.
const (
	fastPoll = 200 * time.Millisecond
	fastFor  = 5 * time.Second
)

// fuseQueue bounds the evidence waiting for the fusion goroutine; beyond
// it evidence is dropped (and logged) rather than blocking a pane's input
// or output path.
const fuseQueue = 256

// CurrentRun is a surface's current run as the board has it
// (Config.Runs).
type CurrentRun struct {
	RunID    string
	State    proto.RunState // the stored state: running, waiting…, or terminal
	Provider string
	// StartedAt is when the run started; zero when unknown.
	StartedAt time.Time
	// Because is the event that put the run in State, Last the newest
	// event applied to it: evidence older than Because says nothing about
	// State, and an answer still Last was confirmed by nothing.
	Because, Last runstate.Evidence
}

// Evidence is one observation other than a provider hook about the run of
// a surface: what the fusion rule reads.
type Evidence struct {
	// Source is runstate.SourceKeystroke, SourceTranscript or
	// SourceTerminal.
	Source runstate.Source
	// Hook is the synthesized event's hook name, under
	// muster.<Source>.; empty: muster.<Source>.<Kind>.
	Hook string
	// Signal is the raw signal as explain shows it: the key typed, the
	// transcript record's text, the OSC sequence.
	Signal string
	// Kind is what the evidence proves: running (a request was
	// answered), interrupted, failed or succeeded (the turn ended).
	Kind proto.EventKind
	// RunID names the run the evidence is about (a transcript record of
	// that turn); empty: the surface's current run at the time the
	// evidence is fused (a key, a terminal status, a transcript record
	// of a provider whose turn keys are not its hooks' run ids), provided
	// it started no later than At.
	RunID string
	// Provider is the run's provider: with RunID, the named run's; without,
	// the current run must be the provider's.
	Provider string
	At       time.Time
}

// Fuse is the fusion rule for one piece of evidence, given the surface's
// current run: the event kind to record for run, or ok=false. See the
// package doc.
func Fuse(ev Evidence, cur CurrentRun) (run string, kind proto.EventKind, ok bool) {
	open := cur.State == proto.StateRunning || cur.State == proto.StateWaitingApproval || cur.State == proto.StateWaitingInput
	if ev.RunID != "" {
		// Evidence about a named turn holds whatever the board knows: a
		// hook that is late to arrive (or never arrives) cannot keep it
		// from ending its run, and the reducer keeps ended runs ended.
		if ev.RunID == cur.RunID && !open {
			return "", "", false
		}
		if ev.Kind == proto.KindRunning {
			return "", "", false
		}
		return ev.RunID, ev.Kind, ev.Kind.Valid()
	}
	if cur.RunID == "" || !open {
		return "", "", false
	}
	if ev.Provider != "" && ev.Provider != cur.Provider {
		return "", "", false
	}
	if !cur.StartedAt.IsZero() && ev.At.Before(cur.StartedAt) {
		// Seen before the current run started (a transcript record read
		// late): it is about an earlier run.
		return "", "", false
	}
	switch ev.Kind {
	case proto.KindRunning:
		// Only a request is answered; a running turn is left alone.
		if cur.State == proto.StateRunning {
			return "", "", false
		}
		return cur.RunID, proto.KindRunning, true
	case proto.KindInterrupted, proto.KindFailed, proto.KindSucceeded:
		return cur.RunID, ev.Kind, true
	}
	return "", "", false
}

// fused is evidence waiting for the fusion goroutine.
type fused struct {
	surface string
	ev      Evidence
	keys    []byte             // keystroke evidence still to be read by the provider
	sig     *termsignal.Signal // a status the agent sent, to be read by its provider
	retry   bool               // keys held for a late hook: never held again
	// heldRun and heldState are the board's current run when the keys
	// were held: a change of either is the late hook they wait for.
	heldRun   string
	heldState proto.RunState
	// working: the pane's activity went to working (a title): the agent
	// works again, which confirms an answer.
	working bool
}

// pendingAnswer is a key's answer to a dialog waiting for confirmation.
type pendingAnswer struct {
	run   string
	state proto.RunState // the request answered
	at    time.Time      // the key's time, the answer's occurredAt
	what  string         // the key, as explain shows it
}

// Observe hands evidence about the run of a surface to the fusion rule.
// It never blocks: the evidence is fused by Run's fusion goroutine, in the
// order observed.
func (e *Estimator) Observe(surfaceID string, ev Evidence) {
	if ev.At.IsZero() {
		ev.At = e.now()
	}
	e.enqueue(fused{surface: surfaceID, ev: ev})
}

// Input tells the estimator what was written to a surface's terminal on
// the user's behalf (muster attach, muster send): the keystroke evidence
// of the fusion rule. It copies what it keeps and never blocks.
func (e *Estimator) Input(surfaceID string, data []byte) {
	if bytes.ContainsAny(data, "\r\n") {
		if s := e.lookup(surfaceID); s != nil {
			s.recheck.Store(true) // the key may start a program in place
		}
	}
	if len(data) == 0 || len(data) > maxKeyInput || e.cfg.Runs == nil || !e.readsKeys(surfaceID) {
		return
	}
	e.enqueue(fused{surface: surfaceID, keys: append([]byte(nil), data...), ev: Evidence{Source: runstate.SourceKeystroke, At: e.now()}})
}

// readsKeys reports whether keys typed into a surface can be evidence:
// apply reads them only through the provider.KeyReader of its run's or its
// agent's provider, and drops them otherwise. Dropping them here spares a
// plain pane a wake of the fusion goroutine per keystroke, which the
// runtime served by waking a second thread beside the echo (perf trace of
// corebench's latency phase).
func (e *Estimator) readsKeys(surfaceID string) bool {
	prov := e.cfg.Runs.CurrentRun(surfaceID).Provider
	if prov == "" {
		prov = e.agentProvider(surfaceID)
	}
	_, ok := all.As[provider.KeyReader](prov)
	return ok
}

// status hands a status signal of a surface's agent (OSC 7501, OSC 9;4)
// to the fusion rule.
func (e *Estimator) status(surfaceID string, sig termsignal.Signal, at time.Time) {
	e.enqueue(fused{surface: surfaceID, sig: &sig, ev: Evidence{Source: runstate.SourceTerminal, Hook: HookTerminalStatus, Signal: evidence(sig), At: at}})
}

func (e *Estimator) enqueue(f fused) {
	select {
	case e.fuse <- f:
	default:
		e.log.Warn("fusion evidence dropped: queue full", "surface_id", f.surface, "source", string(f.ev.Source))
	}
}

// fuseLoop applies queued evidence until ctx ends, and while keys wait
// (held for a late hook, answers for confirmation) looks at them every
// recheck.
func (e *Estimator) fuseLoop(ctx context.Context) {
	var tick *time.Ticker
	defer func() {
		if tick != nil {
			tick.Stop()
		}
	}()
	for {
		var c <-chan time.Time
		switch waiting := len(e.held) > 0 || len(e.answers) > 0; {
		case waiting && tick == nil:
			tick = time.NewTicker(recheck)
			c = tick.C
		case waiting:
			c = tick.C
		case tick != nil:
			tick.Stop()
			tick = nil
		}
		select {
		case <-ctx.Done():
			return
		case f := <-e.fuse:
			e.apply(ctx, f)
		case <-c:
			e.recheck(ctx)
		}
	}
}

// recheck retries the keys held for a late hook and reverts the answers
// nothing confirmed. Fusion goroutine only.
func (e *Estimator) recheck(ctx context.Context) {
	now := e.now()
	for id, f := range e.held {
		cur := e.cfg.Runs.CurrentRun(id)
		if cur.RunID != f.heldRun || cur.State != f.heldState {
			delete(e.held, id)
			f.retry = true
			e.apply(ctx, f)
		} else if now.Sub(f.ev.At) >= lateHook {
			delete(e.held, id)
		}
	}
	for id, p := range e.answers {
		if now.Sub(p.at) < answerConfirm {
			continue
		}
		delete(e.answers, id)
		cur := e.cfg.Runs.CurrentRun(id)
		if cur.RunID != p.run || cur.State != proto.StateRunning || cur.Last.HookName != HookKeyAnswered || !cur.Last.OccurredAt.Equal(p.at) {
			continue // a hook, a record or a status came after the answer
		}
		kind := proto.KindApprovalRequested
		if p.state == proto.StateWaitingInput {
			kind = proto.KindInputRequested
		}
		e.emitEvidence(ctx, id, cur.Provider, p.run, HookKeyUnconfirmed, kind, now,
			fmt.Sprintf("nothing followed the %s within %s: the %s is still open", p.what, answerConfirm, requestName(p.state)))
	}
}

// apply fuses one piece of evidence: a key is read by the provider of the
// run it is typed into, then the rule decides, then the event is recorded.
func (e *Estimator) apply(ctx context.Context, f fused) {
	var cur CurrentRun
	if e.cfg.Runs != nil {
		cur = e.cfg.Runs.CurrentRun(f.surface)
	}
	ev := f.ev
	if f.working {
		delete(e.answers, f.surface)
		return
	}
	if ev.RunID == "" && !cur.Because.OccurredAt.IsZero() && ev.At.Before(cur.Because.OccurredAt) {
		// Evidence older than the run's state says nothing about it: a
		// key typed, or a status sent, before the dialog opened.
		return
	}
	var answered *pendingAnswer
	switch {
	case f.keys != nil:
		prov := cur.Provider
		if prov == "" {
			prov = e.agentProvider(f.surface)
		}
		kr, ok := all.As[provider.KeyReader](prov)
		if !ok {
			return
		}
		if !openState(cur.State) {
			// A key that would interrupt a turn, typed while no run is
			// open, may have met a turn whose start hook has not arrived
			// yet (a prompt, then Esc at once): held until it does, if
			// that turn started first.
			if !f.retry {
				if e2, _ := readKeys(kr, f.keys, proto.StateRunning); e2 == provider.KeyInterrupt {
					e.hold(f, cur)
				}
			}
			return
		}
		effect, key := readKeys(kr, f.keys, cur.State)
		if effect == provider.KeyNone && cur.State == proto.StateRunning && !f.retry {
			// A key that would answer a dialog, typed while the run is
			// running, may have met a dialog whose hook has not arrived
			// yet: held until it does (recheck), if it opened first.
			if e2, _ := readKeys(kr, f.keys, proto.StateWaitingApproval); e2 == provider.KeyAnswer {
				e.hold(f, cur)
			} else if e2, _ := readKeys(kr, f.keys, proto.StateWaitingInput); e2 == provider.KeyAnswer {
				e.hold(f, cur)
			}
			return
		}
		switch effect {
		case provider.KeyAnswer:
			ev.Kind, ev.Hook = proto.KindRunning, HookKeyAnswered
			e.fastUntil.Store(ev.At.Add(fastFor).UnixNano())
			e.nudge()
			ev.Signal = fmt.Sprintf("%s typed at the %s", keyLabel(key), requestName(cur.State))
			answered = &pendingAnswer{run: cur.RunID, state: cur.State, at: ev.At, what: keyLabel(key)}
		case provider.KeyInterrupt:
			ev.Kind, ev.Hook = proto.KindInterrupted, HookKeyInterrupted
			ev.Signal = fmt.Sprintf("%s typed while %s", keyLabel(key), cur.State)
		default:
			return
		}
	case f.sig != nil:
		if isWorking(*f.sig) {
			// The agent works again: whatever key answered its dialog did.
			delete(e.answers, f.surface)
		}
		sr, ok := all.As[provider.StatusReader](cur.Provider)
		if !ok || cur.RunID == "" {
			return
		}
		if ev.Kind = sr.Status(*f.sig, cur.State); ev.Kind == "" {
			return
		}
	}
	run, kind, ok := Fuse(ev, cur)
	if !ok {
		return
	}
	if answered != nil {
		e.answers[f.surface] = *answered
	} else if run == cur.RunID {
		delete(e.answers, f.surface)
	}
	prov := ev.Provider
	if prov == "" || run == cur.RunID {
		prov = cur.Provider
	}
	hook := ev.Hook
	if hook == "" {
		hook = proto.ReservedHookPrefix + string(ev.Source) + "." + string(kind)
	}
	e.emitEvidence(ctx, f.surface, prov, run, hook, kind, ev.At, ev.Signal)
}

// readKeys reads one write of keys for a run in state: one write may hold
// several keys (`muster send --keys Down Enter`), and the first one that
// does something is the evidence.
func readKeys(kr provider.KeyReader, keys []byte, state proto.RunState) (provider.KeyEffect, []byte) {
	for _, k := range splitKeys(keys) {
		if effect := kr.Key(k, state); effect != provider.KeyNone {
			return effect, k
		}
	}
	return provider.KeyNone, nil
}

// hold keeps a key for recheck, until the board's current run (cur now)
// changes or lateHook passes; a newer one replaces it.
func (e *Estimator) hold(f fused, cur CurrentRun) {
	f.heldRun, f.heldState = cur.RunID, cur.State
	e.held[f.surface] = f
}

// agentProvider returns the provider of the agent in the surface's
// foreground (or of its first-class launch), "" when none.
func (e *Estimator) agentProvider(surfaceID string) string {
	s := e.lookup(surfaceID)
	if s == nil {
		return ""
	}
	s.sig.Lock()
	defer s.sig.Unlock()
	return s.agentProv
}

// isWorking reports whether sig says the agent works: progress shown, or a
// working status.
func isWorking(sig termsignal.Signal) bool {
	switch sig.Kind {
	case termsignal.KindProgress:
		return sig.Progress != termsignal.ProgressRemove
	case termsignal.KindAgentStatus:
		return sig.State == "working"
	}
	return false
}

// keyLabel is a key as explain shows it: its name when it has a common one,
// and always its bytes, quoted.
func keyLabel(k []byte) string {
	name := "key"
	switch string(k) {
	case "\x1b", "\x1b[27u", "\x1b[27;1u", "\x1b[27;1:1u":
		name = "Escape"
	case "\r", "\n", "\x1b[13u", "\x1b[13;1u", "\x1b[13;1:1u":
		name = "Enter"
	case "\x03":
		name = "C-c"
	}
	return name + " " + strconv.Quote(string(k))
}

func requestName(s proto.RunState) string {
	if s == proto.StateWaitingInput {
		return "question"
	}
	return "approval dialog"
}

// emitEvidence records one event of the fusion rule. Its id depends on the
// evidence's time too: a run may be answered more than once.
func (e *Estimator) emitEvidence(ctx context.Context, surfaceID, prov, run, hook string, kind proto.EventKind, at time.Time, signal string) {
	if e.cfg.Events == nil || prov == "" {
		return
	}
	ev := proto.Event{
		SchemaVersion: proto.EventSchemaVersion,
		ID:            proto.RawID{RawValue: uuid.NewSHA1(nativeNS, []byte("fused\x00"+surfaceID+"\x00"+run+"\x00"+hook+"\x00"+string(kind)+"\x00"+strconv.FormatInt(at.UnixNano(), 10))).String()},
		RunID:         proto.RawID{RawValue: run},
		SurfaceID:     proto.RawID{RawValue: surfaceID},
		Provider:      prov,
		Kind:          kind,
		OccurredAt:    at.UTC(),
		Message:       clipMessage(signal),
		HookName:      hook,
	}
	ctx, cancel := context.WithTimeout(ctx, emitTimeout)
	defer cancel()
	if err := e.cfg.Events.Emit(ctx, ev); err != nil {
		e.log.Warn("record fused evidence", "surface_id", surfaceID, "hook", hook, "kind", string(kind), "run_id", run, "err", err)
		return
	}
	e.log.Debug("fused evidence", "surface_id", surfaceID, "hook", hook, "kind", string(kind), "run_id", run, "signal", signal)
}

// splitKeys splits one write of terminal input into keys: a CSI sequence
// (ESC [ … final byte), an SS3 or Alt sequence (ESC and one byte), a lone
// ESC at the end, or one byte (a UTF-8 character whole). A write that holds
// a bracketed paste is text, not keys: nil.
func splitKeys(b []byte) [][]byte {
	if bytes.Contains(b, []byte("\x1b[200~")) {
		return nil
	}
	var out [][]byte
	for len(b) > 0 {
		n := 1
		switch {
		case b[0] == 0x1b && len(b) > 1 && b[1] == '[':
			n = 2
			for n < len(b) && (b[n] < 0x40 || b[n] > 0x7e) {
				n++
			}
			n = min(n+1, len(b))
		case b[0] == 0x1b && len(b) > 2 && b[1] == 'O': // SS3: F1-F4, keypad arrows
			n = 3
		case b[0] == 0x1b && len(b) > 1:
			n = 2
			if b[1] == 0x1b { // Esc, then another key
				n = 1
			}
		case b[0] >= 0x80:
			_, n = utf8.DecodeRune(b)
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}
