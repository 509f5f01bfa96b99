package fakemodel

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// anthropicRequest is the part of a Messages API request the server reads.
type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	OutputConfig struct {
		Format *outputFormat `json:"format"`
	} `json:"output_config"`
}

// outputFormat is a structured output request: helper calls such as Claude
// Code's session titles ask for JSON matching a schema.
type outputFormat struct {
	Type   string `json:"type"`
	Schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	} `json:"schema"`
}

// sideText is the answer to a helper call: "ok", or when the call asks for
// a JSON schema, an object with every required property set.
func sideText(f *outputFormat) string {
	if f == nil || f.Type != "json_schema" {
		return "ok"
	}
	obj := map[string]any{}
	for _, name := range f.Schema.Required {
		switch f.Schema.Properties[name].Type {
		case "boolean":
			obj[name] = false
		case "number", "integer":
			obj[name] = 0
		case "array":
			obj[name] = []any{}
		case "object":
			obj[name] = map[string]any{}
		default:
			obj[name] = "fakemodel"
		}
	}
	return mustJSON(obj)
}

// anthropicShellTool is the name of Claude Code's shell tool.
const anthropicShellTool = "Bash"

func (s *Server) anthropic(r *http.Request, body []byte) answer {
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		return jsonAnswer(false, KindSide, 0, map[string]any{"input_tokens": 10})
	case (r.Method == http.MethodHead || r.Method == http.MethodGet) && path == "/api/hello":
		// Claude Code's connectivity probe at startup.
		return jsonAnswer(false, KindSide, 0, map[string]any{})
	case r.Method == http.MethodPost && path == "/v1/messages":
	default:
		return jsonAnswer(false, KindNotFound, http.StatusNotFound, anthropicError(http.StatusNotFound, "fakemodel: no such endpoint "+r.Method+" "+path))
	}
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return jsonAnswer(false, KindFail, http.StatusBadRequest, anthropicError(http.StatusBadRequest, "fakemodel: request body is not JSON: "+err.Error()))
	}
	// Claude Code's own turns offer its full tool set, Bash among it; its
	// helper calls (titles, quota probes, classifiers) offer no Bash.
	turn := false
	for _, t := range req.Tools {
		if t.Name == anthropicShellTool {
			turn = true
		}
	}
	reply := Reply{kind: KindSide, text: sideText(req.OutputConfig.Format)}
	if turn {
		reply = s.take(fingerprint(Anthropic, body))
	}
	if reply.kind == KindFail {
		a := jsonAnswer(true, KindFail, reply.status, anthropicError(reply.status, reply.text))
		if !reply.limit.IsZero() {
			a = jsonAnswer(true, KindFail, reply.status, anthropicError(reply.status, "This request would exceed your account's rate limit. Please try again later."))
			reset := fmt.Sprint(reply.limit.Unix())
			a.header = map[string]string{
				"anthropic-ratelimit-unified-status":               "rejected",
				"anthropic-ratelimit-unified-reset":                reset,
				"anthropic-ratelimit-unified-representative-claim": "five_hour",
				"anthropic-ratelimit-unified-5h-status":            "rejected",
				"anthropic-ratelimit-unified-5h-reset":             reset,
				"anthropic-ratelimit-unified-5h-utilization":       "1.0",
			}
		}
		a.reply = reply
		return a
	}
	a := answer{turn: turn, reply: reply}
	model := req.Model
	stream := req.Stream
	a.build = func() []byte { return anthropicMessage(reply, model, stream) }
	if stream {
		a.ctype = "text/event-stream"
	}
	return a
}

// anthropicError is the error body of the Messages API.
func anthropicError(status int, message string) map[string]any {
	typ := "api_error"
	switch status {
	case 400:
		typ = "invalid_request_error"
	case 401:
		typ = "authentication_error"
	case 403:
		typ = "permission_error"
	case 404:
		typ = "not_found_error"
	case 413:
		typ = "request_too_large"
	case 429:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	}
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}}
}

// anthropicMessage renders reply as a Messages API response, streamed or
// whole.
func anthropicMessage(reply Reply, model string, stream bool) []byte {
	if model == "" {
		model = "claude-fake"
	}
	var blocks []map[string]any
	stop := "end_turn"
	if reply.kind == KindShell {
		blocks = append(blocks, map[string]any{
			"type":  "tool_use",
			"id":    "toolu_" + randHex(12),
			"name":  anthropicShellTool,
			"input": map[string]any{"command": reply.command, "description": "Run " + reply.command},
		})
		stop = "tool_use"
	} else if reply.kind == KindTool {
		input := reply.input
		if input == nil {
			input = map[string]any{}
		}
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": "toolu_" + randHex(12), "name": reply.tool, "input": input})
		stop = "tool_use"
	} else {
		blocks = append(blocks, map[string]any{"type": "text", "text": reply.text})
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	id := "msg_" + randHex(12)
	if !stream {
		return []byte(mustJSON(map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		}))
	}
	var e sse
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}})
	for i, b := range blocks {
		switch b["type"] {
		case "text":
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		case "tool_use":
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": mustJSON(b["input"])}})
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
	return e.bytes()
}

// anthropicPrompt returns the last text block of the last user message, and
// the output of the last tool result in it.
func anthropicPrompt(body []byte) (prompt, toolOutput string, hasTool bool) {
	var req anthropicRequest
	if json.Unmarshal(body, &req) != nil {
		return "", "", false
	}
	last := -1
	for i := len(req.Messages) - 1; i >= 0 && last < 0; i-- {
		if req.Messages[i].Role == "user" {
			last = i
		}
	}
	if last < 0 {
		return "", "", false
	}
	content := req.Messages[last].Content
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, "", false
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return "", "", false
	}
	// Claude Code puts its context reminders before the prompt, in text
	// blocks of their own; the prompt is the last text block.
	for _, b := range blocks {
		switch b.Type {
		case "text":
			prompt = b.Text
		case "tool_result":
			hasTool = true
			toolOutput = contentText(b.Content)
		}
	}
	return prompt, toolOutput, hasTool
}

// contentText flattens a tool_result content: a string or text blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var texts []string
	for _, b := range blocks {
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n")
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}
