package termsignal

import "bytes"

// MaxOSC is the longest OSC sequence the scanner collects, counted from the
// OSC number to the terminator. A longer sequence that we interpret is
// stripped whole and reports nothing; the scanner never holds more than this.
const MaxOSC = 64 << 10

const (
	esc = 0x1b
	bel = 0x07
	can = 0x18
	sub = 0x1a

	// maxNumDigits bounds the OSC number; 7501 is the longest we interpret.
	maxNumDigits = 6
	// maxDepth bounds nested tmux passthrough wrappers.
	maxDepth = 4
	// maxInterned is the longest OSC payload kept for reuse by intern.
	maxInterned = 256
)

const tmuxIntro = "tmux;"

type state uint8

const (
	stGround     state = iota
	stEsc              // ESC seen and held back
	stOscNum           // ESC ] and the digits of the number, held in buf
	stOscCollect       // an OSC we interpret, collected in buf
	stOscDiscard       // an interpreted OSC longer than MaxOSC, or one with no ';'
	stOscEsc           // ESC inside a collected or discarded OSC
	stOscPass          // an OSC we pass through, already emitted
	stDcsIntro         // ESC P and a prefix of "tmux;", held back
	stStrPass          // DCS, APC, PM or SOS passed through, already emitted
)

// Scanner finds terminal signals in a pane's output stream and strips the
// OSC sequences it interprets. It is a byte-level state machine: a stream
// may be split anywhere between calls to Feed and gives the same output and
// signals. Its memory is bounded by MaxOSC plus the pending kitty
// notifications (8 ids of at most 16 KiB). A Scanner is not safe for
// concurrent use; each pane owns one.
type Scanner struct {
	st   state
	num  int  // the OSC number
	ndig int  // digits in the OSC number
	keep bool // stOscEsc: the OSC was being collected (not discarded)

	intro int // bytes of tmuxIntro matched in stDcsIntro

	// depth is the number of open tmux passthrough wrappers; layerEsc[i]
	// says whether wrapper i has seen an ESC whose meaning the next byte
	// decides (ESC ESC is a literal ESC, ESC \ ends the wrapper).
	depth    int
	layerEsc [maxDepth]bool

	buf   []byte // the OSC being collected: number, ';', payload
	out   []byte
	sigs  []Signal
	one   [1]byte
	title string
	notes []note

	recent     [16]string // recently seen OSC payloads, see intern
	recentNext int

	// client marks a client filter (NewClientFilter).
	client bool
}

// New returns a Scanner in the ground state.
func New() *Scanner {
	return &Scanner{}
}

// NewClientFilter returns a Scanner for the stream an attached client's
// terminal gets: it strips only the sequences Muster consumes (agent
// statuses and their query, OSC 9;4 progress, notifications; see consumed)
// and passes everything else, titles and prompt marks included, as the
// program wrote it (tmux passthrough comes out unwrapped). Feed reports no
// signals.
func NewClientFilter() *Scanner {
	return &Scanner{client: true}
}

// Title returns the window title most recently set by OSC 0 or OSC 2 ("" if
// none). The scanner strips titles from the stream, so the pane renders this
// into attach snapshots itself (see AppendTitle).
func (s *Scanner) Title() string { return s.title }

// Feed scans the next chunk p of the stream. It appends to out the bytes to
// hand on to the emulator and attached clients, and returns that slice and
// the signals found in p, in stream order.
//
// out must not overlap p: bytes held back at the end of one chunk (at most
// a few bytes of an escape sequence prefix, or a query being checked) are
// written out during a later call. Pass buf[:0] to reuse a buffer; filtered
// is never longer than len(out) plus len(p) plus the bytes held back from
// earlier calls. The returned sigs slice is owned by the Scanner and valid
// only until the next call to Feed or Flush.
func (s *Scanner) Feed(p, out []byte) (filtered []byte, sigs []Signal) {
	s.out = out
	s.sigs = s.sigs[:0]
	for len(p) > 0 {
		if s.depth == 0 {
			p = p[s.machine(p):]
			continue
		}
		// Inside a tmux wrapper every byte goes through the unwrapping
		// layers first. Only ESC, CAN and SUB mean anything to them, so runs
		// of other bytes go straight to the machine.
		if !s.layerPending() {
			k := indexLayerSpecial(p)
			if k < 0 {
				k = len(p)
			}
			if k > 0 {
				p = p[s.machine(p[:k]):]
				continue
			}
		}
		s.layerByte(p[0])
		p = p[1:]
	}
	filtered, sigs = s.out, s.sigs
	s.out = nil
	return filtered, sigs
}

