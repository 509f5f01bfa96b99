package fakemodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// API names the wire format a Server speaks.
type API int

const (
	// Anthropic is the Messages API (POST /v1/messages) as Claude Code calls
	// it through ANTHROPIC_BASE_URL.
	Anthropic API = iota + 1
	// OpenAI is the Responses API (POST /v1/responses) as Codex calls it
	// through a model provider with wire_api = "responses".
	OpenAI
	// Gemini is the Generative Language API (POST
	// /v1beta/models/<model>:streamGenerateContent?alt=sse) as Gemini CLI
	// calls it through GOOGLE_GEMINI_BASE_URL.
	Gemini
)

func (a API) String() string {
	switch a {
	case Anthropic:
		return "anthropic"
	case OpenAI:
		return "openai"
	case Gemini:
		return "gemini"
	}
	return fmt.Sprintf("API(%d)", int(a))
}

// Kind says how the server answered a request.
type Kind string

// The kinds of replies. The first three are scripted; the last two are
// chosen by the server.
const (
	KindText  Kind = "text"  // a plain assistant text reply
	KindShell Kind = "shell" // a shell tool call that needs permission
	KindTool  Kind = "tool"  // a call of any named tool (Anthropic only)
	KindFail  Kind = "fail"  // an HTTP error status
	// KindSide answers a request that is not a model turn (token counting,
	// title, routing and other helper calls) without using the queue.
	KindSide Kind = "side"
	// KindUnscripted answers a model turn that found the queue empty: the
	// reply is the text UnscriptedText, so the gap shows on the CLI's screen.
	KindUnscripted Kind = "unscripted"
	// KindNotFound answers a path the fake API does not serve.
	KindNotFound Kind = "notfound"
)

// UnscriptedText is the text a model turn gets when no reply is queued.
const UnscriptedText = "fakemodel: no scripted reply"

// Reply is one scripted answer to a model turn request. Build one with Text,
// Shell or Fail.
type Reply struct {
	kind    Kind
	text    string         // KindText: the reply; KindFail: the error message
	command string         // KindShell
	tool    string         // KindTool: the tool's name
	input   map[string]any // KindTool: its input
	status  int            // KindFail
	// limit, when set on a KindFail reply, makes it the API's own answer
	// to an account at its usage limit, resetting then (Limit).
	limit time.Time
	gate  <-chan struct{}
}

// Text replies with one assistant message holding s.
func Text(s string) Reply { return Reply{kind: KindText, text: s} }

// Shell replies with a call of the CLI's shell tool running command, shaped
// so that the CLI asks the user before running it under its default
// permission settings (for Codex the call asks for escalated sandbox
// permissions). The next request of the same turn carries the tool result
// and takes the next reply from the queue.
func Shell(command string) Reply { return Reply{kind: KindShell, command: command} }

// Tool replies with a call of the CLI's tool name with input, for the tools
// a scenario needs besides the shell (Claude Code's AskUserQuestion). Only
// the Anthropic server renders it; the others refuse it at Enqueue.
func Tool(name string, input map[string]any) Reply {
	return Reply{kind: KindTool, tool: name, input: input}
}

// Fail answers with HTTP status and an error body in the API's own shape
// carrying message. The failure also answers every retry of the same
// request, so one Fail ends a turn whatever the CLI's retry policy; the
// next request with a new prompt takes the next reply. Prefer 400: Claude
// Code resends it five times at once and then gives up (StopFailure), Codex
// and Gemini CLI give up at once. 429 and 5xx are retried with backoff.
func Fail(status int, message string) Reply {
	return Reply{kind: KindFail, status: status, text: message}
}

// Limit answers with HTTP 429 the way the API tells an account that it
// reached its usage limit, which resets at resets (whole seconds): the
// body and headers each CLI reads its limit from. Anthropic: a
// rate_limit_error with Claude Code's subscription headers
// (anthropic-ratelimit-unified-status rejected, -reset, the five-hour
// claim); OpenAI: Codex's usage_limit_reached error with resets_at and its
// x-codex-primary-* headers at 100 %; Gemini: RESOURCE_EXHAUSTED with a
// per-day QuotaFailure and a RetryInfo delay until resets, as the Gemini
// API words a spent daily quota. Like Fail, it answers every retry of the
// same request.
func Limit(resets time.Time) Reply {
	return Reply{kind: KindFail, status: http.StatusTooManyRequests, limit: resets.Truncate(time.Second)}
}

// After returns r changed to be sent only once gate is closed (or the server
// closes), so a test can hold a turn open while it looks at the CLI.
func (r Reply) After(gate <-chan struct{}) Reply {
	r.gate = gate
	return r
}

