package hookevent

import (
	"encoding/json"
	"strings"
)

// opencodeEvent is what `muster hook event opencode` reads on stdin: one
// OpenCode event, exactly as the plugin's `event` callback receives it from
// the bus (`{"id":"evt_…","type":"session.idle","properties":{…}}`), or one
// plugin hook call wrapped in the same shape:
//
//	{"type":"tool.execute.before","properties":{"input":{…},"output":{…}}}
//	{"type":"chat.message","properties":{"input":{…},"output":{…}}}
//
// (input and output are the two arguments the hook function receives.)
type opencodeEvent struct {
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
			Type    flexString `json:"type"`
			Attempt flexString `json:"attempt"`
			Message flexString `json:"message"`
		} `json:"status"`
		Error struct {
			Name flexString `json:"name"`
			Data struct {
				Message flexString `json:"message"`
			} `json:"data"`
		} `json:"error"`
		// permission.asked (v2) and permission.updated (v1)
		Permission flexString      `json:"permission"`
		Patterns   json.RawMessage `json:"patterns"`
		PermType   flexString      `json:"type"`
		Pattern    json.RawMessage `json:"pattern"`
		Title      flexString      `json:"title"`
		// question.asked
		Questions []struct {
			Question flexString `json:"question"`
			Header   flexString `json:"header"`
		} `json:"questions"`
		// wrapped plugin hooks
		Input struct {
			SessionID string          `json:"sessionID"`
			Tool      flexString      `json:"tool"`
			Args      json.RawMessage `json:"args"`
		} `json:"input"`
		Output struct {
			Args    json.RawMessage `json:"args"`
			Message struct {
				ID   string `json:"id"`
				Role string `json:"role"`
			} `json:"message"`
			Parts []struct {
				Type flexString `json:"type"`
				Text flexString `json:"text"`
			} `json:"parts"`
		} `json:"output"`
	} `json:"properties"`
}

// opencodeIntent maps OpenCode events (research/real-cli/opencode, 1.18.33).
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
func opencodeIntent(payload []byte) (intent, error) {
	var e opencodeEvent
	if err := json.Unmarshal(payload, &e); err != nil {
		return intent{}, malformed("%v", err)
	}
	pr := &e.Properties
	in := intent{hook: e.Type}
	in.session = pr.SessionID
	if in.session == "" {
		in.session = pr.Input.SessionID
	}
	if in.session == "" {
		in.session = pr.Info.SessionID
	}
	if in.session == "" && strings.HasPrefix(e.Type, "session.") {
		in.session = pr.Info.ID
	}
	switch e.Type {
	case "session.created":
		if pr.Info.ParentID != "" {
			in.act = actChildSession
		} else {
			in.why = "session created"
		}
	case "message.updated":
		if pr.Info.Role == "user" && pr.Info.ID != "" {
			in.act, in.turnKey = actTurnStart, in.session+"/"+pr.Info.ID
		} else {
			in.why = "message update"
		}
	case "chat.message":
		if pr.Output.Message.ID != "" && (pr.Output.Message.Role == "" || pr.Output.Message.Role == "user") {
			in.act, in.turnKey = actTurnStart, in.session+"/"+pr.Output.Message.ID
			for _, part := range pr.Output.Parts {
				if part.Type == "text" && part.Text != "" {
					in.prompt = string(part.Text)
					in.message = firstLine(in.prompt)
					break
				}
			}
		} else {
			in.why = "chat message without id"
		}
	case "session.status":
		switch pr.Status.Type {
		case "busy":
			in.act = actBusy
		case "retry":
			in.act = actBusy
			in.message = join(": ", "retry "+string(pr.Status.Attempt), string(pr.Status.Message))
		default:
			in.why = "status " + string(pr.Status.Type)
		}
	case "tool.execute.before", "tool.execute.after":
		args := pr.Output.Args
		if len(args) == 0 {
			args = pr.Input.Args
		}
		in.act, in.message = actRunning, toolSummary(string(pr.Input.Tool), args)
	case "permission.replied", "question.replied", "question.rejected":
		in.act = actRunning
	case "permission.asked", "permission.updated":
		in.act = actApproval
		kind := string(pr.Permission)
		if kind == "" {
			kind = string(pr.PermType)
		}
		in.message = join(": ", kind, join(" ", patternList(pr.Patterns), patternList(pr.Pattern)))
		if in.message == kind && pr.Title != "" {
			in.message = join(": ", kind, string(pr.Title))
		}
	case "question.asked":
		in.act = actInput
		for _, q := range pr.Questions {
			if in.message = join(": ", string(q.Header), string(q.Question)); in.message != "" {
				break
			}
		}
	case "session.idle":
		in.act = actSucceeded
	case "session.error":
		name := string(pr.Error.Name)
		if name == "MessageAbortedError" {
			in.act, in.message = actInterrupted, "aborted"
		} else {
			in.act, in.message = actFailed, join(": ", name, string(pr.Error.Data.Message))
		}
	case "session.deleted":
		in.act, in.message = actSessionEnd, "session deleted"
	default:
		in.why = "event not mapped"
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
