// Package fakemodel serves fake model APIs on 127.0.0.1 so that the real
// agent CLIs (Claude Code, Codex, Gemini CLI) can run whole turns offline.
//
// One Server speaks one wire format: the Anthropic Messages API with
// streaming server-sent events, the OpenAI Responses API with streaming
// events (Codex through a model provider with wire_api = "responses"), or
// the Gemini API (streamGenerateContent?alt=sse). A test queues the replies
// it wants with Enqueue: plain text, a shell tool call that needs the user's
// permission, or an HTTP failure. Each model turn request the CLI sends takes
// the next reply from the queue; a tool call turn therefore needs two replies,
// the call and the text that follows the tool result. Side requests that the
// CLIs send on their own (token counting, title and routing helpers) are
// answered without touching the queue. Every request is recorded so that a
// test can check what the CLI sent.
//
// The package knows the wire formats only. How each CLI is pointed at the
// server (base URL variables, config files) lives with the tests that launch
// the CLIs (e2e/realcli).
package fakemodel