// Kind reports what r answers with.
func (r Reply) Kind() Kind { return r.kind }

func (r Reply) validate() error {
	switch r.kind {
	case KindText:
		return nil
	case KindShell:
		if strings.TrimSpace(r.command) == "" {
			return errors.New("shell reply has an empty command")
		}
		return nil
	case KindTool:
		if strings.TrimSpace(r.tool) == "" {
			return errors.New("tool reply has no tool name")
		}
		return nil
	case KindFail:
		if r.status < 400 || r.status > 599 {
			return fmt.Errorf("fail reply status %d is not an HTTP error status (400-599)", r.status)
		}
		return nil
	}
	return errors.New("reply is not built by Text, Shell or Fail")
}

// Request is one HTTP request the server received.
type Request struct {
	API    API
	Method string
	// Path is the request URI as sent: path and query.
	Path   string
	Header http.Header
	Body   []byte
	// Turn reports whether the request was a model turn, which takes its
	// reply from the queue.
	Turn bool
	// Reply is how the server answered.
	Reply Kind
}

// Server is a fake model API listening on 127.0.0.1.
type Server struct {
	// URL is the server's base URL, "http://127.0.0.1:<port>", without a
	// trailing slash and without an API version path.
	URL string

	api  API
	ln   net.Listener
	http *http.Server
	done chan struct{}

	closeOnce sync.Once
	served    chan struct{}

	mu      sync.Mutex
	queue   []Reply
	failing *Reply // the last model turn failed with this reply …
	failFP  string // … at this conversation point
	reqs    []Request
	changed chan struct{} // closed and replaced whenever reqs grows
}

// New starts a server for api on a free port of 127.0.0.1. The caller must
// Close it.
func New(api API) (*Server, error) {
	if api < Anthropic || api > Gemini {
		return nil, fmt.Errorf("start fake model server: unknown API %d", int(api))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start fake model server: %w", err)
	}
	s := &Server{
		URL:     "http://" + ln.Addr().String(),
		api:     api,
		ln:      ln,
		done:    make(chan struct{}),
		served:  make(chan struct{}),
		changed: make(chan struct{}),
	}
	s.http = &http.Server{Handler: http.HandlerFunc(s.serveHTTP)}
	go func() {
		defer close(s.served)
		_ = s.http.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	return s, nil
}

// Start is New for tests: it fails t if the server cannot start and closes
// the server when the test ends.
func Start(t testing.TB, api API) *Server {
	t.Helper()
	s, err := New(api)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// API reports the wire format s speaks.
func (s *Server) API() API { return s.api }

// Close stops the server, drops its connections and releases replies held by
// After. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		_ = s.http.Close()
		<-s.served
	})
}

// Enqueue appends replies to the queue that model turns take from, in order.
// It adds nothing if any reply is invalid.
func (s *Server) Enqueue(replies ...Reply) error {
	for i, r := range replies {
		if err := r.validate(); err != nil {
			return fmt.Errorf("enqueue reply %d: %w", i+1, err)
		}
		if r.kind == KindTool && s.api != Anthropic {
			return fmt.Errorf("enqueue reply %d: a %s server cannot render a Tool reply", i+1, s.api)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
	return nil
}

// Pending reports how many queued replies no model turn has taken yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns every request received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Turns returns the model turn requests received so far, oldest first.
func (s *Server) Turns() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return turns(s.reqs)
}

func turns(reqs []Request) []Request {
	var out []Request
	for _, r := range reqs {
		if r.Turn {
			out = append(out, r)
		}
	}
	return out
}

// WaitTurns blocks until at least n model turn requests have been received,
// and returns them. It fails when ctx ends or the server closes first.
func (s *Server) WaitTurns(ctx context.Context, n int) ([]Request, error) {
	for {
		s.mu.Lock()
		got := turns(s.reqs)
		changed := s.changed
		s.mu.Unlock()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return got, fmt.Errorf("wait for %d model turns (got %d): %w", n, len(got), ctx.Err())
		case <-s.done:
			return got, fmt.Errorf("wait for %d model turns (got %d): server closed", n, len(got))
		}
	}
}

// take returns the reply for a model turn at conversation point fp (the
// last user message or tool result, which the CLIs resend unchanged when
// they retry). A turn that repeats the point of a failed one is a retry and
// fails the same way, so that one Fail covers a CLI's whole retry loop.
// Otherwise take pops the next queued reply, or returns an unscripted one.
func (s *Server) take(fp string) Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing != nil && fp == s.failFP {
		r := *s.failing
		r.gate = nil
		return r
	}
	s.failing = nil
	if len(s.queue) == 0 {
		return Reply{kind: KindUnscripted, text: UnscriptedText}
	}
	r := s.queue[0]
	s.queue = s.queue[1:]
	if r.kind == KindFail {
		s.failing, s.failFP = &r, fp
	}
	return r
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
	close(s.changed)
	s.changed = make(chan struct{})
}

