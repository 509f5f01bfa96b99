package daemon

import (
	"github.com/musterhq/muster/internal/termsignal"
)

// statusAnswer is Muster's answer to OSC 7501;? (the Program Status
// Protocol's query): a reply whose data starts with '?' is what Claude
// Code 2.1.328 counts as support ("probe: OSC 7501 reply"), after which it
// reports its state with OSC 7501 (state=working|idle|blocked…,
// app=claude-code). Muster reads those statuses, so it answers for every
// pane, attached or not; the query never reaches a client's terminal.
const statusAnswer = "\x1b]7501;?\x07"

// paneScanner adapts the terminal-signal scanner to the pane's output path:
// it strips the sequences Muster interprets before the emulator sees them
// (which also keeps x/vt's 0x9C title bug away), reports the signals, and
// answers the program's OSC 7501 query (pane.Answerer).
type paneScanner struct {
	sc     *termsignal.Scanner
	buf    []byte
	onSigs func([]termsignal.Signal)
	answer bool
}

func newPaneScanner(onSigs func([]termsignal.Signal)) *paneScanner {
	return &paneScanner{sc: termsignal.New(), onSigs: onSigs}
}

func (s *paneScanner) Scan(p []byte) ([]byte, string, bool) {
	before := s.sc.Title()
	filtered, sigs := s.sc.Feed(p, s.buf[:0])
	s.buf = filtered
	for _, sig := range sigs {
		if sig.Kind == termsignal.KindStatusQuery {
			s.answer = true
		}
	}
	if len(sigs) > 0 && s.onSigs != nil {
		s.onSigs(sigs)
	}
	after := s.sc.Title()
	return filtered, after, after != before
}

// Answer implements pane.Answerer: one answer for the queries of a chunk.
func (s *paneScanner) Answer() []byte {
	if !s.answer {
		return nil
	}
	s.answer = false
	return []byte(statusAnswer)
}
