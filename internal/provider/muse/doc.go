// Package muse reads Muse agent transcripts (seed 002). It owns discovery and
// parsing of the Muse format; it knows nothing of the store or the replay.
//
// # Where transcripts live
//
// The agents root is $MUSE_AGENTS_DIR, or ~/agents:
//
//	<root>/<agentId>/sessions/<agentId>.jsonl   transcript, one JSON object a line
//	<root>/<agentId>/sessions/sessions.json     runtime index, best-effort only
//
// Discover lists every <agentId>/sessions/<agentId>.jsonl; a missing root or
// an unreadable agent directory is skipped, never an error.
//
// # Records
//
//   - session_header {session_id, agent_id, created_at}: the session id (the
//     file's agent id when absent) and the start time.
//   - item {seq, source, item, created_at}: one transcript item, below.
//   - compaction_checkpoint {compaction_id, trigger, summary, created_at}:
//     becomes a Session.Compactions entry and an empty Compaction marker
//     item. The summary is never decoded, stored or replayed (it is a whole
//     pre-compaction conversation). created_at is epoch seconds here, unlike
//     the ISO strings elsewhere; both become time.Time (ISO in JSON).
//
// Item kinds: message {role, text}; message_parts {role, parts[]} with text
// in parts[].text and images in file_ref parts; thinking {thinking};
// commentary_text {text} (assistant narration); function_call {call_id,
// name, arguments as a JSON string}; function_call_output {call_id, output,
// success}, matched to its call by call_id, success:false marking an error.
//
// # Decisions
//
//   - developer messages are skipped: runtime instructions, not user content,
//     and replays are meant to be shared.
//   - source labels: a bare label (runtime) is interactive, a real user turn
//     or a subagent delegation. A dotted label (runtime.feed,
//     runtime.self_improvement, scheduler.cron, …) is a runtime directive:
//     counted in PromptCount, marked Item.Directive, skipped for FirstPrompt
//     and Title.
//   - user messages starting with "[Subagent Context]" (injected boilerplate
//     on delegated sessions) are directives too: counted, not used for
//     FirstPrompt or Title.
//   - a session is discoverable (Parse returns it) only when it has at least
//     one prompt or one tool call; a file with neither yields no transcript.
//   - tools: exec→Bash (cmd→command), edit→Edit (path, old_text, new_text →
//     file_path, old_string, new_string), write→Write and read→Read
//     (path→file_path). Other names, namespaced agent tools included
//     (memory_search, subagent.spawn), pass through; Item.RawTool keeps the
//     original name.
//   - no token usage: Session.Usage stays nil. sessions.json's
//     context_window_usage is a point-in-time snapshot, not a session total;
//     only its model_id is used, as Session.Model. Its layout is not
//     contractual, so the model is looked up at the top level, then in the
//     entry for this session or agent id, then in the only entry that has
//     one.
//   - images: file_ref {path, mime_type, bytes_len, sha256} parts of user
//     messages are embedded by transcript.EmbedImage (path relative to the
//     home directory, canonical target inside home, required bytes_len equal
//     to the on-disk size before reading, sha256 match, 5 MiB per image and
//     25 MiB per parse). Every rejection is a parse warning. A user message
//     with only images replays as an "(image)" prompt. SummaryOnly parses
//     never read images.
//   - leniency: a blank line is ignored; malformed JSON, a JSON value that is
//     not an object, and a malformed or non-object sessions.json are parse
//     warnings; unknown record and item types are skipped silently.
//
// Transcripts can hold thinking, tool arguments and tool output: replays of
// them are as sensitive as any other provider's.
package muse
