package claude

import (
	"regexp"
	"strings"

	"github.com/musterhq/muster/internal/provider"
)

var _ provider.DialogReader = Provider{}

// Dialog implements provider.DialogReader for Claude Code 2.1.328's
// permission dialogs, as they were captured in a pane (research real-cli
// screens 34; testdata/dialog):
//
//	────────────────────…   (the dialog's top rule)
//	 Bash command
//	 …
//	╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌…
//	 touch fake-created.txt && echo done
//	╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌…
//	 Do you want to proceed?
//	 ❯ 1. Yes
//	   2. Yes, and always allow access to … from this project
//	   3. Yes, and switch to auto mode · …
//	   4. No
//
//	 Esc to cancel · Tab to amend
//
// A digit picks its option whatever is highlighted (keys.go: measured),
// so each option's keys are its number. A screen is read as a dialog only
// with the question ("Do you want to …?") right above the options and
// "Esc to cancel" below them: a numbered list an agent printed is not one.
func (Provider) Dialog(screen string) (provider.Dialog, bool) {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	if d, ok := claudeQuestion(lines); ok {
		return d, true
	}
	labels, first, last, ok := provider.NumberedOptions(lines)
	if !ok || first == 0 {
		return provider.Dialog{}, false
	}
	question := strings.TrimSpace(lines[first-1])
	if !strings.HasPrefix(question, "Do you want to") || !strings.HasSuffix(question, "?") {
		return provider.Dialog{}, false
	}
	footer := false
	for _, l := range lines[last+1 : min(len(lines), last+4)] {
		if strings.Contains(l, "Esc to cancel") {
			footer = true
		}
	}
	if !footer {
		return provider.Dialog{}, false
	}
	d := provider.Dialog{Question: question, Subject: claudeSubject(lines[:first-1])}
	for i, label := range labels {
		d.Options = append(d.Options, provider.DialogOption{Label: label, Answer: provider.ClassifyAnswer(label), Keys: string(rune('1' + i))})
	}
	return d, true
}

// claudeSubject is the text between the last two dashed rules above the
// question (the command of a Bash dialog), or "" when there are none.
func claudeSubject(above []string) string {
	var rules []int
	for i := len(above) - 1; i >= 0 && len(rules) < 2; i-- {
		if t := strings.TrimSpace(above[i]); t != "" && strings.Trim(t, "╌") == "" {
			rules = append(rules, i)
		}
		if strings.HasPrefix(strings.TrimSpace(above[i]), "────") {
			break
		}
	}
	if len(rules) < 2 {
		return ""
	}
	var out []string
	for _, l := range above[rules[1]+1 : rules[0]] {
		if t := strings.TrimSpace(l); t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}

// questionOption is one option line of a question dialog: an optional
// cursor, the number, a period and the label.
var questionOption = regexp.MustCompile(`^\s*(?:❯\s*)?([1-9])\.\s+(\S.*?)\s*$`)

// claudeQuestion reads Claude Code 2.1.332's question dialog
// (AskUserQuestion with one single-choice question; testdata/dialog/
// question.txt):
//
//	────────────────────…
//	 ☐ Color
//
//	Which color do you want?
//
//	❯ 1. Red
//	     warm
//	  2. Blue
//	     cold
//	  3. Type something.
//	────────────────────…
//	  4. Chat about this
//
//	Enter to select · ↑/↓ to navigate · Esc to cancel
//
// Each option's description sits under it. The options offered are the
// question's own, those before "Type something." (which wants typed text
// and "Chat about this" after it leaves the question): a digit picks its
// option as in the permission dialog (measured by e2e/web's
// TestDrawerAnswersClaudeQuestion). A dialog of several questions (a tab
// bar with Submit) or with check boxes (multiSelect: a digit toggles) is
// not read: its keys were not measured.
func claudeQuestion(lines []string) (provider.Dialog, bool) {
	footer := -1
	for i := len(lines) - 1; i >= 0 && i >= len(lines)-3; i-- {
		if strings.Contains(lines[i], "Enter to select") && strings.Contains(lines[i], "Esc to cancel") {
			footer = i
			break
		}
	}
	if footer < 0 {
		return provider.Dialog{}, false
	}
	header := -1
	for i := footer - 1; i >= 0; i-- {
		if t := strings.TrimSpace(lines[i]); strings.HasPrefix(t, "☐ ") {
			header = i
			break
		}
	}
	if header < 1 || !strings.HasPrefix(strings.TrimSpace(lines[header-1]), "────") {
		return provider.Dialog{}, false
	}
	title := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[header]), "☐ "))
	if title == "" || strings.ContainsAny(title, "☐☒✔←→") {
		return provider.Dialog{}, false
	}
	question, at := "", header+1
	for ; at < footer; at++ {
		if t := strings.TrimSpace(lines[at]); t != "" {
			question = t
			break
		}
	}
	if question == "" || questionOption.MatchString(lines[at]) {
		return provider.Dialog{}, false
	}
	var labels []string
	own := -1
	for _, l := range lines[at+1 : footer] {
		m := questionOption.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if m[1] != string(rune('1'+len(labels))) {
			return provider.Dialog{}, false
		}
		if m[2] == "Type something." && own < 0 {
			own = len(labels)
		}
		labels = append(labels, m[2])
	}
	if own < 2 {
		return provider.Dialog{}, false
	}
	d := provider.Dialog{Question: question, Subject: title}
	for i, label := range labels[:own] {
		if strings.HasPrefix(label, "[") {
			return provider.Dialog{}, false
		}
		d.Options = append(d.Options, provider.DialogOption{Label: label, Keys: string(rune('1' + i))})
	}
	return d, true
}
