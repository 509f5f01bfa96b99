// Package cursor is everything Muster knows of the Cursor CLI (cursor-agent
// / agent): how to launch and resume it (provider.go), which hooks to
// install (install.go), and how to read its conversations into the common
// transcript model (below).
//
// # Where the files are
//
//	~/.cursor/projects/<sanitized cwd>/agent-transcripts/<chatId>.jsonl   CLI
//	~/.cursor/projects/<sanitized cwd>/agent-transcripts/<chatId>/<chatId>.jsonl   IDE
//	~/.cursor/projects/<sanitized cwd>/agent-transcripts/<chatId>.txt     older builds
//	~/.cursor/chats/<md5(cwd)>/<chatId>/store.db                          chat store
//
// The sanitized cwd drops the leading "/" and turns every other
// non-alphanumeric byte into "-", so it cannot be inverted by string
// manipulation. The cwd is found by walking the filesystem: each "-" is
// tried as "/", "-", ".", "_" or " ", keeping only prefixes that exist as
// directories (bounded work). When the chat has a store.db, the md5 of a
// candidate must match the chats/ directory name; without one the first
// existing candidate wins. A cwd that no longer exists stays empty.
//
// # JSONL transcripts
//
// Each line is {"role": "user"|"assistant", "message": {"content": …}},
// Anthropic-shaped: content is a string or blocks (text, thinking or
// reasoning, tool_use {id?, name, input}, tool_result {tool_use_id, content,
// is_error}, image {source: base64}). There are no timestamps, ids on every
// block or token counts. User text is the prompt: a leading
// <timestamp>…</timestamp> is dropped and <user_query>…</user_query> is
// unwrapped (other injected context around it is not part of the prompt);
// text without a user_query tag is taken whole. Tool uses without an id get
// "<line>#<n>" and are answered by the next tool_result without an id, in
// order.
//
// # Legacy .txt transcripts
//
// "user:" and "assistant:" lines open a message. In an assistant message,
// "[Thinking]", "[Tool call] <Name>" (parameters on indented "key: value"
// lines) and "[Tool result]" open an indented block that ends at the next
// marker or unindented line; results answer the oldest open call.
//
// # store.db (opened read-only through transcript.OpenSQLite)
//
// Table meta, key "0": hex-encoded JSON {agentId, latestRootBlobId, name,
// mode, createdAt (ms), lastUsedModel}. For a transcript with a store.db the
// title is name (unless it is the "New Agent" placeholder), the model is
// lastUsedModel and the start time createdAt; Discover folds the store's
// mtime into the transcript's so a renamed chat is re-read. The end time is
// the transcript's mtime, the only clock a transcript has. A chat that has a
// store.db but no transcript is read from the store itself: table blobs holds
// content-addressed binary wrappers around JSON messages {role, content:
// [text | reasoning | tool-call {toolCallId, toolName, args} | tool-result
// {toolCallId, result}], providerOptions.cursor.modelName}; every embedded
// JSON object with a role is taken once, in rowid order. That layout comes
// from third-party notes, not from Cursor, so it is read best-effort.
//
// Tools map to canonical names: Shell→Bash, StrReplace→Edit and Write→Write
// (path/contents → file_path/content), Read→Read, Grep→Grep, Glob→Glob
// (glob_pattern/target_directory → pattern/path), LS→LS, WebFetch,
// WebSearch (search_term → query), TodoWrite, Task. Other tools pass through.
// Cursor records no token usage.
//
// Malformed JSONL lines become warnings with their line number; unknown
// block types are skipped silently.
package cursor
