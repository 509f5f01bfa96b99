package codex

import (
	"fmt"
	"path/filepath"
	"strings"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/transcript"
)

var (
	_ provider.HookInstaller  = Provider{}
	_ provider.NativeCapturer = Provider{}
)

// CapturesNativePayload implements provider.NativeCapturer: the capture
// command setup installs gets the session-start hook's own payload.
func (Provider) CapturesNativePayload() {}

// HookTrustNote tells the user about Codex's one-time hook review.
const HookTrustNote = "Codex asks you to trust new or changed hooks once: start codex and review them in /hooks"

// HookInstall implements provider.HookInstaller: hooks.json with Claude
// Code's schema. Only events Codex 0.169 accepted are used (an unknown
// event name would be a config error); SessionEnd hooks are clamped to 3 s
// by Codex, so we ask for 3. Codex asks the user to trust new or changed
// hooks once in /hooks; Muster never bypasses that (HookTrustNote). Codex
// 0.124 and later run hooks by default, so config.toml is only read.
func (Provider) HookInstall() provider.HookInstall {
	return provider.HookInstall{
		Config: func(env transcript.Env) (string, error) {
			d, err := checkedHome(env)
			return filepath.Join(d, "hooks.json"), err
		},
		JSON: &provider.HookJSON{
			Events: []provider.HookEvent{
				{Name: "SessionStart", Capture: true, Timeout: 10},
				{Name: "UserPromptSubmit", Timeout: 10},
				{Name: "PreToolUse", Timeout: 10},
				{Name: "PermissionRequest", Timeout: 10},
				{Name: "PostToolUse", Timeout: 10},
				{Name: "Stop", Timeout: 10},
				{Name: "SessionEnd", Timeout: 3},
			},
			Entries: func(ev provider.HookEvent, cmds []string) []any {
				hs := make([]any, len(cmds))
				for i, c := range cmds {
					hs[i] = provider.Object{{Key: "type", Value: "command"}, {Key: "command", Value: c}, {Key: "timeout", Value: ev.Timeout}}
				}
				return []any{provider.Object{{Key: "hooks", Value: hs}}}
			},
		},
		SetupNotes: []string{HookTrustNote},
		Notes:      func(env transcript.Env, _ string) []string { return configNotes(env) },
	}
}

// configNotes reads $CODEX_HOME/config.toml for settings that turn hooks
// off.
func configNotes(env transcript.Env) []string {
	dir, err := checkedHome(env)
	if err != nil {
		return nil
	}
	b, err := transcript.ReadFileFollow(filepath.Join(dir, "config.toml"), transcript.MaxConfigFile)
	if err != nil {
		return nil
	}
	var cfg struct {
		Features map[string]any `toml:"features"`
		Hooks    map[string]any `toml:"hooks"`
	}
	if err := toml.Unmarshal(b, &cfg); err != nil {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		return []string{fmt.Sprintf("config.toml does not parse (%v); Codex may not start", msg)}
	}
	var notes []string
	for _, k := range []string{"hooks", "codex_hooks"} {
		if v, ok := cfg.Features[k].(bool); ok && !v {
			notes = append(notes, fmt.Sprintf("[features] %s = false in config.toml turns hooks off", k))
		}
	}
	for k := range cfg.Hooks {
		if k != "state" {
			notes = append(notes, "config.toml also defines [hooks]; Codex warns when hooks.json and config.toml both define hooks")
			break
		}
	}
	return notes
}
