package cursor

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

// HookInstall implements provider.HookInstaller: ~/.cursor/hooks.json,
// {"version":1,"hooks":{event:[{command}]}}.
func (Provider) HookInstall() provider.HookInstall {
	return provider.HookInstall{
		Config: func(env transcript.Env) (string, error) {
			d, err := dir(env)
			return filepath.Join(d, "hooks.json"), err
		},
		JSON: &provider.HookJSON{
			Flat:    true,
			Version: true,
			Events: []provider.HookEvent{
				{Name: "sessionStart", Capture: true},
				{Name: "beforeSubmitPrompt"},
				{Name: "preToolUse"},
				{Name: "postToolUse"},
				{Name: "postToolUseFailure"},
				{Name: "stop"},
				{Name: "sessionEnd"},
			},
			Entries: func(_ provider.HookEvent, cmds []string) []any {
				out := make([]any, len(cmds))
				for i, c := range cmds {
					out[i] = provider.Object{{Key: "command", Value: c}}
				}
				return out
			},
		},
	}
}
