// Package claudehook maps Claude Code's hook payloads for the hook helper
// (internal/hookevent). It is linked into cmd/muster-hook, so it imports
// the standard library and hookmap only.
package claudehook

import (
	"encoding/json"

	"github.com/musterhq/muster/internal/provider/hookmap"
)

// Name is the provider's name.
const Name = "claude"

// Mapping is Claude Code's hook mapping.
var Mapping = hookmap.Mapping{Provider: Name, Map: mapPayload}

// payload holds the fields of a Claude Code hook payload that the mapping
// reads. Unknown fields are ignored.
type payload struct {
	HookEventName        string          `json:"hook_event_name"`
	SessionID            string          `json:"session_id"`
	PromptID             string          `json:"prompt_id"` // Claude Code ≥ 2.1: the turn
	AgentID              string          `json:"agent_id"`  // set inside sub-agents
	Prompt               hookmap.String  `json:"prompt"`
	ToolName             hookmap.String  `json:"tool_name"`
	ToolInput            json.RawMessage `json:"tool_input"`
	Error                hookmap.String  `json:"error"`
	ErrorType            hookmap.String  `json:"error_type"`
	IsInterrupt          hookmap.Bool    `json:"is_interrupt"`
	Message              hookmap.String  `json:"message"`
	NotificationType     hookmap.String  `json:"notification_type"`
	LastAssistantMessage hookmap.String  `json:"last_assistant_message"`
	Reason               hookmap.String  `json:"reason"`
}

func decode(data []byte) (payload, error) {
	var p payload
	err := hookmap.Decode(data, &p)
	return p, err
}

// mapPayload maps Claude Code 2.1 hooks (research/real-cli/claude, 2.1.328):
//
//	UserPromptSubmit                      → started (run = prompt_id)
//	PreToolUse, PostToolUse,
//	PermissionDenied, ElicitationResult   → running
//	PostToolUseFailure                    → interrupted if is_interrupt, else running
//	PermissionRequest                     → approval-requested; for the
//	                                        AskUserQuestion tool input-requested,
//	                                        with the question as the message
//	Notification permission_prompt        → approval-requested, dropped when the
//	                                        PermissionRequest of the run was seen
//	Notification idle_prompt,
//	  elicitation_dialog; Elicitation     → input-requested
//	Stop                                  → succeeded
//	StopFailure                           → failed
//	SessionEnd                            → interrupted if a run is open
//	SessionStart, SubagentStart/Stop, PreCompact, PostCompact, PostToolBatch,
//	  MessageDisplay, everything else     → ignored
//
// Payloads with an agent_id come from a sub-agent and are ignored, except
// approval requests (the dialog is the user's) and the tool events that
// follow an approval (work resumed).
func mapPayload(data []byte) (hookmap.Intent, error) {
	p, err := decode(data)
	if err != nil {
		return hookmap.Intent{}, err
	}
	in := hookmap.Intent{
		Hook:     p.HookEventName,
		Session:  p.SessionID,
		TurnKey:  p.PromptID,
		Prompt:   string(p.Prompt),
		Subagent: p.AgentID != "",
	}
	tool := hookmap.ToolSummary(string(p.ToolName), p.ToolInput)
	switch p.HookEventName {
	case "UserPromptSubmit":
		in.Act, in.Message = hookmap.TurnStart, hookmap.FirstLine(string(p.Prompt))
	case "PreToolUse", "PostToolUse":
		in.Act, in.Message = hookmap.Running, tool
	case "PermissionDenied":
		in.Act, in.Message = hookmap.Running, hookmap.Join(": ", "denied", tool)
	case "ElicitationResult":
		in.Act = hookmap.Running
	case "PostToolUseFailure":
		if p.IsInterrupt {
			in.Act, in.Message = hookmap.Interrupted, hookmap.Join(": ", "interrupted", tool)
		} else {
			// A failing tool (a red test run) does not end the turn: the
			// model reads the error and carries on.
			in.Act, in.Message = hookmap.Running, hookmap.Join(": ", tool, hookmap.FirstLine(string(p.Error)))
		}
	case "PermissionRequest":
		in.Act, in.Message = hookmap.Approval, tool
		if q, ok := questionText(string(p.ToolName), p.ToolInput); ok {
			// The dialog asks the user a question; it approves nothing.
			in.Act, in.Message = hookmap.Input, q
		}
		in.Subagent = false
	case "Notification":
		switch p.NotificationType {
		case "permission_prompt":
			in.Act, in.Message = hookmap.ApprovalEcho, string(p.Message)
			in.Subagent = false
		case "idle_prompt", "elicitation_dialog":
			in.Act, in.Message = hookmap.Input, string(p.Message)
		default:
			in.Why = "notification " + string(p.NotificationType)
		}
	case "Elicitation":
		in.Act, in.Message = hookmap.Input, string(p.Message)
	case "Stop":
		in.Act, in.Message = hookmap.Succeeded, hookmap.FirstLine(string(p.LastAssistantMessage))
	case "StopFailure":
		kind := string(p.Error)
		if kind == "" {
			kind = string(p.ErrorType)
		}
		in.Act, in.Message = hookmap.Failed, hookmap.Join(": ", kind, hookmap.FirstLine(string(p.LastAssistantMessage)))
	case "SessionEnd":
		in.Act, in.Message = hookmap.SessionEnd, hookmap.Join(": ", "session ended", string(p.Reason))
		in.TurnKey = "" // the prompt_id of SessionEnd may be the /exit command's own
	case "SubagentStart", "SubagentStop", "TaskCreated", "TaskCompleted", "TeammateIdle":
		in.Why = "sub-agent event"
	default:
		in.Why = "hook not mapped"
	}
	if in.Act == hookmap.Ignore && in.Why == "" {
		in.Why = "hook not mapped"
	}
	return in, nil
}

// questionTool is Claude Code's tool that asks the user a multiple-choice
// question. Its dialog fires PermissionRequest (2.1.328, measured in
// e2e/realcli): Enter answers it, Esc declines it, and a decline ends the
// turn with the transcript's "[Request interrupted by user for tool use]".
const questionTool = "AskUserQuestion"

// questionText returns the questions of an AskUserQuestion call,
// {"questions":[{"question":…,"header":…,"options":[…]}]}, joined with " · ".
func questionText(tool string, input json.RawMessage) (string, bool) {
	if tool != questionTool {
		return "", false
	}
	var in struct {
		Questions []struct {
			Question hookmap.String `json:"question"`
		} `json:"questions"`
	}
	if json.Unmarshal(input, &in) != nil {
		return questionTool, true
	}
	var qs []string
	for _, q := range in.Questions {
		if t := hookmap.FirstLine(string(q.Question)); t != "" {
			qs = append(qs, t)
		}
	}
	if len(qs) == 0 {
		return questionTool, true
	}
	return hookmap.Join(" · ", qs...), true
}
