package codex

import (
	"regexp"
	"strings"

	"github.com/musterhq/muster/internal/provider"
)

var _ provider.DialogReader = Provider{}

// keyHint is the key an option of Codex's approval dialog names at its
// end: "Yes, proceed (y)", "… (esc)".
var keyHint = regexp.MustCompile(`^(.*?)\s*\((y|p|a|n|esc)\)$`)

// Dialog implements provider.DialogReader for Codex 0.169.0's approval
// dialog, as captured in a pane (research real-cli screen 35;
// testdata/dialog):
//
//	  Would you like to run the following command?
//	  …
//	  $ touch ../outside-codex.txt && echo done
//
//	› 1. Yes, proceed (y)
//	  2. Yes, and don't ask again for commands that start with `…` (p)
//	  3. No, and tell Codex what to do differently (esc)
//
//	  Press enter to confirm or esc to cancel
//
// Each option names its key in parentheses, and that key is what picks
// it; an option without one makes the screen no dialog (its number alone
// was not measured to pick it).
func (Provider) Dialog(screen string) (provider.Dialog, bool) {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	labels, first, last, ok := provider.NumberedOptions(lines)
	if !ok {
		return provider.Dialog{}, false
	}
	footer := false
	for _, l := range lines[last+1 : min(len(lines), last+4)] {
		if strings.Contains(l, "esc to cancel") {
			footer = true
		}
	}
	if !footer {
		return provider.Dialog{}, false
	}
	var d provider.Dialog
	for i := first - 1; i >= max(0, first-16); i-- {
		t := strings.TrimSpace(lines[i])
		if d.Subject == "" && strings.HasPrefix(t, "$ ") {
			d.Subject = strings.TrimPrefix(t, "$ ")
		}
		if strings.HasPrefix(t, "Would you like to") && strings.HasSuffix(t, "?") {
			d.Question = t
			break
		}
	}
	if d.Question == "" {
		return provider.Dialog{}, false
	}
	for _, label := range labels {
		m := keyHint.FindStringSubmatch(label)
		if m == nil {
			return provider.Dialog{}, false
		}
		keys := m[2]
		if keys == "esc" {
			keys = "\x1b"
		}
		d.Options = append(d.Options, provider.DialogOption{Label: m[1], Answer: provider.ClassifyAnswer(m[1]), Keys: keys})
	}
	return d, true
}
