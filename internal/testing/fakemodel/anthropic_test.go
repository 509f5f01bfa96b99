package fakemodel

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// claudeTurn is a request shaped like Claude Code's own turns: its tools,
// streaming, the prompt as the last text block after context reminders, and
// a trailing system message.
func claudeTurn(last any) map[string]any {
	return map[string]any{
		"model":  "claude-opus-5-5",
		"stream": true,
		"tools":  []any{map[string]any{"name": "Agent"}, map[string]any{"name": "Bash"}, map[string]any{"name": "Edit"}},
		"messages": []any{
			map[string]any{"role": "user", "content": last},
			map[string]any{"role": "system", "content": []any{map[string]any{"type": "text", "text": "date"}}},
		},
	}
}

func promptBlocks(prompt string) []any {
	return []any{
		map[string]any{"type": "text", "text": "<system-reminder>context</system-reminder>"},
		map[string]any{"type": "text", "text": prompt},
	}
}

func toolResult(out string) []any {
	return []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": out}}
}

func TestAnthropicTurns(t *testing.T) {
	s := Start(t, Anthropic)
	mustEnqueue(t, s, Text("hello there"), Shell("touch x && echo done"), Text("after tool"), Fail(400, "scripted failure"), Text("recovered"))
	url := s.URL + "/v1/messages?beta=true"

	t.Run("text", func(t *testing.T) {
		resp, body := post(t, url, claudeTurn(promptBlocks("say hello")))
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		evs := parseSSE(t, body)
		var names []string
		for _, e := range evs {
			names = append(names, e.name)
			if e.data["type"] != e.name {
				t.Errorf("event %q has data type %v", e.name, e.data["type"])
			}
		}
		want := "message_start content_block_start content_block_delta content_block_stop message_delta message_stop"
		if got := strings.Join(names, " "); got != want {
			t.Fatalf("events %q, want %q", got, want)
		}
		if got := get(evs[2].data, "delta", "text"); got != "hello there" {
			t.Errorf("text delta = %v", got)
		}
		if got := get(evs[4].data, "delta", "stop_reason"); got != "end_turn" {
			t.Errorf("stop_reason = %v, want end_turn", got)
		}
		if got := get(evs[0].data, "message", "model"); got != "claude-opus-5-5" {
			t.Errorf("model = %v, want the requested model echoed", got)
		}
	})

	t.Run("shell", func(t *testing.T) {
		_, body := post(t, url, claudeTurn(promptBlocks("make a file")))
		evs := parseSSE(t, body)
		start := get(evs[1].data, "content_block")
		if get(start, "type") != "tool_use" || get(start, "name") != "Bash" || !strings.HasPrefix(get(start, "id").(string), "toolu_") {
			t.Fatalf("content_block_start = %v, want a Bash tool_use", start)
		}
		var input map[string]any
		if err := json.Unmarshal([]byte(get(evs[2].data, "delta", "partial_json").(string)), &input); err != nil {
			t.Fatal(err)
		}
		if input["command"] != "touch x && echo done" || input["description"] == "" {
			t.Errorf("tool input = %v", input)
		}
		if got := get(evs[4].data, "delta", "stop_reason"); got != "tool_use" {
			t.Errorf("stop_reason = %v, want tool_use", got)
		}
		_, body = post(t, url, claudeTurn(toolResult("done")))
		if got := get(parseSSE(t, body)[2].data, "delta", "text"); got != "after tool" {
			t.Errorf("reply after the tool result = %v", got)
		}
	})

	t.Run("failure covers retries", func(t *testing.T) {
		for i := range 3 {
			// Claude Code's retries drop prompt-caching marks and offer
			// more tools; they still retry the same prompt.
			blocks := promptBlocks("please fail")
			req := claudeTurn(blocks)
			if i == 0 {
				blocks[1].(map[string]any)["cache_control"] = map[string]any{"type": "ephemeral"}
			} else {
				req["tools"] = append(req["tools"].([]any), map[string]any{"name": "Deferred"})
			}
			resp, body := post(t, url, req)
			if resp.StatusCode != 400 {
				t.Fatalf("attempt %d: status %d, want 400", i+1, resp.StatusCode)
			}
			var e map[string]any
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatal(err)
			}
			if e["type"] != "error" || get(e, "error", "type") != "invalid_request_error" || get(e, "error", "message") != "scripted failure" {
				t.Errorf("attempt %d: error body %s", i+1, body)
			}
		}
		_, body := post(t, url, claudeTurn(promptBlocks("next prompt")))
		if got := get(parseSSE(t, body)[2].data, "delta", "text"); got != "recovered" {
			t.Errorf("a new prompt after the failure got %v, want the next reply", got)
		}
	})

	t.Run("unscripted", func(t *testing.T) {
		_, body := post(t, url, claudeTurn(promptBlocks("more")))
		if got := get(parseSSE(t, body)[2].data, "delta", "text"); got != UnscriptedText {
			t.Errorf("reply with an empty queue = %v", got)
		}
	})

	var kinds []string
	for _, r := range s.Turns() {
		kinds = append(kinds, string(r.Reply))
	}
	if got, want := strings.Join(kinds, " "), "text shell text fail fail fail text unscripted"; got != want {
		t.Errorf("turn replies %q, want %q", got, want)
	}
	turns := s.Turns()
	if p := turns[0].Prompt(); p != "say hello" {
		t.Errorf("Prompt() = %q, want the last text block", p)
	}
	if out, ok := turns[2].ToolOutput(); !ok || out != "done" {
		t.Errorf("ToolOutput() = %q, %v", out, ok)
	}
	if _, ok := turns[0].ToolOutput(); ok {
		t.Error("ToolOutput() reports a result on a prompt turn")
	}
}

