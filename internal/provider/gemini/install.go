package gemini

import (
	"path/filepath"
	"strings"

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

// HookInstall implements provider.HookInstaller: settings.json (read with
// comments stripped) "hooks", groups of {matcher, hooks[]} whose handlers
// have a name; timeouts in milliseconds.
func (Provider) HookInstall() provider.HookInstall {
	return provider.HookInstall{
		Config: func(env transcript.Env) (string, error) {
			d, err := dir(env)
			return filepath.Join(d, "settings.json"), err
		},
		JSON: &provider.HookJSON{
			JSONC: true,
			Events: []provider.HookEvent{
				{Name: "SessionStart", Capture: true, Timeout: 10000},
				{Name: "BeforeAgent", Timeout: 10000},
				{Name: "BeforeTool", Timeout: 10000},
				{Name: "AfterTool", Timeout: 10000},
				{Name: "Notification", Timeout: 10000},
				{Name: "AfterAgent", Timeout: 10000},
				{Name: "SessionEnd", Timeout: 10000},
			},
			Entries: func(ev provider.HookEvent, cmds []string) []any {
				hs := make([]any, len(cmds))
				for i, c := range cmds {
					name := "muster-event"
					if strings.Contains(c, " hook capture ") {
						name = "muster-capture"
					}
					hs[i] = provider.Object{{Key: "name", Value: name}, {Key: "type", Value: "command"}, {Key: "command", Value: c}, {Key: "timeout", Value: ev.Timeout}}
				}
				return []any{provider.Object{{Key: "matcher", Value: "*"}, {Key: "hooks", Value: hs}}}
			},
		},
		Notes: func(_ transcript.Env, settings string) []string {
			if v := transcript.Parse(settings).Get("hooksConfig.enabled"); v.Exists() && !v.Bool() {
				return []string{`"hooksConfig.enabled": false in settings.json turns every hook off`}
			}
			return nil
		},
	}
}
