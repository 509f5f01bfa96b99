package hookevent

import (
	"encoding/json"
	"time"
)

// claudePayload holds the fields of a Claude Code (and Codex, which copies
// its schema) hook payload that the mapping reads. Unknown fields are
// ignored.
type claudePayload struct {
	HookEventName        string          `json:"hook_event_name"`
	SessionID            string          `json:"session_id"`
	PromptID             string          `json:"prompt_id"` // Claude Code ≥ 2.1: the turn
	TurnID               string          `json:"turn_id"`   // Codex: the turn
	AgentID              string          `json:"agent_id"`  // set inside sub-agents
	Prompt               flexString      `json:"prompt"`
	ToolName             flexString      `json:"tool_name"`
	ToolInput            json.RawMessage `json:"tool_input"`
	Error                flexString      `json:"error"`
	ErrorType            flexString      `json:"error_type"`
	IsInterrupt          flexBool        `json:"is_interrupt"`
	Message              flexString      `json:"message"`
	NotificationType     flexString      `json:"notification_type"`
	LastAssistantMessage flexString      `json:"last_assistant_message"`
	Reason               flexString      `json:"reason"`
}

func decodeClaudeLike(payload []byte) (claudePayload, error) {
	var p claudePayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return p, malformed("%v", err)
	}
	return p, nil
}

// claudeIntent maps Claude Code 2.1 hooks (research/real-cli/claude, 2.1.328):
//
//	UserPromptSubmit                      → started (run = prompt_id)
//	PreToolUse, PostToolUse,
//	PermissionDenied, ElicitationResult   → running
//	PostToolUseFailure                    → interrupted if is_interrupt, else running
//	PermissionRequest                     → approval-requested
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
func claudeIntent(payload []byte) (intent, error) {
	p, err := decodeClaudeLike(payload)
	if err != nil {
		return intent{}, err
	}
	in := intent{
		hook:     p.HookEventName,
		session:  p.SessionID,
		turnKey:  p.PromptID,
		prompt:   string(p.Prompt),
		subagent: p.AgentID != "",
	}
	tool := toolSummary(string(p.ToolName), p.ToolInput)
	switch p.HookEventName {
	case "UserPromptSubmit":
		in.act, in.message = actTurnStart, firstLine(string(p.Prompt))
	case "PreToolUse", "PostToolUse":
		in.act, in.message = actRunning, tool
	case "PermissionDenied":
		in.act, in.message = actRunning, join(": ", "denied", tool)
	case "ElicitationResult":
		in.act = actRunning
	case "PostToolUseFailure":
		if p.IsInterrupt {
			in.act, in.message = actInterrupted, join(": ", "interrupted", tool)
		} else {
			// A failing tool (a red test run) does not end the turn: the
			// model reads the error and carries on.
			in.act, in.message = actRunning, join(": ", tool, firstLine(string(p.Error)))
		}
	case "PermissionRequest":
		in.act, in.message = actApproval, tool
		in.subagent = false
	case "Notification":
		switch p.NotificationType {
		case "permission_prompt":
			in.act, in.message = actApprovalEcho, string(p.Message)
			in.subagent = false
		case "idle_prompt", "elicitation_dialog":
			in.act, in.message = actInput, string(p.Message)
		default:
			in.why = "notification " + string(p.NotificationType)
		}
	case "Elicitation":
		in.act, in.message = actInput, string(p.Message)
	case "Stop":
		in.act, in.message = actSucceeded, firstLine(string(p.LastAssistantMessage))
	case "StopFailure":
		kind := string(p.Error)
		if kind == "" {
			kind = string(p.ErrorType)
		}
		in.act, in.message = actFailed, join(": ", kind, firstLine(string(p.LastAssistantMessage)))
	case "SessionEnd":
		in.act, in.message = actSessionEnd, join(": ", "session ended", string(p.Reason))
		in.turnKey = "" // the prompt_id of SessionEnd may be the /exit command's own
	case "SubagentStart", "SubagentStop", "TaskCreated", "TaskCompleted", "TeammateIdle":
		in.why = "sub-agent event"
	default:
		in.why = "hook not mapped"
	}
	if in.act == actIgnore && in.why == "" {
		in.why = "hook not mapped"
	}
	return in, nil
}

