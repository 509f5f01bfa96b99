package native

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/termsignal"
)

// Activity states (seed 000, "Activity and attention"). The empty state
// means nothing is known: no signal yet, or the agent cleared its status.
const (
	Working   = provider.ActivityWorking   // OSC 9;4 progress shown, 7501 working, a working title
	Waiting   = provider.ActivityWaiting   // OSC 9;4 progress removed, 7501 idle/done, a ready title
	Attention = provider.ActivityAttention // OSC 9, 777, 99 notification, BEL, 7501 blocked, an action-required title
)

// Activity is what a pane's terminal signals say its program is doing.
type Activity struct {
	State string    `json:"state"`
	Since time.Time `json:"since"` // when State was entered
	// Evidence is the signal that set State, as `muster explain` shows it:
	// "OSC 9;4;3;", "OSC 7501;state=blocked:app=codex:kind=permission",
	// "BEL", "OSC 0;✋  Action Required (repo)" or "agent exited".
	Evidence string `json:"evidence,omitempty"`
	// Notification is the text of the request for attention (title: body
	// of a notification, "bell", "blocked (permission)", the title).
	Notification string `json:"notification,omitempty"`
	// Skipped notes the transcript files skipped as hostile while
	// following the pane's agent (a FIFO, a socket, a symbolic link or
	// its loop, a line over the size limit), newest last, for `muster
	// explain`.
	Skipped []string `json:"skipped,omitempty"`
	// Percent is the value (0..100) of the OSC 9;4 progress bar that says
	// working; nil when there is none (an indeterminate bar, any other
	// signal).
	Percent *int `json:"-"`
	// Recent lists the pane's last activity signals, oldest first, whether
	// or not they changed State (a program that sends both OSC 9;4 and OSC
	// 7501 shows both here); Estimator.Activity fills it.
	Recent []Seen `json:"recent,omitempty"`
}

// Seen is one activity signal of a pane.
type Seen struct {
	At       time.Time `json:"at"`
	Evidence string    `json:"evidence"`
}

// maxRecent bounds Activity.Recent.
const maxRecent = 8

// maxEvidence bounds Activity.Evidence and Activity.Notification in bytes.
const maxEvidence = 200

// activityTracker folds a pane's signals into its Activity. Not safe for
// concurrent use: the surface's sig lock guards it.
type activityTracker struct {
	cur  Activity
	bell termsignal.BellLimiter
	// strong is set once the current program sent OSC 9;4 or OSC 7501: it
	// reports its state through a protocol, so its titles are ignored.
	strong bool
	recent []Seen
}

// saw records an activity signal in Recent; a repeat of one already
// there moves it to the end with its new time, so a program that
// alternates two signals (Claude Code's OSC 9;4 updates) cannot push its
// rarer ones (OSC 7501) out of the list.
func (t *activityTracker) saw(ev string, now time.Time) {
	if i := slices.IndexFunc(t.recent, func(s Seen) bool { return s.Evidence == ev }); i >= 0 {
		t.recent = append(t.recent[:i], t.recent[i+1:]...)
	} else if len(t.recent) == maxRecent {
		t.recent = append(t.recent[:0], t.recent[1:]...)
	}
	t.recent = append(t.recent, Seen{At: now, Evidence: ev})
}

// AttentionRequest is one request for the user's attention made through a pane's
// terminal: an OSC 9, 777 or 99 notification, or a bell that the bell
// limiter let through. The daemon turns it into an attention item
// (events.Engine.Notify).
type AttentionRequest struct {
	Text     string    // "title: body" of a notification, or "bell"
	Evidence string    // the signal, as Activity.Evidence: "OSC 9;…", "BEL"
	At       time.Time // when the pane printed it
}

// apply folds sig, seen at now from a pane whose agent is provider ("" for
// none), into the activity. It reports whether the activity changed, and
// whether sig is a request for attention (a notification, or a bell the
// limiter lets through) even when the activity was already attention.
func (t *activityTracker) apply(provider string, sig termsignal.Signal, now time.Time) (changed, attention bool) {
	if sig.Kind == termsignal.KindNotify || sig.Kind == termsignal.KindBell {
		changed, attention = t.request(sig, now)
		if attention {
			t.saw(evidence(sig), now)
		}
		return changed, attention
	}
	changed = t.applyState(provider, sig, now)
	switch {
	case sig.Kind == termsignal.KindProgress, sig.Kind == termsignal.KindAgentStatus:
		t.saw(evidence(sig), now)
	case changed: // a title that moved the state
		t.saw(evidence(sig), now)
	}
	return changed, false
}

