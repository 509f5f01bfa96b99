// Package transcript is the common model every provider's transcript parser
// produces: a session summary and its items. It knows no provider; provider
// packages (internal/provider/<name>) implement Source, and the history,
// stats and replay code consume only this model.
//
// # Reading JSON
//
// Every provider reads agents' JSON with this package's scanner
// (jsonscan.go): Members and Elements for the hot JSONL parsers (Claude
// Code, Codex, Muse), Value (value.go: dotted Get, ForEach, gjson's
// lenient conversions) for parsers that walk documents of several shapes
// (Gemini CLI, OpenCode, Cursor), ValidJSON before either. Wire and
// configuration types (the event decoder, hook payloads, settings we
// write) use encoding/json, where a request's microseconds are nothing
// next to the process start that sent it. gjson is gone (issue 14: one
// approach).
//
// Why a scanner of our own rather than a library, measured with
// BenchmarkDecodeLine (internal/provider/claude, passes alternating
// between approaches; 2 CPUs at load 23-38, so ratios, not absolutes): on
// a Claude Code 2.1.328-shaped transcript, MB/s, Members 209/144/289,
// gjson 126/275/265, gjson validated by encoding/json 70/40/49,
// encoding/json 42/26/37 (before gjson's removal), and on 2026-12-02
// Members 100.6, Value 58.3, encoding/json 27.6. gjson alone was as fast,
// but its validator recurses once per nesting level, and a 16 MiB line of
// '[' (lines may have 64 MiB) overflows the goroutine stack, a fatal error
// no recover catches; ValidJSON stops at depth 10,000. Safe gjson was 3-6x
// slower than Members, encoding/json 4-6x, and decoding is about half of
// the summary scan `muster stats` and the history index run over every
// transcript. (Warm `muster stats` reads no JSON: its stored analyses are
// binary, internal/stats/detail.go.)
package transcript

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"
)

// ItemKind says what an Item is.
type ItemKind string

const (
	UserPrompt    ItemKind = "user_prompt"
	AssistantText ItemKind = "assistant_text"
	Thinking      ItemKind = "thinking"
	ToolUse       ItemKind = "tool_use"
	ToolResult    ItemKind = "tool_result"
	Compaction    ItemKind = "compaction"
)

// Item is one entry of a conversation, in transcript order.
type Item struct {
	Kind ItemKind  `json:"kind"`
	Time time.Time `json:"time,omitzero"`
	// Text is the prompt, reply, thinking, tool output or compaction note.
	Text string `json:"text,omitempty"`
	// Source is the provider's provenance label where it has one (Muse
	// `runtime.feed`, Claude `isMeta`…); informational.
	Source string `json:"source,omitempty"`
	// Directive marks a user prompt that a runtime, not a human, issued
	// (Muse dotted sources, Claude command wrappers): counted in
	// PromptCount, skipped for FirstPrompt and Title.
	Directive bool `json:"directive,omitempty"`
	// Rewind marks a prompt sent after the user rewound the conversation:
	// it continues from an earlier point than the item before it, and
	// what came between was abandoned (Claude's parentUuid branches).
	Rewind bool `json:"rewind,omitempty"`
	// Inherited marks an item a fork starts from: the conversation
	// Session.ForkedFrom held it before the user forked (Claude copies
	// those records into the fork's file; Codex 0.169 points at them in
	// the original's rollout). It is replayed, once, above the fork point,
	// but searched only in the original, where it was said.
	Inherited bool `json:"inherited,omitempty"`
	// Tool use and result, matched by CallID.
	CallID  string          `json:"call_id,omitempty"`
	Tool    string          `json:"tool,omitempty"`     // canonical name (Bash, Edit, Write, Read, …)
	RawTool string          `json:"raw_tool,omitempty"` // the provider's own name
	Input   json.RawMessage `json:"input,omitempty"`    // canonical argument names
	IsError bool            `json:"is_error,omitempty"`
	// Images attached to a user prompt, already checked and embedded.
	Images []Image `json:"images,omitempty"`
	Model  string  `json:"model,omitempty"`
}

// Image is an embedded attachment.
type Image struct {
	MIME    string `json:"mime"`
	DataURL string `json:"data_url"`
	Path    string `json:"path,omitempty"`
}

