package gemini

import (
	"regexp"
	"strings"

	"github.com/musterhq/muster/internal/provider"
)

var _ provider.DialogReader = Provider{}

// execQuestion is the question of Gemini CLI's shell approval: "Allow
// execution of [Shell]?".
var execQuestion = regexp.MustCompile(`^Allow execution of \[[^\]]+\]\?$`)

// dialogOption is one option line in the dialog's box: the cursor ● on
// the highlighted one, the number, a period and the label.
var dialogOption = regexp.MustCompile(`^(●\s*)?([1-9])\.\s+(\S.*?)$`)

// Dialog implements provider.DialogReader for Gemini CLI 0.61.0's shell
// approval, as captured in a Muster pane (testdata/dialog):
//
//	╭──────────────────────────────────────────────╮
//	│ ? Shell  touch approved.txt                  │
//	│ ╭──────────────────────────────────────────╮ │
//	│ │ touch approved.txt                       │ │
//	│ ╰──────────────────────────────────────────╯ │
//	│ Allow execution of [Shell]?                  │
//	│                                              │
//	│ ● 1. Allow once                              │
//	│   2. Allow for this session                  │
//	│   3. No, suggest changes (esc)               │
//	╰──────────────────────────────────────────────╯
//
// (with "Redirection detected. To auto-accept, press Shift+Tab" under
// the question when the command redirects).
// The box is the last thing on the screen while it waits (the input box
// is gone). A digit picks its option at once whatever is highlighted
// (measured on the real CLI: 1 ran the command, 2 ran it and the next
// command of the same name ran unasked, 3 refused it; Esc refuses too),
// so each option's keys are its number. A screen is read as the dialog
// only when all of it is there: the box closing the screen, the pending
// tool's "?" header at its top, the question, and the numbered options
// with the cursor on one of them ending the box. A numbered list the
// model wrote (testdata/dialog/list-reply.txt) has none of the box. The
// file edit ("Apply this change?") and MCP dialogs are not read: they
// were not captured.
func (Provider) Dialog(screen string) (provider.Dialog, bool) {
	inner, ok := lastBox(strings.Split(strings.TrimRight(screen, "\n "), "\n"))
	if !ok || len(inner) < 4 || !strings.HasPrefix(inner[0], "? ") {
		return provider.Dialog{}, false
	}
	first := len(inner)
	for first > 0 && dialogOption.MatchString(inner[first-1]) {
		first--
	}
	options := inner[first:]
	if len(options) < 2 {
		return provider.Dialog{}, false
	}
	q := first - 1
	// Under the question: a blank row, and for a command with a
	// redirection Gemini's warning ("Redirection detected. To
	// auto-accept, press Shift+Tab").
	for q > 0 && (inner[q] == "" || strings.HasPrefix(inner[q], "Redirection detected.")) {
		q--
	}
	if q < 1 || !execQuestion.MatchString(inner[q]) {
		return provider.Dialog{}, false
	}
	d := provider.Dialog{Question: inner[q], Subject: boxedCommand(inner[1:q])}
	cursors := 0
	for i, l := range options {
		m := dialogOption.FindStringSubmatch(l)
		if m[2] != string(rune('1'+i)) {
			return provider.Dialog{}, false
		}
		if m[1] != "" {
			cursors++
		}
		label := strings.TrimSuffix(m[3], " (esc)")
		d.Options = append(d.Options, provider.DialogOption{Label: label, Answer: classify(label), Keys: m[2]})
	}
	if cursors != 1 {
		return provider.Dialog{}, false
	}
	return d, true
}

// lastBox returns the text inside the rounded box that ends the screen,
// one entry per row without its side borders, trimmed; ok is false when
// the screen does not end with a whole box.
func lastBox(lines []string) (inner []string, ok bool) {
	bottom := len(lines) - 1
	if bottom < 0 || !isRule(lines[bottom], "╰", "╯") {
		return nil, false
	}
	for i := bottom - 1; i >= 0; i-- {
		t := strings.TrimSpace(lines[i])
		if isRule(t, "╭", "╮") {
			return inner, true
		}
		body, found := strings.CutPrefix(t, "│")
		if !found {
			return nil, false
		}
		if body, found = strings.CutSuffix(body, "│"); !found {
			return nil, false
		}
		inner = append([]string{strings.TrimSpace(body)}, inner...)
	}
	return nil, false
}

// isRule says whether line is a box's top or bottom edge: the corners
// with only ─ between them.
func isRule(line, left, right string) bool {
	t := strings.TrimSpace(line)
	mid, ok := strings.CutPrefix(t, left)
	if !ok {
		return false
	}
	mid, ok = strings.CutSuffix(mid, right)
	return ok && mid != "" && strings.Trim(mid, "─") == ""
}

// boxedCommand is the command the dialog shows in its inner box, its
// rows (wrapped or its own lines) joined by newlines; "" when there is no
// inner box.
func boxedCommand(rows []string) string {
	for len(rows) > 0 && rows[len(rows)-1] == "" {
		rows = rows[:len(rows)-1]
	}
	inner, ok := lastBox(rows)
	if !ok {
		return ""
	}
	var out []string
	for _, r := range inner {
		if r != "" {
			out = append(out, r)
		}
	}
	return strings.Join(out, "\n")
}

// classify sorts an option: provider.ClassifyAnswer, and Gemini's
// permanent approval ("Allow this command for all future sessions",
// shown when the user's settings allow it).
func classify(label string) string {
	if a := provider.ClassifyAnswer(label); a != "" {
		return a
	}
	if strings.HasPrefix(label, "Allow ") && strings.HasSuffix(label, "for all future sessions") {
		return provider.AnswerAlways
	}
	return ""
}
