package realcli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/testing/poll"
)

// Key is a key a test presses in a CLI's terminal: Name is how tmux
// send-keys spells it, Bytes what a terminal sends for it (what `muster
// send` writes).
type Key struct {
	Name  string
	Bytes string
}

// The keys the dialog answers use.
var (
	KeyEnter = Key{"Enter", "\r"}
	KeyUp    = Key{"Up", "\x1b[A"}
	KeyDown  = Key{"Down", "\x1b[B"}
)

// Terminal is a CLI's screen and keyboard as a test drives it: a tmux pane,
// or a Muster pane through `muster capture` and `muster send`.
type Terminal interface {
	// Screen returns what the terminal shows now (no scrollback).
	Screen() (string, error)
	Press(Key) error
}

// A Dialog is a question a CLI can put up at start-up or on resume,
// before its input box takes a prompt. New seeds the answer of each one
// that the CLI records (Seeded says where), so none of them should show;
// AnswerDialog is the safety net that answers it the way a user would if
// one shows anyway (a CLI that changed what it reads, or a dialog the
// seeding does not cover).
type Dialog struct {
	CLI CLI
	// Title is text that shows only while the dialog is up.
	Title string
	// Answer is the label of the option a user picks ("" for a dialog
	// without options, which Enter confirms): the option that
	// keeps the test's setup as it is (manual permission mode, the
	// configured model, no update) or that accepts what New seeds (the
	// folder trusted, the API key used).
	Answer string
	// Seeded is what New writes so that the dialog does not show.
	Seeded string
}

// Dialogs lists the start-up dialogs of the pinned releases that the
// tests can meet, read from each CLI's bundle (README.md, "First-run
// dialogs"). Dialogs that need an account, an IDE, a managed policy or a
// quota error are left out: nothing in this harness can raise them.
var Dialogs = []Dialog{
	// Claude Code 2.1.328.
	{Claude, "Quick safety check: Is this a project you created or one you trust?", "Yes, I trust this folder",
		"~/.claude.json projects[<cwd>].hasTrustDialogAccepted"},
	{Claude, "Detected a custom API key in your environment", "Yes",
		"~/.claude.json customApiKeyResponses.approved"},
	{Claude, "Make auto mode your default permission mode?", "No, keep manual mode",
		"~/.claude.json hasSeenAutoDefaultNudge"},
	{Claude, "Try the new fullscreen renderer?", "Not now",
		"~/.claude.json fullscreenUpsellSeenCount"},
	// Codex 0.169.0.
	{Codex, "Trust this folder?", "Trust and continue",
		`config.toml [projects."<cwd>"] trust_level`},
	{Codex, "Hooks need review", "Trust all and continue",
		"config.toml [hooks.state.…] trusted_hash (TrustCodexHooks)"},
	{Codex, "Codex just got an upgrade", "Use existing model",
		`config.toml model = "gpt-fake" (no upgrade in the model catalog)`},
	{Codex, "Update available!", "Skip until next version",
		"config.toml check_for_update_on_startup = false"},
	// Gemini CLI 0.61.0.
	{Gemini, "Do you trust the files in this folder?", "Trust folder",
		"trustedFolders.json"},
	{Gemini, "How would you like to authenticate for this project?", "Use Gemini API Key",
		"settings.json security.auth.selectedType"},
	// Shown after that choice, holding GEMINI_API_KEY: Enter takes it.
	{Gemini, "Enter Gemini API Key", "",
		"settings.json security.auth.selectedType"},
}

// cursor is the mark each CLI puts before the selected option of a list.
var cursor = map[CLI]string{Claude: "❯", Codex: "›", Gemini: "●"}

// step is what answering a dialog on a given screen takes next.
type step struct {
	dialog *Dialog
	key    Key
}

// nextStep finds the first dialog of cli that screen shows and the key
// that brings it one step closer to its answer: Up or Down toward the
// answer's line, or Enter once the cursor is on it.
func nextStep(cli CLI, screen string) (step, error) {
	lines := strings.Split(screen, "\n")
	for i := range Dialogs {
		d := &Dialogs[i]
		if d.CLI != cli {
			continue
		}
		title := -1
		for n, l := range lines {
			if strings.Contains(l, d.Title) {
				title = n
				break
			}
		}
		if title < 0 {
			continue
		}
		if d.Answer == "" {
			return step{d, KeyEnter}, nil
		}
		answer, selected := -1, -1
		for n := title; n < len(lines); n++ {
			text := strings.TrimLeft(lines[n], " │┃|")
			if selected < 0 && strings.HasPrefix(text, cursor[cli]) {
				selected = n
			}
			if answer < 0 && n > title && optionLabel(text, cursor[cli]) == d.Answer {
				answer = n
			}
		}
		switch {
		case answer < 0:
			return step{dialog: d}, fmt.Errorf("%s dialog %q: no option %q on the screen", cli, d.Title, d.Answer)
		case selected < 0:
			return step{dialog: d}, fmt.Errorf("%s dialog %q: no selected option (%q) on the screen", cli, d.Title, cursor[cli])
		case selected < answer:
			return step{d, KeyDown}, nil
		case selected > answer:
			return step{d, KeyUp}, nil
		}
		return step{d, KeyEnter}, nil
	}
	return step{}, nil
}

// optionLabel returns the label of an option line: the text after the
// cursor and the option's number, without the key hint or detail that
// some CLIs add after the label ("Trust folder (repo)", "Skip (esc)").
func optionLabel(text, cursor string) string {
	text = strings.TrimSpace(strings.TrimPrefix(text, cursor))
	if n := strings.Index(text, ". "); n > 0 && n <= 2 && strings.Trim(text[:n], "0123456789") == "" {
		text = strings.TrimSpace(text[n+1:])
	}
	if n := strings.Index(text, " ("); n > 0 {
		text = text[:n]
	}
	return strings.TrimRight(strings.TrimSpace(text), " │┃|")
}

// AnswerDialog answers the start-up dialog screen shows, if it shows
// one, the way a user does: it presses one key toward the dialog's
// answer (Up or Down to the option, then Enter), then waits up to 5 s
// for the screen to change, so that the next call sees what the key did.
// Every test calls it with each screen it reads while it waits for a CLI
// (tmux_test.go, muster_test.go); it returns whether it pressed a key.
// Each press is logged, and New's cleanup lists the dialogs answered, so
// that seeding that no longer works shows in the test log.
func (s *Setup) AnswerDialog(t testing.TB, screen string, term Terminal) bool {
	t.Helper()
	st, err := nextStep(s.CLI, screen)
	if err != nil {
		t.Logf("realcli: %v; screen:\n%s", err, screen)
		return false
	}
	if st.dialog == nil {
		return false
	}
	t.Logf("realcli: %s shows %q (seeded: %s); pressing %s toward %q", s.CLI, st.dialog.Title, st.dialog.Seeded, st.key.Name, st.dialog.Answer)
	s.mu.Lock()
	s.answered = append(s.answered, st.dialog.Title)
	s.mu.Unlock()
	if err := term.Press(st.key); err != nil {
		t.Logf("realcli: press %s: %v", st.key.Name, err)
		return false
	}
	poll.Until(5*time.Second, func() bool { now, err := term.Screen(); return err != nil || now != screen })
	return true
}

// Answered returns the titles of the dialogs AnswerDialog answered, one
// per key it pressed.
func (s *Setup) Answered() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.answered...)
}
