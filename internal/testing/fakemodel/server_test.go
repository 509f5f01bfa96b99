package fakemodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// event is one server-sent event.
type event struct {
	name string
	data map[string]any
}

func post(t *testing.T, url string, body any) (*http.Response, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

func parseSSE(t *testing.T, body []byte) []event {
	t.Helper()
	var evs []event
	var cur event
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case line == "":
			if cur.data != nil {
				evs = append(evs, cur)
			}
			cur = event{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Fatalf("event data is not JSON: %v: %q", err, line)
			}
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if cur.data != nil {
		t.Fatalf("SSE body does not end with a blank line: %q", body)
	}
	return evs
}

// get walks v through object keys and array indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func mustEnqueue(t *testing.T, s *Server, rs ...Reply) {
	t.Helper()
	if err := s.Enqueue(rs...); err != nil {
		t.Fatal(err)
	}
}

func TestNewRejectsUnknownAPI(t *testing.T) {
	for _, api := range []API{0, 4, -1} {
		if s, err := New(api); err == nil {
			s.Close()
			t.Errorf("New(%d) succeeded, want an error", int(api))
		}
	}
}

func TestEnqueueValidates(t *testing.T) {
	tests := []struct {
		name  string
		reply Reply
		want  string
	}{
		{"zero reply", Reply{}, "not built by Text, Shell or Fail"},
		{"empty command", Shell("  "), "empty command"},
		{"success status", Fail(200, "x"), "not an HTTP error status"},
		{"too large status", Fail(600, "x"), "not an HTTP error status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Start(t, Anthropic)
			err := s.Enqueue(Text("fine"), tt.reply)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "enqueue reply 2: ") {
				t.Fatalf("Enqueue error = %v, want one about reply 2 containing %q", err, tt.want)
			}
			if n := s.Pending(); n != 0 {
				t.Errorf("Pending() = %d after a refused Enqueue, want 0", n)
			}
		})
	}
}

func TestCloseIsIdempotentAndReleasesHeldReplies(t *testing.T) {
	s, err := New(Gemini)
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{}) // never closed
	mustEnqueue(t, s, Text("held").After(gate))
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL+"/v1beta/models/m:streamGenerateContent?alt=sse", "application/json", strings.NewReader(`{"contents":[]}`))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	if _, err := s.WaitTurns(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if err := <-done; err == nil {
		t.Error("a held request got a response after Close, want a dropped connection")
	}
	if _, err := s.WaitTurns(t.Context(), 2); err == nil || !strings.Contains(err.Error(), "server closed") {
		t.Errorf("WaitTurns after Close = %v, want a server closed error", err)
	}
}

func TestAfterHoldsTheReply(t *testing.T) {
	s := Start(t, OpenAI)
	gate := make(chan struct{})
	mustEnqueue(t, s, Text("released").After(gate))
	got := make(chan []byte, 1)
	go func() {
		resp, err := http.Post(s.URL+"/v1/responses", "application/json",
			strings.NewReader(`{"stream":true,"tools":[{"type":"function","name":"exec_command"}],"input":[]}`))
		if err != nil {
			got <- nil
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- b
	}()
	if _, err := s.WaitTurns(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	// The request is recorded before the handler waits on the gate, so no
	// response can exist yet.
	select {
	case b := <-got:
		t.Fatalf("reply sent before its gate closed: %q", b)
	default:
	}
	close(gate)
	if b := <-got; !bytes.Contains(b, []byte(`"released"`)) {
		t.Errorf("reply after the gate closed = %q, want the text", b)
	}
}

func TestRequestHeadersAndBodyAreRecorded(t *testing.T) {
	s := Start(t, Anthropic)
	req, err := http.NewRequest(http.MethodPost, s.URL+"/v1/messages?beta=true", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", "sk-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("recorded %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1/messages?beta=true" || r.Header.Get("X-Api-Key") != "sk-test" || r.Model() != "m" || r.Prompt() != "hi" {
		t.Errorf("recorded %+v, want the request as sent", r)
	}
	if r.Turn || r.Reply != KindSide {
		t.Errorf("a request without the Bash tool was recorded as Turn=%v Reply=%q, want a side request", r.Turn, r.Reply)
	}
}
