// Package opencodehook maps OpenCode's hook payloads for the hook helper
// (internal/hookevent). It is linked into cmd/muster-hook, so it imports
// the standard library and hookmap only.
//
// OpenCode has no command hooks; its plugin spawns `muster hook event
// opencode` with one JSON object on stdin: a bus event exactly as the
// plugin's `event` callback receives it ({"type":"session.idle",
// "properties":{"sessionID":"ses_…"}}), or a plugin hook call wrapped the
// same way ({"type":"tool.execute.before","properties":{"input":{…},
// "output":{…}}}, likewise "chat.message"). The types that matter are
// message.updated, chat.message, session.created, session.status,
// session.idle, session.error, session.deleted, permission.asked,
// permission.updated, permission.replied, question.asked, question.replied,
// question.rejected, tool.execute.before and tool.execute.after; the plugin
// should not spawn the helper for the others (message.part.*, plugin.added).
// The bus events alone suffice: without message events, session.status busy
// with no open turn starts one (its run id then comes from the session and
// the time, not from the user message id).
package opencodehook

import (
	"encoding/json"
	"strings"

	"github.com/musterhq/muster/internal/provider/hookmap"
)

// Name is the provider's name.
const Name = "opencode"

// Mapping is OpenCode's hook mapping. OpenCode has no command hooks: the
// plugin that `muster hooks setup` writes forwards its bus events.
var Mapping = hookmap.Mapping{Provider: Name, Map: mapPayload}

// event is what `muster hook event opencode` reads on stdin: one
// OpenCode event, exactly as the plugin's `event` callback receives it from
// the bus (`{"id":"evt_…","type":"session.idle","properties":{…}}`), or one
// plugin hook call wrapped in the same shape:
//
//	{"type":"tool.execute.before","properties":{"input":{…},"output":{…}}}
//	{"type":"chat.message","properties":{"input":{…},"output":{…}}}
//
// (input and output are the two arguments the hook function receives.)
type event struct {
	Type       string `json:"type"`
	Properties struct {
		SessionID string `json:"sessionID"`
		Info      struct {
			ID        string `json:"id"`
			SessionID string `json:"sessionID"`
			Role      string `json:"role"`
			ParentID  string `json:"parentID"`
		} `json:"info"`
		Status struct {
			Type    hookmap.String `json:"type"`
			Attempt hookmap.String `json:"attempt"`
			Message hookmap.String `json:"message"`
		} `json:"status"`
		Error struct {
			Name hookmap.String `json:"name"`
			Data struct {
				Message hookmap.String `json:"message"`
			} `json:"data"`
		} `json:"error"`
		// permission.asked (v2) and permission.updated (v1)
		Permission hookmap.String  `json:"permission"`
		Patterns   json.RawMessage `json:"patterns"`
		PermType   hookmap.String  `json:"type"`
		Pattern    json.RawMessage `json:"pattern"`
		Title      hookmap.String  `json:"title"`
		// question.asked
		Questions []struct {
			Question hookmap.String `json:"question"`
			Header   hookmap.String `json:"header"`
		} `json:"questions"`
		// wrapped plugin hooks
		Input struct {
			SessionID string          `json:"sessionID"`
			Tool      hookmap.String  `json:"tool"`
			Args      json.RawMessage `json:"args"`
		} `json:"input"`
		Output struct {
			Args    json.RawMessage `json:"args"`
			Message struct {
				ID   string `json:"id"`
				Role string `json:"role"`
			} `json:"message"`
			Parts []struct {
				Type hookmap.String `json:"type"`
				Text hookmap.String `json:"text"`
			} `json:"parts"`
		} `json:"output"`
	} `json:"properties"`
}

