package hookinstall

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/musterhq/muster/internal/launcher"
	"github.com/musterhq/muster/internal/paths"
)

// Provider names with a hook installer.
const (
	Claude   = "claude"
	Codex    = "codex"
	Gemini   = "gemini"
	Cursor   = "cursor"
	OpenCode = "opencode"
)

// Providers returns the providers with a hook installer, in display order.
func Providers() []string {
	return []string{Claude, Codex, Gemini, Cursor, OpenCode}
}

// MarkerVersion is the version of the hook entries this package writes.
// Bump it whenever the generated entries change, so that status reports
// older installations as outdated.
const MarkerVersion = 1

// Marker is the shell comment that ends every command we install; its
// number is MarkerVersion.
const Marker = "# muster-hooks:v1"

var markerRE = regexp.MustCompile(`#\s*muster-hooks:v([0-9]+)\s*$`)

// markerVersion returns the marker version at the end of command, or 0.
func markerVersion(command string) int {
	m := markerRE.FindStringSubmatch(command)
	if m == nil {
		return 0
	}
	v, err := strconv.Atoi(m[1])
	if err != nil || v == 0 {
		return -1 // ours, but unreadable: treat as outdated
	}
	return v
}

// Env is where the installer looks for provider homes. Tests set Home and
// Getenv to temporary values so that the real home is never touched.
type Env struct {
	Home   string              // the user's home directory, absolute
	Getenv func(string) string // environment lookup; nil means none set
}

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

func (e Env) home() (string, error) {
	if e.Home == "" || !filepath.IsAbs(e.Home) {
		return "", fmt.Errorf("home directory %q is not an absolute path", e.Home)
	}
	return e.Home, nil
}

// dirFromEnv returns the directory in variable name, or def(home) when the
// variable is unset. A relative value is refused rather than resolved
// against whatever the current directory happens to be.
func (e Env) dirFromEnv(name string, def func(home string) string) (string, error) {
	if v := e.getenv(name); v != "" {
		if !filepath.IsAbs(v) {
			return "", fmt.Errorf("%s=%q is not an absolute path", name, v)
		}
		return filepath.Clean(v), nil
	}
	home, err := e.home()
	if err != nil {
		return "", err
	}
	return def(home), nil
}

// ConfigPath returns the file the installer edits for provider:
//
//	claude    $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json
//	codex     $CODEX_HOME/hooks.json, else ~/.codex/hooks.json
//	gemini    $GEMINI_CLI_HOME/.gemini/settings.json, else ~/.gemini/settings.json
//	          (GEMINI_CLI_HOME replaces the home directory, not ~/.gemini)
//	cursor    ~/.cursor/hooks.json
//	opencode  $XDG_CONFIG_HOME/opencode/plugins/muster.js, else
//	          ~/.config/opencode/plugins/muster.js (a relative
//	          XDG_CONFIG_HOME is ignored, as the XDG spec says)
func ConfigPath(env Env, provider string) (string, error) {
	switch provider {
	case Claude:
		dir, err := env.dirFromEnv("CLAUDE_CONFIG_DIR", func(h string) string { return filepath.Join(h, ".claude") })
		return filepath.Join(dir, "settings.json"), err
	case Codex:
		dir, err := env.dirFromEnv("CODEX_HOME", func(h string) string { return filepath.Join(h, ".codex") })
		return filepath.Join(dir, "hooks.json"), err
	case Gemini:
		base, err := env.dirFromEnv("GEMINI_CLI_HOME", func(h string) string { return h })
		return filepath.Join(base, ".gemini", "settings.json"), err
	case Cursor:
		home, err := env.home()
		return filepath.Join(home, ".cursor", "hooks.json"), err
	case OpenCode:
		base := env.getenv("XDG_CONFIG_HOME")
		if base == "" || !filepath.IsAbs(base) {
			home, err := env.home()
			if err != nil {
				return "", err
			}
			base = filepath.Join(home, ".config")
		}
		return filepath.Join(base, "opencode", "plugins", "muster.js"), nil
	}
	return "", unknownProvider(provider)
}

