// Package testagenthook maps the hook payloads of testagent, the provider
// that exists only in tests (internal/testing/testprovider). Like a real
// provider's hook subpackage it imports the standard library and hookmap
// only, so that it could be linked into cmd/muster-hook.
package testagenthook

import "github.com/musterhq/muster/internal/provider/hookmap"

// Name is the provider's name.
const Name = "testagent"

// Mapping is testagent's hook mapping.
var Mapping = hookmap.Mapping{Provider: Name, Map: mapPayload}

// payload is one testagent hook: {"event": "start"|"prompt"|"tool"|"stop"|
// "end", "session": …, "turn": …, "text": …}.
type payload struct {
	Event   string         `json:"event"`
	Session string         `json:"session"`
	Turn    string         `json:"turn"`
	Text    hookmap.String `json:"text"`
}

// mapPayload maps testagent's hooks:
//
//	prompt  → started (run = turn)
//	tool    → running
//	stop    → succeeded
//	end     → interrupted if a run is open
//	start   → ignored (a session starting is not a run)
func mapPayload(data []byte) (hookmap.Intent, error) {
	var p payload
	if err := hookmap.Decode(data, &p); err != nil {
		return hookmap.Intent{}, err
	}
	in := hookmap.Intent{Hook: p.Event, Session: p.Session, TurnKey: p.Turn, Prompt: string(p.Text)}
	switch p.Event {
	case "prompt":
		in.Act, in.Message = hookmap.TurnStart, hookmap.FirstLine(string(p.Text))
	case "tool":
		in.Act, in.Message = hookmap.Running, string(p.Text)
	case "stop":
		in.Act, in.Message = hookmap.Succeeded, hookmap.FirstLine(string(p.Text))
	case "end":
		in.Act, in.TurnKey = hookmap.SessionEnd, ""
	default:
		in.Why = "hook not mapped"
	}
	return in, nil
}