// Flush ends the stream (PTY end of file): it appends to out the bytes held
// back that would have passed through, drops a partial sequence that would
// have been stripped, and returns the scanner to the ground state. Pending
// kitty notifications and the title are kept.
func (s *Scanner) Flush(out []byte) []byte {
	switch s.st {
	case stEsc:
		out = append(out, esc)
	case stOscNum:
		if !interpreted(s.num, s.ndig) {
			out = append(out, esc, ']')
			out = append(out, s.buf...)
		}
	case stDcsIntro:
		out = append(out, esc, 'P')
		out = append(out, tmuxIntro[:s.intro]...)
	}
	s.st = stGround
	s.depth = 0
	s.layerEsc = [maxDepth]bool{}
	s.buf = s.buf[:0]
	s.sigs = s.sigs[:0]
	return out
}

func (s *Scanner) layerPending() bool {
	for i := range s.depth {
		if s.layerEsc[i] {
			return true
		}
	}
	return false
}

// layerByte passes one raw byte through the open tmux wrappers, outermost
// first, and hands what comes out to the machine.
func (s *Scanner) layerByte(b byte) {
	for i := 0; i < s.depth; i++ {
		if s.layerEsc[i] {
			s.layerEsc[i] = false
			switch b {
			case esc: // ESC ESC: a literal ESC for the next level
				continue
			case '\\': // ESC \: wrapper i ends, and all nested in it
				s.depth = i
				return
			default: // ESC x: the wrapper is broken off; ESC x is a new escape
				s.depth = i
				s.feedOne(esc)
				s.feedOne(b)
				return
			}
		}
		switch b {
		case esc:
			s.layerEsc[i] = true
			return
		case can, sub: // abort every wrapper; the machine aborts too
			s.depth = i
			s.feedOne(b)
			return
		}
	}
	s.feedOne(b)
}

func (s *Scanner) feedOne(b byte) {
	s.one[0] = b
	s.machine(s.one[:])
}