// request folds a notification or a bell.
func (t *activityTracker) request(sig termsignal.Signal, now time.Time) (changed, attention bool) {
	note := "bell"
	if sig.Kind == termsignal.KindBell {
		if !t.bell.Allow(now) {
			return false, false
		}
	} else {
		note = notificationText(sig.Title, sig.Body)
	}
	return t.set(Attention, note, evidence(sig), nil, now), true
}

func (t *activityTracker) applyState(provider string, sig termsignal.Signal, now time.Time) bool {
	var state, note string
	var percent *int
	switch sig.Kind {
	case termsignal.KindProgress:
		t.strong = true
		state = Working
		switch sig.Progress {
		case termsignal.ProgressRemove:
			state = Waiting
		case termsignal.ProgressNormal, termsignal.ProgressError, termsignal.ProgressPaused:
			if sig.Percent >= 0 {
				p := sig.Percent
				percent = &p
			}
		}
	case termsignal.KindAgentStatus:
		var ok bool
		if state, note, ok = agentStatusActivity(sig); !ok {
			return false
		}
		t.strong = true
	case termsignal.KindTitle:
		if t.strong || sig.OSC == 1 {
			return false
		}
		var ok bool
		if state, ok = TitleActivity(provider, sig.Title); !ok {
			return false
		}
		if state == Attention {
			note = clean(strings.TrimSpace(sig.Title))
		}
	default:
		return false
	}
	return t.set(state, note, evidence(sig), percent, now)
}

// set moves the activity to state; it reports whether anything changed.
// Repeating the current state keeps its Since; a new progress value is a
// change (the dashboard shows it), with its own evidence.
func (t *activityTracker) set(state, note, ev string, percent *int, now time.Time) bool {
	if state == t.cur.State && note == t.cur.Notification {
		if (percent == nil) == (t.cur.Percent == nil) && (percent == nil || *percent == *t.cur.Percent) {
			return false
		}
		t.cur.Percent, t.cur.Evidence = percent, ev
		return true
	}
	t.cur = Activity{State: state, Since: now, Evidence: ev, Notification: note, Percent: percent}
	return true
}

// reset forgets the activity of a program that is gone.
func (t *activityTracker) reset(why string, now time.Time) bool {
	t.strong = false
	if t.cur.State == "" {
		return false
	}
	t.cur = Activity{Since: now, Evidence: why}
	return true
}

// agentStatusActivity maps an OSC 7501 status (emitted by Codex):
// working → working; idle and done → waiting; blocked → attention;
// clear (the agent exited) → nothing known. Other states say nothing.
func agentStatusActivity(sig termsignal.Signal) (state, note string, ok bool) {
	switch sig.State {
	case "working":
		return Working, "", true
	case "idle", "done":
		return Waiting, "", true
	case "blocked":
		note = "blocked"
		if k := sig.Param("kind"); k != "" {
			note += " (" + clean(k) + ")"
		}
		return Attention, note, true
	case "clear":
		return "", "", true
	}
	return "", "", false
}

// TitleActivity reads a window title as the compatibility fallback of a
// provider (provider.TitleReader; research/real-cli REPORT.md §5). ok is
// false when the title says nothing for that provider, and always for
// providers whose titles carry no state (Claude Code's is a static "✳
// Claude Code").
func TitleActivity(prov, title string) (state string, ok bool) {
	r, ok := all.As[provider.TitleReader](prov)
	if !ok {
		return "", false
	}
	return r.TitleActivity(title)
}

// notificationText joins a notification's title and body.
func notificationText(title, body string) string {
	title, body = clean(strings.TrimSpace(title)), clean(strings.TrimSpace(body))
	switch {
	case title == "":
		return body
	case body == "":
		return title
	}
	return clip(title + ": " + body)
}

// evidence names the signal that set a state.
func evidence(sig termsignal.Signal) string {
	if sig.Kind == termsignal.KindBell {
		return "BEL"
	}
	return clip("OSC " + clean(strings.TrimRightFunc(sig.Raw, unicode.IsSpace)))
}

// clean drops control characters and invalid UTF-8 and bounds the length.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	return clip(s)
}

// clip cuts s to at most maxEvidence bytes on a rune boundary, marking a
// cut with "…".
func clip(s string) string {
	if len(s) <= maxEvidence {
		return s
	}
	i := maxEvidence
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
