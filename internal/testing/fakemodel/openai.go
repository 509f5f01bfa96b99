package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// openaiRequest is the part of a Responses API request the server reads.
type openaiRequest struct {
	Model  string          `json:"model"`
	Stream bool            `json:"stream"`
	Input  json.RawMessage `json:"input"`
	Text   struct {
		Format *outputFormat `json:"format"`
	} `json:"text"`
	Tools []struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func (req openaiRequest) toolNames() []string {
	var names []string
	for _, t := range req.Tools {
		if t.Name != "" {
			names = append(names, t.Name)
		} else if t.Function.Name != "" {
			names = append(names, t.Function.Name)
		}
	}
	return names
}

func (s *Server) openai(r *http.Request, body []byte) answer {
	path := r.URL.Path
	switch {
	case r.Method == http.MethodGet && path == "/v1/models":
		return jsonAnswer(false, KindSide, 0, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	case r.Method == http.MethodPost && path == "/v1/responses":
	default:
		return jsonAnswer(false, KindNotFound, http.StatusNotFound, openaiError("fakemodel: no such endpoint "+r.Method+" "+path))
	}
	var req openaiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return jsonAnswer(false, KindFail, http.StatusBadRequest, openaiError("fakemodel: request body is not JSON: "+err.Error()))
	}
	// Codex's own turns offer its tools; its helper calls offer none.
	tools := req.toolNames()
	turn := len(tools) > 0
	reply := Reply{kind: KindSide, text: sideText(req.Text.Format)}
	if turn {
		reply = s.take(fingerprint(OpenAI, body))
	}
	if reply.kind == KindFail {
		a := jsonAnswer(true, KindFail, reply.status, openaiError(reply.text))
		if !reply.limit.IsZero() {
			a = openaiLimit(reply.limit)
		}
		a.reply = reply
		return a
	}
	a := answer{turn: turn, reply: reply}
	model := req.Model
	stream := req.Stream
	a.build = func() []byte { return openaiResponse(reply, model, tools, stream) }
	if stream {
		a.ctype = "text/event-stream"
	}
	return a
}

func openaiError(message string) map[string]any {
	return map[string]any{"error": map[string]any{"message": message, "type": "invalid_request_error", "param": nil, "code": nil}}
}

// openaiShellCall builds the function call for command with the first of
// Codex's shell tools that the request offers. Each asks for escalated
// sandbox permissions, which makes Codex ask the user whatever the command.
func openaiShellCall(command string, tools []string) (name string, args map[string]any) {
	has := func(n string) bool {
		for _, t := range tools {
			if t == n {
				return true
			}
		}
		return false
	}
	just := "fakemodel asks to run " + command
	switch {
	case has("exec_command"):
		// Codex yields a command still running after yield_time_ms
		// (10 s by default) and the turn goes on without it; the longest
		// wait it allows keeps a slow command in its call, as the other
		// CLIs keep it.
		return "exec_command", map[string]any{"cmd": command, "sandbox_permissions": "require_escalated", "justification": just, "yield_time_ms": 30000}
	case has("shell_command"):
		return "shell_command", map[string]any{"command": command, "sandbox_permissions": "require_escalated", "justification": just}
	default:
		return "shell", map[string]any{"command": []string{"bash", "-lc", command}, "sandbox_permissions": "require_escalated", "justification": just}
	}
}

// openaiResponse renders reply as a Responses API response, streamed or
// whole.
func openaiResponse(reply Reply, model string, tools []string, stream bool) []byte {
	rid := "resp_" + randHex(12)
	var item map[string]any
	if reply.kind == KindShell {
		name, args := openaiShellCall(reply.command, tools)
		item = map[string]any{
			"type": "function_call", "id": "fc_" + randHex(12), "call_id": "call_" + randHex(12),
			"name": name, "arguments": mustJSON(args), "status": "completed",
		}
	} else {
		item = map[string]any{
			"type": "message", "id": "msg_" + randHex(12), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": reply.text, "annotations": []any{}}},
		}
	}
	usage := map[string]any{
		"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": 15,
	}
	completed := map[string]any{"id": rid, "object": "response", "model": model, "status": "completed", "output": []any{item}, "usage": usage}
	if !stream {
		return []byte(mustJSON(completed))
	}
	var e sse
	e.event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": rid, "object": "response", "model": model, "status": "in_progress", "output": []any{}}})
	e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	if item["type"] == "message" {
		e.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": item["id"], "delta": reply.text})
	}
	e.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	e.event("response.completed", map[string]any{"type": "response.completed", "response": completed})
	return e.bytes()
}

// openaiPrompt returns the text of the last user message in the input, and
// the output of the last tool call result after it.
func openaiPrompt(body []byte) (prompt, toolOutput string, hasTool bool) {
	var req openaiRequest
	if json.Unmarshal(body, &req) != nil {
		return "", "", false
	}
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		return s, "", false
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Output  json.RawMessage `json:"output"`
	}
	if json.Unmarshal(req.Input, &items) != nil {
		return "", "", false
	}
	for _, it := range items {
		switch {
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
			hasTool = true
			toolOutput = openaiOutputText(it.Output)
		case it.Role == "user" && (it.Type == "" || it.Type == "message"):
			// A user message starts a new exchange: tool results before it
			// belong to an earlier turn.
			prompt = openaiContentText(it.Content)
			hasTool, toolOutput = false, ""
		}
	}
	return prompt, toolOutput, hasTool
}

// openaiContentText flattens message content: a string or input_text parts.
func openaiContentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n")
}

// openaiOutputText flattens a tool output: a string, or an object or parts
// with text.
func openaiOutputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != "" {
		return obj.Content
	}
	return openaiContentText(raw)
}

// openaiLimit is the answer of the ChatGPT backend to an account at its
// usage limit, as Codex parses it: the error type usage_limit_reached with
// the reset as Unix seconds, and the rate-limit headers of the primary
// (five-hour) window at 100 %.
func openaiLimit(resets time.Time) answer {
	in := max(int64(time.Until(resets).Seconds()), 0)
	a := jsonAnswer(true, KindFail, http.StatusTooManyRequests, map[string]any{"error": map[string]any{
		"type":              "usage_limit_reached",
		"message":           "The usage limit has been reached",
		"plan_type":         "plus",
		"resets_at":         resets.Unix(),
		"resets_in_seconds": in,
	}})
	a.header = map[string]string{
		"x-codex-primary-used-percent":        "100",
		"x-codex-primary-window-minutes":      "300",
		"x-codex-primary-reset-at":            fmt.Sprint(resets.Unix()),
		"x-codex-primary-reset-after-seconds": fmt.Sprint(in),
	}
	return a
}