// machine runs the state machine over p, which has already been unwrapped.
// It returns how many bytes it consumed: all of p, or fewer when a tmux
// wrapper opened (the rest of p must go through the new layer).
func (s *Scanner) machine(p []byte) int {
	i := 0
	for i < len(p) {
		switch s.st {
		case stGround:
			rest := p[i:]
			j := bytes.IndexByte(rest, esc)
			seg := rest
			if j >= 0 {
				seg = rest[:j]
			}
			for {
				k := bytes.IndexByte(seg, bel)
				if k < 0 {
					break
				}
				s.out = append(s.out, seg[:k+1]...)
				if !s.client {
					s.sigs = append(s.sigs, Signal{Kind: KindBell, OSC: -1, Percent: -1, ExitCode: -1})
				}
				seg = seg[k+1:]
			}
			s.out = append(s.out, seg...)
			if j < 0 {
				return len(p)
			}
			i += j + 1
			s.st = stEsc

		case stEsc:
			b := p[i]
			i++
			switch b {
			case ']':
				s.st = stOscNum
				s.buf = s.buf[:0]
				s.num, s.ndig = 0, 0
			case 'P':
				s.st = stDcsIntro
				s.intro = 0
			case esc: // the first ESC is an escape of its own
				s.out = append(s.out, esc)
			case '_', '^', 'X': // APC, PM, SOS: strings that end only on ST
				s.out = append(s.out, esc, b)
				s.st = stStrPass
			default:
				s.out = append(s.out, esc, b)
				s.st = stGround
			}

		case stOscNum:
			b := p[i]
			i++
			switch {
			case b >= '0' && b <= '9' && s.ndig < maxNumDigits:
				s.num = s.num*10 + int(b-'0')
				s.ndig++
				s.buf = append(s.buf, b)
			case interpreted(s.num, s.ndig) && b == ';':
				s.buf = append(s.buf, b)
				s.st = stOscCollect
			case interpreted(s.num, s.ndig) && isOscEnd(b) && !s.client:
				// A number we interpret but no ';': strip, report nothing.
				s.st = stGround
				if b == esc {
					s.st = stOscEsc
					s.keep = false
				}
			default:
				s.out = append(s.out, esc, ']')
				s.out = append(s.out, s.buf...)
				s.st = stOscPass
				i-- // b belongs to the passed-through OSC
			}

		case stOscCollect, stOscDiscard:
			rest := p[i:]
			k := indexOscEnd(rest)
			body := rest
			if k >= 0 {
				body = rest[:k]
			}
			if s.st == stOscCollect {
				if len(s.buf)+len(body) > MaxOSC {
					s.buf = s.buf[:0]
					s.st = stOscDiscard
				} else {
					s.buf = append(s.buf, body...)
				}
			}
			if k < 0 {
				return len(p)
			}
			i += k + 1
			collecting := s.st == stOscCollect
			switch rest[k] {
			case bel:
				s.st = stGround
				if collecting {
					s.dispatch(false)
				}
			case esc:
				s.st = stOscEsc
				s.keep = collecting
			default: // CAN, SUB: the sequence is aborted and stripped
				s.st = stGround
			}

		case stOscEsc:
			if p[i] == '\\' {
				i++
				s.st = stGround
				if s.keep {
					s.dispatch(true)
				}
				continue
			}
			// ESC x aborts the OSC; x starts a new escape.
			s.st = stEsc

		case stOscPass:
			rest := p[i:]
			k := indexOscEnd(rest)
			if k < 0 {
				s.out = append(s.out, rest...)
				return len(p)
			}
			i += k + 1
			if rest[k] == esc {
				s.out = append(s.out, rest[:k]...)
				s.st = stEsc // ESC \ passes as is; ESC x starts a new escape
			} else {
				s.out = append(s.out, rest[:k+1]...)
				s.st = stGround
			}

		case stDcsIntro:
			b := p[i]
			if b == tmuxIntro[s.intro] {
				i++
				s.intro++
				if s.intro < len(tmuxIntro) {
					continue
				}
				if s.depth < maxDepth {
					s.layerEsc[s.depth] = false
					s.depth++
					s.st = stGround
					return i
				}
				s.out = append(s.out, esc, 'P')
				s.out = append(s.out, tmuxIntro...)
				s.st = stStrPass
				continue
			}
			s.out = append(s.out, esc, 'P')
			s.out = append(s.out, tmuxIntro[:s.intro]...)
			s.st = stStrPass // b belongs to the DCS

		case stStrPass:
			rest := p[i:]
			k := indexStrEnd(rest)
			if k < 0 {
				s.out = append(s.out, rest...)
				return len(p)
			}
			i += k + 1
			if rest[k] == esc {
				s.out = append(s.out, rest[:k]...)
				s.st = stEsc
			} else {
				s.out = append(s.out, rest[:k+1]...)
				s.st = stGround
			}
		}
	}
	return len(p)
}

// interpreted reports whether OSC number num is one the scanner collects.
func interpreted(num, ndig int) bool {
	if ndig == 0 {
		return false
	}
	switch num {
	case 0, 1, 2, 7, 9, 99, 133, 633, 777, 7501:
		return true
	}
	return false
}

// isOscEnd reports whether b ends or aborts an OSC string.
func isOscEnd(b byte) bool {
	return b == bel || b == esc || b == can || b == sub
}

// indexOscEnd returns the index of the first BEL, ESC, CAN or SUB in p, or -1.
func indexOscEnd(p []byte) int {
	for i, b := range p {
		if b < 0x1c && isOscEnd(b) {
			return i
		}
	}
	return -1
}

// indexStrEnd returns the index of the first ESC, CAN or SUB in p, or -1.
func indexStrEnd(p []byte) int {
	for i, b := range p {
		if b < 0x1c && (b == esc || b == can || b == sub) {
			return i
		}
	}
	return -1
}

// indexLayerSpecial returns the index of the first ESC, CAN or SUB in p, or -1.
func indexLayerSpecial(p []byte) int { return indexStrEnd(p) }

// emitCollected passes the collected OSC through unchanged (a query we
// do not answer), with the terminator it came with.
func (s *Scanner) emitCollected(st bool) {
	s.out = append(s.out, esc, ']')
	s.out = append(s.out, s.buf...)
	if st {
		s.out = append(s.out, esc, '\\')
	} else {
		s.out = append(s.out, bel)
	}
}