// codexIntent maps Codex CLI hooks (research/real-cli/codex, 0.169.0). The
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
func codexIntent(payload []byte) (intent, error) {
	p, err := decodeClaudeLike(payload)
	if err != nil {
		return intent{}, err
	}
	in := intent{
		hook:     p.HookEventName,
		session:  p.SessionID,
		turnKey:  p.TurnID,
		prompt:   string(p.Prompt),
		subagent: p.AgentID != "",
	}
	tool := toolSummary(string(p.ToolName), p.ToolInput)
	switch p.HookEventName {
	case "UserPromptSubmit":
		in.act, in.message = actTurnStart, firstLine(string(p.Prompt))
	case "PreToolUse", "PostToolUse":
		in.act, in.message = actRunning, tool
	case "PermissionRequest":
		in.act, in.message = actApproval, tool
		in.subagent = false
	case "Stop":
		in.act, in.message = actSucceeded, firstLine(string(p.LastAssistantMessage))
	case "StopFailure":
		kind := string(p.Error)
		if kind == "" {
			kind = string(p.ErrorType)
		}
		in.act, in.message = actFailed, join(": ", kind, firstLine(string(p.LastAssistantMessage)))
	case "Interrupt":
		in.act, in.message = actInterrupted, "interrupted"
	case "SessionEnd":
		in.act, in.message = actSessionEnd, join(": ", "session ended", string(p.Reason))
		in.turnKey = ""
	case "SubagentStart", "SubagentStop":
		in.why = "sub-agent event"
	default:
		in.why = "hook not mapped"
	}
	return in, nil
}

// geminiPayload holds the fields of a Gemini CLI hook payload the mapping
// reads.
type geminiPayload struct {
	HookEventName    string          `json:"hook_event_name"`
	SessionID        string          `json:"session_id"`
	Timestamp        string          `json:"timestamp"`
	Prompt           flexString      `json:"prompt"`
	PromptResponse   flexString      `json:"prompt_response"`
	ToolName         flexString      `json:"tool_name"`
	ToolInput        json.RawMessage `json:"tool_input"`
	NotificationType flexString      `json:"notification_type"`
	Message          flexString      `json:"message"`
	Details          struct {
		Title   flexString `json:"title"`
		Command flexString `json:"command"`
	} `json:"details"`
	Reason flexString `json:"reason"`
}

// geminiNoResponse is what Gemini CLI puts in AfterAgent's prompt_response
// when the turn produced no text (client.ts: `getResponseText() || '[no
// response text]'`); in the captures it marks the turn that failed after its
// API retries.
const geminiNoResponse = "[no response text]"