// Usage counts tokens. Input excludes cache reads and writes.
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	// Reasoning counts thinking tokens; they are already part of Output
	// (as in Codex's reasoning_output_tokens), never added on top.
	Reasoning int64 `json:"reasoning"`
}

// Add accumulates u2 into u.
func (u *Usage) Add(u2 Usage) {
	u.Input += u2.Input
	u.Output += u2.Output
	u.CacheRead += u2.CacheRead
	u.CacheWrite += u2.CacheWrite
	u.Reasoning += u2.Reasoning
}

// Total is every token counted once.
func (u Usage) Total() int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// CompactionMark records a context compaction; its summary is never replayed.
type CompactionMark struct {
	ID      string    `json:"id,omitempty"`
	Trigger string    `json:"trigger,omitempty"`
	Time    time.Time `json:"time,omitzero"`
}

// Session is the summary of one conversation.
type Session struct {
	Provider      string    `json:"provider"`
	ID            string    `json:"id"` // the provider's native id
	Path          string    `json:"path"`
	CWD           string    `json:"cwd,omitempty"`
	Title         string    `json:"title,omitempty"`
	FirstPrompt   string    `json:"first_prompt,omitempty"`
	PromptCount   int       `json:"prompt_count"`
	ToolCallCount int       `json:"tool_call_count"`
	Model         string    `json:"model,omitempty"`
	StartedAt     time.Time `json:"started_at,omitzero"`
	EndedAt       time.Time `json:"ended_at,omitzero"`
	// Usage is nil when the format records no token usage.
	Usage *Usage `json:"usage,omitempty"`
	// UsageByModel splits Usage per model, for pricing.
	UsageByModel map[string]Usage `json:"usage_by_model,omitempty"`
	// CostUSD is the cost the provider itself recorded (OpenCode), 0 when
	// the format records none; stats prefer it over a price table.
	CostUSD     float64          `json:"cost_usd,omitempty"`
	Compactions []CompactionMark `json:"compactions,omitempty"`
	// ParentID is set for sub-agent sessions (Claude subagents/, Codex
	// and Gemini sub-agent threads, OpenCode child sessions): the native id
	// of the conversation they belong to.
	ParentID string `json:"parent_id,omitempty"`
	// ParentCallID is the parent's tool call (Task/Agent) that started a
	// sub-agent, where the format records it.
	ParentCallID string `json:"parent_call_id,omitempty"`
	// ForkedFrom is set for a conversation the user forked from another
	// (claude --fork-session, codex fork): the native id of the original.
	// A fork is a conversation of its own, not a part of the original:
	// both go on independently and each can be resumed by its own id.
	ForkedFrom string   `json:"forked_from,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
}

// UsageEntry is the usage one model response reported: the unit in which
// usage is dated (daily reports, 5-hour blocks) and de-duplicated across
// files. A resumed or forked conversation's new file repeats earlier
// responses with the same identity, which must count once (ccusage's rule).
type UsageEntry struct {
	// Key identifies the response within the provider ("message.id:
	// requestId" for Claude, "sessionId:messageId" for Gemini); "" when the
	// format records no identity, and then the entry is never a duplicate.
	Key   string
	Time  time.Time
	Model string
	Usage
}

// Transcript is a session with its items.
type Transcript struct {
	Session
	Items []Item `json:"items,omitempty"`
	// UsageLog is Session.Usage response by response, in file order, with
	// repeats within the file already dropped; nil when the format has no
	// per-response usage (then only the session totals are known).
	UsageLog []UsageEntry `json:"-"`
}

// Env is what a Source may read of the environment; tests inject temp dirs.
type Env struct {
	Home   string
	Getenv func(string) string
}

// Get returns the environment variable, or "" when Getenv is nil.
func (e Env) Get(key string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(key)
}

// Dir locates a provider directory the way the provider CLIs do: below the
// directory in envVar when it is set (joined with sub), else at homePath
// under the home directory; "" when neither is known.
func (e Env) Dir(envVar, sub string, homePath ...string) string {
	d, _ := e.CheckedDir(envVar, sub, homePath...)
	return d
}

// CheckedDir is Dir, with an error when the directory is not absolute (a
// relative envVar, or no absolute home directory): good enough to read,
// but not to write. An empty envVar means the home directory only.
func (e Env) CheckedDir(envVar, sub string, homePath ...string) (string, error) {
	if v := e.Get(envVar); envVar != "" && v != "" {
		if !filepath.IsAbs(v) {
			return filepath.Join(v, sub), fmt.Errorf("%s=%q is not an absolute path", envVar, v)
		}
		return filepath.Join(v, sub), nil
	}
	if e.Home == "" {
		return "", fmt.Errorf("home directory %q is not an absolute path", e.Home)
	}
	d := filepath.Join(append([]string{e.Home}, homePath...)...)
	if !filepath.IsAbs(e.Home) {
		return d, fmt.Errorf("home directory %q is not an absolute path", e.Home)
	}
	return d, nil
}

// File is one transcript file (or database) found on disk.
type File struct {
	Path    string
	Size    int64
	ModTime time.Time
}

// ParseOptions tune a parse.
type ParseOptions struct {
	// SummaryOnly lets a parser skip building Items (and skip reading
	// images); the Session must still be complete.
	SummaryOnly bool
	// Item, when set, receives the items of a parse one at a time, in
	// order, instead of Transcript.Items, so that a caller that only folds
	// them (the history index's full-text row) never holds a huge
	// transcript's items at once. Parsers that can stream (Gemini CLI,
	// OpenCode documents and session trees) call it and leave Items empty;
	// the others, and parses of files holding several sessions, fill
	// Items as before, which the caller then reads too.
	Item func(Item)
	// Inherit, when Item is set, is called when every item passed to Item
	// so far is to be forgotten: they turned out to be inherited
	// (Item.Inherited: a fork's copy of its original's history, found at
	// the fork's first own record), or the parser takes them back to pass
	// them all again, the inherited ones marked (as a Follow does).
	Inherit func()
	// NoUsageLog lets a parser leave Transcript.UsageLog empty: it grows
	// by an entry a response, a gigabyte transcript's by tens of
	// megabytes, and only analyses read it (the history index's rows do
	// not).
	NoUsageLog bool
}

// Source is one provider's transcript side.
type Source interface {
	// Provider is the provider's stable name ("claude", "codex", …).
	Provider() string
	// Roots are the directories to watch for changes; they need not exist.
	Roots(env Env) []string
	// Discover lists the transcript files under the roots. A missing root
	// is not an error.
	Discover(ctx context.Context, env Env) ([]File, error)
	// Parse reads one file. Formats that hold several sessions in one file
	// (SQLite databases) return several transcripts. Malformed content
	// becomes Session.Warnings; an error means the file could not be read
	// at all.
	Parse(ctx context.Context, env Env, path string, opts ParseOptions) ([]*Transcript, error)
}

// Follower is implemented by Sources whose transcripts grow by appends
// (JSONL logs, OpenCode's trees of files): a file is parsed in steps, each from where the last one
// stopped, so that a watcher following an agent's transcript reads only
// what was appended.
type Follower interface {
	// Follow starts a step-by-step parse of path; opts as for Parse. It
	// returns nil for a file of the source that is not an append-only
	// log: the caller parses that one whole.
	Follow(env Env, path string, opts ParseOptions) Follow
}

// Follow is one file's parse in progress.
//
// With ParseOptions.Item set, the items of one transcript are split in
// two: the settled ones, streamed to Item by Feed, and the ones a later
// record may still rewrite (Gemini CLI's latest messages, OpenCode's
// latest message files), returned in the Items of Transcripts every time
// until they settle. A Follow that must take back what it streamed calls
// Inherit (forget every item streamed) and streams them all again.
type Follow interface {
	// Feed parses the complete lines of r, the file read from the offset
	// where the previous Feed stopped (0 at first), and returns the bytes
	// it consumed: an unterminated last line is left for the next Feed.
	// A Follow that reads other files than r (OpenCode's message and part
	// files) consumes nothing of r, which is then the file from its
	// start each time. r may be an io.ReaderAt, for a Follow that must
	// read the file again from its start.
	Feed(ctx context.Context, r io.Reader) (int64, error)
	// Transcripts is the parse of every line fed so far, as Parse would
	// return it (the streamed items aside); Feed may be called again
	// afterwards.
	Transcripts() []*Transcript
}

// StatFile builds a File from a DirEntry-like stat.
func StatFile(path string, fi fs.FileInfo) File {
	return File{Path: path, Size: fi.Size(), ModTime: fi.ModTime()}
}
