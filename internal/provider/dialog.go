package provider

import (
	"regexp"
	"strings"
)

// DialogReader is a provider whose dialogs (a permission request, a
// question with options) can be read off its pane's screen, with the keys
// that pick each answer: the attention drawer of `muster serve` offers
// them as buttons and, at the click, reads the screen again to check the
// dialog is still the one the user saw.
type DialogReader interface {
	Provider
	// Dialog reads the dialog that waits at the bottom of screen (the
	// pane's text, one line per row, no escape sequences); ok is false
	// when none does. It must not guess: a screen it does not recognize
	// has no dialog.
	Dialog(screen string) (d Dialog, ok bool)
}

// Dialog is a dialog an agent shows, as its own words.
type Dialog struct {
	// Question is the dialog's question ("Do you want to proceed?").
	Question string
	// Subject is what the question is about: the command, the file, as
	// the dialog shows it ("" when it shows none).
	Subject string
	Options []DialogOption
}

// DialogOption is one answer a dialog offers.
type DialogOption struct {
	// Label is the option's text as shown, without its number or key hint.
	Label string
	// Answer classifies the option: AnswerOnce, AnswerAlways, AnswerDeny,
	// or "" for any other (a question's option, a mode switch).
	Answer string
	// Keys are the bytes that pick the option, whatever is highlighted.
	Keys string
}

// Answer classes of a DialogOption.
const (
	AnswerOnce   = "once"   // approve this request only
	AnswerAlways = "always" // approve it and what is like it from now on (the session, the project)
	AnswerDeny   = "deny"   // refuse it
)

// numberedOption is one line of a numbered option list: an optional
// cursor, the number, a period and the label.
var numberedOption = regexp.MustCompile(`^\s*(?:[❯›>]\s*)?([1-9])\.\s+(\S.*?)\s*$`)

// NumberedOptions finds the last run of consecutive numbered option lines
// (1., 2., … in order) in lines, with the index of its first and last
// line; ok is false when there is none of at least two options.
func NumberedOptions(lines []string) (labels []string, first, last int, ok bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		m := numberedOption.FindStringSubmatch(lines[i])
		if m == nil || m[1] != "1" {
			continue
		}
		labels = labels[:0]
		j := i
		for ; j < len(lines); j++ {
			m := numberedOption.FindStringSubmatch(lines[j])
			if m == nil {
				break
			}
			if m[1] != string(rune('1'+len(labels))) {
				break
			}
			labels = append(labels, m[2])
		}
		if len(labels) >= 2 {
			return labels, i, j - 1, true
		}
	}
	return nil, 0, 0, false
}

// ClassifyAnswer sorts an approval dialog's option by its words.
func ClassifyAnswer(label string) string {
	l := strings.ToLower(label)
	switch {
	case l == "no" || strings.HasPrefix(l, "no,") || strings.HasPrefix(l, "no ") || strings.HasPrefix(l, "deny") || strings.HasPrefix(l, "reject"):
		return AnswerDeny
	case strings.Contains(l, "don't ask again") || strings.Contains(l, "always allow") || strings.Contains(l, "during this session") ||
		strings.Contains(l, "for this session") || strings.HasPrefix(l, "allow always"):
		return AnswerAlways
	case l == "yes" || l == "yes, proceed" || l == "allow once" || l == "allow":
		return AnswerOnce
	}
	return ""
}
