// Package gemini is everything Muster knows of Gemini CLI: how to launch and
// resume it (provider.go), where its home is, which hooks to install
// (install.go), how to read its approval dialog off a pane's screen
// (dialog.go), and how to read its chat recordings into the common
// transcript model (below).
//
// Verified with Gemini CLI 0.61.0 (e2e/realcli, 2026-12-05: still the
// newest the npm registry serves).
//
// # Where the files are
//
//	$GEMINI_CLI_HOME/.gemini   (GEMINI_CLI_HOME replaces the home directory)
//	~/.gemini                  (otherwise)
//	  tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl   current
//	  tmp/<project>/chats/session-<…>.json                        legacy
//	  tmp/<project>/chats/<parentSessionId>/<sessionId>.jsonl      subagents
//	  tmp/<project>/.project_root     the project's absolute path
//	  projects.json                   {"projects": {"<abs path>": "<slug>"}}
//
// <project> is a short slug from projects.json (0.5x and later) or, before
// that, the hex sha256 of the project root. The cwd comes from the
// directory's .project_root marker, else from projects.json (by slug, or by
// hashing each registered path against a hash directory name or the
// record's projectHash); it stays empty when none of these resolve.
//
// # The JSONL patch log
//
// A .jsonl file is a log applied line by line, in order, the way the CLI's
// own loader does it:
//
//   - {sessionId, projectHash, startTime, lastUpdated, kind, …}: metadata;
//   - {id, type, …}: a message; a later line with the same id replaces it in
//     place (0.61.0 rewrites a gemini message once its tool calls finish);
//   - {"$set": {…}}: merges metadata (summary is the title); a "messages"
//     array replaces the whole message list (0.61.0 writes one at start and
//     one at exit);
//   - {"$rewindTo": id}: drops that message and everything after it; an
//     unknown id drops everything;
//   - {"$snapshot": true, "messages": […]}: replaces the list when non-empty.
//
// The legacy .json is one document {sessionId, projectHash, startTime,
// lastUpdated, summary?, messages}. When the CLI migrates it on resume it
// writes a sibling .jsonl, so Discover skips a .json that has one. The
// session id is sessionId (the file name only carries its first 8 chars).
//
// # Resumes (0.61.0, recorded in testdata/resume and resume-later)
//
// --resume (latest, an index or the id) appends to the chat's own .jsonl:
// a "$set" of the sessionId and of the whole message list, then the new
// messages; the log above folds them into one session. Resumed in a later
// minute than the chat's file is named for, it also writes a new file,
// session-<that minute>-<id8>.jsonl, with the same sessionId and only its
// metadata and the <session_context> message, and never writes to it
// again (its SessionStart hook names that file all the same). The parser
// reads it as a session of that id with nothing said; history leaves
// such sessions out of listings and resolves the id to the file that
// holds the conversation. These are issue 13's "split chats": the files
// are linked by sessionId, and the second holds nothing to fold. 0.61.0
// has no fork; /clear or a new launch starts a new sessionId with nothing
// naming the earlier chat, so those chats stay separate sessions.
//
// # Messages
//
//   - user: a prompt. Text parts are joined as the CLI joins them,
//     displayContent (what was typed) wins over content (with @-file
//     expansions), inlineData images are embedded within the image budget.
//     Messages made only of functionResponse parts are tool results the CLI
//     echoes and are skipped (results come from toolCalls), as is the
//     <session_context> block 0.61.0 injects as the first user message: it
//     is not a prompt and is not counted. user_shell (! commands) counts as
//     a prompt with Source "shell".
//   - gemini: thoughts[] (subject + description) become Thinking, text parts
//     assistant text (thought parts Thinking, functionCall parts skipped: the
//     same call is in toolCalls), toolCalls[] tool uses with their results
//     (functionResponse output/error, else resultDisplay; status error or
//     cancelled marks an error), model per message.
//   - info, warning, error: CLI notices, skipped.
//
// Tools map to canonical names: run_shell_command→Bash, replace/edit→Edit,
// write_file→Write, read_file→Read, glob→Glob, search_file_content/grep/
// grep_search→Grep, list_directory/ls→LS, web_fetch→WebFetch,
// google_web_search→WebSearch, write_todos→TodoWrite; absolute_path and
// dir_path arguments become file_path and path. Other tools pass through.
//
// Usage: tokens on each gemini message. promptTokenCount (input) includes
// the cached tokens and excludes tool-use prompt tokens, and thoughts are
// billed as output, so Input = input − cached + tool, CacheRead = cached,
// Output = output + thoughts, Reasoning = thoughts; Total() then equals the
// record's total.
//
// Malformed lines become warnings with their line number; unknown records
// and message types are skipped silently.
//
// # Run state from the chat file (turns.go)
//
// Gemini CLI 0.61.0 fires AfterAgent with prompt_response "[no response
// text]" both when the user cancels a turn (Esc mid-turn; a tool refused
// at its approval fires none) and when the API fails it. Its chat file
// tells them apart (recorded: testdata/states): the cancel is an info
// message "Request cancelled." the key's handler appends at once, an API
// error an error message "[API Error: …]" (then an info note "This
// request failed…"). geminihook maps that AfterAgent to interrupted when
// the chat file's last message is the cancel, and internal/native follows
// the chat file (Provider.NewTurnParser, PrivateTurnKeys) so that a
// cancel ends the current run even when the user's key was missed;
// without hooks, each prompt it records opens a run, which the cancel or
// the error ends. No record marks a successful end: a reply with text is
// recorded before its tool calls are added to it (a hook-less run ends
// successfully when the title says Ready again).
//
// # What it sends to a Muster pane's terminal (0.61.0, measured)
//
// e2e/realcli TestMusterGeminiSignals, one held text turn: only titles,
// OSC 0 "◇  Ready (work)" at its prompt and "✦  Working… (work)" while
// the turn runs (activity working 2.1 s after the send; "✋  Action
// Required" at an approval, REPORT.md §3). No OSC 7501, no OSC 9;4, no
// notification, no bell. Of a pane's terminal variables it reads only
// ConEmuTask, to compare it with "{cmd::Cmder}" (Unicode support).
package gemini
