package claude

import (
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