func TestAnthropicSideRequests(t *testing.T) {
	s := Start(t, Anthropic)
	mustEnqueue(t, s, Text("for the turn"))
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		status int
		want   string
	}{
		{"count tokens", "POST", "/v1/messages/count_tokens?beta=true", claudeTurn("x"), 200, `"input_tokens":10`},
		{"hello probe", "HEAD", "/api/hello", nil, 200, ""},
		{"title with schema", "POST", "/v1/messages?beta=true", map[string]any{
			"model": "m", "tools": []any{}, "messages": []any{map[string]any{"role": "user", "content": "name it"}},
			"output_config": map[string]any{"format": map[string]any{"type": "json_schema", "schema": map[string]any{
				"type": "object", "properties": map[string]any{"title": map[string]any{"type": "string"}, "n": map[string]any{"type": "integer"}},
				"required": []any{"title", "n"}}}},
		}, 200, `"text":"{\"n\":0,\"title\":\"fakemodel\"}"`},
		{"helper without tools", "POST", "/v1/messages", map[string]any{"model": "m", "messages": []any{}}, 200, `"text":"ok"`},
		{"unknown path", "GET", "/v1/models", nil, 404, `"not_found_error"`},
		{"bad json", "POST", "/v1/messages", "{", 400, `"invalid_request_error"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			switch b := tt.body.(type) {
			case nil:
			case string:
				body = []byte(b)
			default:
				body, _ = json.Marshal(b)
			}
			req, err := http.NewRequest(tt.method, s.URL+tt.path, strings.NewReader(string(body)))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out strings.Builder
			buf := make([]byte, 4096)
			for {
				n, err := resp.Body.Read(buf)
				out.Write(buf[:n])
				if err != nil {
					break
				}
			}
			if resp.StatusCode != tt.status || !strings.Contains(out.String(), tt.want) {
				t.Errorf("%s %s = %d %s, want %d containing %s", tt.method, tt.path, resp.StatusCode, out.String(), tt.status, tt.want)
			}
		})
	}
	if n := s.Pending(); n != 1 {
		t.Errorf("side requests took queued replies: %d left, want 1", n)
	}
	if n := len(s.Turns()); n != 0 {
		t.Errorf("%d side requests were recorded as turns", n)
	}
}

func TestAnthropicTool(t *testing.T) {
	s := Start(t, Anthropic)
	q := map[string]any{"questions": []any{map[string]any{"question": "Which color?"}}}
	mustEnqueue(t, s, Tool("AskUserQuestion", q))
	resp, body := post(t, s.URL+"/v1/messages?beta=true", claudeTurn(promptBlocks("ask me")))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	evs := parseSSE(t, body)
	if got := get(evs[1].data, "content_block", "name"); got != "AskUserQuestion" {
		t.Errorf("tool name %v", got)
	}
	var in map[string]any
	if err := json.Unmarshal([]byte(get(evs[2].data, "delta", "partial_json").(string)), &in); err != nil || get(in, "questions") == nil {
		t.Errorf("tool input %v (%v)", get(evs[2].data, "delta", "partial_json"), err)
	}
	if got := get(evs[4].data, "delta", "stop_reason"); got != "tool_use" {
		t.Errorf("stop reason %v", got)
	}
	for _, api := range []API{OpenAI, Gemini} {
		if err := Start(t, api).Enqueue(Tool("AskUserQuestion", q)); err == nil {
			t.Errorf("%s server took a Tool reply", api)
		}
	}
	if err := s.Enqueue(Tool(" ", nil)); err == nil {
		t.Error("a Tool reply without a name was taken")
	}
}