// mapPayload maps OpenCode events (research/real-cli/opencode, 1.18.33).
// The turn is the user message: its id (message.updated with role user, or
// chat.message's output.message.id) keys the run; session.status, idle and
// error name only the session and use the remembered turn.
//
//	message.updated role=user, chat.message    → started (run = session/message id)
//	session.status busy|retry with no open turn → started (run = session + time seen)
//	session.status busy|retry,
//	  tool.execute.before|after,
//	  permission.replied, question.replied|rejected → running
//	permission.asked (v2), permission.updated (v1) → approval-requested
//	question.asked                              → input-requested
//	session.idle                                → succeeded
//	session.error                               → failed; interrupted for MessageAbortedError
//	session.deleted                             → interrupted if a run is open
//	session.created with info.parentID          → marks a sub-agent session,
//	                                              whose events are then ignored
//	everything else                             → ignored
func mapPayload(data []byte) (hookmap.Intent, error) {
	var e event
	if err := hookmap.Decode(data, &e); err != nil {
		return hookmap.Intent{}, err
	}
	pr := &e.Properties
	in := hookmap.Intent{Hook: e.Type, RequiresTurn: true}
	in.Session = pr.SessionID
	if in.Session == "" {
		in.Session = pr.Input.SessionID
	}
	if in.Session == "" {
		in.Session = pr.Info.SessionID
	}
	if in.Session == "" && strings.HasPrefix(e.Type, "session.") {
		in.Session = pr.Info.ID
	}
	switch e.Type {
	case "session.created":
		if pr.Info.ParentID != "" {
			in.Act = hookmap.ChildSession
		} else {
			in.Why = "session created"
		}
	case "message.updated":
		if pr.Info.Role == "user" && pr.Info.ID != "" {
			in.Act, in.TurnKey = hookmap.TurnStart, in.Session+"/"+pr.Info.ID
		} else {
			in.Why = "message update"
		}
	case "chat.message":
		if pr.Output.Message.ID != "" && (pr.Output.Message.Role == "" || pr.Output.Message.Role == "user") {
			in.Act, in.TurnKey = hookmap.TurnStart, in.Session+"/"+pr.Output.Message.ID
			for _, part := range pr.Output.Parts {
				if part.Type == "text" && part.Text != "" {
					in.Prompt = string(part.Text)
					in.Message = hookmap.FirstLine(in.Prompt)
					break
				}
			}
		} else {
			in.Why = "chat message without id"
		}
	case "session.status":
		switch pr.Status.Type {
		case "busy":
			in.Act = hookmap.Busy
		case "retry":
			in.Act = hookmap.Busy
			in.Message = hookmap.Join(": ", "retry "+string(pr.Status.Attempt), string(pr.Status.Message))
		default:
			in.Why = "status " + string(pr.Status.Type)
		}
	case "tool.execute.before", "tool.execute.after":
		args := pr.Output.Args
		if len(args) == 0 {
			args = pr.Input.Args
		}
		in.Act, in.Message = hookmap.Running, hookmap.ToolSummary(string(pr.Input.Tool), args)
	case "permission.replied", "question.replied", "question.rejected":
		in.Act = hookmap.Running
	case "permission.asked", "permission.updated":
		in.Act = hookmap.Approval
		kind := string(pr.Permission)
		if kind == "" {
			kind = string(pr.PermType)
		}
		in.Message = hookmap.Join(": ", kind, hookmap.Join(" ", patternList(pr.Patterns), patternList(pr.Pattern)))
		if in.Message == kind && pr.Title != "" {
			in.Message = hookmap.Join(": ", kind, string(pr.Title))
		}
	case "question.asked":
		in.Act = hookmap.Input
		for _, q := range pr.Questions {
			if in.Message = hookmap.Join(": ", string(q.Header), string(q.Question)); in.Message != "" {
				break
			}
		}
	case "session.idle":
		in.Act = hookmap.Succeeded
	case "session.error":
		name := string(pr.Error.Name)
		if name == "MessageAbortedError" {
			in.Act, in.Message = hookmap.Interrupted, "aborted"
		} else {
			in.Act, in.Message = hookmap.Failed, hookmap.Join(": ", name, string(pr.Error.Data.Message))
		}
	case "session.deleted":
		in.Act, in.Message = hookmap.SessionEnd, "session deleted"
	default:
		in.Why = "event not mapped"
	}
	return in, nil
}

// patternList renders a string or a list of strings.
func patternList(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, " ")
	}
	return ""
}
