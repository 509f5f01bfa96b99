// Package geminihook maps Gemini CLI's hook payloads for the hook helper
// (internal/hookevent). It is linked into cmd/muster-hook, so it imports
// the standard library and hookmap only.
package geminihook

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/musterhq/muster/internal/provider/hookmap"
)

// Name is the provider's name.
const Name = "gemini"

// Mapping is Gemini CLI's hook mapping. Gemini CLI parses a hook's stdout
// as JSON.
var Mapping = hookmap.Mapping{Provider: Name, Map: mapPayload, JSONReply: true}

// payload holds the fields of a Gemini CLI hook payload the mapping
// reads.
type payload struct {
	HookEventName    string          `json:"hook_event_name"`
	SessionID        string          `json:"session_id"`
	Timestamp        string          `json:"timestamp"`
	Prompt           hookmap.String  `json:"prompt"`
	PromptResponse   hookmap.String  `json:"prompt_response"`
	ToolName         hookmap.String  `json:"tool_name"`
	ToolInput        json.RawMessage `json:"tool_input"`
	NotificationType hookmap.String  `json:"notification_type"`
	Message          hookmap.String  `json:"message"`
	Details          struct {
		Title   hookmap.String `json:"title"`
		Command hookmap.String `json:"command"`
	} `json:"details"`
	Reason         hookmap.String `json:"reason"`
	TranscriptPath string         `json:"transcript_path"`
}

// noResponse is what Gemini CLI puts in AfterAgent's prompt_response
// when the turn produced no text (client.ts: `getResponseText() || '[no
// response text]'`); in the captures it marks the turn that failed after its
// API retries.
const noResponse = "[no response text]"

// mapPayload maps Gemini CLI hooks (research/real-cli/gemini, 0.61.0).
// Gemini payloads carry no turn id: BeforeAgent starts a run whose id is
// derived from the session, BeforeAgent's own timestamp and the prompt, and
// the later hooks of the turn read it back from the session state.
//
//	BeforeAgent                      → started
//	BeforeTool, AfterTool            → running
//	Notification ToolPermission      → approval-requested
//	AfterAgent                       → succeeded; with prompt_response
//	                                   "[no response text]": interrupted
//	                                   when the chat file's last message
//	                                   is the cancel (cancelRecorded),
//	                                   failed otherwise
//	SessionEnd (fires twice)         → interrupted if a run is open (once)
//	SessionStart, PreCompress (every turn), BeforeModel and
//	  BeforeToolSelection (every retry), AfterModel → ignored
func mapPayload(data []byte) (hookmap.Intent, error) {
	var p payload
	if err := hookmap.Decode(data, &p); err != nil {
		return hookmap.Intent{}, err
	}
	in := hookmap.Intent{
		Hook:    p.HookEventName,
		Session: p.SessionID,
		Prompt:  string(p.Prompt),
		Stamp:   p.Timestamp,
	}
	if t, err := time.Parse(time.RFC3339Nano, p.Timestamp); err == nil {
		in.At = t
	}
	switch p.HookEventName {
	case "BeforeAgent":
		in.Act, in.Message = hookmap.TurnStart, hookmap.FirstLine(string(p.Prompt))
	case "BeforeTool", "AfterTool":
		in.Act, in.Message = hookmap.Running, hookmap.ToolSummary(string(p.ToolName), p.ToolInput)
	case "Notification":
		if p.NotificationType == "ToolPermission" {
			in.Act = hookmap.Approval
			in.Message = hookmap.Join(": ", string(p.Details.Title), string(p.Details.Command))
			if in.Message == "" {
				in.Message = string(p.Message)
			}
		} else {
			in.Why = "notification " + string(p.NotificationType)
		}
	case "AfterAgent":
		switch {
		case string(p.PromptResponse) == noResponse && cancelRecorded(p.TranscriptPath):
			in.Act, in.Message = hookmap.Interrupted, "turn cancelled (chat file: info "+cancelled+")"
		case string(p.PromptResponse) == noResponse:
			in.Act, in.Message = hookmap.Failed, "turn ended without a response (API error?)"
		default:
			in.Act, in.Message = hookmap.Succeeded, hookmap.FirstLine(string(p.PromptResponse))
		}
	case "SessionEnd":
		in.Act, in.Message = hookmap.SessionEnd, hookmap.Join(": ", "session ended", string(p.Reason))
	default:
		in.Why = "hook not mapped"
	}
	return in, nil
}

// cancelled is the info message Gemini CLI 0.61.0 records in its chat file
// when the user cancels the turn (Esc; a refused tool), internal/provider/
// gemini's turn reader reads the same.
const cancelled = "Request cancelled."

// tailSize bounds what cancelRecorded reads of a chat file: the records
// after the prompt are a few small lines.
const tailSize = 64 << 10

// cancelRecorded reports whether the last message of the chat file at path
// (the payload's transcript_path) is the cancel. Gemini CLI fires
// AfterAgent with "[no response text]" both for a turn the API failed and
// for one the user cancelled; it records the cancel (an info message)
// synchronously in the key's handler, before the aborted turn unwinds to
// AfterAgent, and an API error as an error message. Anything unreadable is
// not a cancel.
func cancelRecorded(path string) bool {
	if !filepath.IsAbs(path) || filepath.Ext(path) != ".jsonl" {
		return false
	}
	// Non-blocking: a FIFO at the path must not hang the hook.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	off := max(fi.Size()-tailSize, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return false
	}
	lines := bytes.Split(buf, []byte{'\n'})
	for i := len(lines) - 1; i >= 0; i-- {
		var m struct {
			ID      *string         `json:"id"`
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if len(bytes.TrimSpace(lines[i])) == 0 || json.Unmarshal(lines[i], &m) != nil || m.ID == nil || m.Type == "" {
			continue // metadata, $set, a partial first line
		}
		var text string
		return m.Type == "info" && json.Unmarshal(m.Content, &text) == nil && text == cancelled
	}
	return false
}
