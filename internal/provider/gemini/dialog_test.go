package gemini

import (
	"os"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/provider"
)

func readScreen(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/dialog/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantOptions are the options of Gemini's shell approval in a trusted
// folder, with the digit that picks each (testdata/dialog/README.md).
var wantOptions = []provider.DialogOption{
	{Label: "Allow once", Answer: provider.AnswerOnce, Keys: "1"},
	{Label: "Allow for this session", Answer: provider.AnswerAlways, Keys: "2"},
	{Label: "No, suggest changes", Answer: provider.AnswerDeny, Keys: "3"},
}

func TestDialogReadsTheShellApproval(t *testing.T) {
	for _, tc := range []struct{ file, subject string }{
		{"approval.txt", "touch f0-digit1.txt"},
		{"redirect.txt", "echo redirected > f0-redirect-digit3.txt"},
		{"wrapped.txt", "printf '%s\\n' alpha bravo charlie delta echo foxtrot golf hotel india\n" +
			"juliet kilo lima mike november oscar papa quebec romeo sierra tango >\nf1-long-esc.txt"},
	} {
		d, ok := Provider{}.Dialog(readScreen(t, tc.file))
		if !ok {
			t.Errorf("%s: no dialog read", tc.file)
			continue
		}
		if d.Question != "Allow execution of [Shell]?" || d.Subject != tc.subject {
			t.Errorf("%s: question %q, subject %q, want subject %q", tc.file, d.Question, d.Subject, tc.subject)
		}
		if len(d.Options) != len(wantOptions) {
			t.Errorf("%s: options %+v", tc.file, d.Options)
			continue
		}
		for i := range wantOptions {
			if d.Options[i] != wantOptions[i] {
				t.Errorf("%s: option %d: %+v, want %+v", tc.file, i, d.Options[i], wantOptions[i])
			}
		}
	}
}

func TestDialogReadsNoDialogWithoutItsWholeBox(t *testing.T) {
	for _, file := range []string{"idle.txt", "list-reply.txt", "refused.txt"} {
		if d, ok := (Provider{}).Dialog(readScreen(t, file)); ok {
			t.Errorf("%s: read a dialog %+v off a screen that has none", file, d)
		}
	}
	screen := readScreen(t, "approval.txt")
	for what, broken := range map[string]string{
		"without the question":            strings.Replace(screen, "│ Allow execution of [Shell]?", "│ Allow execution of Shell? ", 1),
		"without the pending tool's mark": strings.Replace(screen, "│ ? Shell ", "│ ✓ Shell ", 1),
		"without the cursor":              strings.Replace(screen, "│ ● 1.", "│   1.", 1),
		"with two cursors":                strings.Replace(screen, "│   2.", "│ ● 2.", 1),
		"with options out of order":       strings.Replace(screen, "│   2.", "│   4.", 1),
		"without the box's bottom":        screen[:strings.LastIndex(screen, "╰")],
		"with text under the box":         screen + "\n > typed\n",
		"without the box's top":           strings.Replace(screen, "╭─", "──", 1),
	} {
		if d, ok := (Provider{}).Dialog(broken); ok {
			t.Errorf("read a dialog %s: %+v", what, d)
		}
	}
}

func TestDialogClassifiesThePermanentApproval(t *testing.T) {
	// With permanent approvals allowed in the user's settings, Gemini CLI
	// 0.61.0 adds this option before the refusal (its bundle's
	// ToolConfirmationMessage; not captured).
	screen := strings.Replace(readScreen(t, "approval.txt"),
		"│   3. No, suggest changes (esc)                                               │",
		"│   3. Allow this command for all future sessions                              │\n"+
			"│   4. No, suggest changes (esc)                                               │", 1)
	d, ok := Provider{}.Dialog(screen)
	if !ok || len(d.Options) != 4 {
		t.Fatalf("dialog %+v, %v", d, ok)
	}
	if d.Options[2].Answer != provider.AnswerAlways || d.Options[2].Keys != "3" || d.Options[3].Answer != provider.AnswerDeny || d.Options[3].Keys != "4" {
		t.Errorf("options %+v", d.Options)
	}
}
