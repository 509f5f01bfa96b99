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
)

// Hook names of the fusion rule's events: muster.<source>.<what>, so that
// the engine records their source (runstate.SourceOfHook).
const (
	HookKeyAnswered       = proto.ReservedHookPrefix + "keystroke.answered"
	HookKeyInterrupted    = proto.ReservedHookPrefix + "keystroke.interrupted"
	HookTranscriptTurnEnd = proto.ReservedHookPrefix + "transcript.turnEnded"
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
// (Config.CurrentRun).
type CurrentRun struct {
	RunID    string
	State    proto.RunState // the stored state: running, waiting…, or terminal
	Provider string
	// StartedAt is when the run started; zero when unknown.
	StartedAt time.Time
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
	keys    []byte // keystroke evidence still to be read by the provider
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
	if len(data) == 0 || len(data) > maxKeyInput || e.cfg.CurrentRun == nil {
		return
	}
	e.enqueue(fused{surface: surfaceID, keys: append([]byte(nil), data...), ev: Evidence{Source: runstate.SourceKeystroke, At: e.now()}})
}

func (e *Estimator) enqueue(f fused) {
	select {
	case e.fuse <- f:
	default:
		e.log.Warn("fusion evidence dropped: queue full", "surface_id", f.surface, "source", string(f.ev.Source))
	}
}

// fuseLoop applies queued evidence until ctx ends.
func (e *Estimator) fuseLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case f := <-e.fuse:
			e.apply(ctx, f)
		}
	}
}

// apply fuses one piece of evidence: a key is read by the provider of the
// run it is typed into, then the rule decides, then the event is recorded.
func (e *Estimator) apply(ctx context.Context, f fused) {
	var cur CurrentRun
	if e.cfg.CurrentRun != nil {
		cur = e.cfg.CurrentRun(f.surface)
	}
	ev := f.ev
	if f.keys != nil {
		kr, ok := all.As[provider.KeyReader](cur.Provider)
		if !ok || cur.RunID == "" {
			return
		}
		// One write may hold several keys (`muster send --keys Down
		// Enter`): the first one that does something is the evidence.
		effect, key := provider.KeyNone, []byte(nil)
		for _, k := range splitKeys(f.keys) {
			if effect = kr.Key(k, cur.State); effect != provider.KeyNone {
				key = k
				break
			}
		}
		switch effect {
		case provider.KeyAnswer:
			ev.Kind, ev.Hook = proto.KindRunning, HookKeyAnswered
			e.fastUntil.Store(ev.At.Add(fastFor).UnixNano())
			e.nudge()
			ev.Signal = fmt.Sprintf("%s typed at the %s", keyLabel(key), requestName(cur.State))
		case provider.KeyInterrupt:
			ev.Kind, ev.Hook = proto.KindInterrupted, HookKeyInterrupted
			ev.Signal = fmt.Sprintf("%s typed while %s", keyLabel(key), cur.State)
		default:
			return
		}
	}
	run, kind, ok := Fuse(ev, cur)
	if !ok {
		return
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
	if e.cfg.Emit == nil || prov == "" {
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
	if err := e.cfg.Emit(ctx, ev); err != nil {
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
