package daemon

import "strings"

// A pane's program runs in Muster's terminal, not in the one where `muster
// new` was typed, so the pane's environment names Muster as its terminal
// (as tmux names itself) and drops the variables by which other terminals
// announce themselves: a program believing them would emit that terminal's
// own sequences (kitty graphics, iTerm2 images) into Muster's emulator, or,
// like Claude Code under WT_SESSION, withhold the standard ones.
//
// ConEmuTask is set because Muster reads ConEmu's OSC 9;N commands (9;4
// progress, 9;9 working directory): Claude Code 2.1.328 reports its
// progress with OSC 9;4 only where ConEmu's variables are set or
// TERM_PROGRAM names Ghostty ≥ 1.2.0 or iTerm2 ≥ 3.6.6, and claiming
// either of those would also claim their notification, keyboard and image
// protocols. In Claude Code the ConEmu variables change nothing else once
// TERM_PROGRAM is set (read from its 2.1.328 bundle: they gate progress
// reporting and name the terminal only when TERM_PROGRAM is unset). Gemini
// CLI 0.61.0 reads ConEmuTask only to compare it with "{cmd::Cmder}";
// Codex 0.169.0 reads none of them.
const (
	termProgram = "muster"
	conEmuTask  = "muster"
)

// outerTermExact and outerTermPrefixes name the other terminals' variables.
var (
	outerTermExact = []string{
		"TERM_PROGRAM", "TERM_PROGRAM_VERSION", "TERM_SESSION_ID", "TERM_FEATURES",
		"WT_SESSION", "WT_PROFILE_ID", "LC_TERMINAL", "LC_TERMINAL_VERSION",
		"VTE_VERSION", "TERMINAL_EMULATOR", "TILIX_ID", "TERMINATOR_UUID",
		"GNOME_TERMINAL_SERVICE", "GNOME_TERMINAL_SCREEN", "XTERM_VERSION", "XTERM_SHELL", "XTERM_LOCALE",
		"STY", "WINDOW",
	}
	outerTermPrefixes = []string{"ConEmu", "KITTY_", "WEZTERM_", "GHOSTTY_", "ITERM_", "KONSOLE_", "ALACRITTY_", "ZELLIJ"}
)

// setTerminalEnv makes env describe Muster's terminal.
func setTerminalEnv(env map[string]string, version string) {
	for _, k := range outerTermExact {
		delete(env, k)
	}
	for k := range env {
		for _, p := range outerTermPrefixes {
			if strings.HasPrefix(k, p) {
				delete(env, k)
				break
			}
		}
	}
	if version == "" {
		version = "0"
	}
	env["TERM_PROGRAM"] = termProgram
	env["TERM_PROGRAM_VERSION"] = version
	env["ConEmuTask"] = conEmuTask
}
