package codex

import (
	"os"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/provider"
)

func TestDialogReadsTheApprovalDialog(t *testing.T) {
	b, err := os.ReadFile("testdata/dialog/approval.txt")
	if err != nil {
		t.Fatal(err)
	}
	d, ok := Provider{}.Dialog(string(b))
	if !ok {
		t.Fatal("no dialog read off the approval dialog")
	}
	if d.Question != "Would you like to run the following command?" || d.Subject != "touch ../outside-codex.txt && echo done" {
		t.Errorf("question %q, subject %q", d.Question, d.Subject)
	}
	want := []provider.DialogOption{
		{Label: "Yes, proceed", Answer: provider.AnswerOnce, Keys: "y"},
		{Label: "Yes, and don't ask again for commands that start with `touch ../outside-codex.txt`", Answer: provider.AnswerAlways, Keys: "p"},
		{Label: "No, and tell Codex what to do differently", Answer: provider.AnswerDeny, Keys: "\x1b"},
	}
	if len(d.Options) != len(want) {
		t.Fatalf("options %+v", d.Options)
	}
	for i := range want {
		if d.Options[i] != want[i] {
			t.Errorf("option %d: %+v, want %+v", i, d.Options[i], want[i])
		}
	}
	if _, ok := (Provider{}).Dialog(strings.Replace(string(b), " (p)", "", 1)); ok {
		t.Error("read a dialog whose option names no key")
	}
	if _, ok := (Provider{}).Dialog(strings.Replace(string(b), "Press enter to confirm or esc to cancel", "", 1)); ok {
		t.Error("read a dialog without its footer")
	}
}
