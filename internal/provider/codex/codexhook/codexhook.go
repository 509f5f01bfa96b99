// Package codexhook maps the Codex CLI's hook payloads for the hook helper
// (internal/hookevent). It is linked into cmd/muster-hook, so it imports
// the standard library and hookmap only.
package codexhook

import (
	"encoding/json"

	"github.com/musterhq/muster/internal/provider/hookmap"
)

// Name is the provider's name.
const Name = "codex"

// Mapping is the Codex CLI's hook mapping. Codex may run hooks from a
// shared process started by another pane (its app-server), so events are
// routed by session id.
var Mapping = hookmap.Mapping{Provider: Name, Map: mapPayload, RoutedBySession: true}

// payload holds the fields of a Codex hook payload that the mapping reads
// (Codex copies Claude Code's schema). Unknown fields are ignored.
type payload struct {
	HookEventName        string          `json:"hook_event_name"`
	SessionID            string          `json:"session_id"`
	Model                hookmap.String  `json:"model"`
	TurnID               string          `json:"turn_id"`  // the turn
	AgentID              string          `json:"agent_id"` // set inside sub-agents
	Prompt               hookmap.String  `json:"prompt"`
	ToolName             hookmap.String  `json:"tool_name"`
	ToolInput            json.RawMessage `json:"tool_input"`
	Error                hookmap.String  `json:"error"`
	ErrorType            hookmap.String  `json:"error_type"`
	LastAssistantMessage hookmap.String  `json:"last_assistant_message"`
	Reason               hookmap.String  `json:"reason"`
}

// mapPayload maps Codex CLI hooks (research/real-cli/codex, 0.169.0). The
// payload schema is Claude's; the turn id is turn_id:
//
//	UserPromptSubmit          → started (run = turn_id)
//	PreToolUse, PostToolUse   → running
//	PermissionRequest         → approval-requested
//	Stop                      → succeeded
//	StopFailure               → failed
//	Interrupt                 → interrupted
//	SessionEnd                → interrupted if a run is open
//	SessionStart (fires lazily with the first prompt), SubagentStart/Stop,
//	  PreCompact, PostCompact → ignored
//
// Codex fires no Stop after an Esc interrupt or a denied permission; the
// next UserPromptSubmit closes that turn as interrupted.
func mapPayload(data []byte) (hookmap.Intent, error) {
	var p payload
	if err := hookmap.Decode(data, &p); err != nil {
		return hookmap.Intent{}, err
	}
	in := hookmap.Intent{
		Hook:     p.HookEventName,
		Session:  p.SessionID,
		TurnKey:  p.TurnID,
		Prompt:   string(p.Prompt),
		Subagent: p.AgentID != "",
		Model:    string(p.Model),
	}
	tool := hookmap.ToolSummary(string(p.ToolName), p.ToolInput)
	switch p.HookEventName {
	case "UserPromptSubmit":
		in.Act, in.Message = hookmap.TurnStart, hookmap.FirstLine(string(p.Prompt))
	case "PreToolUse", "PostToolUse":
		in.Act, in.Message = hookmap.Running, tool
	case "PermissionRequest":
		in.Act, in.Message = hookmap.Approval, tool
		in.Subagent = false
	case "Stop":
		in.Act, in.Message = hookmap.Succeeded, hookmap.FirstLine(string(p.LastAssistantMessage))
	case "StopFailure":
		kind := string(p.Error)
		if kind == "" {
			kind = string(p.ErrorType)
		}
		in.Act, in.Message = hookmap.Failed, hookmap.Join(": ", kind, hookmap.FirstLine(string(p.LastAssistantMessage)))
	case "Interrupt":
		in.Act, in.Message = hookmap.Interrupted, "interrupted"
	case "SessionEnd":
		in.Act, in.Message = hookmap.SessionEnd, hookmap.Join(": ", "session ended", string(p.Reason))
		in.TurnKey = ""
	case "SubagentStart", "SubagentStop":
		in.Why = "sub-agent event"
	default:
		in.Why = "hook not mapped"
	}
	return in, nil
}
