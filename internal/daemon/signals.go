package daemon

import (
	"github.com/musterhq/muster/internal/termsignal"
)

// paneScanner adapts the terminal-signal scanner to the pane's output path:
// it strips the sequences Muster interprets before the emulator sees them
// (which also keeps x/vt's 0x9C title bug away) and reports the signals.
type paneScanner struct {
	sc     *termsignal.Scanner
	buf    []byte
	onSigs func([]termsignal.Signal)
}

func newPaneScanner(onSigs func([]termsignal.Signal)) *paneScanner {
	return &paneScanner{sc: termsignal.New(), onSigs: onSigs}
}

func (s *paneScanner) Scan(p []byte) ([]byte, string, bool) {
	before := s.sc.Title()
	filtered, sigs := s.sc.Feed(p, s.buf[:0])
	s.buf = filtered
	if len(sigs) > 0 && s.onSigs != nil {
		s.onSigs(sigs)
	}
	after := s.sc.Title()
	return filtered, after, after != before
}
