package fakemodel

import (
	"strings"
	"testing"
)

// FuzzRequest feeds arbitrary bodies and paths to the request decoders:
// none may panic, and a Request's accessors must agree with each other.
func FuzzRequest(f *testing.F) {
	f.Add(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"tool_result","content":[{"type":"text","text":"out"}]}]}]}`, "/v1/messages")
	f.Add(`{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"function_call_output","output":"x"}]}`, "/v1/responses")
	f.Add(`{"contents":[{"role":"user","parts":[{"text":"a"},{"functionResponse":{"name":"n","response":{"output":"o"}}}]}]}`, "/v1beta/models/g:streamGenerateContent?alt=sse")
	f.Add(`{"messages":7,"input":{"x":1},"contents":"no"}`, "/v1beta/models/:x")
	f.Add(`[`, "")
	f.Fuzz(func(t *testing.T, body, path string) {
		for _, api := range []API{Anthropic, OpenAI, Gemini} {
			r := Request{API: api, Body: []byte(body), Path: path}
			p1 := r.Prompt()
			out, ok := r.ToolOutput()
			if p2 := r.Prompt(); p1 != p2 {
				t.Fatalf("%v: Prompt is not deterministic: %q then %q", api, p1, p2)
			}
			if !ok && out != "" {
				t.Fatalf("%v: ToolOutput = %q with ok=false", api, out)
			}
			r.Model()
		}
		if a, b := fingerprint(Anthropic, []byte(body)), fingerprint(Anthropic, []byte(body)); a != b {
			t.Fatal("fingerprint is not deterministic")
		}
		if model, method, ok := geminiMethod(path); ok && (model == "" || strings.Contains(model, "/")) {
			t.Fatalf("geminiMethod(%q) = %q, %q, true", path, model, method)
		}
	})
}
