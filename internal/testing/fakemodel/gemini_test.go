package fakemodel

import (
	"encoding/json"
	"strings"
	"testing"
)

// geminiTurn is a request shaped like Gemini CLI's turns: the session
// context and the prompt as parts of the last user content.
func geminiTurn(last ...any) map[string]any {
	return map[string]any{
		"contents": []any{map[string]any{"role": "user", "parts": last}},
		"tools":    []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "run_shell_command"}}}},
	}
}

func geminiText(s string) map[string]any { return map[string]any{"text": s} }

func TestGeminiTurns(t *testing.T) {
	s := Start(t, Gemini)
	mustEnqueue(t, s, Text("hello there"), Shell("touch x && echo done"), Text("after tool"), Fail(400, "scripted failure"), Text("recovered"))
	url := s.URL + "/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent?alt=sse"

	chunk := func(t *testing.T, body []byte) map[string]any {
		t.Helper()
		evs := parseSSE(t, body)
		if len(evs) != 1 || evs[0].name != "" {
			t.Fatalf("got %d events %v, want one data-only event", len(evs), evs)
		}
		return evs[0].data
	}

	t.Run("text", func(t *testing.T) {
		resp, body := post(t, url, geminiTurn(geminiText("<session_context/>"), geminiText("say hello")))
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		c := chunk(t, body)
		if get(c, "candidates", 0, "content", "parts", 0, "text") != "hello there" || get(c, "candidates", 0, "finishReason") != "STOP" || get(c, "modelVersion") != "gemini-3.1-pro-preview" {
			t.Errorf("chunk = %v", c)
		}
	})

	t.Run("shell", func(t *testing.T) {
		_, body := post(t, url, geminiTurn(geminiText("make a file")))
		call := get(chunk(t, body), "candidates", 0, "content", "parts", 0, "functionCall")
		if get(call, "name") != "run_shell_command" || get(call, "args", "command") != "touch x && echo done" {
			t.Fatalf("functionCall = %v", call)
		}
		_, body = post(t, url, geminiTurn(map[string]any{"functionResponse": map[string]any{"name": "run_shell_command", "response": map[string]any{"output": "done"}}}))
		if got := get(chunk(t, body), "candidates", 0, "content", "parts", 0, "text"); got != "after tool" {
			t.Errorf("reply after the function response = %v", got)
		}
	})

	t.Run("failure covers retries", func(t *testing.T) {
		for i := range 2 {
			resp, body := post(t, url, geminiTurn(geminiText("please fail")))
			var e map[string]any
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 400 || get(e, "error", "status") != "INVALID_ARGUMENT" || get(e, "error", "code") != float64(400) || get(e, "error", "message") != "scripted failure" {
				t.Fatalf("attempt %d: %d %s", i+1, resp.StatusCode, body)
			}
		}
		_, body := post(t, url, geminiTurn(geminiText("next")))
		if got := get(chunk(t, body), "candidates", 0, "content", "parts", 0, "text"); got != "recovered" {
			t.Errorf("a new prompt after the failure got %v", got)
		}
	})

	t.Run("unary", func(t *testing.T) {
		mustEnqueue(t, s, Text("whole"))
		_, body := post(t, strings.TrimSuffix(url, "?alt=sse"), geminiTurn(geminiText("unary")))
		var chunks []any
		if err := json.Unmarshal(body, &chunks); err != nil {
			t.Fatalf("unary stream body is not a JSON array: %v: %s", err, body)
		}
		if got := get(chunks, 0, "candidates", 0, "content", "parts", 0, "text"); got != "whole" {
			t.Errorf("unary chunk text = %v", got)
		}
	})

	turns := s.Turns()
	if len(turns) != 7 {
		t.Fatalf("%d turns recorded, want 7", len(turns))
	}
	if p := turns[0].Prompt(); p != "say hello" {
		t.Errorf("Prompt() = %q, want the last text part", p)
	}
	if out, ok := turns[2].ToolOutput(); !ok || out != "done" {
		t.Errorf("ToolOutput() = %q, %v", out, ok)
	}
	if m := turns[0].Model(); m != "gemini-3.1-pro-preview" {
		t.Errorf("Model() = %q, want the model from the path", m)
	}
}

func TestGeminiSideRequests(t *testing.T) {
	s := Start(t, Gemini)
	mustEnqueue(t, s, Text("for the turn"))
	_, body := post(t, s.URL+"/v1beta/models/gemini-3.5-flash-lite:generateContent", geminiTurn(geminiText("route this")))
	var c map[string]any
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	var helper map[string]any
	if err := json.Unmarshal([]byte(get(c, "candidates", 0, "content", "parts", 0, "text").(string)), &helper); err != nil {
		t.Fatalf("helper reply is not JSON: %v", err)
	}
	if helper["model_choice"] != "flash" || helper["next_speaker"] != "user" {
		t.Errorf("helper reply = %v, want routing and next-speaker answers", helper)
	}
	resp, body := post(t, s.URL+"/v1beta/models/m:countTokens", geminiTurn(geminiText("x")))
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"totalTokens":10`) {
		t.Errorf("countTokens = %d %s", resp.StatusCode, body)
	}
	for _, path := range []string{"/v1beta/models/m:embedContent", "/v1beta/models/a/b:streamGenerateContent", "/v1/models/m:generateContent"} {
		resp, body := post(t, s.URL+path, map[string]any{})
		if resp.StatusCode != 404 || !strings.Contains(string(body), "NOT_FOUND") {
			t.Errorf("POST %s = %d %s, want 404", path, resp.StatusCode, body)
		}
	}
	if s.Pending() != 1 || len(s.Turns()) != 0 {
		t.Errorf("side requests used the queue: pending %d, turns %d", s.Pending(), len(s.Turns()))
	}
}
