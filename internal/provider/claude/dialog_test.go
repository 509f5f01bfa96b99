package claude

import (
	"os"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/provider"
)

func TestDialogReadsThePermissionDialog(t *testing.T) {
	b, err := os.ReadFile("testdata/dialog/permission.txt")
	if err != nil {
		t.Fatal(err)
	}
	d, ok := Provider{}.Dialog(string(b))
	if !ok {
		t.Fatal("no dialog read off the permission dialog")
	}
	if d.Question != "Do you want to proceed?" || d.Subject != "touch fake-created.txt && echo done" {
		t.Errorf("question %q, subject %q", d.Question, d.Subject)
	}
	want := []provider.DialogOption{
		{Label: "Yes", Answer: provider.AnswerOnce, Keys: "1"},
		{Label: "Yes, and always allow access to $SCRATCH/repo-claude from this project", Answer: provider.AnswerAlways, Keys: "2"},
		{Label: "Yes, and switch to auto mode · auto mode handles these prompts for you", Answer: "", Keys: "3"},
		{Label: "No", Answer: provider.AnswerDeny, Keys: "4"},
	}
	if len(d.Options) != len(want) {
		t.Fatalf("options %+v", d.Options)
	}
	for i := range want {
		if d.Options[i] != want[i] {
			t.Errorf("option %d: %+v, want %+v", i, d.Options[i], want[i])
		}
	}
}

func TestDialogNoneWithoutOne(t *testing.T) {
	b, err := os.ReadFile("testdata/dialog/permission.txt")
	if err != nil {
		t.Fatal(err)
	}
	idle, err := os.ReadFile("testdata/dialog/idle.txt")
	if err != nil {
		t.Fatal(err)
	}
	for name, screen := range map[string]string{
		"the prompt":               string(idle),
		"empty":                    "",
		"a list the agent printed": "● Steps:\n  1. Build\n  2. Test\n\n❯ ",
		"no footer":                strings.Replace(string(b), "Esc to cancel", "", 1),
		"another question":         strings.Replace(string(b), "Do you want to proceed?", "Pick one:", 1),
	} {
		if d, ok := (Provider{}).Dialog(screen); ok {
			t.Errorf("%s: read a dialog %+v", name, d)
		}
	}
}
