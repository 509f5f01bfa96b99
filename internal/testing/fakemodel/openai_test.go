package fakemodel

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// codexTurn is a request shaped like Codex's own turns: streaming, its
// tools, developer and user messages, then any tool output.
func codexTurn(tools []string, input ...any) map[string]any {
	var ts []any
	for _, n := range tools {
		ts = append(ts, map[string]any{"type": "function", "name": n})
	}
	items := []any{
		map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": "rules"}}},
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "<environment_context/>"}}},
	}
	return map[string]any{"model": "gpt-fake", "stream": true, "tools": ts, "input": append(items, input...)}
}

func userMsg(text string) map[string]any {
	return map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}}
}

var codexTools = []string{"exec_command", "write_stdin", "view_image"}

func TestOpenAITurns(t *testing.T) {
	s := Start(t, OpenAI)
	mustEnqueue(t, s, Text("hello there"), Shell("touch x && echo done"), Text("after tool"), Fail(400, "scripted failure"), Text("recovered"))
	url := s.URL + "/v1/responses"

	t.Run("text", func(t *testing.T) {
		resp, body := post(t, url, codexTurn(codexTools, userMsg("say hello")))
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		evs := parseSSE(t, body)
		var names []string
		for _, e := range evs {
			names = append(names, e.name)
		}
		want := "response.created response.output_item.added response.output_text.delta response.output_item.done response.completed"
		if got := strings.Join(names, " "); got != want {
			t.Fatalf("events %q, want %q", got, want)
		}
		if got := get(evs[2].data, "delta"); got != "hello there" {
			t.Errorf("delta = %v", got)
		}
		done := evs[4].data
		if get(done, "response", "status") != "completed" || get(done, "response", "output", 0, "content", 0, "text") != "hello there" || get(done, "response", "usage", "total_tokens") == nil {
			t.Errorf("response.completed = %v", done)
		}
	})

	t.Run("shell asks for escalation", func(t *testing.T) {
		_, body := post(t, url, codexTurn(codexTools, userMsg("make a file")))
		item := get(parseSSE(t, body)[1].data, "item")
		if get(item, "type") != "function_call" || get(item, "name") != "exec_command" || get(item, "call_id") == nil {
			t.Fatalf("item = %v, want an exec_command function_call", item)
		}
		var args map[string]any
		if err := json.Unmarshal([]byte(get(item, "arguments").(string)), &args); err != nil {
			t.Fatal(err)
		}
		if args["cmd"] != "touch x && echo done" || args["sandbox_permissions"] != "require_escalated" || args["justification"] == "" {
			t.Errorf("arguments = %v", args)
		}
		_, body = post(t, url, codexTurn(codexTools, userMsg("make a file"),
			map[string]any{"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
			map[string]any{"type": "function_call_output", "call_id": "c1", "output": "Output:\ndone\n"}))
		if got := get(parseSSE(t, body)[2].data, "delta"); got != "after tool" {
			t.Errorf("reply after the tool output = %v", got)
		}
	})

	t.Run("failure covers retries", func(t *testing.T) {
		for i := range 2 {
			resp, body := post(t, url, codexTurn(codexTools, userMsg("please fail")))
			if resp.StatusCode != 400 || !strings.Contains(string(body), `"message":"scripted failure"`) || !strings.Contains(string(body), `"invalid_request_error"`) {
				t.Fatalf("attempt %d: %d %s", i+1, resp.StatusCode, body)
			}
		}
		_, body := post(t, url, codexTurn(codexTools, userMsg("next")))
		if got := get(parseSSE(t, body)[2].data, "delta"); got != "recovered" {
			t.Errorf("a new prompt after the failure got %v", got)
		}
	})

	turns := s.Turns()
	if len(turns) != 6 {
		t.Fatalf("%d turns recorded, want 6", len(turns))
	}
	if p := turns[0].Prompt(); p != "say hello" {
		t.Errorf("Prompt() = %q", p)
	}
	if out, ok := turns[2].ToolOutput(); !ok || out != "Output:\ndone\n" {
		t.Errorf("ToolOutput() = %q, %v", out, ok)
	}
	if turns[0].Model() != "gpt-fake" {
		t.Errorf("Model() = %q", turns[0].Model())
	}
}

func TestOpenAIShellToolFallbacks(t *testing.T) {
	tests := []struct {
		name  string
		tools []string
		want  string
		arg   string
	}{
		{"exec_command", []string{"write_stdin", "exec_command"}, "exec_command", `"cmd":"ls"`},
		{"shell_command", []string{"shell_command"}, "shell_command", `"command":"ls"`},
		{"shell", []string{"apply_patch"}, "shell", `"command":["bash","-lc","ls"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, args := openaiShellCall("ls", tt.tools)
			if name != tt.want || !strings.Contains(mustJSON(args), tt.arg) || args["sandbox_permissions"] != "require_escalated" {
				t.Errorf("openaiShellCall = %s %s", name, mustJSON(args))
			}
		})
	}
}

func TestOpenAISideRequests(t *testing.T) {
	s := Start(t, OpenAI)
	mustEnqueue(t, s, Text("for the turn"))
	// Codex's title helper: no tools, a JSON schema in text.format.
	_, body := post(t, s.URL+"/v1/responses", map[string]any{
		"model": "gpt-fake", "stream": true, "tools": []any{}, "input": []any{userMsg("title this")},
		"text": map[string]any{"format": map[string]any{"type": "json_schema", "name": "codex_output_schema", "schema": map[string]any{
			"type": "object", "properties": map[string]any{"title": map[string]any{"type": "string"}}, "required": []any{"title"}}}},
	})
	if got := get(parseSSE(t, body)[2].data, "delta"); got != `{"title":"fakemodel"}` {
		t.Errorf("title reply = %v", got)
	}
	resp, err := http.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /v1/models = %d", resp.StatusCode)
	}
	resp, _ = post(t, s.URL+"/v1/chat/completions", map[string]any{})
	if resp.StatusCode != 404 {
		t.Errorf("POST /v1/chat/completions = %d, want 404", resp.StatusCode)
	}
	if s.Pending() != 1 || len(s.Turns()) != 0 {
		t.Errorf("side requests used the queue: pending %d, turns %d", s.Pending(), len(s.Turns()))
	}
}