// ErrUnknownProvider means the provider has no hook installer.
var ErrUnknownProvider = errors.New("no hook installer for this provider")

func unknownProvider(p string) error {
	return fmt.Errorf("%w: %q (known: %s)", ErrUnknownProvider, p, strings.Join(Providers(), ", "))
}

// checkMusterPath refuses a binary path that cannot be put into a hook
// command safely.
func checkMusterPath(p string) error {
	switch {
	case p == "":
		return errors.New("muster binary path is empty")
	case !filepath.IsAbs(p):
		return fmt.Errorf("muster binary path %q is not absolute", p)
	case strings.ContainsAny(p, "\x00\n\r"):
		return fmt.Errorf("muster binary path %q contains a control character", p)
	}
	return nil
}

// CaptureCommand is the shell command that reports the provider's native
// session id: "$PPID" is expanded by the `sh -c` that runs the hook, so it is
// the provider process itself.
func CaptureCommand(musterPath, provider string) string {
	return launcher.ShellQuote(musterPath) + " hook capture --provider " + provider + ` --process-id "$PPID" ` + Marker
}

// EventCommand is the shell command that forwards every lifecycle event:
// the muster-hook helper beside the muster binary when there is one (it
// starts several times faster, and agents run it on every hook), else
// `muster hook event`.
func EventCommand(musterPath, provider string) string {
	if helper := paths.HookHelper(musterPath); helper != "" {
		return launcher.ShellQuote(helper) + " event " + provider + " " + Marker
	}
	return launcher.ShellQuote(musterPath) + " hook event " + provider + " " + Marker
}

// eventSpec is one provider hook event we install into.
type eventSpec struct {
	name    string
	capture bool // also install the capture adapter
	timeout int  // in the provider's unit; 0 means the provider default
}

// jsonSpec describes a provider whose hooks live in a JSON settings file.
type jsonSpec struct {
	provider string
	jsonc    bool // the provider reads the file with comments stripped
	flat     bool // event arrays hold handlers, not groups (Cursor)
	version  bool // the file needs "version": 1 at the top (Cursor)
	events   []eventSpec
	// elements returns what we append to the event array of ev.
	elements func(ev eventSpec, cmds []string) []any
}

func commandsFor(musterPath, provider string, ev eventSpec) []string {
	var cmds []string
	if ev.capture {
		cmds = append(cmds, CaptureCommand(musterPath, provider))
	}
	return append(cmds, EventCommand(musterPath, provider))
}

// Claude Code: settings.json "hooks", groups of {matcher, hooks[]}, timeout
// in seconds. The events are the lifecycle rows of research/providers.md and
// the events Claude Code 2.1.328 fired in research/real-cli.
var claudeSpec = &jsonSpec{
	provider: Claude,
	events: []eventSpec{
		{name: "SessionStart", capture: true, timeout: 10},
		{name: "UserPromptSubmit", timeout: 10},
		{name: "PreToolUse", timeout: 10},
		{name: "PostToolUse", timeout: 10},
		{name: "PostToolUseFailure", timeout: 10},
		{name: "PermissionRequest", timeout: 10},
		{name: "PermissionDenied", timeout: 10},
		{name: "Notification", timeout: 10},
		{name: "Stop", timeout: 10},
		{name: "StopFailure", timeout: 10},
		{name: "SessionEnd", timeout: 10},
	},
	elements: func(ev eventSpec, cmds []string) []any {
		return []any{object{{"matcher", ""}, {"hooks", handlers(cmds, func(c string) object {
			return object{{"type", "command"}, {"command", c}, {"timeout", ev.timeout}}
		})}}}
	},
}

