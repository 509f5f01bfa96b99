package termsignal

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// dispatch interprets the OSC collected in buf ("<num>;<payload>"), which
// ended with ST when st is set and with BEL otherwise. Sequences are
// stripped unless they are queries that we let through to whoever answers
// terminal queries (OSC 99 with p=?). A client filter (NewClientFilter)
// strips only what Muster consumes and reports nothing.
func (s *Scanner) dispatch(st bool) {
	payload := s.buf[s.ndig+1:]
	if s.client {
		if !consumed(s.num, payload) {
			s.emitCollected(st)
		}
		return
	}
	switch s.num {
	case 7501:
		if len(payload) > 0 && payload[0] == '?' {
			s.sigs = append(s.sigs, Signal{Kind: KindStatusQuery, OSC: 7501, Percent: -1, ExitCode: -1, Raw: s.intern()})
			return
		}
	case 99:
		if kittyQuery(payload) {
			s.emitCollected(st)
			return
		}
	}

	raw := s.intern()
	p := raw[s.ndig+1:]
	sig := Signal{OSC: s.num, Percent: -1, ExitCode: -1, Raw: raw}
	switch s.num {
	case 0, 1, 2:
		sig.Kind = KindTitle
		sig.Title = p
		if s.num != 1 {
			s.title = p
		}
	case 7:
		host, path, ok := parseCwd(p)
		if !ok {
			return
		}
		sig.Kind, sig.Host, sig.Path = KindCwd, host, path
	case 9:
		if !decodeOSC9(p, &sig) {
			return
		}
	case 777:
		ext, rest, _ := strings.Cut(p, ";")
		if ext != "notify" {
			return // VTE precmd/preexec and other extensions
		}
		sig.Kind = KindNotify
		sig.Title, sig.Body, _ = strings.Cut(rest, ";")
		if sig.Title == "" && sig.Body == "" {
			return
		}
	case 99:
		if !s.kitty(p, &sig) {
			return
		}
	case 133, 633:
		if !decodePrompt(p, &sig) {
			return
		}
	case 7501:
		if p == "" {
			return
		}
		sig.Kind = KindAgentStatus
		sig.Params = p
		sig.State = sig.Param("state")
	default:
		return
	}
	s.sigs = append(s.sigs, sig)
}

// intern returns buf as a string, reusing the string of a recent identical
// sequence: agents repeat a few titles many times a second (Codex cycles ten
// spinner frames), and each would otherwise cost an allocation.
func (s *Scanner) intern() string {
	for _, r := range s.recent {
		if r == string(s.buf) {
			return r
		}
	}
	r := string(s.buf)
	if len(r) <= maxInterned {
		s.recent[s.recentNext] = r
		s.recentNext = (s.recentNext + 1) % len(s.recent)
	}
	return r
}

// decodeOSC9 reads an OSC 9 payload. One that matches ^[0-9]+(;|$) is a
// ConEmu command: 9;4 is progress, 9;9 the working directory, the others are
// ignored. Anything else is an iTerm2 notification.
func decodeOSC9(p string, sig *Signal) bool {
	n := 0
	for n < len(p) && isDigit(p[n]) {
		n++
	}
	if n == 0 || (n < len(p) && p[n] != ';') {
		if p == "" {
			return false
		}
		sig.Kind = KindNotify
		sig.Body = p
		return true
	}
	cmd, rest, _ := strings.Cut(p, ";")
	switch cmd {
	case "4":
		st, pr, _ := strings.Cut(rest, ";")
		if len(st) != 1 || st[0] < '0' || st[0] > '4' {
			return false
		}
		sig.Kind = KindProgress
		sig.Progress = Progress(st[0] - '0')
		switch sig.Progress {
		case ProgressNormal, ProgressError, ProgressPaused:
			pr, _, _ = strings.Cut(pr, ";")
			sig.Percent = parsePercent(pr)
		}
		return true
	case "9":
		path := rest
		if len(path) >= 2 && path[0] == '"' && path[len(path)-1] == '"' {
			path = path[1 : len(path)-1]
		}
		if path == "" {
			return false
		}
		sig.Kind = KindCwd
		sig.Path = path
		return true
	}
	return false
}

// parsePercent parses a decimal percentage and clamps it to 0..100; it
// returns -1 for an empty or malformed value.
func parsePercent(s string) int {
	if s == "" {
		return -1
	}
	v := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return -1
		}
		if v < 100 {
			v = v*10 + int(s[i]-'0')
		}
	}
	return min(v, 100)
}

// parseCwd reads an OSC 7 payload: file://host/path (percent-encoded),
// kitty-shell-cwd://host/path (not encoded) or a bare absolute path.
func parseCwd(p string) (host, path string, ok bool) {
	switch {
	case strings.HasPrefix(p, "/"):
		return "", p, true
	case hasPrefixFold(p, "file://"):
		host, path, ok = splitHostPath(p[len("file://"):])
		return host, percentDecode(path), ok
	case strings.HasPrefix(p, "kitty-shell-cwd://"):
		return splitHostPath(p[len("kitty-shell-cwd://"):])
	}
	return "", "", false
}

