package claude

import (
	"path/filepath"

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

// HookInstall implements provider.HookInstaller: settings.json "hooks",
// groups of {matcher, hooks[]}, timeouts in seconds. The events are the
// lifecycle rows of research/providers.md and the events Claude Code
// 2.1.328 fired in research/real-cli.
func (Provider) HookInstall() provider.HookInstall {
	return provider.HookInstall{
		Config: func(env transcript.Env) (string, error) {
			d, err := configDir(env)
			return filepath.Join(d, "settings.json"), err
		},
		JSON: &provider.HookJSON{
			Events: []provider.HookEvent{
				{Name: "SessionStart", Capture: true, Timeout: 10},
				{Name: "UserPromptSubmit", Timeout: 10},
				{Name: "PreToolUse", Timeout: 10},
				{Name: "PostToolUse", Timeout: 10},
				{Name: "PostToolUseFailure", Timeout: 10},
				{Name: "PermissionRequest", Timeout: 10},
				{Name: "PermissionDenied", Timeout: 10},
				{Name: "Notification", Timeout: 10},
				{Name: "Stop", Timeout: 10},
				{Name: "StopFailure", Timeout: 10},
				{Name: "SessionEnd", Timeout: 10},
			},
			Entries: func(ev provider.HookEvent, cmds []string) []any {
				hs := make([]any, len(cmds))
				for i, c := range cmds {
					hs[i] = provider.Object{{Key: "type", Value: "command"}, {Key: "command", Value: c}, {Key: "timeout", Value: ev.Timeout}}
				}
				return []any{provider.Object{{Key: "matcher", Value: ""}, {Key: "hooks", Value: hs}}}
			},
		},
		Notes: func(_ transcript.Env, settings string) []string {
			if transcript.Parse(settings).Get("disableAllHooks").Bool() {
				return []string{`"disableAllHooks": true in settings.json turns every hook off`}
			}
			return nil
		},
	}
}
