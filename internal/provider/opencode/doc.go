// Package opencode is everything Muster knows of OpenCode: how to launch and
// resume it (provider.go), the plugin that forwards its events (install.go),
// and how to read its sessions into the common transcript model (below).
//
// # Where the data is
//
//	$XDG_DATA_HOME/opencode  (default ~/.local/share/opencode)
//	  opencode.db                        SQLite, WAL mode; every session
//	  storage/session/<project>/<id>.json           legacy JSON tree
//	  storage/message/<sessionID>/<msgID>.json
//	  storage/part/<messageID>/<partID>.json
//
// Discover returns opencode.db once, with the size and newest mtime of the
// database and its -wal file together (committed writes land in the WAL, so
// the database file alone would look unchanged), plus each legacy session
// file (with the newest mtime of the file and its message directory). Parse
// also accepts `opencode export` output ({info, messages: [{info, parts}]}).
//
// # The database is never modified
//
// It is opened through transcript.OpenSQLite: immutable when there is no
// WAL, read-only (seeing committed WAL content) when there is one, and from
// a private copy when a WAL has lost its -shm index. Columns are discovered
// with PRAGMA table_info, because the schema changes between versions.
// Parse returns one transcript per session row, in the table's order;
// Path is the database for all of them.
//
// # Sessions, messages, parts
//
//   - session row (or info): id, directory (the cwd; else the messages'
//     path.cwd, else the project's worktree), title (the "New session - …" /
//     "Child session - …" placeholders are ignored in favour of the first
//     prompt), parent_id (subagent sessions), time_created/updated (ms).
//   - message.data: role, time{created,completed}, modelID, providerID, cost,
//     tokens, summary (true on the assistant message holding a compaction
//     summary: not replayed, it becomes a compaction mark). Messages are
//     ordered by (time_created, id), parts by id.
//   - parts: text (user: the prompt, non-synthetic text joined; a user
//     message with only synthetic text is a directive; assistant: text),
//     reasoning (thinking), tool (callID, tool, state{status, input, output,
//     error, time}: a use, and a result once completed or error), file
//     (data: URL images embedded within the image budget; file URLs are never
//     read), step-finish (tokens, cost), compaction (a mark, trigger auto or
//     manual). step-start, snapshot, patch, agent, subtask, retry are skipped.
//
// Usage: OpenCode overwrites message.tokens with the last step's usage while
// message.cost accumulates, so a message's tokens are the sum of its
// step-finish parts, falling back to message.tokens when it has none.
// tokens.input already excludes cache reads and writes, and tokens.output
// excludes reasoning, so Output = output + reasoning and Reasoning =
// reasoning. CostUSD is the sum of the messages' recorded costs.
//
// Tools map to canonical names: bash→Bash, edit→Edit and multiedit→MultiEdit
// (filePath/oldString/newString/replaceAll → file_path/old_string/
// new_string/replace_all), write→Write, read→Read, glob→Glob, grep→Grep,
// list→LS, webfetch→WebFetch, websearch→WebSearch, todowrite→TodoWrite,
// task→Task, patch/apply_patch→ApplyPatch (patchText → patch). Other tools
// pass through.
//
// Malformed JSON in a row or file becomes a warning naming it; unknown part
// types are skipped silently.
package opencode
