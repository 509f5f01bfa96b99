package termsignal

import (
	"fmt"
	"strings"
)

// Kind says what a Signal reports.
type Kind uint8

// The kinds of signal. The zero Kind is never reported.
const (
	KindTitle       Kind = iota + 1 // OSC 0, 1, 2: Title holds the new text
	KindCwd                         // OSC 7 and OSC 9;9: Host and Path
	KindProgress                    // OSC 9;4: Progress and Percent
	KindNotify                      // OSC 9, 777;notify, 99: Title and Body
	KindPrompt                      // OSC 133 and 633 A–D: Mark, ExitCode, Err
	KindAgentStatus                 // OSC 7501: State and Params
	KindBell                        // BEL in the ground state
	// KindStatusQuery is OSC 7501;? (Claude Code asks whether the terminal
	// reads agent statuses): Muster answers it, so it is stripped.
	KindStatusQuery
)

var kindNames = [...]string{
	KindTitle:       "title",
	KindCwd:         "cwd",
	KindProgress:    "progress",
	KindNotify:      "notify",
	KindPrompt:      "prompt",
	KindAgentStatus: "agent-status",
	KindBell:        "bell",
	KindStatusQuery: "status-query",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Progress is the state of an OSC 9;4 progress report. The values are the
// wire values of the sequence.
type Progress uint8

// Progress states, as numbered by ConEmu and Windows Terminal.
const (
	ProgressRemove        Progress = 0 // the bar is hidden: the work is over
	ProgressNormal        Progress = 1 // Percent is set
	ProgressError         Progress = 2 // Percent may be set
	ProgressIndeterminate Progress = 3 // busy, no Percent
	ProgressPaused        Progress = 4 // "warning" in Windows Terminal; Percent may be set
)

var progressNames = [...]string{"remove", "normal", "error", "indeterminate", "paused"}

func (p Progress) String() string {
	if int(p) < len(progressNames) {
		return progressNames[p]
	}
	return fmt.Sprintf("progress(%d)", uint8(p))
}

// Signal is one terminal signal found in a pane's output. Only the fields
// named for its Kind are set; the others are zero, except that Percent and
// ExitCode are -1 when absent.
type Signal struct {
	Kind Kind
	// OSC is the number of the OSC sequence that carried the signal (0, 1,
	// 2, 7, 9, 99, 133, 633, 777 or 7501), or -1 for a bell.
	OSC int

	// Title is the new title for KindTitle (OSC 1 sets only the icon name),
	// and the notification title for KindNotify (empty for OSC 9).
	Title string
	// Body is the notification text for KindNotify.
	Body string
	// ID is the kitty notification id (OSC 99; "0" when the sender gave none).
	ID string

	// Host and Path are the working directory for KindCwd. Path is
	// percent-decoded for file:// URLs; Host is empty for OSC 9;9 and for
	// file:///path.
	Host, Path string

	// Progress and Percent report OSC 9;4. Percent is 0..100, or -1 when the
	// sequence carried none (always so for remove and indeterminate).
	Progress Progress
	Percent  int

	// Mark is 'A' (prompt start), 'B' (input start), 'C' (output start) or
	// 'D' (command finished) for KindPrompt. ExitCode is the exit status of
	// a D mark masked to 0..255, or -1 when the shell sent none (a cancelled
	// command). Err is the value of an err= option; a numeric err= also sets
	// ExitCode, as it takes precedence.
	Mark     byte
	ExitCode int
	Err      string

	// State is the state= value of an OSC 7501 agent status: working, idle,
	// done, blocked, clear, or whatever the agent sends.
	State string

	// Params holds the options of the sequence: the ':'-separated pairs of
	// OSC 7501 and the OSC 99 metadata, or the ';'-separated fields after
	// the mark of OSC 133/633. Param looks one up.
	Params string

	// Raw is the payload of the sequence as received, without ESC ] and the
	// terminator (e.g. "9;4;3;"); for a chunked OSC 99 notification, the
	// last chunk. It is the evidence shown by `muster explain`. Empty for a
	// bell.
	Raw string
}

// Param returns the value of key in Params ("" when absent): for example
// Param("app") of "state=blocked:app=codex:kind=permission" is "codex", and
// Param("aid") of OSC 133;A;aid=7 is "7".
func (s Signal) Param(key string) string {
	sep := ":"
	if s.Kind == KindPrompt {
		sep = ";"
	}
	for f := range strings.SplitSeq(s.Params, sep) {
		if k, v, ok := strings.Cut(f, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// String formats the signal on one line, for logs, tests and explain output.
func (s Signal) String() string {
	switch s.Kind {
	case KindTitle:
		return fmt.Sprintf("title[%d] %q", s.OSC, s.Title)
	case KindCwd:
		return fmt.Sprintf("cwd[%d] host=%q %q", s.OSC, s.Host, s.Path)
	case KindProgress:
		if s.Percent >= 0 {
			return fmt.Sprintf("progress[%d] %s %d%%", s.OSC, s.Progress, s.Percent)
		}
		return fmt.Sprintf("progress[%d] %s", s.OSC, s.Progress)
	case KindNotify:
		if s.OSC == 99 {
			return fmt.Sprintf("notify[%d] id=%q %q %q", s.OSC, s.ID, s.Title, s.Body)
		}
		return fmt.Sprintf("notify[%d] %q %q", s.OSC, s.Title, s.Body)
	case KindPrompt:
		str := fmt.Sprintf("prompt[%d] %c", s.OSC, s.Mark)
		if s.Mark == 'D' {
			str += fmt.Sprintf(" exit=%d", s.ExitCode)
			if s.Err != "" {
				str += fmt.Sprintf(" err=%q", s.Err)
			}
		}
		if s.Params != "" {
			str += fmt.Sprintf(" params=%q", s.Params)
		}
		return str
	case KindAgentStatus:
		return fmt.Sprintf("agent-status[%d] %q params=%q", s.OSC, s.State, s.Params)
	case KindBell:
		return "bell"
	case KindStatusQuery:
		return fmt.Sprintf("status-query[%d] %q", s.OSC, s.Raw)
	}
	return s.Kind.String()
}
