package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// geminiRequest is the part of a generateContent request the server reads.
type geminiRequest struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
}

type geminiPart struct {
	Text             string `json:"text"`
	FunctionResponse *struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// geminiShellTool is the name of Gemini CLI's shell tool.
const geminiShellTool = "run_shell_command"

// geminiMethod splits "/v1beta/models/<model>:<method>" into model and
// method.
func geminiMethod(path string) (model, method string, ok bool) {
	rest, found := strings.CutPrefix(path, "/v1beta/models/")
	if !found {
		return "", "", false
	}
	model, method, found = strings.Cut(rest, ":")
	if !found || model == "" || strings.Contains(model, "/") {
		return "", "", false
	}
	return model, method, true
}

func (s *Server) gemini(r *http.Request, body []byte) answer {
	model, method, ok := geminiMethod(r.URL.Path)
	if r.Method != http.MethodPost || !ok {
		return jsonAnswer(false, KindNotFound, http.StatusNotFound, geminiError(http.StatusNotFound, "fakemodel: no such endpoint "+r.Method+" "+r.URL.Path))
	}
	switch method {
	case "countTokens":
		return jsonAnswer(false, KindSide, 0, map[string]any{"totalTokens": 10})
	case "generateContent":
		// Gemini CLI's helper calls (model routing, next-speaker checks)
		// are unary and want JSON; one object answers both.
		text := mustJSON(map[string]any{"reasoning": "fakemodel", "model_choice": "flash", "next_speaker": "user"})
		return jsonAnswer(false, KindSide, 0, geminiChunk(Reply{kind: KindSide, text: text}, model))
	case "streamGenerateContent":
	default:
		return jsonAnswer(false, KindNotFound, http.StatusNotFound, geminiError(http.StatusNotFound, "fakemodel: no such method "+method))
	}
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return jsonAnswer(false, KindFail, http.StatusBadRequest, geminiError(http.StatusBadRequest, "fakemodel: request body is not JSON: "+err.Error()))
	}
	reply := s.take(fingerprint(Gemini, body))
	if reply.kind == KindFail {
		a := jsonAnswer(true, KindFail, reply.status, geminiError(reply.status, reply.text))
		if !reply.limit.IsZero() {
			a = jsonAnswer(true, KindFail, reply.status, geminiLimit(reply.limit, model))
		}
		a.reply = reply
		return a
	}
	a := answer{turn: true, reply: reply}
	if r.URL.Query().Get("alt") == "sse" {
		a.ctype = "text/event-stream"
		a.build = func() []byte {
			var e sse
			e.event("", geminiChunk(reply, model))
			return e.bytes()
		}
	} else {
		a.build = func() []byte { return []byte(mustJSON([]any{geminiChunk(reply, model)})) }
	}
	return a
}

func geminiError(status int, message string) map[string]any {
	st := "INTERNAL"
	switch status {
	case 400:
		st = "INVALID_ARGUMENT"
	case 401:
		st = "UNAUTHENTICATED"
	case 403:
		st = "PERMISSION_DENIED"
	case 404:
		st = "NOT_FOUND"
	case 429:
		st = "RESOURCE_EXHAUSTED"
	case 503:
		st = "UNAVAILABLE"
	}
	return map[string]any{"error": map[string]any{"code": status, "message": message, "status": st}}
}

// geminiChunk renders reply as one GenerateContentResponse.
func geminiChunk(reply Reply, model string) map[string]any {
	var part map[string]any
	if reply.kind == KindShell {
		part = map[string]any{"functionCall": map[string]any{
			"name": geminiShellTool,
			"args": map[string]any{"command": reply.command, "description": "Run " + reply.command},
		}}
	} else {
		part = map[string]any{"text": reply.text}
	}
	return map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  model,
		"responseId":    "fake_" + randHex(8),
	}
}

// geminiPrompt returns the last text part of the last content, and the
// output of a function response in it.
func geminiPrompt(body []byte) (prompt, toolOutput string, hasTool bool) {
	var req geminiRequest
	if json.Unmarshal(body, &req) != nil || len(req.Contents) == 0 {
		return "", "", false
	}
	last := req.Contents[len(req.Contents)-1]
	// Gemini CLI sends its session context as a text part before the
	// prompt; the prompt is the last text part.
	for _, p := range last.Parts {
		if p.FunctionResponse != nil {
			hasTool = true
			var resp struct {
				Output string `json:"output"`
			}
			if json.Unmarshal(p.FunctionResponse.Response, &resp) == nil && resp.Output != "" {
				toolOutput = resp.Output
			} else {
				toolOutput = string(p.FunctionResponse.Response)
			}
			continue
		}
		if p.Text != "" {
			prompt = p.Text
		}
	}
	return prompt, toolOutput, hasTool
}

// geminiLimit is the Gemini API's answer to a key whose daily request
// quota is spent, as the API words it: RESOURCE_EXHAUSTED, the quota in
// the message with "Please retry in …", a per-day QuotaFailure and a
// RetryInfo with the delay until resets.
func geminiLimit(resets time.Time, model string) map[string]any {
	in := max(time.Until(resets).Seconds(), 0)
	msg := "You exceeded your current quota, please check your plan and billing details. " +
		"For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. " +
		"To monitor your current usage, head to: https://ai.dev/usage?tab=rate-limit. \n" +
		"* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 50, model: " + model + "\n" +
		fmt.Sprintf("Please retry in %.6fs.", in)
	return map[string]any{"error": map[string]any{
		"code": 429, "message": msg, "status": "RESOURCE_EXHAUSTED",
		"details": []any{
			map[string]any{
				"@type": "type.googleapis.com/google.rpc.QuotaFailure",
				"violations": []any{map[string]any{
					"quotaMetric":     "generativelanguage.googleapis.com/generate_content_free_tier_requests",
					"quotaId":         "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
					"quotaDimensions": map[string]any{"location": "global", "model": model},
					"quotaValue":      "50",
				}},
			},
			map[string]any{"@type": "type.googleapis.com/google.rpc.Help", "links": []any{map[string]any{
				"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
			}}},
			map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": fmt.Sprintf("%ds", int64(in))},
		},
	}}
}