// Codex 0.169: hooks.json with the Claude-style schema. Only events Codex
// 0.169 accepted are used (an unknown event name would be a config error);
// SessionEnd hooks are clamped to 3 s by Codex, so we ask for 3.
var codexSpec = &jsonSpec{
	provider: Codex,
	events: []eventSpec{
		{name: "SessionStart", capture: true, timeout: 10},
		{name: "UserPromptSubmit", timeout: 10},
		{name: "PreToolUse", timeout: 10},
		{name: "PermissionRequest", timeout: 10},
		{name: "PostToolUse", timeout: 10},
		{name: "Stop", timeout: 10},
		{name: "SessionEnd", timeout: 3},
	},
	elements: func(ev eventSpec, cmds []string) []any {
		return []any{object{{"hooks", handlers(cmds, func(c string) object {
			return object{{"type", "command"}, {"command", c}, {"timeout", ev.timeout}}
		})}}}
	},
}

// Gemini CLI: settings.json (read with comments stripped) "hooks", groups
// of {matcher, hooks[]} whose handlers have a name; timeout in milliseconds.
var geminiSpec = &jsonSpec{
	provider: Gemini,
	jsonc:    true,
	events: []eventSpec{
		{name: "SessionStart", capture: true, timeout: 10000},
		{name: "BeforeAgent", timeout: 10000},
		{name: "BeforeTool", timeout: 10000},
		{name: "AfterTool", timeout: 10000},
		{name: "Notification", timeout: 10000},
		{name: "AfterAgent", timeout: 10000},
		{name: "SessionEnd", timeout: 10000},
	},
	elements: func(ev eventSpec, cmds []string) []any {
		return []any{object{{"matcher", "*"}, {"hooks", handlers(cmds, func(c string) object {
			name := "muster-event"
			if strings.Contains(c, " hook capture ") {
				name = "muster-capture"
			}
			return object{{"name", name}, {"type", "command"}, {"command", c}, {"timeout", ev.timeout}}
		})}}}
	},
}

// Cursor: ~/.cursor/hooks.json {"version":1,"hooks":{event:[{command}]}}.
var cursorSpec = &jsonSpec{
	provider: Cursor,
	flat:     true,
	version:  true,
	events: []eventSpec{
		{name: "sessionStart", capture: true},
		{name: "beforeSubmitPrompt"},
		{name: "preToolUse"},
		{name: "postToolUse"},
		{name: "postToolUseFailure"},
		{name: "stop"},
		{name: "sessionEnd"},
	},
	elements: func(ev eventSpec, cmds []string) []any {
		var out []any
		for _, c := range cmds {
			out = append(out, object{{"command", c}})
		}
		return out
	},
}

func handlers(cmds []string, f func(string) object) []any {
	out := make([]any, len(cmds))
	for i, c := range cmds {
		out[i] = f(c)
	}
	return out
}

func specFor(provider string) (*jsonSpec, bool) {
	switch provider {
	case Claude:
		return claudeSpec, true
	case Codex:
		return codexSpec, true
	case Gemini:
		return geminiSpec, true
	case Cursor:
		return cursorSpec, true
	}
	return nil, false
}

// hooksValue is the value of the "hooks" key we would install.
func (s *jsonSpec) hooksValue(musterPath string) object {
	var o object
	for _, ev := range s.events {
		o = append(o, kv{ev.name, s.elements(ev, commandsFor(musterPath, s.provider, ev))})
	}
	return o
}

// ClaudeSettingsJSON returns a compact settings document with Muster's
// Claude Code hooks, for `claude --settings '<json>'` when the daemon
// launches Claude Code in a pane, so that the session reports even before
// `muster hooks setup`. The commands are byte-identical to the ones setup
// installs, so Claude Code, which merges hooks from all settings sources and
// runs identical commands once, does not report twice.
func ClaudeSettingsJSON(musterPath string) string {
	st := style{nl: "\n", unit: "", colon: ":"}
	return st.encode(object{{"hooks", claudeSpec.hooksValue(musterPath)}}, "")
}
