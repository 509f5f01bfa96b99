package realcli

import (
	"strings"
	"testing"
)

// Screens of the pinned releases, captured in tmux (120×40).
const (
	claudeAutoNudge = `▝▜██████▀  Opus 5.5 · API Usage Billing
 ▝▝        /tmp/rcb/exp/r.U1Vx/work
────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────
  Make auto mode your default permission mode?

  Auto mode lets Claude handle permission prompts automatically. Claude checks each tool call for risky actions and
  prompt injection before executing, runs the ones it assesses as lower-risk, and blocks the rest.

  ❯ Yes, set auto mode as my default permission mode
    No, keep manual mode
`
	claudeAPIKey = `────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────
  Detected a custom API key in your environment

  ANTHROPIC_API_KEY: sk-ant-...sk-fake-realcli-key

  Do you want to use this API key?

    Yes
  ❯ No (recommended)

  Enter to confirm · Esc to cancel
`
	claudeTrust = ` Accessing workspace:

 /tmp/rcb/exp/s.TiNv/work

 Quick safety check: Is this a project you created or one you trust? (Like your own code, a well-known open source
 project, or work from your team). If not, take a moment to review what's in this folder first.

 Claude Code'll be able to read, edit, and execute files here.

 Security guide

 ❯ No, exit
   Yes, I trust this folder

 Enter to confirm · Esc to cancel
`
	claudeFullscreen = `  Try the new fullscreen renderer?

  · Flicker-free output: no more flashing during long responses
  · Mouse support: click to move your cursor or expand results
  · Selected text auto-copies to your clipboard

  ❯ 1. Yes, try it
    2. Not now

  Enter to confirm · Esc to cancel
`
	claudeIdle = `────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────
❯ 
────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────
  ⏸ manual mode on · ? for shortcuts
`
	claudeApproval = ` Bash command

   touch approved.txt && echo tool-ran-claude

 Do you want to proceed?
 ❯ 1. Yes
   2. Yes, and always allow access to work/ from this project
   3. No
`
	codexHooks = `  Hooks need review

  11 hooks are new or changed.
  Hooks can run outside the sandbox after you trust them.

› 1. Review hooks
  2. Trust all and continue
  3. Continue without trusting (hooks won't run)

  enter confirm · esc skip
`
	codexIdle = `› Ask Codex to do anything

  gpt-fake default · /tmp/work
  ← for agents · ? for shortcuts
`
	geminiTrust = ` ╭────────────────────────────────────────────────────────────────────────────────────────────────────────────────────╮
 │                                                                                                                    │
 │ Do you trust the files in this folder?                                                                             │
 │                                                                                                                    │
 │ ● 1. Trust folder (repo-gemini)                                                                                    │
 │   2. Trust parent folder (SCRATCH)                                                                                 │
 │   3. Don't trust                                                                                                   │
 │                                                                                                                    │
 ╰────────────────────────────────────────────────────────────────────────────────────────────────────────────────────╯
`
	geminiAuth = `│ ? Get started                                                                                                        │
│                                                                                                                      │
│   How would you like to authenticate for this project?                                                               │
│                                                                                                                      │
│     1. Sign in with Google                                                                                           │
│   ● 2. Use Gemini API Key                                                                                            │
│     3. Vertex AI                                                                                                     │
`
)

func TestNextStep(t *testing.T) {
	tests := []struct {
		name   string
		cli    CLI
		screen string
		want   string // key name, "" for none
	}{
		{"claude auto mode offer", Claude, claudeAutoNudge, "Down"},
		{"claude auto mode offer answered", Claude, strings.Replace(strings.Replace(claudeAutoNudge, "  ❯ Yes", "    Yes", 1), "    No,", "  ❯ No,", 1), "Enter"},
		{"claude api key", Claude, claudeAPIKey, "Up"},
		{"claude trust", Claude, claudeTrust, "Down"},
		{"claude fullscreen", Claude, claudeFullscreen, "Down"},
		{"claude idle", Claude, claudeIdle, ""},
		{"claude approval is not a start-up dialog", Claude, claudeApproval, ""},
		{"codex hooks", Codex, codexHooks, "Down"},
		{"codex idle", Codex, codexIdle, ""},
		{"gemini trust", Gemini, geminiTrust, "Enter"},
		{"gemini auth", Gemini, geminiAuth, "Enter"},
		{"another CLI's dialog", Codex, claudeAutoNudge, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := nextStep(tt.cli, tt.screen)
			if err != nil {
				t.Fatal(err)
			}
			if st.key.Name != tt.want {
				t.Errorf("nextStep = %q, want %q", st.key.Name, tt.want)
			}
		})
	}
}

// listTerm is a terminal showing one dialog with a list: it moves its
// cursor on Up and Down (without wrapping) and closes on Enter.
type listTerm struct {
	title   string
	options []string
	sel     int
	chosen  string
	presses int
}

func (l *listTerm) Screen() (string, error) {
	if l.chosen != "" {
		return claudeIdle, nil
	}
	var b strings.Builder
	b.WriteString("  " + l.title + "\n\n")
	for i, o := range l.options {
		if i == l.sel {
			b.WriteString("  ❯ " + o + "\n")
		} else {
			b.WriteString("    " + o + "\n")
		}
	}
	return b.String(), nil
}

func (l *listTerm) Press(k Key) error {
	l.presses++
	switch k {
	case KeyUp:
		l.sel = max(l.sel-1, 0)
	case KeyDown:
		l.sel = min(l.sel+1, len(l.options)-1)
	case KeyEnter:
		l.chosen = l.options[l.sel]
	}
	return nil
}

func TestAnswerDialog(t *testing.T) {
	s := &Setup{CLI: Claude}
	term := &listTerm{title: "Make auto mode your default permission mode?",
		options: []string{"Yes, set auto mode as my default permission mode", "No, keep manual mode"}}
	for range 10 {
		screen, _ := term.Screen()
		if !s.AnswerDialog(t, screen, term) {
			break
		}
	}
	if term.chosen != "No, keep manual mode" || term.presses != 2 {
		t.Errorf("chose %q with %d keys, want %q with 2", term.chosen, term.presses, "No, keep manual mode")
	}
	if a := s.Answered(); len(a) != 2 {
		t.Errorf("Answered() = %q, want two entries", a)
	}
}

func TestOptionLabel(t *testing.T) {
	tests := map[string]string{
		"❯ 1. Yes, try it":                      "Yes, try it",
		"No (recommended)":                      "No",
		"● 1. Trust folder (repo-gemini)     │": "Trust folder",
		"2. Trust all and continue":             "Trust all and continue",
		"10. Ten":                               "Ten",
		"3.5 is a number":                       "3.5 is a number",
	}
	for in, want := range tests {
		c := "❯"
		if strings.HasPrefix(in, "●") {
			c = "●"
		}
		if got := optionLabel(in, c); got != want {
			t.Errorf("optionLabel(%q) = %q, want %q", in, got, want)
		}
	}
}
