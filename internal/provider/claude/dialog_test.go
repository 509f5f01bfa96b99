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

func TestDialogReadsTheQuestion(t *testing.T) {
	b, err := os.ReadFile("testdata/dialog/question.txt")
	if err != nil {
		t.Fatal(err)
	}
	d, ok := Provider{}.Dialog(string(b))
	if !ok {
		t.Fatal("no dialog read off the question")
	}
	if d.Question != "Which color do you want?" || d.Subject != "Color" {
		t.Errorf("question %q, subject %q", d.Question, d.Subject)
	}
	want := []provider.DialogOption{{Label: "Red", Keys: "1"}, {Label: "Blue", Keys: "2"}}
	if len(d.Options) != len(want) {
		t.Fatalf("options %+v, want %+v", d.Options, want)
	}
	for i := range want {
		if d.Options[i] != want[i] {
			t.Errorf("option %d: %+v, want %+v", i, d.Options[i], want[i])
		}
	}
}

func TestDialogNoQuestionItCannotAnswer(t *testing.T) {
	b, err := os.ReadFile("testdata/dialog/question.txt")
	if err != nil {
		t.Fatal(err)
	}
	q := string(b)
	for name, screen := range map[string]string{
		"no footer":         strings.Replace(q, "Enter to select · ↑/↓ to navigate · Esc to cancel", "", 1),
		"several questions": strings.Replace(q, " ☐ Color", " ←  ☐ Color  ☐ Size  ✔ Submit  →", 1),
		"check boxes":       strings.NewReplacer("1. Red", "1. [ ] Red", "2. Blue", "2. [ ] Blue").Replace(q),
		"numbers skip":      strings.Replace(q, "2. Blue", "5. Blue", 1),
		"no header":         strings.Replace(q, " ☐ Color", "", 1),
		"no own options":    strings.NewReplacer("1. Red", "Red", "2. Blue", "Blue", "3. Type", "1. Type", "4. Chat", "2. Chat").Replace(q),
	} {
		if d, ok := (Provider{}).Dialog(screen); ok {
			t.Errorf("%s: read a dialog %+v", name, d)
		}
	}
}