func splitHostPath(s string) (host, path string, ok bool) {
	i := strings.IndexByte(s, '/')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i:], true
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// percentDecode decodes %XX escapes; a malformed escape is kept as it is.
func percentDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b.WriteByte(hi<<4 | lo)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// decodePrompt reads an OSC 133 or 633 payload: a mark letter, then
// ';'-separated fields. For D the first numeric field is the exit code, and
// a numeric err= option takes precedence over it.
func decodePrompt(p string, sig *Signal) bool {
	mark, rest, _ := strings.Cut(p, ";")
	if len(mark) != 1 || mark[0] < 'A' || mark[0] > 'D' {
		return false
	}
	sig.Kind = KindPrompt
	sig.Mark = mark[0]
	sig.Params = rest
	if sig.Mark != 'D' {
		return true
	}
	for i, more := 0, true; more; i++ {
		var f string
		f, rest, more = strings.Cut(rest, ";")
		if k, v, ok := strings.Cut(f, "="); ok {
			if k == "err" {
				sig.Err = v
				if code, ok := exitCode(v); ok {
					sig.ExitCode = code
				}
			}
			continue
		}
		if i == 0 {
			if code, ok := exitCode(f); ok && sig.Err == "" {
				sig.ExitCode = code
			}
		}
	}
	return true
}

// exitCode parses a decimal integer and masks it to 0..255, as a shell
// reports exit statuses (so -1 is 255 and 256 is 0), without overflowing.
func exitCode(s string) (int, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		v = (v*10 + int(s[i]-'0')) & 0xff
	}
	if neg {
		v = (256 - v) & 0xff
	}
	return v, true
}

// Bounds on kitty notifications still being assembled.
const (
	maxNotes     = 8        // ids assembled at once; the oldest is dropped
	maxNoteBytes = 16 << 10 // title plus body per id; the rest is dropped
)

// note is a kitty OSC 99 notification whose chunks are still arriving.
type note struct {
	id          string
	title, body []byte
}

// kittyMeta is the parsed metadata of one OSC 99 chunk.
type kittyMeta struct {
	id     string
	done   bool
	part   string
	base64 bool
}

func parseKittyMeta(meta string) kittyMeta {
	m := kittyMeta{id: "0", done: true, part: "title"}
	for kv := range strings.SplitSeq(meta, ":") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "i":
			m.id = v
		case "d":
			m.done = v != "0"
		case "p":
			m.part = v
		case "e":
			m.base64 = v == "1"
		}
	}
	return m
}

// kittyQuery reports whether an OSC 99 payload is a p=? capability query.
func kittyQuery(payload []byte) bool {
	meta, _, _ := strings.Cut(string(payload), ";") // no allocation: compared only
	return parseKittyMeta(meta).part == "?"
}

// kitty adds one OSC 99 chunk ("<metadata>;<payload>") to its notification,
// and fills sig when the notification is complete (d=1, the default).
func (s *Scanner) kitty(p string, sig *Signal) bool {
	meta, payload, _ := strings.Cut(p, ";")
	m := parseKittyMeta(meta)
	if m.part == "close" {
		s.dropNote(m.id)
		return false
	}
	n := s.note(m.id)
	if m.part == "title" || m.part == "body" {
		text := []byte(payload)
		if m.base64 {
			text = decodeBase64(payload)
		}
		dst := &n.title
		if m.part == "body" {
			dst = &n.body
		}
		room := maxNoteBytes - len(n.title) - len(n.body)
		if len(text) > room {
			text = trimPartialRune(text[:room])
		}
		*dst = append(*dst, text...)
	}
	if !m.done {
		return false
	}
	title, body := string(n.title), string(n.body)
	s.dropNote(m.id)
	if title == "" && body == "" {
		return false
	}
	sig.Kind = KindNotify
	sig.ID, sig.Title, sig.Body, sig.Params = m.id, title, body, meta
	return true
}

// note returns the notification being assembled for id, starting one (and
// dropping the oldest when maxNotes are open) if there is none.
func (s *Scanner) note(id string) *note {
	for i := range s.notes {
		if s.notes[i].id == id {
			return &s.notes[i]
		}
	}
	if len(s.notes) >= maxNotes {
		s.notes = append(s.notes[:0], s.notes[1:]...)
	}
	s.notes = append(s.notes, note{id: id})
	return &s.notes[len(s.notes)-1]
}

func (s *Scanner) dropNote(id string) {
	for i := range s.notes {
		if s.notes[i].id == id {
			s.notes = append(s.notes[:i], s.notes[i+1:]...)
			return
		}
	}
}

// decodeBase64 decodes standard base64 with or without padding; a chunk
// that is not base64 decodes to nothing.
func decodeBase64(s string) []byte {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b
	}
	if b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "=")); err == nil {
		return b
	}
	return nil
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b, left
// there by truncation.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

// consumed reports whether an OSC is Muster's own, never passed on to an
// attached client's terminal: agent statuses and their query (the daemon
// answers it), OSC 9;4 progress, and notifications (OSC 9, 777;notify,
// OSC 99 but its p=? query), which become activity and attention items.
// Titles, the working directory, prompt marks, other ConEmu commands and
// everything else pass.
func consumed(num int, payload []byte) bool {
	switch num {
	case 7501:
		return true
	case 9:
		n := 0
		for n < len(payload) && isDigit(payload[n]) {
			n++
		}
		if n == 0 || (n < len(payload) && payload[n] != ';') {
			return len(payload) > 0 // a notification
		}
		return string(payload[:n]) == "4"
	case 777:
		return strings.HasPrefix(string(payload), "notify;")
	case 99:
		return !kittyQuery(payload)
	}
	return false
}
