// Package cursorhook maps the Cursor CLI's hook payloads for the hook helper
// (internal/hookevent). It is linked into cmd/muster-hook, so it imports
// the standard library and hookmap only.
package cursorhook

import (
	"encoding/json"

	"github.com/musterhq/muster/internal/provider/hookmap"
)

// Name is the provider's name.
const Name = "cursor"

// Mapping is the Cursor CLI's hook mapping. Cursor parses a hook's stdout
// as JSON.
var Mapping = hookmap.Mapping{Provider: Name, Map: mapPayload, JSONReply: true}

// payload holds the fields of a Cursor CLI hook payload the mapping
// reads (research/providers.md §4.2; no capture of a real run exists).
type payload struct {
	HookEventName        string          `json:"hook_event_name"`
	ConversationID       string          `json:"conversation_id"`
	GenerationID         string          `json:"generation_id"`
	SessionID            string          `json:"session_id"`
	Model                hookmap.String  `json:"model"`
	ParentConversationID string          `json:"parent_conversation_id"`
	Prompt               hookmap.String  `json:"prompt"`
	Status               hookmap.String  `json:"status"`
	ToolName             hookmap.String  `json:"tool_name"`
	ToolInput            json.RawMessage `json:"tool_input"`
	Command              hookmap.String  `json:"command"`
	Error                hookmap.String  `json:"error"`
	Reason               hookmap.String  `json:"reason"`
}

// mapPayload maps Cursor CLI hooks. Every payload has conversation_id and
// generation_id; their pair is the turn.
//
//	beforeSubmitPrompt                           → started
//	preToolUse, postToolUse, postToolUseFailure,
//	  before/afterShellExecution, before/afterMCPExecution,
//	  beforeReadFile, afterFileEdit              → running
//	stop status completed | error | aborted      → succeeded | failed | interrupted
//	sessionEnd                                   → interrupted if a run is open
//	sessionStart, subagentStart/Stop, preCompact,
//	  afterAgentResponse, afterAgentThought      → ignored
//
// Cursor has no approval hook (its before*Execution hooks gate, they do not
// report a dialog).
func mapPayload(data []byte) (hookmap.Intent, error) {
	var p payload
	if err := hookmap.Decode(data, &p); err != nil {
		return hookmap.Intent{}, err
	}
	session := p.ConversationID
	if session == "" {
		session = p.SessionID
	}
	in := hookmap.Intent{Hook: p.HookEventName, Session: session, Prompt: string(p.Prompt), Model: string(p.Model)}
	if p.ConversationID != "" && p.GenerationID != "" {
		in.TurnKey = p.ConversationID + "/" + p.GenerationID
	}
	switch p.HookEventName {
	case "beforeSubmitPrompt":
		in.Act, in.Message = hookmap.TurnStart, hookmap.FirstLine(string(p.Prompt))
	case "preToolUse", "postToolUse", "beforeMCPExecution", "afterMCPExecution", "beforeReadFile", "afterFileEdit":
		in.Act, in.Message = hookmap.Running, hookmap.ToolSummary(string(p.ToolName), p.ToolInput)
	case "postToolUseFailure":
		in.Act, in.Message = hookmap.Running, hookmap.Join(": ", hookmap.ToolSummary(string(p.ToolName), p.ToolInput), hookmap.FirstLine(string(p.Error)))
	case "beforeShellExecution", "afterShellExecution":
		in.Act, in.Message = hookmap.Running, hookmap.Join(": ", "Shell", string(p.Command))
	case "stop":
		switch p.Status {
		case "completed", "":
			in.Act = hookmap.Succeeded
		case "error":
			in.Act, in.Message = hookmap.Failed, "error"
		case "aborted":
			in.Act, in.Message = hookmap.Interrupted, "aborted"
		default:
			in.Why = "stop status " + string(p.Status)
		}
	case "sessionEnd":
		in.Act, in.Message = hookmap.SessionEnd, hookmap.Join(": ", "session ended", string(p.Reason))
		in.TurnKey = ""
	case "subagentStart", "subagentStop":
		in.Why = "sub-agent event"
	default:
		in.Why = "hook not mapped"
	}
	if p.ParentConversationID != "" && in.Act != hookmap.SessionEnd {
		in.Act, in.Why = hookmap.Ignore, "sub-agent event"
	}
	return in, nil
}
