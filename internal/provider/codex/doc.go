// Package codex is everything Muster knows of the OpenAI Codex CLI: how to
// launch and resume it (provider.go), where $CODEX_HOME is, which hooks to
// install (install.go), and how to read its rollouts (discovery, parsing
// and ReadSessionMeta, below).
//
// Verified with Codex 0.169.0 (what is measured below) and 0.171.0
// (e2e/realcli, the whole suite, 2026-12-05: its app-server daemon, run
// from $CODEX_HOME/packages/app-server-daemon/releases/0.171.0-…, and its
// pid-update-loop end with the panes, as 0.169's did).
//
// # Where rollouts live
//
// The root is $CODEX_HOME, or ~/.codex:
//
//	sessions/YYYY/MM/DD/rollout-<local time>-<thread uuid>.jsonl   current
//	sessions/rollout-*.jsonl                                        older flat layout
//	sessions/rollout-YYYY-MM-DD-<uuid>.json                         TypeScript CLI: one JSON document
//	archived_sessions/[YYYY/MM/DD/]rollout-*.jsonl                  archived
//
// The state databases (state_*.sqlite, thread titles) and history.jsonl are
// not read.
//
// # Records
//
// Each line is {timestamp, [ordinal], type, payload}:
//
//   - session_meta: id (or session_id), timestamp, cwd, originator, source
//     (a string, or {"subagent": {...}} for spawned threads), cli_version,
//     forked_from_id. The first one wins.
//   - turn_context: model and cwd. Session.Model is the latest model of a
//     turn_context or of a token_count's info.model.
//   - response_item: message (user/assistant; developer skipped), reasoning
//     (summary text; encrypted_content never), function_call and
//     custom_tool_call with their *_output, local_shell_call,
//     web_search_call.
//   - event_msg: user_message, agent_message, agent_reasoning, token_count,
//     item_completed (0.16x UserMessage/AgentMessage), context_compacted.
//   - compacted: a compaction (its summary is not replayed).
//   - token_usage_record (0.169): per-response usage with a cumulative
//     thread_token_usage.
//
// Other types (world_state, …) are skipped. The oldest rollouts have no
// envelope: a {id, timestamp} header line, then bare response items.
//
// # Decisions
//
//   - Prompts come from one source, so nothing is counted twice: event_msg
//     user_message when the file has any; else item_completed UserMessage
//     items (0.169 writes no user_message); else response_item user
//     messages, minus the ones the harness injected (provenance "harness",
//     or text starting with <environment_context>, <user_instructions>,
//     <turn_aborted>, "# AGENTS.md instructions", …). Assistant text and
//     reasoning likewise prefer response_item over their event_msg copies.
//   - Sub-agent threads (source.subagent) get ParentID from thread_spawn's
//     parent_thread_id; forked threads start with a copy of the parent's
//     records dated before their own session_meta timestamp, which are
//     skipped.
//   - Resumes and forks (0.169.0, recorded in testdata/fork): codex resume
//     and codex exec resume append to the session's own rollout, so a
//     resumed conversation is one file. codex fork writes a new rollout
//     whose session_meta names the original in forked_from_id and, with
//     history_mode "paginated", points at the original's history instead
//     of copying it: history_base {thread_id, end_ordinal_exclusive,
//     end_byte_offset} (codex exec fork recorded; the TUI's codex fork,
//     driven in tmux the same day, wrote the same). The fork's ordinals and cumulative token totals
//     carry on from the original's. A user's fork (not a sub-agent) gets
//     Session.ForkedFrom; a full parse replays, as Inherited items, the
//     original's first end_byte_offset bytes (found in the same Codex
//     home, a warning when gone), or the copied records of older forks.
//     Its usage starts from its first response's own usage
//     (last_token_usage; usage in token_usage_record), never the
//     inherited total, which the original counts.
//   - Usage: the last info.total_token_usage of token_count events is the
//     session total (consecutive duplicates are harmless); without
//     token_count events, the last thread_token_usage of token_usage_record.
//     input_tokens includes cached and cache-write tokens, so Input =
//     input − cached − cache_write, CacheRead = cached, CacheWrite =
//     cache_write, Output = output_tokens (reasoning included, also reported
//     as Reasoning). UsageByModel attributes each increase of the cumulative
//     total to the model of the latest turn_context (or info.model).
//   - Tools: shell, exec_command, shell_command, container.exec and
//     local_shell_call → Bash with a "command" string (argv arrays are
//     unwrapped from bash -lc or shell-quoted); apply_patch (function or
//     custom tool) → ApplyPatch {"patch"}; read_file → Read, list_dir → LS,
//     grep_files → Grep, web_search → WebSearch, spawn_agent → Task. Others
//     pass through. A result is an error when the payload says success
//     false, the output's exit code is not 0, or the user aborted it.
//   - Interactive (ReadSessionMeta): started by a user in the TUI — an
//     originator of codex-tui or codex_cli_rs (or none with source cli) —
//     and neither exec, mcp nor a sub-agent. The TUI talking to the
//     background app-server records source "vscode"; that is still
//     interactive.
//   - Title: the first prompt's first line (rollouts carry no title).
//
// # What it sends to a Muster pane's terminal (0.169.0, measured)
//
// e2e/realcli TestMusterCodexSignals, one held text turn: the title OSC 0
// with the directory name ("work"), then OSC 7501 state=idle:app=codex at
// start-up, state=working:app=codex when the prompt is taken (activity
// working 2.2 s after the send) and state=done:app=codex when the reply is
// in (state=blocked:…:kind=permission at an approval, state=error on a
// failed turn: see daemon agentstatus.go). No OSC 9;4, no notification,
// no bell; it reads none of the terminal variables a pane sets.
package codex