// maxBody bounds a request body; the CLIs send whole conversations with
// tool schemas, well under this.
const maxBody = 64 << 20

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, "read request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{
		API:    s.api,
		Method: r.Method,
		Path:   r.URL.RequestURI(),
		Header: r.Header.Clone(),
		Body:   body,
	}
	var a answer
	switch s.api {
	case Anthropic:
		a = s.anthropic(r, body)
	case OpenAI:
		a = s.openai(r, body)
	case Gemini:
		a = s.gemini(r, body)
	}
	req.Turn = a.turn
	req.Reply = a.reply.kind
	// Record before answering, so that a test that sees the answer on the
	// CLI's screen also sees the request.
	s.record(req)
	if a.reply.gate != nil {
		select {
		case <-a.reply.gate:
		case <-s.done:
			// Returning would let net/http send an empty 200 before Close
			// reaches this connection; a closed server drops it instead.
			panic(http.ErrAbortHandler)
		case <-r.Context().Done():
			return
		}
	}
	a.write(w)
}

// answer is a response decided for a request.
type answer struct {
	turn   bool
	reply  Reply
	status int
	header map[string]string
	ctype  string
	body   []byte
	// build, if set, renders the body once the reply is released, so that
	// recorded requests never wait on rendering.
	build func() []byte
}

func (a answer) write(w http.ResponseWriter) {
	body := a.body
	if a.build != nil {
		body = a.build()
	}
	ctype := a.ctype
	if ctype == "" {
		ctype = "application/json"
	}
	status := a.status
	if status == 0 {
		status = http.StatusOK
	}
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", ctype)
	if ctype == "text/event-stream" {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func jsonAnswer(turn bool, kind Kind, status int, v any) answer {
	b, err := json.Marshal(v)
	if err != nil {
		// Only values built in this package reach here; they always marshal.
		b = []byte(`{}`)
	}
	return answer{turn: turn, reply: Reply{kind: kind}, status: status, body: b}
}

// sse renders server-sent events; an empty name writes a data-only event.
type sse struct{ b strings.Builder }

func (e *sse) event(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte(`{}`)
	}
	if name != "" {
		e.b.WriteString("event: ")
		e.b.WriteString(name)
		e.b.WriteString("\n")
	}
	e.b.WriteString("data: ")
	e.b.Write(data)
	e.b.WriteString("\n\n")
}

func (e *sse) bytes() []byte { return []byte(e.b.String()) }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// Prompt returns the prompt a model turn request carries, or "" when there
// is none: for Anthropic and Gemini the last text part of the last user
// message (Claude Code and Gemini CLI put their own context in parts before
// the prompt); for OpenAI the text of the last user message, which comes
// before any tool calls and outputs of the turn.
func (r Request) Prompt() string {
	p, _, _ := r.parse()
	return p
}

// ToolOutput returns the output of the tool result that the last message
// of a model turn request carries, and whether it carries one.
func (r Request) ToolOutput() (string, bool) {
	_, out, ok := r.parse()
	return out, ok
}

func (r Request) parse() (prompt, toolOutput string, hasTool bool) {
	switch r.API {
	case Anthropic:
		return anthropicPrompt(r.Body)
	case OpenAI:
		return openaiPrompt(r.Body)
	case Gemini:
		return geminiPrompt(r.Body)
	}
	return "", "", false
}

// Model returns the model the request asked for: the "model" field of the
// body, or for Gemini the model in the path.
func (r Request) Model() string {
	if r.API == Gemini {
		path, _, _ := strings.Cut(r.Path, "?")
		m, _, _ := geminiMethod(path)
		return m
	}
	var body struct {
		Model string `json:"model"`
	}
	if json.Unmarshal(r.Body, &body) != nil {
		return ""
	}
	return body.Model
}

// fingerprint identifies the conversation point a model turn answers: the
// prompt and tool output of its last user message. A CLI's retries of a
// failed request repeat them, even when they change the rest (Claude Code
// drops prompt-caching marks and expands deferred tools as it retries).
func fingerprint(api API, body []byte) string {
	prompt, out, ok := Request{API: api, Body: body}.parse()
	return fmt.Sprintf("%q %q %v", prompt, out, ok)
}