// geminiIntent maps Gemini CLI hooks (research/real-cli/gemini, 0.61.0).
// Gemini payloads carry no turn id: BeforeAgent starts a run whose id is
// derived from the session, BeforeAgent's own timestamp and the prompt, and
// the later hooks of the turn read it back from the session state.
//
//	BeforeAgent                      → started
//	BeforeTool, AfterTool            → running
//	Notification ToolPermission      → approval-requested
//	AfterAgent                       → succeeded; failed when prompt_response
//	                                   is "[no response text]"
//	SessionEnd (fires twice)         → interrupted if a run is open (once)
//	SessionStart, PreCompress (every turn), BeforeModel and
//	  BeforeToolSelection (every retry), AfterModel → ignored
func geminiIntent(payload []byte) (intent, error) {
	var p geminiPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return intent{}, malformed("%v", err)
	}
	in := intent{
		hook:    p.HookEventName,
		session: p.SessionID,
		prompt:  string(p.Prompt),
		stamp:   p.Timestamp,
	}
	if t, err := time.Parse(time.RFC3339Nano, p.Timestamp); err == nil {
		in.at = t
	}
	switch p.HookEventName {
	case "BeforeAgent":
		in.act, in.message = actTurnStart, firstLine(string(p.Prompt))
	case "BeforeTool", "AfterTool":
		in.act, in.message = actRunning, toolSummary(string(p.ToolName), p.ToolInput)
	case "Notification":
		if p.NotificationType == "ToolPermission" {
			in.act = actApproval
			in.message = join(": ", string(p.Details.Title), string(p.Details.Command))
			if in.message == "" {
				in.message = string(p.Message)
			}
		} else {
			in.why = "notification " + string(p.NotificationType)
		}
	case "AfterAgent":
		if string(p.PromptResponse) == geminiNoResponse {
			in.act, in.message = actFailed, "turn ended without a response (API error?)"
		} else {
			in.act, in.message = actSucceeded, firstLine(string(p.PromptResponse))
		}
	case "SessionEnd":
		in.act, in.message = actSessionEnd, join(": ", "session ended", string(p.Reason))
	default:
		in.why = "hook not mapped"
	}
	return in, nil
}

// cursorPayload holds the fields of a Cursor CLI hook payload the mapping
// reads (research/providers.md §4.2; no capture of a real run exists).
type cursorPayload struct {
	HookEventName        string          `json:"hook_event_name"`
	ConversationID       string          `json:"conversation_id"`
	GenerationID         string          `json:"generation_id"`
	SessionID            string          `json:"session_id"`
	ParentConversationID string          `json:"parent_conversation_id"`
	Prompt               flexString      `json:"prompt"`
	Status               flexString      `json:"status"`
	ToolName             flexString      `json:"tool_name"`
	ToolInput            json.RawMessage `json:"tool_input"`
	Command              flexString      `json:"command"`
	Error                flexString      `json:"error"`
	Reason               flexString      `json:"reason"`
}

// cursorIntent maps Cursor CLI hooks. Every payload has conversation_id and
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
func cursorIntent(payload []byte) (intent, error) {
	var p cursorPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return intent{}, malformed("%v", err)
	}
	session := p.ConversationID
	if session == "" {
		session = p.SessionID
	}
	in := intent{hook: p.HookEventName, session: session, prompt: string(p.Prompt)}
	if p.ConversationID != "" && p.GenerationID != "" {
		in.turnKey = p.ConversationID + "/" + p.GenerationID
	}
	switch p.HookEventName {
	case "beforeSubmitPrompt":
		in.act, in.message = actTurnStart, firstLine(string(p.Prompt))
	case "preToolUse", "postToolUse", "beforeMCPExecution", "afterMCPExecution", "beforeReadFile", "afterFileEdit":
		in.act, in.message = actRunning, toolSummary(string(p.ToolName), p.ToolInput)
	case "postToolUseFailure":
		in.act, in.message = actRunning, join(": ", toolSummary(string(p.ToolName), p.ToolInput), firstLine(string(p.Error)))
	case "beforeShellExecution", "afterShellExecution":
		in.act, in.message = actRunning, join(": ", "Shell", string(p.Command))
	case "stop":
		switch p.Status {
		case "completed", "":
			in.act = actSucceeded
		case "error":
			in.act, in.message = actFailed, "error"
		case "aborted":
			in.act, in.message = actInterrupted, "aborted"
		default:
			in.why = "stop status " + string(p.Status)
		}
	case "sessionEnd":
		in.act, in.message = actSessionEnd, join(": ", "session ended", string(p.Reason))
		in.turnKey = ""
	case "subagentStart", "subagentStop":
		in.why = "sub-agent event"
	default:
		in.why = "hook not mapped"
	}
	if p.ParentConversationID != "" && in.act != actSessionEnd {
		in.act, in.why = actIgnore, "sub-agent event"
	}
	return in, nil
}
